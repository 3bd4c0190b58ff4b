// GET /v1/usage (the key's subscriber's month, in the documented shape) and /v1/docs (the
// compression API's readable, offline description).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextMonth } from "../../src/auth/quota.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let work: string;
let validateUsage: (status: number, body: unknown) => void;

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "compress-usage-"));
  const objects = path.join(work, "objects");
  server = await startServer(
    db,
    { UPLOAD_TMP_DIR: path.join(work, "uploads"), LOCAL_STORAGE_DIR: objects },
    { compress: { storage: await createLocalStorage(objects, null), runner: passThroughRunner } },
  );
  const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: "https://v1.test/openapi.json" });
  validateUsage = (status, body) => {
    const ref = `https://v1.test/openapi.json#/paths/~1v1~1usage/get/responses/${status}/content/application~1json/schema`;
    const validate = ajv.getSchema(ref);
    expect(validate, `status ${status} is documented`).toBeDefined();
    expect(validate!(body), `${status}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
  };
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

async function usage(token: string | null) {
  const response = await fetch(`${server.url}/v1/usage`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as Record<string, unknown>,
  };
}

async function compress(token: string) {
  const { body, contentType } = multipart([{ name: "file", value: await makePdf(1), filename: "a.pdf" }]);
  const response = await fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
    body: new Uint8Array(body),
  });
  return response.status;
}

describe("GET /v1/usage", () => {
  it("answers plan, quota, used, remaining and the renewal, and counts a compression", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 5 });
    const before = await usage(token);
    expect(before.status).toBe(200);
    validateUsage(200, before.json);
    const reset = nextMonth();
    const start = new Date(Date.UTC(reset.getUTCFullYear(), reset.getUTCMonth() - 1, 1));
    expect(before.json).toEqual({
      plan: "corporate",
      monthly_quota: 5,
      used: 0,
      remaining: 5,
      period_start: start.toISOString(),
      resets_at: reset.toISOString(),
    });
    expect(before.headers.get("cache-control")).toBe("no-store");
    expect(before.headers.get("x-quota-remaining")).toBe("5");
    expect(before.headers.get("ratelimit-policy")).toContain('"api-key"');

    expect(await compress(token)).toBe(200);
    const after = await usage(token);
    expect(after.json).toMatchObject({ used: 1, remaining: 4 });
  });

  it.each([
    ["no key", null, "missing_api_key"],
    ["a malformed key", "mkp_nope", "malformed_api_key"],
    ["a key whose checksum fails", "mkp_000000000000000000000000000000000000", "malformed_api_key"],
  ])("refuses %s with 401 in the documented error form", async (_, token, code) => {
    const answer = await usage(token);
    expect(answer.status).toBe(401);
    expect(answer.headers.get("x-error-code")).toBe(code);
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
    validateUsage(401, answer.json);
  });

  it("refuses a revoked key and a key whose subscriber left the corporate plan", async () => {
    const revoked = await subscriberWithKey(db.prisma);
    await revoked.admin.revokeKey(revoked.key.id);
    expect((await usage(revoked.token)).json).toMatchObject({ error: { code: "invalid_api_key" } });
    const starter = await subscriberWithKey(db.prisma, { plan: "starter" });
    expect((await usage(starter.token)).json).toMatchObject({ error: { code: "plan_not_eligible" } });
  });
});

describe("/v1/docs", () => {
  it("serves the page, its script and Swagger UI's assets from this service under a strict CSP", async () => {
    const page = await fetch(`${server.url}/v1/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self';");
    const html = await page.text();
    const local = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(local.length).toBeGreaterThanOrEqual(4);
    for (const url of local) {
      expect(url.startsWith("/v1/docs/"), url).toBe(true);
      expect((await fetch(`${server.url}${url}`)).status, url).toBe(200);
    }
    expect(await (await fetch(`${server.url}/v1/docs/init.js`)).text()).toContain('"/v1/openapi.json"');
    expect((await fetch(`${server.url}/v1/docs/assets/package.json`)).status).toBe(404);
  });
});
