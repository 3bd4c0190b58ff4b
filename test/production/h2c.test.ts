// HTTP_PROTOCOL=h2c: the service speaks cleartext HTTP/2 with prior knowledge, as Cloud Run's
// front end does with --use-http2 (where request bodies have no 32 MiB limit), and HTTP/1.1 on the
// same port. The real app and server in this process (the engine replaced by a pass-through, as in
// test/compress/http.test.ts), a real node:http2 client: the catalog, GraphQL, the 413 and
// 100-continue contract of uploads, and an upload of exactly 300 MB.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type http2 from "node:http2";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { loadConfig } from "../../src/config/env.ts";
import { createServiceServer, type ServiceServer } from "../../src/http/server.ts";
import { createLogger } from "../../src/logger.ts";
import { largePdfUpload, makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { h2connect, h2request } from "../helpers/h2.ts";

const SIGNING_SECRET = "h2c-test-signing-secret-of-32-chars-at-least";
const LIMIT = 300 * 1024 * 1024;

let db: TestDatabase;
let work: string;
let uploads: string;
let server: ServiceServer;
let base: string;
let session: http2.ClientHttp2Session;
let pdf: Buffer;

beforeAll(async () => {
  db = await createTestDatabase();
  await factories(db.prisma).job("h2c-job");
  work = await mkdtemp(path.join(tmpdir(), "h2c-"));
  uploads = path.join(work, "uploads");
  const objects = path.join(work, "objects");
  const config = loadConfig({
    NODE_ENV: "test",
    LOG_LEVEL: "silent",
    HTTP_PROTOCOL: "h2c",
    RATE_LIMIT_REQUESTS: "1000000",
    LIST_TOTAL_CACHE_SECONDS: "0",
    UPLOAD_TMP_DIR: uploads,
    LOCAL_STORAGE_DIR: objects,
    DOWNLOAD_SIGNING_SECRET: SIGNING_SECRET,
  });
  const app = createApp({
    config,
    db,
    logger: createLogger(config),
    compress: { storage: await createLocalStorage(objects, SIGNING_SECRET), runner: passThroughRunner },
  });
  server = createServiceServer(app, config.httpProtocol);
  const { port } = await server.listen(0, "127.0.0.1");
  base = `http://127.0.0.1:${port}`;
  session = await h2connect(base);
  pdf = await makePdf(2);
});

afterAll(async () => {
  session?.close();
  await server?.destroy();
  await db?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const leftovers = async () => (await readdir(uploads).catch(() => [])).length;

describe("one port, two protocols", () => {
  it("answers the catalog over h2c, without HTTP/1-only headers", async () => {
    const response = await h2request(session, { ":path": "/api/v1/jobs?limit=5" });
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(response.body) as { data: { title: string }[]; meta: { self: string } };
    expect(body.data.map((job) => job.title)).toEqual([expect.stringContaining("h2c-job")]);
    // Links are built from :authority, as from Host over HTTP/1.1.
    expect(body.meta.self).toBe(`${base}/api/v1/jobs?limit=5&offset=0`);
    for (const header of ["connection", "keep-alive", "transfer-encoding"]) {
      expect(response.headers[header], header).toBeUndefined();
    }
  });

  it("answers HTTP/1.1 on the same port", async () => {
    const response = await fetch(`${base}/api/v1/jobs?limit=5`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  it("answers GraphQL over h2c", async () => {
    const response = await h2request(
      session,
      { ":path": "/graphql", "content-type": "application/json", accept: "application/json" },
      { body: JSON.stringify({ query: "{ jobs(limit: 5) { total items { title } } }" }) },
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ data: { jobs: { total: 1 } } });
  });

  it("answers probes and errors in the usual shape", async () => {
    expect((await h2request(session, { ":path": "/readyz" })).status).toBe(200);
    const missing = await h2request(session, { ":path": "/no/such/path", "x-request-id": "h2-404" });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({
      error: { code: "not_found", message: "No route for GET /no/such/path", request_id: "h2-404" },
    });
  });
});

describe("uploads over h2c", () => {
  it("refuses a declared oversize body with 413 before reading it, and stops the stream, not the connection", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const { contentType } = multipart([]);
    // 400 MB declared; the body never comes: the answer must not wait for it.
    const endless = new Readable({ read() {} });
    endless.push(Buffer.alloc(64 * 1024, 0x20));
    const response = await h2request(
      session,
      {
        ":method": "POST",
        ":path": "/v1/compress",
        "content-type": contentType,
        "content-length": String(400 * 1024 * 1024),
        authorization: `Bearer ${token}`,
      },
      { body: endless, timeoutMs: 5_000 },
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: "file_too_large" } });
    expect(response.headers["x-error-code"]).toBe("file_too_large");
    // RST_STREAM(NO_ERROR): "stop sending, the answer is complete" (RFC 9113, section 8.1).
    expect(response.rstCode).toBe(0);
    endless.destroy();
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    // The connection carries on.
    expect((await h2request(session, { ":path": "/healthz" })).status).toBe(200);
  });

  it("answers Expect: 100-continue only after the checks: a bad key gets 401 and sends nothing", async () => {
    const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "a.pdf" }]);
    const refused = await h2request(
      session,
      {
        ":method": "POST",
        ":path": "/v1/compress",
        "content-type": contentType,
        "content-length": String(body.length),
        expect: "100-continue",
        authorization: "Bearer mkp_wrong",
      },
      { body, waitForContinue: true, timeoutMs: 5_000 },
    );
    expect(refused.status).toBe(401);
    expect(refused.continued).toBe(false);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "malformed_api_key" } });

    const { token } = await subscriberWithKey(db.prisma);
    const accepted = await h2request(
      session,
      {
        ":method": "POST",
        ":path": "/v1/compress",
        "content-type": contentType,
        "content-length": String(body.length),
        expect: "100-continue",
        authorization: `Bearer ${token}`,
      },
      { body, waitForContinue: true, timeoutMs: 10_000 },
    );
    expect(accepted.continued).toBe(true);
    expect(accepted.status).toBe(200);
    expect(JSON.parse(accepted.body)).toMatchObject({ success: true, original_size: pdf.length });
  });

  it("refuses the upload past its quota with 402 before the 100", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 1 });
    const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "a.pdf" }]);
    const headers = {
      ":method": "POST",
      ":path": "/v1/compress",
      "content-type": contentType,
      "content-length": String(body.length),
      expect: "100-continue",
      authorization: `Bearer ${token}`,
    };
    expect((await h2request(session, headers, { body, waitForContinue: true })).status).toBe(200);
    const refused = await h2request(session, headers, { body, waitForContinue: true, timeoutMs: 5_000 });
    expect(refused.status).toBe(402);
    expect(refused.continued).toBe(false);
  });

  it("accepts exactly 314,572,800 bytes streamed over one h2c stream, without holding it in memory", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const upload = largePdfUpload(LIMIT, "----h2c-limit-boundary");
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const started = performance.now();
    const response = await h2request(
      session,
      {
        ":method": "POST",
        ":path": "/v1/compress",
        "content-type": upload.contentType,
        "content-length": String(upload.length),
        authorization: `Bearer ${token}`,
      },
      { body: upload.body(), timeoutMs: 170_000 },
    );
    clearInterval(sampler);
    expect(response.status, response.body).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ success: true, original_size: LIMIT });
    // Client and server are both in this process: 300 MB must not have landed in memory.
    expect(peak - rssBefore).toBeLessThan(150 * 1024 * 1024);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    expect(await leftovers()).toBe(0);
    console.info(`300 MB over h2c in ${Math.round(performance.now() - started)} ms`);
  }, 180_000);
});

describe("HTTP/1.1 clients of an h2c server", () => {
  it("still get 100-continue handling and the early 413", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { port } = new URL(base);
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path: "/v1/compress",
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": multipart([]).contentType,
            "content-length": String(400 * 1024 * 1024),
            expect: "100-continue",
          },
        },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body: text });
          });
        },
      );
      req.on("continue", () => reject(new Error("100 Continue sent for an oversize upload")));
      req.on("error", reject);
      req.flushHeaders();
    });
    expect(response.status).toBe(413);
  });
});
