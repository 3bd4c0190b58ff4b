// A framing fuzzer against the real service: src/main.ts as a child process (production mode, the
// h2c listener that sniffs each connection), spoken to byte by byte over raw sockets. Multipart
// bodies truncated at every structural position of a valid request (and at random ones, with
// random tails), duplicate, unknown and oversized fields and parts, missing and garbage
// boundaries, Content-Length lies in both directions, chunked bodies cut or garbled, stalled
// bodies on every route that reads one, oversized and unfinished headers. After each: the process
// still answers /healthz, the answer was a 4xx in the documented shape (JSON; the dashboard's page
// for Try it), no request directory is left behind and nothing was charged.
//
// Bounded for CI (a few dozen structural cases, FUZZ_RUNS random ones, default 25); a longer run:
//   FUZZ_RUNS=2000 npx vitest run test/http/framing-fuzz.test.ts
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf } from "../helpers/compress.ts";
import {
  createServiceDatabase,
  signedInSubscriber,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";
import { h2connect, h2request } from "../helpers/h2.ts";
import { exchange, head, type RawAnswer, type Step } from "./raw-http.ts";

const FUZZ_RUNS = Number(process.env["FUZZ_RUNS"] ?? 25);
const IDLE_SECONDS = 1;
const MAX_UPLOAD = 64 * 1024;
const B = "fuzzB0undary";

let work: string;
let uploads: string;
let database: ServiceDatabase;
let service: ServiceProcess;
let token: string;
let keyId: string;
let cookie: string;
let csrf: string;
let pdf: Buffer;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "framing-fuzz-"));
  uploads = path.join(work, "uploads");
  database = await createServiceDatabase(work);
  ({ token, keyId, cookie } = await signedInSubscriber(database, 100_000));
  pdf = await makePdf(1);
  service = await startService(
    {
      ...database.env,
      HTTP_PROTOCOL: "h2c",
      UPLOAD_TMP_DIR: uploads,
      LOCAL_STORAGE_DIR: path.join(work, "objects"),
      DOWNLOAD_SIGNING_SECRET: "framing-fuzz-signing-secret-of-32-chars",
      BODY_IDLE_TIMEOUT_SECONDS: String(IDLE_SECONDS),
      HEADERS_TIMEOUT_SECONDS: "2",
      RATE_LIMIT_REQUESTS: "1000000",
      COMPRESS_RATE_LIMIT_PER_MINUTE: "1000000",
      COMPRESS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
      COMPRESS_CONCURRENCY: "1",
      COMPRESS_WARM_PROCESSES: "0",
    },
    { name: "framing fuzz service" },
  );
  const page = await (await fetch(`${service.url}/dashboard/try`, { headers: { cookie } })).text();
  csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
  expect(csrf).not.toBe("");
}, 120_000);

