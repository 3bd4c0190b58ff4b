// The typed client (clients/typescript) against the real compression service: a compression
// through compress(), typed errors in the documented shape, a 503 busy with Retry-After retried
// by the upload helper (the engine runner refuses the first job as a full pool does), POST not
// re-sent by the generic middleware, a per-key 429 whose wait is longer than allowed returned at
// once, and the generated types equal to what the served document generates.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { openAsBlob } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerBusy } from "../../src/compress/isolation/runner.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { createCompressionClient, openFile, type RetryEvent } from "../../clients/typescript/src/index.ts";
import { clientTypes, generatedClientFiles } from "../../scripts/generate-client.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { makePdf, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const SIGNING_SECRET = "test-signing-secret-of-at-least-32-chars";
let db: TestDatabase;
let work: string;
let pdfPath: string;
let server: TestServer;
/** Jobs the runner refuses as busy before it passes the next one through. */
let busyFor = 0;
let runs = 0;

const runner: EngineRunner = {
  async run(job, options) {
    runs++;
    if (busyFor > 0) {
      busyFor--;
      throw new RunnerBusy(1);
    }
    return passThroughRunner.run(job, options);
  },
};

async function start(env: Record<string, string> = {}) {
  const objects = path.join(work, `objects-${Math.random().toString(36).slice(2)}`);
  return startServer(
    db,
    {
      UPLOAD_TMP_DIR: path.join(work, "uploads"),
      LOCAL_STORAGE_DIR: objects,
      DOWNLOAD_SIGNING_SECRET: SIGNING_SECRET,
      ...env,
    },
    { compress: { storage: await createLocalStorage(objects, SIGNING_SECRET), runner } },
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "client-compress-"));
  pdfPath = path.join(work, "report.pdf");
  await writeFile(pdfPath, await makePdf(2));
  server = await start();
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("compress()", () => {
  it("uploads a file from disk and answers the typed result", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const client = createCompressionClient({ baseUrl: server.url, apiKey: token });
    const file = await openAsBlob(pdfPath);
    const { data, error, response } = await client.compress(file, { profile: "lossless" });
    expect(error).toBeUndefined();
    expect(response.headers.get("x-quota-remaining")).toBeTruthy();
    expect(data).toMatchObject({ success: true, original_size: file.size, expires_in: 3600 });
    expect(data!.compressed_size).toBeLessThanOrEqual(data!.original_size);
    expect((await fetch(data!.url)).status).toBe(200);
  });

  it("names the result after the file: openFile() keeps its name, a Blob takes `filename`", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const client = createCompressionClient({ baseUrl: server.url, apiKey: token });
    const downloadName = async (url: string) => {
      const response = await fetch(url);
      await response.arrayBuffer();
      return response.headers.get("content-disposition");
    };
    const opened = await client.compress(await openFile(pdfPath));
    expect(await downloadName(opened.data!.url)).toContain("report-compressed.pdf");
    const named = await client.compress(await openAsBlob(pdfPath), { filename: "Q3 scan.pdf" });
    expect(await downloadName(named.data!.url)).toContain("Q3 scan-compressed.pdf");
  });

  it("returns errors in the documented shape, typed, with the code also in X-Error-Code", async () => {
    const client = createCompressionClient({ baseUrl: server.url, apiKey: "mkp_not-a-real-key" });
    const { data, error, response } = await client.compress(await openAsBlob(pdfPath));
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    const code: string | undefined = error?.error.code;
    expect(code).toBe("malformed_api_key");
    expect(response.headers.get("x-error-code")).toBe(code);

    const { token } = await subscriberWithKey(db.prisma);
    const notPdf = await createCompressionClient({ baseUrl: server.url, apiKey: token }).compress(
      new Blob(["plain text"], { type: "text/plain" }),
    );
    expect(notPdf.response.status).toBe(422);
    expect(notPdf.error?.error.code).toBe("not_a_pdf");
    expect(notPdf.error?.error.message).toBeTruthy();
  });

  it("sends the file again after a 503 busy with Retry-After, and charges once", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const events: RetryEvent[] = [];
    const client = createCompressionClient({
      baseUrl: server.url,
      apiKey: token,
      retry: { onRetry: (e) => events.push(e) },
    });
    busyFor = 1;
    runs = 0;
    const started = Date.now();
    const { data, response } = await client.compress(await openAsBlob(pdfPath));
    expect(response.status).toBe(200);
    expect(data!.success).toBe(true);
    expect(runs).toBe(2);
    expect(events).toEqual([expect.objectContaining({ attempt: 1, status: 503, waitMs: 1000, method: "POST" })]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const usage = await client.GET("/v1/usage");
    expect(usage.data).toMatchObject({ used: 1 });
  });

  it("sends one Idempotency-Key on every attempt, so an answer lost to the network is retried and charged once", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const keys: (string | null)[] = [];
    let lose = 1;
    // The first answer is lost on its way back (the service compressed and charged), as when a
    // connection drops: fetch rejects with a TypeError.
    const losingFetch = async (request: Request) => {
      keys.push(request.headers.get("idempotency-key"));
      const response = await fetch(request);
      if (lose-- > 0) {
        await response.arrayBuffer();
        throw new TypeError("fetch failed");
      }
      return response;
    };
    const client = createCompressionClient({
      baseUrl: server.url,
      apiKey: token,
      fetch: losingFetch,
      retry: { fallbackWaitMs: 10 },
    });
    runs = 0;
    const { data, response } = await client.compress(await openAsBlob(pdfPath));
    expect(response.status).toBe(200);
    expect(response.headers.get("idempotent-replayed")).toBe("true");
    expect(data!.success).toBe(true);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(runs).toBe(1);
    expect((await client.GET("/v1/usage")).data).toMatchObject({ used: 1 });
  });

  it("does not retry an upload when told not to; the 503 comes back typed", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const client = createCompressionClient({ baseUrl: server.url, apiKey: token });
    busyFor = 1;
    runs = 0;
    const { error, response } = await client.compress(await openAsBlob(pdfPath), { retry: false });
    expect(runs).toBe(1);
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBe(1);
    expect(error?.error.code).toBe("busy");
  });

  it("the client's own POST is never re-sent by the Retry-After middleware (not idempotent)", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const client = createCompressionClient({ baseUrl: server.url, apiKey: token });
    busyFor = 1;
    runs = 0;
    const { error, response } = await client.POST("/v1/compress", {
      body: { file: await openAsBlob(pdfPath) },
      bodySerializer: (body) => {
        const form = new FormData();
        form.append("file", (body as { file: Blob }).file, "report.pdf");
        return form;
      },
    });
    expect(response.status).toBe(503);
    expect(error?.error.code).toBe("busy");
    expect(runs).toBe(1);
    busyFor = 0;
  });
});

