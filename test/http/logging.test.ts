// Structured logs over real HTTP, captured from the real logger: one Cloud Logging line per
// request (severity, message, httpRequest, trace and span from either trace header), the same
// trace and request id on every other line of that request, and no secret anywhere in the output
// (API keys, passwords, signed-URL signatures, database and Redis passwords, cookies), nor a file's
// name (a subscriber's data: through its upload, downloads, deletion and the sweep).
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type Koa from "koa";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { createLocalStorage, type LocalStorage } from "../../src/compress/storage/local.ts";
import { sweepExpiredResults } from "../../src/compress/workflow/results.ts";
import { loadConfig } from "../../src/config/env.ts";
import { parseCloudTraceContext, parseTraceparent, traceContextOf, traceFields } from "../../src/http/request-log.ts";
import { createHttpServer, createServiceServer } from "../../src/http/server.ts";
import { createLogger, flushLogger, redactUrl, scrubSecrets, type Logger } from "../../src/logger.ts";
import { closeRedis, createRedis } from "../../src/redis.ts";
import { multipart, passThroughRunner, subscriberWithKey, makePdf } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

const PROJECT = "demo-project";
const SIGNING_SECRET = "logging-test-signing-secret-of-32-chars+";
const DB_PASSWORD = "Db-Pa55w0rd-never-logged";
const REDIS_PASSWORD = "Redis-Pa55w0rd-never-logged";
const PDF_PASSWORD = "Pdf-Pa55w0rd-never-logged";
const COOKIE = "session=Cookie-Secret-never-logged";
const QUERY_SECRET = "Query-Token-never-logged";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_HEX = "00f067aa0ba902b7";

type Line = Record<string, unknown> & {
  severity: string;
  message: string;
  time: string;
  requestId?: string;
  httpRequest?: Record<string, unknown>;
};

const output: string[] = [];
let db: TestDatabase;
let work: string;
let logger: Logger;
let url: string;
let server: http.Server;
let app: Koa;
let secrets: string[];
let storage: LocalStorage;

const lines = (): Line[] => output.map((raw) => JSON.parse(raw) as Line);
const linesOf = (requestId: string) => lines().filter((line) => line.requestId === requestId);

/** The request's own line, written once the response has finished (possibly after the client read it). */
async function requestLine(requestId: string): Promise<Line> {
  await expect.poll(() => linesOf(requestId).some((line) => line.httpRequest), { timeout: 5000 }).toBe(true);
  return linesOf(requestId).find((line) => line.httpRequest)!;
}

async function get(pathAndQuery: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${pathAndQuery}`, { headers });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, body, requestId: response.headers.get("x-request-id")! };
}

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "logging-"));
  const config = loadConfig({
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    RATE_LIMIT_REQUESTS: "1000000",
    LIST_TOTAL_CACHE_SECONDS: "0",
    // Configuration holding credentials, as in production: none of it may reach a log line.
    DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.internal:5432/marketplace`,
    REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:1`,
    UPLOAD_TMP_DIR: path.join(work, "uploads"),
    LOCAL_STORAGE_DIR: path.join(work, "objects"),
    DOWNLOAD_SIGNING_SECRET: SIGNING_SECRET,
    GOOGLE_CLOUD_PROJECT: PROJECT,
    // On Cloud Run (K_SERVICE) a bucket is required; the app below gets local storage of its own.
    GCS_BUCKET: "results-bucket",
    K_SERVICE: "marketplace-api",
    K_REVISION: "marketplace-api-00042-abc",
  });
  logger = createLogger(config, {
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        output.push(chunk.toString());
        done();
      },
    }),
  });
  storage = await createLocalStorage(path.join(work, "objects"), SIGNING_SECRET);
  // The app's own database is the test database; the URL above only has to be in the config.
  app = createApp({ config, db, logger, compress: { storage, runner: passThroughRunner } });
  // Past every route: a fault whose message carries credentials, as a driver's error might.
  app.use((ctx) => {
    if (ctx.path === "/fault") {
      throw new Error(
        `could not reach postgres://app:${DB_PASSWORD}@db.internal:5432/marketplace with Bearer ${QUERY_SECRET}`,
      );
    }
  });
  server = createHttpServer(app).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  secrets = [DB_PASSWORD, REDIS_PASSWORD, PDF_PASSWORD, COOKIE, QUERY_SECRET, SIGNING_SECRET];
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