afterAll(async () => {
  await service?.stop(5_000);
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

// ---- Requests ----

const part = (name: string, value: string | Buffer, filename?: string) =>
  Buffer.concat([
    Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ""}\r\n` +
        `${filename ? "Content-Type: application/pdf\r\n" : ""}\r\n`,
    ),
    Buffer.from(value),
    Buffer.from("\r\n"),
  ]);
const closing = Buffer.from(`--${B}--\r\n`);
const form = (...parts: Buffer[]) => Buffer.concat([...parts, closing]);

const compressBody = () => form(part("profile", "lossless"), part("file", pdf, "a.pdf"));
const tryBody = () => form(part("csrf_token", csrf), part("key_id", keyId), part("file", pdf, "a.pdf"));

const multipartType = { "content-type": `multipart/form-data; boundary=${B}` };
const compressHeaders = (length: number | null) => ({
  authorization: `Bearer ${token}`,
  ...multipartType,
  ...(length === null ? { "transfer-encoding": "chunked" } : { "content-length": length }),
});
const tryHeaders = (length: number) => ({
  cookie,
  host: new URL(service.url).host,
  origin: service.url,
  ...multipartType,
  "content-length": length,
});

/** POST `body` (or its first `length` bytes, as a complete request of that length) to /v1/compress. */
const postCompress = (body: Buffer, length = body.length) =>
  exchange(service.port, [head("POST", "/v1/compress", compressHeaders(length)), body.subarray(0, length)]);
const postTry = (body: Buffer, length = body.length) =>
  exchange(service.port, [head("POST", "/dashboard/try", tryHeaders(length)), body.subarray(0, length)]);

/** Where a truncation means something: around every boundary, header end and line end of `body`. */
function structuralPositions(body: Buffer): number[] {
  const end = body.lastIndexOf(`\r\n--${B}--`);
  const marks = new Set<number>([0, 1, end, end - 1]);
  for (const needle of [`--${B}`, "\r\n\r\n", "\r\n", `"; filename="`, "%PDF-"]) {
    for (let at = body.indexOf(needle); at >= 0 && at < end; at = body.indexOf(needle, at + 1)) {
      for (const offset of [-1, 0, 1, needle.length - 1, needle.length]) marks.add(at + offset);
    }
  }
  return [...marks].filter((k) => k >= 0 && k < end).sort((a, b) => a - b);
}

// ---- What must hold after every request ----

/** Request directories in the temporary root (besides it: the running process's boot marker). */
const leftovers = async () => (await readdir(uploads).catch(() => [])).filter((name) => name.startsWith("req-")).length;

async function used(): Promise<number> {
  const response = await fetch(`${service.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { used: number }).used;
}

/**
 * Only the baseline's unit stays charged. Polled: a request cut off by the server (a framing error
 * mid-body) is answered at once, and its route gives the unit back when the connection closes.
 */
const chargedOnce = () => expect.poll(used, { timeout: 5_000 }).toBe(1);

/** The process answers, and its request directories are gone. */
async function alive(): Promise<void> {
  const health = await fetch(`${service.url}/healthz`).then(
    (response) => response.status,
    () => 0,
  );
  expect(health, `the service died:\n${service.logs().slice(-20).join("\n")}`).toBe(200);
  await expect.poll(leftovers, { timeout: 3_000 }).toBe(0);
}

/** A 4xx in the error shape: {error: {code, message, request_id}} with X-Error-Code. */
function expectJsonRefusal(answer: RawAnswer, expected?: { status?: number; code?: string }): void {
  const context = `${answer.status} ${answer.body.slice(0, 300)}`;
  expect(answer.status, context).toBeGreaterThanOrEqual(400);
  expect(answer.status, context).toBeLessThan(500);
  expect(answer.headers["content-type"], context).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code, context).toMatch(/^[a-z_]+$/);
  expect(body.error.message, context).not.toBe("");
  expect(body.error.request_id, context).not.toBe("");
  expect(answer.headers["x-error-code"]).toBe(body.error.code);
  if (expected?.status) expect(answer.status, context).toBe(expected.status);
  if (expected?.code) expect(body.error.code, context).toBe(expected.code);
}

/** The dashboard's refusal: its page, with the status and the code. */
function expectPageRefusal(answer: RawAnswer, status: number): void {
  expect(answer.status, answer.body.slice(0, 300)).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/^text\/html/);
}

// ---- The cases ----

describe("a valid request is the baseline", () => {
  it("compresses the untruncated request once (the only unit this file charges)", async () => {
    const answer = await postCompress(compressBody());
    expect(answer.status, `${answer.body}\n${service.logs().slice(-15).join("\n")}`).toBe(200);
    await alive();
    await chargedOnce();
  });
});