// Issue 44: results as resources through the client's typed paths, and retention through compress().
describe("results under the subscriber's control", () => {
  it("lists, reads and deletes results by the typed paths; retention 0 and in seconds through compress()", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const other = await subscriberWithKey(db.prisma);
    const client = createCompressionClient({ baseUrl: server.url, apiKey: token });
    const file = await openFile(pdfPath);
    const kept = await client.compress(file, { retention: 600 });
    expect(kept.data).toMatchObject({ retention: 600 });
    const once = await client.compress(file, { retention: 0 });
    expect(once.data).toMatchObject({ retention: 0 });
    expect(new URL(once.data!.url).pathname).toMatch(/^\/v1\/results\//);

    const first = await client.GET("/v1/compressions", { params: { query: { limit: 1, status: "succeeded" } } });
    expect(first.data?.data.map((item) => item.id)).toEqual([once.data!.id]);
    expect(first.data?.has_more).toBe(true);
    const next = await client.GET("/v1/compressions", {
      params: { query: { limit: 1, cursor: first.data!.next_cursor! } },
    });
    expect(next.data?.data.map((item) => item.id)).toEqual([kept.data!.id]);
    const refused = await client.GET("/v1/compressions", { params: { query: { limit: 0 } } });
    expect([refused.response.status, refused.error?.error.code]).toEqual([400, "invalid_limit"]);

    const one = await client.GET("/v1/compressions/{id}", { params: { path: { id: kept.data!.id } } });
    expect(one.data).toMatchObject({ id: kept.data!.id, filename: "report.pdf", retention: 600, deleted_at: null });
    expect((await fetch(one.data!.url!)).status).toBe(200);

    const stranger = createCompressionClient({ baseUrl: server.url, apiKey: other.token });
    const theirs = await stranger.DELETE("/v1/compressions/{id}", { params: { path: { id: kept.data!.id } } });
    expect([theirs.response.status, theirs.error?.error.code]).toEqual([404, "not_found"]);
    const deleted = await client.DELETE("/v1/compressions/{id}", { params: { path: { id: kept.data!.id } } });
    expect(deleted.response.status).toBe(204);
    expect((await fetch(kept.data!.url)).status).toBe(410);
    const again = await client.DELETE("/v1/compressions/{id}", { params: { path: { id: kept.data!.id } } });
    expect(again.response.status).toBe(204);
    const after = await client.GET("/v1/compressions/{id}", { params: { path: { id: kept.data!.id } } });
    expect(after.data).toMatchObject({ deleted_by: "request", filename: null });
  });
});

describe("the per-key rate limit", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await start({ COMPRESS_RATE_LIMIT_PER_MINUTE: "1" });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it("answers a 429 at once when its Retry-After is longer than the client waits", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const client = createCompressionClient({ baseUrl: limited.url, apiKey: token, retry: { maxWaitMs: 2_000 } });
    expect((await client.GET("/v1/usage")).response.status).toBe(200);
    const started = Date.now();
    const { error, response } = await client.compress(await openAsBlob(pdfPath));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(response.status).toBe(429);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(2);
    expect(error?.error.code).toBe("rate_limited");
  });
});

describe("generated types", () => {
  it("are what the served compression document generates", async () => {
    const served = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as object;
    const compression = (await generatedClientFiles()).find((file) => file.filename.endsWith("/compression.ts"))!;
    expect(await clientTypes(served, compression.filename)).toBe(compression.content);
  });
});