describe("the request line", () => {
  it("is one Cloud Logging JSON line with severity, message, httpRequest and the traceparent's trace", async () => {
    const response = await get("/api/v1/jobs?limit=1", {
      traceparent: `00-${TRACE_ID}-${SPAN_HEX}-01`,
      "user-agent": "logging-test/1.0",
      referer: `https://example.com/page?token=${QUERY_SECRET}&x=1`,
      cookie: COOKIE,
    });
    expect(response.status).toBe(200);
    const line = await requestLine(response.requestId);
    expect(line).toMatchObject({
      severity: "INFO",
      message: "GET /api/v1/jobs 200",
      requestId: response.requestId,
      "logging.googleapis.com/trace": `projects/${PROJECT}/traces/${TRACE_ID}`,
      "logging.googleapis.com/spanId": SPAN_HEX,
      "logging.googleapis.com/trace_sampled": true,
      httpRequest: {
        requestMethod: "GET",
        requestUrl: "/api/v1/jobs?limit=1",
        status: 200,
        responseSize: String(response.body.length),
        userAgent: "logging-test/1.0",
        remoteIp: "127.0.0.1",
        referer: "https://example.com/page?token=[redacted]&x=1",
        protocol: "HTTP/1.1",
      },
    });
    expect(line.httpRequest!["latency"]).toMatch(/^\d+\.\d{6}s$/);
    expect(Number.parseFloat(line.httpRequest!["latency"] as string)).toBeLessThan(10);
    // RFC 3339 time; none of pino's own level/msg/pid/hostname fields.
    expect(new Date(line.time).toISOString()).toBe(line.time);
    for (const key of ["level", "msg", "pid", "hostname", "serviceContext"]) expect(line).not.toHaveProperty(key);
  });

  it("takes the trace from X-Cloud-Trace-Context, converting its decimal span id to 16 hex digits", async () => {
    const response = await get("/api/v1/jobs", {
      "x-cloud-trace-context": `${TRACE_ID.toUpperCase()}/12345678901234567890;o=0`,
    });
    const line = await requestLine(response.requestId);
    expect(line["logging.googleapis.com/trace"]).toBe(`projects/${PROJECT}/traces/${TRACE_ID}`);
    expect(line["logging.googleapis.com/spanId"]).toBe("ab54a98ceb1f0ad2");
    expect(line["logging.googleapis.com/trace_sampled"]).toBe(false);
  });

  it("ignores invalid trace headers, falling back from an invalid traceparent to a valid X-Cloud-Trace-Context", async () => {
    const invalid = await get("/api/v1/jobs", {
      traceparent: `00-${"0".repeat(32)}-${SPAN_HEX}-01`,
      "x-cloud-trace-context": "not-a-trace/1;o=1",
    });
    const line = await requestLine(invalid.requestId);
    expect(Object.keys(line).filter((key) => key.startsWith("logging.googleapis.com/"))).toEqual([]);

    const fallback = await get("/api/v1/jobs", {
      traceparent: `00-${TRACE_ID.toUpperCase()}-${SPAN_HEX}-01`, // W3C wants lowercase
      "x-cloud-trace-context": `${TRACE_ID}/74`,
    });
    expect(await requestLine(fallback.requestId)).toMatchObject({
      "logging.googleapis.com/trace": `projects/${PROJECT}/traces/${TRACE_ID}`,
      "logging.googleapis.com/spanId": "000000000000004a",
    });
    expect(await requestLine(fallback.requestId)).not.toHaveProperty("logging.googleapis.com/trace_sampled");
  });

  it("is WARNING for a 4xx, and DEBUG for a successful health probe", async () => {
    const missing = await get(`/api/v1/nothing-here?api_key=${QUERY_SECRET}`);
    expect(await requestLine(missing.requestId)).toMatchObject({
      severity: "WARNING",
      message: "GET /api/v1/nothing-here 404",
      httpRequest: { status: 404, requestUrl: "/api/v1/nothing-here?api_key=[redacted]" },
    });
    const probe = await get("/healthz");
    expect(await requestLine(probe.requestId)).toMatchObject({ severity: "DEBUG", message: "GET /healthz 200" });
  });

  it("is ERROR for a 500, and the fault's own line carries the same trace, request id and a stack trace", async () => {
    const response = await get("/fault", {
      "x-cloud-trace-context": `${TRACE_ID}/1;o=1`,
      authorization: `Bearer ${QUERY_SECRET}`,
    });
    expect(response.status).toBe(500);
    const line = await requestLine(response.requestId);
    expect(line).toMatchObject({ severity: "ERROR", message: "GET /fault 500" });
    const fault = linesOf(response.requestId).find((l) => l.message === "unhandled error")!;
    expect(fault).toMatchObject({
      severity: "ERROR",
      serviceContext: { service: "marketplace-api", version: "marketplace-api-00042-abc" },
      "logging.googleapis.com/trace": `projects/${PROJECT}/traces/${TRACE_ID}`,
      "logging.googleapis.com/spanId": "0000000000000001",
      "logging.googleapis.com/trace_sampled": true,
    });
    // Error Reporting reads the stack from stack_trace: the error's first line, then frames.
    expect(fault["stack_trace"]).toMatch(/^Error: could not reach postgres:\/\/app:\[redacted\]@db\.internal/);
    expect(fault["stack_trace"]).toMatch(/\n\s+at /);
  });
});