describe("multipart truncated at every structural position (Content-Length says where it ends)", () => {
  it("POST /v1/compress: 400 in the error shape, nothing charged, nothing left", async () => {
    const body = compressBody();
    const positions = structuralPositions(body);
    expect(positions.length).toBeGreaterThan(30);
    for (const k of positions) {
      const answer = await postCompress(body, k);
      expectJsonRefusal(answer);
      await alive();
    }
    await chargedOnce();
  });

  it("the issue's request: a body complete at the HTTP level that ends inside the file part", async () => {
    const body = Buffer.from(`--B\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4\n`);
    const answer = await exchange(service.port, [
      head("POST", "/v1/compress", {
        authorization: `Bearer ${token}`,
        "content-type": "multipart/form-data; boundary=B",
        "content-length": body.length,
      }),
      body,
    ]);
    expectJsonRefusal(answer, { status: 400, code: "invalid_multipart" });
    await alive();
    await chargedOnce();
  });

  it("POST /dashboard/try with a session: its 400 page, nothing charged, nothing left", async () => {
    const body = tryBody();
    for (const k of structuralPositions(body)) {
      const answer = await postTry(body, k);
      expectPageRefusal(answer, 400);
      await alive();
    }
    await chargedOnce();
  });

  it(`random truncations with random tails (${FUZZ_RUNS} runs)`, async () => {
    const body = compressBody();
    const end = body.lastIndexOf(`\r\n--${B}--`);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: end - 1 }), fc.uint8Array({ maxLength: 64 }), async (k, tail) => {
        const sent = Buffer.concat([body.subarray(0, k), tail]);
        expectJsonRefusal(await postCompress(sent));
        await alive();
      }),
      { numRuns: FUZZ_RUNS },
    );
    await chargedOnce();
  });
});

describe("fields and parts", () => {
  const file = () => part("file", pdf, "a.pdf");
  it.each([
    ["a duplicate field", () => form(part("profile", "lossless"), part("profile", "extreme"), file()), undefined],
    ["two files", () => form(file(), part("file", pdf, "b.pdf")), "too_many_files"],
    ["a file under another name", () => form(part("document", pdf, "a.pdf")), "unexpected_field"],
    ["an unknown field", () => form(part("colour", "red"), file()), "unexpected_field"],
    ["an oversized field", () => form(part("profile", "x".repeat(5000)), file()), "invalid_profile"],
    ["an oversized field name", () => form(part("p".repeat(500), "lossless"), file()), "unexpected_field"],
    ["forty fields", () => form(...Array.from({ length: 40 }, () => part("profile", "lossless")), file()), undefined],
    ["no file", () => form(part("profile", "lossless")), "missing_file"],
    ["an empty file", () => form(part("file", "", "a.pdf")), "not_a_pdf"],
    ["a file that is not a PDF", () => form(part("file", "hello", "a.pdf")), "not_a_pdf"],
    [
      "a file over the limit",
      () => form(part("file", Buffer.concat([pdf, Buffer.alloc(MAX_UPLOAD)]), "a.pdf")),
      "file_too_large",
    ],
    [
      "a part header of 100 KiB",
      () =>
        form(
          Buffer.from(
            `--${B}\r\nX-Pad: ${"a".repeat(100 * 1024)}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n`,
          ),
          pdf,
          Buffer.from("\r\n"),
        ),
      undefined,
    ],
  ] as const)("%s: a 4xx in the error shape", async (_name, build, code) => {
    const body = build();
    // Chunked: the declared size cannot refuse it early, the parser must.
    const answer = await exchange(service.port, [
      head("POST", "/v1/compress", compressHeaders(null)),
      `${body.length.toString(16)}\r\n`,
      body,
      "\r\n0\r\n\r\n",
    ]);
    expectJsonRefusal(answer, code ? { code } : {});
    await alive();
    await chargedOnce();
  });
});

describe("boundaries", () => {
  const post = (contentType: string, body: Buffer | string) =>
    exchange(service.port, [
      head("POST", "/v1/compress", {
        authorization: `Bearer ${token}`,
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
      }),
      body,
    ]);
  it.each([
    ["no boundary", "multipart/form-data", () => compressBody()],
    ["an empty boundary", "multipart/form-data; boundary=", () => compressBody()],
    ["another boundary than the body's", "multipart/form-data; boundary=other", () => compressBody()],
    ["a boundary of 300 characters", `multipart/form-data; boundary=${"b".repeat(300)}`, () => compressBody()],
    [
      "garbage for a body",
      `multipart/form-data; boundary=${B}`,
      () => Buffer.from("\x00\xff--\r\n\r\n--garbage--\r\n"),
    ],
    ["an empty body", `multipart/form-data; boundary=${B}`, () => Buffer.alloc(0)],
    ["only the closing boundary", `multipart/form-data; boundary=${B}`, () => closing],
    ["not multipart", "text/plain", () => Buffer.from("hello")],
  ])("%s: a 4xx in the error shape", async (_name, contentType, body) => {
    expectJsonRefusal(await post(contentType, body()));
    await alive();
  });
});

