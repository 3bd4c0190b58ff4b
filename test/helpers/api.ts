// An HTTP client for /api/v1 that checks every response it receives against the service's own
// OpenAPI document: status documented for the operation, body valid against its schema,
// documented headers present. A test that forgets to look at a field still checks its shape.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";

type Json = Record<string, unknown>;

export interface ApiResponse<T = Json> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface ApiClient {
  readonly document: Json;
  get<T = Json>(path: string, init?: RequestInit): Promise<ApiResponse<T>>;
  /** Validates a body against the documented schema of GET template and status; returns the errors. */
  validate(template: string, status: number, body: unknown): string | null;
  request<T = Json>(path: string, init?: RequestInit): Promise<ApiResponse<T>>;
}

const DOC_ID = "https://openapi.test/openapi.json";

/** The served document keeps objects open for additive change; tests close them to catch undocumented fields. */
export function closeObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closeObjects);
  if (!value || typeof value !== "object") return value;
  const copy = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, closeObjects(v)]));
  if (copy["type"] === "object" && copy["properties"] && !("additionalProperties" in copy)) {
    copy["additionalProperties"] = false;
  }
  return copy;
}

function templateFor(document: Json, pathname: string): string | undefined {
  const relative = pathname.replace(/^\/api\/v1/, "");
  return Object.keys(document["paths"] as Json).find((template) => {
    const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`);
    return pattern.test(relative);
  });
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

export async function createApiClient(baseUrl: string): Promise<ApiClient> {
  const document = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...(closeObjects(document) as Json), $id: DOC_ID });

  const check = (method: string, pathname: string, response: ApiResponse) => {
    const template = templateFor(document, pathname);
    if (!template) return; // unknown paths: only the error shape applies
    const operation = ((document["paths"] as Json)[template] as Json)[
      method.toLowerCase() === "head" ? "get" : method.toLowerCase()
    ] as Json | undefined;
    if (!operation) return; // 405: checked by the caller against the error schema
    const responses = operation["responses"] as Json;
    expect(Object.keys(responses), `status ${response.status} is documented for GET ${template}`).toContain(
      String(response.status),
    );
    const documented = responses[String(response.status)] as Json;
    for (const name of Object.keys((documented["headers"] as Json | undefined) ?? {})) {
      if (["Link", "Retry-After", "Allow", "ETag", "Cache-Control"].includes(name)) continue; // conditional
      expect(response.headers.has(name), `header ${name} on ${response.status} GET ${pathname}`).toBe(true);
    }
    if (response.status === 304 || method === "HEAD") return;
    // The documented schema of the media type served (a route may answer more than JSON).
    const media = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const served = media === "application/ld+json" ? media : "application/json";
    const ref = `${DOC_ID}#/${pointer("paths", template, "get", "responses", String(response.status), "content", served, "schema")}`;
    const validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`no schema at ${ref}`);
    if (!validate(response.body)) {
      throw new Error(
        `${response.status} GET ${pathname} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`,
      );
    }
  };

  const request = async <T>(path: string, init: RequestInit = {}): Promise<ApiResponse<T>> => {
    const url = new URL(path, baseUrl);
    const response = await fetch(url, init);
    const text = await response.text();
    const type = response.headers.get("content-type") ?? "";
    const body = (text && /application\/(ld\+)?json/.test(type) ? JSON.parse(text) : text) as T;
    const result = { status: response.status, headers: response.headers, body, text };
    check(init.method ?? "GET", url.pathname, result as ApiResponse);
    if (response.status >= 400) {
      const validateError = ajv.getSchema(`${DOC_ID}#/components/schemas/Error`);
      expect(validateError?.(body), `error body of ${response.status} ${url.pathname}: ${text}`).toBe(true);
    }
    return result;
  };
  const validate = (template: string, status: number, body: unknown) => {
    const ref = `${DOC_ID}#/${pointer("paths", template, "get", "responses", String(status), "content", "application/json", "schema")}`;
    const fn = ajv.getSchema(ref);
    if (!fn) throw new Error(`no schema at ${ref}`);
    return fn(body) ? null : ajv.errorsText(fn.errors);
  };
  return { document, request, validate, get: (path, init) => request(path, { ...init, method: "GET" }) };
}