describe("the compression API's lines", () => {
  it("name the subscriber and key id, never the key, the password or the download signature", async () => {
    const { token, key, subscriber } = await subscriberWithKey(db.prisma);
    secrets.push(token);
    const { body, contentType } = multipart([
      { name: "file", value: await makePdf(1), filename: "locked.pdf" },
      { name: "password", value: PDF_PASSWORD },
    ]);
    const response = await fetch(`${url}/v1/unlock?key=${token}`, {
      method: "POST",
      headers: {
        "content-type": contentType,
        authorization: `Bearer ${token}`,
        traceparent: `00-${TRACE_ID}-${SPAN_HEX}-00`,
      },
      body: new Uint8Array(body),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id")!;
    const result = (await response.json()) as { url: string };
    const line = await requestLine(requestId);
    expect(line).toMatchObject({
      severity: "INFO",
      message: "POST /v1/unlock 200",
      apiKeyId: key.id,
      apiKeyPrefix: token.slice(0, 10),
      subscriberId: subscriber.id,
      "logging.googleapis.com/trace_sampled": false,
      httpRequest: { requestSize: String(body.length), requestUrl: "/v1/unlock?key=[redacted]" },
    });

    // The signed download: its signature is a bearer credential for the file.
    const signature = new URL(result.url).searchParams.get("signature")!;
    secrets.push(signature);
    const download = new URL(result.url);
    const file = await get(`${download.pathname}${download.search}`);
    expect(file.status).toBe(200);
    const downloadLine = await requestLine(file.requestId);
    expect(downloadLine.httpRequest!["requestUrl"]).toMatch(/&signature=\[redacted\]$/);
    expect(downloadLine.httpRequest!["requestUrl"]).toContain("expires=");
    expect(downloadLine.httpRequest!["responseSize"]).toBe(String(file.body.length));

    // A refused key is logged at WARNING without the key.
    const forged = `mkp_${"A".repeat(36)}`;
    secrets.push(forged);
    const refused = await fetch(`${url}/v1/compress`, {
      method: "POST",
      headers: { "content-type": contentType, authorization: `Bearer ${forged}` },
      body: new Uint8Array(body),
    });
    expect(refused.status).toBe(401);
    const refusedLine = await requestLine(refused.headers.get("x-request-id")!);
    expect(refusedLine).toMatchObject({ severity: "WARNING", message: "POST /v1/compress 401" });
    expect(refusedLine).not.toHaveProperty("apiKeyId");
  });

  it("record a client that went away, and the route's own lines carry the request's trace", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    secrets.push(token);
    const { contentType } = multipart([]);
    const boundary = contentType.split("boundary=")[1]!;
    const requestId = `abort-${Date.now()}`;
    await new Promise<void>((resolve) => {
      const target = new URL(`${url}/v1/compress`);
      const req = http.request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          "content-type": contentType,
          authorization: `Bearer ${token}`,
          "content-length": "500000",
          "x-request-id": requestId,
          traceparent: `00-${TRACE_ID}-${SPAN_HEX}-01`,
        },
      });
      req.on("error", () => resolve());
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n`);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    const line = await requestLine(requestId);
    expect(line).toMatchObject({ aborted: true, message: "POST /v1/compress 499 (client closed the connection)" });
    // Written when the route, which may still be reserving the unit when the 499 line is written,
    // finds the upload gone: a loaded CI run once took longer than 5 s to get there.
    await expect
      .poll(() => linesOf(requestId).find((l) => l.message === "client went away during compression"), {
        timeout: 15_000,
      })
      .toMatchObject({ "logging.googleapis.com/trace": `projects/${PROJECT}/traces/${TRACE_ID}` });
    // Not an error of the service: nothing at ERROR for Error Reporting.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(linesOf(requestId).filter((l) => l.severity === "ERROR")).toEqual([]);
  });

  // Issue 44: a file's name is the subscriber's data, forgotten when its result is deleted; no line
  // may carry it, so deletion has nothing to reach in the logs (docs/data.md).
  it("never carry a file's name: not its upload, downloads, deletion, the refused download after, nor the sweep", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    secrets.push(token);
    const NAME = "Quokka-Offer-JDoe";
    const pdf = await makePdf(1);
    const compress = async (retention: string) => {
      const form = multipart([
        { name: "retention", value: retention },
        { name: "file", value: pdf, filename: `${NAME}.pdf` },
      ]);
      const response = await fetch(`${url}/v1/compress`, {
        method: "POST",
        headers: { "content-type": form.contentType, authorization: `Bearer ${token}` },
        body: new Uint8Array(form.body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { id: string; url: string };
    };
    const kept = await compress("3600");
    const once = await compress("0");
    const expiring = await compress("60");

    expect((await fetch(kept.url)).status).toBe(200);
    const whole = await fetch(once.url);
    expect(whole.status).toBe(200);
    await whole.arrayBuffer();
    const deleted = await fetch(`${url}/v1/compressions/${kept.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(deleted.status).toBe(204);
    expect((await fetch(kept.url)).status).toBe(410);
    await expect.poll(async () => (await fetch(once.url)).status, { timeout: 5000 }).toBe(410);
    const swept = await sweepExpiredResults({ prisma: db.prisma, storage }, logger, new Date(Date.now() + 120_000));
    expect(swept.deleted).toBeGreaterThanOrEqual(1);
    expect((await fetch(expiring.url)).status).toBe(410);

    await flushLogger(logger);
    expect(output.join("")).toContain(`/v1/compressions/${kept.id}`);
    expect(output.join(""), "a line names the file").not.toContain(NAME);
    secrets.push(NAME);
  });
});

describe("over HTTP/2 (h2c, as Cloud Run speaks with --use-http2)", () => {
  it("counts the body once and records a reset stream as closed by the client", async () => {
    const h2 = createServiceServer(app, "h2c");
    const { port } = await h2.listen(0, "127.0.0.1");
    const client = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const received = await new Promise<{ bytes: number; requestId: string }>((resolve, reject) => {
        const stream = client.request({
          ":path": "/api/v1/jobs?limit=2",
          traceparent: `00-${TRACE_ID}-${SPAN_HEX}-01`,
        });
        let bytes = 0;
        let requestId = "";
        stream.on("response", (headers) => (requestId = String(headers["x-request-id"])));
        stream.on("data", (chunk: Buffer) => (bytes += chunk.length));
        stream.on("end", () => resolve({ bytes, requestId }));
        stream.on("error", reject);
        stream.end();
      });
      expect(await requestLine(received.requestId)).toMatchObject({
        severity: "INFO",
        "logging.googleapis.com/spanId": SPAN_HEX,
        httpRequest: { status: 200, responseSize: String(received.bytes), protocol: "HTTP/2.0" },
      });

      const { token } = await subscriberWithKey(db.prisma);
      secrets.push(token);
      const requestId = `h2-abort-${Date.now()}`;
      const stream = client.request({
        ":method": "POST",
        ":path": "/v1/compress",
        "content-type": multipart([]).contentType,
        "content-length": "500000",
        authorization: `Bearer ${token}`,
        "x-request-id": requestId,
      });
      stream.on("error", () => undefined);
      stream.write("--x\r\n");
      await new Promise((resolve) => setTimeout(resolve, 200));
      stream.close(http2.constants.NGHTTP2_CANCEL);
      // A client that leaves (Cancel) is an event, not an alarm: INFO (issue 45, item 6).
      expect(await requestLine(requestId)).toMatchObject({
        severity: "INFO",
        aborted: true,
        httpRequest: { status: 499, protocol: "HTTP/2.0" },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(linesOf(requestId).filter((l) => l.severity === "ERROR")).toEqual([]);
    } finally {
      client.close();
      await h2.destroy();
    }
  });
});

describe("secrets", () => {
  it("reach no line: not in the requests, not in connection errors", async () => {
    // The real Redis client, pointed at a closed port with a password in its URL.
    const redis = createRedis({ redis: { url: `redis://:${REDIS_PASSWORD}@127.0.0.1:1` } }, logger, {
      lazyConnect: false,
    });
    await expect.poll(() => output.some((raw) => raw.includes("redis unavailable")), { timeout: 5000 }).toBe(true);
    await closeRedis(redis);
    // Structured fields that name credentials, logged directly.
    logger.info(
      { password: PDF_PASSWORD, headers: { authorization: `Bearer ${QUERY_SECRET}`, cookie: COOKIE } },
      `connecting to rediss://default:${REDIS_PASSWORD}@cache:6380`,
    );
    await flushLogger(logger);

    const all = output.join("");
    expect(all.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(all, secret).not.toContain(secret);
    // Every line is one JSON object with a Cloud Logging severity and a message.
    for (const raw of output) {
      expect(raw.endsWith("\n")).toBe(true);
      const line = JSON.parse(raw) as Line;
      expect(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]).toContain(line.severity);
      expect(typeof line.message).toBe("string");
    }
  });
});

describe("trace header parsing", () => {
  it("reads valid traceparent values and refuses invalid ones", () => {
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_HEX}-01`)).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_HEX,
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_HEX}-02`)?.sampled).toBe(false);
    // A later version may append fields.
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_HEX}-03-extra`)?.sampled).toBe(true);
    for (const invalid of [
      undefined,
      "",
      `ff-${TRACE_ID}-${SPAN_HEX}-01`,
      `00-${TRACE_ID}-${SPAN_HEX}-01-extra`,
      `00-${"0".repeat(32)}-${SPAN_HEX}-01`,
      `00-${TRACE_ID}-${"0".repeat(16)}-01`,
      `00-${TRACE_ID.slice(1)}-${SPAN_HEX}-01`,
      `00-${TRACE_ID.toUpperCase()}-${SPAN_HEX}-01`,
      `00-${TRACE_ID}-${SPAN_HEX}`,
    ]) {
      expect(parseTraceparent(invalid), String(invalid)).toBeNull();
    }
  });

  it("reads X-Cloud-Trace-Context with or without span and options, and refuses invalid ones", () => {
    expect(parseCloudTraceContext(`${TRACE_ID}/74;o=1`)).toEqual({
      traceId: TRACE_ID,
      spanId: "000000000000004a",
      sampled: true,
    });
    expect(parseCloudTraceContext(`${TRACE_ID}/18446744073709551615`)).toEqual({
      traceId: TRACE_ID,
      spanId: "ffffffffffffffff",
    });
    expect(parseCloudTraceContext(TRACE_ID)).toEqual({ traceId: TRACE_ID });
    expect(parseCloudTraceContext(`${TRACE_ID};o=0`)).toEqual({ traceId: TRACE_ID, sampled: false });
    expect(parseCloudTraceContext(`${TRACE_ID}/;o=1`)).toEqual({ traceId: TRACE_ID, sampled: true });
    for (const invalid of [
      undefined,
      "",
      "abc/1;o=1",
      `${"0".repeat(32)}/1;o=1`,
      `${TRACE_ID}/0;o=1`,
      `${TRACE_ID}/18446744073709551616`, // 2^64: not a 64-bit span id
      `${TRACE_ID}/12ab;o=1`,
      `${TRACE_ID}/1;o=x`,
      `${TRACE_ID}x/1`,
    ]) {
      expect(parseCloudTraceContext(invalid), String(invalid)).toBeNull();
    }
  });

  it("prefers traceparent, and writes a bare trace id when the project is unknown", () => {
    const both = traceContextOf({
      traceparent: `00-${TRACE_ID}-${SPAN_HEX}-01`,
      "x-cloud-trace-context": `${"1".repeat(32)}/5;o=0`,
    });
    expect(both).toEqual({ traceId: TRACE_ID, spanId: SPAN_HEX, sampled: true });
    expect(traceFields(both, null)).toEqual({
      "logging.googleapis.com/trace": TRACE_ID,
      "logging.googleapis.com/spanId": SPAN_HEX,
      "logging.googleapis.com/trace_sampled": true,
    });
    expect(traceFields(null, PROJECT)).toEqual({});
  });
});

describe("redaction helpers", () => {
  it("redact credential-bearing query parameters and file names, and nothing else", () => {
    // A download's file name is the subscriber's data: never logged (docs/data.md).
    expect(redactUrl("/v1/files/a.pdf?expires=1&filename=a.pdf&signature=abc")).toBe(
      "/v1/files/a.pdf?expires=1&filename=[redacted]&signature=[redacted]",
    );
    expect(redactUrl("/x?X-Goog-Signature=ab&X-Goog-Credential=sa%40p&X-Goog-Date=1&Api_Key=k&q=key")).toBe(
      "/x?X-Goog-Signature=[redacted]&X-Goog-Credential=[redacted]&X-Goog-Date=1&Api_Key=[redacted]&q=key",
    );
    expect(redactUrl("/api/v1/jobs?limit=5")).toBe("/api/v1/jobs?limit=5");
    expect(redactUrl("/api/v1/jobs")).toBe("/api/v1/jobs");
  });

  it("scrub URL passwords, API keys and bearer tokens from a serialized line, keeping it JSON", () => {
    const key = `mkp_${"a1B2".repeat(9)}`;
    const line = JSON.stringify({
      message: `postgresql://user:pw%40rd@host/db redis://:pw@r:6379 ${key} Bearer abc.def`,
      url: "https://storage.googleapis.com/b/o?X-Goog-Signature=deadbeef&x=1",
      realm: 'Bearer realm="compress"',
    });
    const scrubbed = scrubSecrets(line);
    expect(JSON.parse(scrubbed)).toEqual({
      message: "postgresql://user:[redacted]@host/db redis://:[redacted]@r:6379 mkp_[redacted] Bearer [redacted]",
      url: "https://storage.googleapis.com/b/o?X-Goog-Signature=[redacted]&x=1",
      realm: 'Bearer realm="compress"',
    });
  });
});