describe("Content-Length lies", () => {
  it("shorter than the body: the request ends early (4xx), the rest is refused as HTTP, the process lives", async () => {
    const body = compressBody();
    const answer = await exchange(service.port, [
      head("POST", "/v1/compress", { ...compressHeaders(body.length - 200), connection: "keep-alive" }),
      body,
    ]);
    expectJsonRefusal(answer);
    await alive();
  });

  it("longer than the body, the client silent: 408 once the body stalls", async () => {
    const body = compressBody();
    const answer = await exchange(service.port, [
      head("POST", "/v1/compress", compressHeaders(body.length + 500)),
      body,
    ]);
    expectJsonRefusal(answer, { status: 408, code: "upload_timeout" });
    await alive();
  });

  it("longer than the body, the client half-closes: taken as gone (no answer), nothing charged, the process lives", async () => {
    const body = compressBody();
    const answer = await exchange(
      service.port,
      [head("POST", "/v1/compress", compressHeaders(body.length + 500)), body],
      {
        end: true,
      },
    );
    expect(answer.status).toBe(0);
    await alive();
    await chargedOnce();
  });

  it.each([
    ["not a number", { "content-length": "12abc" }],
    ["negative", { "content-length": "-5" }],
    ["twice, differing", { "content-length": ["10", "20"] }],
    ["with Transfer-Encoding too", { "content-length": "10", "transfer-encoding": "chunked" }],
  ])("%s: 400 bad_request in the error shape", async (_name, headers) => {
    const lines = Object.entries(headers).flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}\r\n`),
    );
    const answer = await exchange(service.port, [
      `POST /v1/compress HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${lines.join("")}\r\n`,
      "0123456789",
    ]);
    expectJsonRefusal(answer, { status: 400, code: "bad_request" });
    await alive();
  });
});

describe("chunked bodies", () => {
  const chunk = (bytes: Buffer) =>
    Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
  const start = () => head("POST", "/v1/compress", compressHeaders(null));
  it.each<[string, () => Step[], ExchangeEnd]>([
    ["cut after a chunk, the client silent", () => [start(), chunk(compressBody().subarray(0, 300))], {}],
    ["cut inside a chunk, the client silent", () => [start(), "400\r\n", compressBody().subarray(0, 300)], {}],
    ["a chunk size that is not hex", () => [start(), chunk(compressBody().subarray(0, 300)), "zz\r\nhello\r\n"], {}],
    ["a chunk longer than it says", () => [start(), "5\r\n", compressBody().subarray(0, 300), "\r\n0\r\n\r\n"], {}],
  ])("%s: a 4xx in the error shape", async (_name, steps, options) => {
    expectJsonRefusal(await exchange(service.port, steps(), options));
    await alive();
    await chargedOnce();
  });

  it("cut inside a chunk, the client half-closes: taken as gone (no answer), nothing charged", async () => {
    const answer = await exchange(service.port, [start(), "400\r\n", compressBody().subarray(0, 300)], { end: true });
    expect(answer.status).toBe(0);
    await alive();
    await chargedOnce();
  });
});

type ExchangeEnd = { end?: boolean };

describe("stalled bodies on every route that reads one: 408 within the idle limit", () => {
  const stalled = async (method: string, target: string, headers: Record<string, string | number>, first: string) => {
    const answer = await exchange(service.port, [head(method, target, { "content-length": 1000, ...headers }), first], {
      timeoutMs: 10_000,
    });
    expectJsonRefusal(answer, { status: 408 });
    expect(answer.ms).toBeLessThan(IDLE_SECONDS * 1000 + 3000);
    await alive();
  };

  it("POST /graphql", () => stalled("POST", "/graphql", { "content-type": "application/json" }, '{"query":"{'));
  it("POST /mcp", () =>
    stalled(
      "POST",
      "/mcp",
      { "content-type": "application/json", accept: "application/json, text/event-stream" },
      '{"jsonrpc":"2.0",',
    ));
  it("POST /dashboard/sign-in", () =>
    stalled("POST", "/dashboard/sign-in", { "content-type": "application/x-www-form-urlencoded" }, "email=a"));
  it("POST /v1/compress (multipart)", () =>
    stalled("POST", "/v1/compress", compressHeaders(1000), `--${B}\r\nContent-Disposition: form-data; name="file"`));
  it("POST /v1/uploads (JSON)", () =>
    stalled("POST", "/v1/uploads", { authorization: `Bearer ${token}`, "content-type": "application/json" }, "{"));
  it("PUT /v1/uploads/content/… (a direct upload)", async () => {
    const created = await fetch(`${service.url}/v1/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    const { upload_url: url } = (await created.json()) as { upload_url: string };
    const target = new URL(url);
    await stalled("PUT", `${target.pathname}${target.search}`, { "content-type": "application/pdf" }, "%PDF-1.7\n");
  });
  it.each([
    ["POST /graphql", "/graphql", () => ({ "content-type": "application/json" })],
    ["POST /v1/compress (multipart)", "/v1/compress", () => compressHeaders(1000)],
  ])("over HTTP/2, %s: 408, the session carries on", async (_name, target, headersOf) => {
    const session = await h2connect(service.url);
    try {
      const started = Date.now();
      const stream = session.request({ ":method": "POST", ":path": target, "content-length": "1000", ...headersOf() });
      stream.write(`--${B}\r\n`);
      const answer = await new Promise<{ status: number; body: string }>((resolve) => {
        let body = "";
        let status = 0;
        stream.on("response", (h) => (status = Number(h[":status"])));
        stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
        stream.on("close", () => resolve({ status, body }));
        stream.on("error", () => undefined);
      });
      expect(answer.status, answer.body).toBe(408);
      expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toMatch(/timeout$/);
      expect(Date.now() - started).toBeLessThan(IDLE_SECONDS * 1000 + 3000);
      // The connection serves other streams still.
      expect((await h2request(session, { ":method": "GET", ":path": "/healthz" })).status).toBe(200);
    } finally {
      session.close();
    }
    await alive();
  });

  it("a route that never reads its body: its early answer, and the process lives", async () => {
    const answer = await exchange(service.port, [head("POST", "/no/such/route", { "content-length": 1000 }), "abc"]);
    expectJsonRefusal(answer, { status: 404 });
    await alive();
  });
});

