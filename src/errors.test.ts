// The registry of error codes (src/errors.ts) against what documents them: the tables of docs/catalog-api.md
// and docs/compression-api.md and both OpenAPI documents name no code the registry lacks, at the status it
// has; those documents name
// every one; the engine's refusals are all registered.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildCompressOpenApi } from "./compress/api/openapi.ts";
import { PDF_REJECTED_CODES } from "./pdf/index.ts";
import { buildOpenApiDocument } from "./rest/openapi.ts";
import { errorCodesOf, HttpError, isRegisteredError, retryAfter, takeUnregisteredErrors } from "./errors.ts";

const catalogDoc = readFileSync(new URL("../docs/catalog-api.md", import.meta.url), "utf8");
const compressionDoc = readFileSync(new URL("../docs/compression-api.md", import.meta.url), "utf8");

/** The snake_case words of a text but the body's request_id: the error codes it names. */
const codesIn = (text: string) =>
  [...text.matchAll(/\binvalid_<parameter>|\b[a-z]+(?:_[a-z]+)+\b/g)]
    .map(([code]) => code)
    .filter((code) => code !== "request_id");

/** The error codes a passage of a document names: each in backticks. */
const quotedCodesIn = (text: string) =>
  [...text.matchAll(/`([a-z]+(?:_[a-z]+)*(?:_<parameter>)?)`/g)].map(([, code]) => code ?? "");

/** The section of a document under a heading, up to the next heading of its level. */
function section(document: string, heading: string): string {
  const start = document.indexOf(`\n## ${heading}\n`);
  expect(start, `section ${heading}`).toBeGreaterThan(-1);
  const end = document.indexOf("\n## ", start + 1);
  return document.slice(start, end === -1 ? undefined : end);
}

/** Each [status, code] an OpenAPI document's error responses name in their descriptions. */
function documentedErrors(document: Record<string, unknown>): [number, string][] {
  const paths = document["paths"] as Record<
    string,
    Record<string, { responses: Record<string, { description: string }> }>
  >;
  return Object.values(paths).flatMap((methods) =>
    Object.values(methods).flatMap((operation) =>
      Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([status, response]) =>
          codesIn(response.description).map((code): [number, string] => [Number(status), code]),
        ),
    ),
  );
}

describe("the error registry", () => {
  it("takes a family member as the family, and refuses a code at another status", () => {
    expect(isRegisteredError("invalid_limit", 400)).toBe(true);
    expect(isRegisteredError("invalid_limit", 404)).toBe(false);
    expect(isRegisteredError("plan_not_eligible", 401)).toBe(true);
    expect(isRegisteredError("plan_not_eligible", 403)).toBe(true);
    expect(isRegisteredError("teapot", 418)).toBe(false);
    new HttpError(404, "busy", "a status the code is not registered with");
    expect(takeUnregisteredErrors()).toEqual([{ status: 404, code: "busy" }]);
  });

  it("writes Retry-After in whole seconds, at least 1", () => {
    expect(retryAfter(0)).toEqual({ "Retry-After": "1" });
    expect(retryAfter(4.2)).toEqual({ "Retry-After": "5" });
  });

  it("holds every refusal of the engine", () => {
    for (const code of PDF_REJECTED_CODES) expect(isRegisteredError(code, 422), code).toBe(true);
  });

  it.each([
    ["catalog", buildOpenApiDocument("http://localhost/api/v1")],
    ["compression", buildCompressOpenApi("http://localhost")],
  ] as const)("has every code the %s OpenAPI document names, at its status", (api, document) => {
    const registered = new Set(errorCodesOf(api).map(({ code, status }) => `${status} ${code}`));
    const named = documentedErrors(document).map(([status, code]) => `${status} ${code}`);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((entry) => !registered.has(entry))).toEqual([]);
  });

  it("lists every catalog code in the catalog document's description", () => {
    const description = (buildOpenApiDocument("http://localhost/api/v1")["info"] as { description: string })
      .description;
    for (const { code, status } of errorCodesOf("catalog")) expect(description).toContain(`\`${code}\`: ${status}:`);
  });

  it("matches docs/catalog-api.md's error list", () => {
    const bullet =
      /^- \*\*Errors\*\*:[\s\S]*?(?=\n- \*\*)/m.exec(section(catalogDoc, "The catalog REST API"))?.[0] ?? "";
    const named = new Set(quotedCodesIn(bullet));
    expect([...named].sort()).toEqual(
      errorCodesOf("catalog")
        .map(({ code }) => code)
        .sort(),
    );
  });

  it("matches docs/compression-api.md's table, status by status", () => {
    const rows = section(compressionDoc, "The compression API")
      .split("\n")
      .map((line) => /^\| (\d{3}) +\| ([^|]+)\|/.exec(line))
      .filter((match) => match !== null);
    const named = rows.flatMap(([, status, codes]) => quotedCodesIn(codes ?? "").map((code) => `${status} ${code}`));
    const registered = errorCodesOf("compression").map(({ code, status }) => `${status} ${code}`);
    expect(named.sort()).toEqual(registered.sort());
  });
});
