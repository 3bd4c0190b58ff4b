// Every response of both OpenAPI documents (the catalog's /api/v1/openapi.json and the compression
// API's /v1/openapi.json) carries an example, as the docs pages show beside each operation, and
// each example is valid against its response's schema (ajv, draft 2020-12, objects closed so an
// example cannot show a field the schema does not name). An error's example names a code the
// registry (src/errors.ts) gives that status.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { buildCompressOpenApi } from "../../src/compress/api/openapi.ts";
import { isRegisteredError } from "../../src/errors.ts";
import { buildOpenApiDocument } from "../../src/rest/openapi.ts";
import { closeObjects } from "../helpers/api.ts";

type Json = Record<string, unknown>;

interface Documented {
  where: string;
  /** JSON pointer to its schema in the document. */
  pointer: string;
  status: number;
  example: unknown;
}

/** Each JSON response of the document's operations: where, its status, schema and example. */
function responses(document: Json): Documented[] {
  return Object.entries(document["paths"] as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, operation]) =>
      Object.entries((operation["responses"] ?? {}) as Record<string, Json>).flatMap(([status, response]) => {
        const media = (response["content"] as Record<string, Json> | undefined)?.["application/json"];
        if (!media) return [];
        const where = `${method.toUpperCase()} ${path} ${status}`;
        const pointer = ["paths", path, method, "responses", status, "content", "application/json", "schema"]
          .map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1"))
          .join("/");
        return [{ where, pointer, status: Number(status), example: media["example"] }];
      }),
    ),
  );
}

function checker(document: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const id = "https://openapi.test/doc.json";
  ajv.addSchema({ ...(closeObjects(document) as Json), $id: id });
  return (response: Documented) => {
    const validate = ajv.getSchema(`${id}#/${response.pointer}`);
    if (!validate) return `no schema at ${response.pointer}`;
    return validate(response.example) ? null : ajv.errorsText(validate.errors);
  };
}

describe.each([
  ["catalog", buildOpenApiDocument("https://api.example.com/api/v1")],
  ["compression", buildCompressOpenApi("https://api.example.com")],
])("the %s OpenAPI document", (_name, document) => {
  const all = responses(document);
  const check = checker(document);

  it("has an example for every JSON response", () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((response) => response.example === undefined).map((response) => response.where)).toEqual([]);
  });

  it("has examples valid against their response's schema", () => {
    const invalid = all.flatMap((response) => {
      const problem = response.example === undefined ? null : check(response);
      return problem ? [`${response.where}: ${problem}`] : [];
    });
    expect(invalid).toEqual([]);
  });

  it("gives each error response an example with a code registered for its status", () => {
    const wrong = all
      // JSON-RPC (POST /v1/mcp) answers a message it refuses in its own protocol's shape.
      .filter((response) => response.status >= 400 && response.example !== undefined)
      .filter((response) => (response.example as { jsonrpc?: string }).jsonrpc !== "2.0")
      .flatMap((response) => {
        const { code } = (response.example as { error: { code: string } }).error;
        return isRegisteredError(code, response.status) ? [] : [`${response.where}: ${code}`];
      });
    expect(wrong).toEqual([]);
  });
});