describe("headers", () => {
  it("larger than 16 KiB: 431 in the error shape", async () => {
    const answer = await exchange(service.port, [head("GET", "/healthz", { "x-pad": "a".repeat(20_000) })]);
    expectJsonRefusal(answer, { status: 431, code: "headers_too_large" });
    await alive();
  });

  it("never finished: 408 in the error shape once the headers timeout passes", async () => {
    const answer = await exchange(service.port, ["GET /healthz HTTP/1.1\r\nHost: x\r\n"], { timeoutMs: 10_000 });
    expectJsonRefusal(answer, { status: 408, code: "request_timeout" });
    await alive();
  });

  it("two Host headers: 400 in the error shape (RFC 9112 section 3.2)", async () => {
    const answer = await exchange(service.port, [
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    ]);
    expectJsonRefusal(answer, { status: 400, code: "bad_request" });
    await alive();
  });

  it("a garbled request line: 400 in the error shape", async () => {
    expectJsonRefusal(await exchange(service.port, ["GET\x00/ HTTP/9\r\n\r\n"]), { status: 400, code: "bad_request" });
    await alive();
  });

  it("an HTTP/2 preface followed by garbage: the connection is closed, the process lives", async () => {
    const answer = await exchange(service.port, ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", Buffer.alloc(64, 0xff)], {
      timeoutMs: 5_000,
    });
    expect(answer.status).toBe(0);
    await alive();
  });
});

describe("afterwards", () => {
  it("charged exactly the one compression that delivered, and left no request directory", async () => {
    await chargedOnce();
    expect(await leftovers()).toBe(0);
    expect(service.records().filter((record) => record["severity"] === "CRITICAL")).toEqual([]);
  });
});
