// The compression API's HTTP contract through real HTTP: keys (checked before the body),
// per-key rate limit, monthly quota and its races, upload limits and the exact size boundary,
// every refusal's status, code and headers, temporary files, and signed downloads.
import { createHmac } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { PDFDocument } from "@cantoo/pdf-lib";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import {
  largePdfUpload,
  makePdf,
  multipart,
  openPost,
  passThroughRunner,
  postExpectingContinue,
  subscriberWithKey,
} from "../helpers/compress.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const SIGNING_SECRET = "test-signing-secret-of-at-least-32-chars";
let db: TestDatabase;
let server: TestServer;
let work: string;
let uploads: string;
let pdf: Buffer;

async function start(env: Record<string, string> = {}) {
  const objects = path.join(work, `objects-${Math.random().toString(36).slice(2)}`);
  return startServer(
    db,
    {
      UPLOAD_TMP_DIR: uploads,
      LOCAL_STORAGE_DIR: objects,
      DOWNLOAD_SIGNING_SECRET: SIGNING_SECRET,
      ...env,
    },
    { compress: { storage: await createLocalStorage(objects, SIGNING_SECRET), runner: passThroughRunner } },
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "compress-http-"));
  uploads = path.join(work, "uploads");
  pdf = await makePdf(3);
  server = await start({ COMPRESS_MAX_UPLOAD_BYTES: String(1024 * 1024) });
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

type ErrorBody = { error: { code: string; message: string; request_id?: string } };

async function compress(
  token: string | null,
  parts = [{ name: "file", value: pdf, filename: "report.pdf" }] as Parameters<typeof multipart>[0],
  base = server.url,
) {
  const { body, contentType } = multipart(parts);
  const response = await fetch(`${base}/v1/compress`, {
    method: "POST",
    headers: { "content-type": contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: new Uint8Array(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: JSON.parse(text) as Record<string, unknown> };
}

const leftovers = async () => (await readdir(uploads).catch(() => [])).length;

describe("authentication", () => {
  it("refuses a missing, malformed, mistyped, unknown, revoked or non-corporate key with 401", async () => {
    const valid = await subscriberWithKey(db.prisma);
    const revoked = await subscriberWithKey(db.prisma);
    await revoked.admin.revokeKey(revoked.key.id);
    const downgraded = await subscriberWithKey(db.prisma, { plan: "professional" });
    const mistyped = `${valid.token.slice(0, -1)}${valid.token.endsWith("A") ? "B" : "A"}`;
    // Well-formed (right checksum) but never issued.
    const unknown = (await subscriberWithKey(db.prisma)).token;
    await db.prisma.apiKey.deleteMany({ where: { prefix: unknown.slice(0, 10) } });
    const cases: [string | null, string][] = [
      [null, "missing_api_key"],
      ["not-a-key", "malformed_api_key"],
      [mistyped, "malformed_api_key"],
      [unknown, "invalid_api_key"],
      [revoked.token, "invalid_api_key"],
      [downgraded.token, "plan_not_eligible"],
    ];
    for (const [token, code] of cases) {
      const { status, headers, json } = await compress(token);
      expect(status, code).toBe(401);
      expect((json as ErrorBody).error.code).toBe(code);
      expect(headers.get("x-error-code")).toBe(code);
      expect(headers.get("x-error-message")).toBeTruthy();
      expect(headers.get("www-authenticate")).toMatch(/^Bearer realm="compress"/);
    }
    expect((await compress(valid.token)).status).toBe(200);
  });

  it("answers 401 before the body: no 100 Continue, nothing of the upload sent", async () => {
    const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "a.pdf" }]);
    const response = await postExpectingContinue(
      `${server.url}/v1/compress`,
      { "content-type": contentType, authorization: "Bearer mkp_wrong" },
      body,
    );
    expect(response.status).toBe(401);
    expect(response.continued).toBe(false);
    expect(response.sent).toBe(0);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: "malformed_api_key" } });
  });

  it("answers 100 Continue to a good key and then reads the body", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "a.pdf" }]);
    const response = await postExpectingContinue(
      `${server.url}/v1/compress`,
      { "content-type": contentType, authorization: `Bearer ${token}` },
      body,
    );
    expect(response.continued).toBe(true);
    expect(response.status).toBe(200);
  });

  it("decides on 100 Continue whatever the path's case: POST /V1/COMPRESS with a wrong key gets no 100", async () => {
    const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "a.pdf" }]);
    const response = await postExpectingContinue(
      `${server.url}/V1/COMPRESS`,
      { "content-type": contentType, authorization: "Bearer mkp_wrong" },
      body,
    );
    expect(response.status).toBe(401);
    expect(response.continued).toBe(false);
    expect(response.sent).toBe(0);
  });

  it("delivers the 401 intact to a client that sends a large body without waiting (fetch)", async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 0x20);
    const { status, json } = await compress("mkp_wrong", [{ name: "file", value: big, filename: "big.pdf" }]);
    expect(status).toBe(401);
    expect((json as ErrorBody).error.code).toBe("malformed_api_key");
  });

  it("records the key's last use", async () => {
    const { token, key } = await subscriberWithKey(db.prisma);
    await compress(token);
    await expect
      .poll(async () => (await db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt)
      .not.toBeNull();
  });
});

describe("the result", () => {
  it("answers the documented fields and a signed URL that downloads the PDF", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { status, json, headers } = await compress(token);
    expect(status).toBe(200);
    expect(Object.keys(json).sort()).toEqual(
      [
        "id",
        "compressed_size",
        "expires_in",
        "original_size",
        "savings_percentage",
        "success",
        "url",
        "retention",
        "expires_at",
      ].sort(),
    );
    expect(json).toMatchObject({ success: true, original_size: pdf.length, expires_in: 3600 });
    expect(json["compressed_size"]).toBeLessThanOrEqual(pdf.length);
    expect(typeof json["savings_percentage"]).toBe("number");
    expect(headers.get("x-quota-limit")).toBe("1000");
    expect(headers.get("x-quota-remaining")).toBe("999");
    const download = await fetch(json["url"] as string);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/pdf");
    expect(download.headers.get("content-disposition")).toContain('filename="report-compressed.pdf"');
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(download.headers.get("content-length")).toBe(String(bytes.length));
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(3);
  });

  it("keeps a UTF-8 file name as sent (busboy read it as latin1: rÃ©sumÃ©)", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { status, json } = await compress(token, [{ name: "file", value: pdf, filename: "résumé_履歴書.pdf" }]);
    expect(status).toBe(200);
    const download = await fetch(json["url"] as string);
    await download.arrayBuffer();
    const disposition = download.headers.get("content-disposition") ?? "";
    const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1] ?? "";
    expect(decodeURIComponent(encoded), disposition).toBe("résumé_履歴書-compressed.pdf");
  });

  it("serves a byte range of the download (a resumed download), nosniff, and 416 past the end", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const url = (await compress(token)).json["url"] as string;
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    const size = whole.length;
    for (const [range, start, end] of [
      ["bytes=0-99", 0, 99],
      ["bytes=100-", 100, size - 1],
      ["bytes=-50", size - 50, size - 1],
      [`bytes=10-${size + 1000}`, 10, size - 1],
    ] as const) {
      const part = await fetch(url, { headers: { range } });
      expect(part.status, range).toBe(206);
      expect(part.headers.get("content-range")).toBe(`bytes ${start}-${end}/${size}`);
      expect(part.headers.get("x-content-type-options")).toBe("nosniff");
      expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(start, end + 1))).toBe(true);
    }
    const several = await fetch(url, { headers: { range: "bytes=0-1,5-6" } });
    expect(several.status).toBe(200);
    expect(several.headers.get("accept-ranges")).toBe("bytes");
    await several.arrayBuffer();
    const past = await fetch(url, { headers: { range: `bytes=${size}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${size}`);
    expect(((await past.json()) as ErrorBody).error.code).toBe("range_not_satisfiable");
  });

  it("refuses a tampered or expired download address with 403 in the error shape", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const url = new URL((await compress(token)).json["url"] as string);
    const tampered = new URL(url);
    tampered.searchParams.set("filename", "other.pdf");
    const response = await fetch(tampered);
    expect(response.status).toBe(403);
    expect(((await response.json()) as ErrorBody).error.code).toBe("invalid_signature");
    // A correctly signed address whose time has passed.
    const name = url.pathname.split("/").pop()!;
    const expires = String(Math.floor(Date.now() / 1000) - 10);
    const filename = "report-compressed.pdf";
    const signature = createHmac("sha256", SIGNING_SECRET)
      .update(`${name}\n${expires}\n${filename}`)
      .digest("base64url");
    const expired = await fetch(
      `${url.origin}${url.pathname}?${new URLSearchParams({ expires, filename, signature }).toString()}`,
    );
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as ErrorBody).error.code).toBe("url_expired");
  });
});

describe("request shape", () => {
  const file = (name = "file") => ({ name, value: pdf, filename: "a.pdf" });
  it.each([
    ["a bad profile", () => [file(), { name: "profile", value: "maximum" }], 400, "invalid_profile"],
    ["no file", () => [{ name: "profile", value: "lossless" }], 400, "missing_file"],
    ["an unknown field", () => [file(), { name: "quality", value: "9" }], 400, "unexpected_field"],
    ["a file under another name", () => [file("document")], 400, "unexpected_field"],
    ["two files", () => [file(), file()], 400, "too_many_files"],
    [
      "a profile given twice",
      () => [file(), { name: "profile", value: "lossless" }, { name: "profile", value: "extreme" }],
      400,
      "invalid_profile",
    ],
    [
      "a PNG",
      () => [{ name: "file", value: Buffer.from("\x89PNG\r\n\x1a\n".padEnd(4000, "x")), filename: "p.pdf" }],
      422,
      "not_a_pdf",
    ],
    ["an empty file", () => [{ name: "file", value: Buffer.alloc(0), filename: "e.pdf" }], 422, "not_a_pdf"],
  ] as const)("%s is a %i %s, not charged", async (_label, parts, status, code) => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const response = await compress(token, parts());
    expect(response.status).toBe(status);
    expect((response.json as ErrorBody).error.code).toBe(code);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    expect(await leftovers()).toBe(0);
  });

  it("takes an empty callback_url (as a form sends it) and refuses a URL without Prefer: respond-async, naming it", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const empty = await compress(token, [file(), { name: "callback_url", value: "" }]);
    expect(empty.status).toBe(200);
    const url = await compress(token, [file(), { name: "callback_url", value: "https://example.com/hook" }]);
    expect(url.status).toBe(400);
    const { error } = url.json as ErrorBody;
    expect(error.code).toBe("unexpected_field");
    expect(error.message).toContain("Prefer: respond-async");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    expect(await leftovers()).toBe(0);
  });

  it("refuses a body that is not multipart with 415", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const response = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/pdf" },
      body: new Uint8Array(pdf),
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as ErrorBody).error.code).toBe("unsupported_media_type");
  });

  it("answers other methods with 405 and Allow", async () => {
    const response = await fetch(`${server.url}/v1/compress`);
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toContain("POST");
  });
});

describe("size limit", () => {
  it("refuses a declared oversize upload with 413 before the body", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { body, contentType } = multipart([
      { name: "file", value: Buffer.alloc(2 * 1024 * 1024), filename: "x.pdf" },
    ]);
    const response = await postExpectingContinue(
      `${server.url}/v1/compress`,
      { "content-type": contentType, authorization: `Bearer ${token}` },
      body,
    );
    expect(response.status).toBe(413);
    expect(response.continued).toBe(false);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: "file_too_large" } });
  });

  it("accepts a file of exactly the limit and refuses one byte more, streamed without a length", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const limit = 1024 * 1024;
    const exactly = Buffer.concat([pdf, Buffer.alloc(limit - pdf.length, 0x20)]);
    expect(exactly.length).toBe(limit);
    const ok = await compress(token, [{ name: "file", value: exactly, filename: "exact.pdf" }]);
    expect(ok.status).toBe(200);
    expect(ok.json["original_size"]).toBe(limit);
    const over = await chunkedUpload(token, Buffer.concat([exactly, Buffer.from(" ")]));
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body)).toMatchObject({ error: { code: "file_too_large" } });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    expect(await leftovers()).toBe(0);
  });
});

describe("quota", () => {
  it("answers 402 when the month's quota is used up, with when it renews", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 2 });
    expect((await compress(token)).status).toBe(200);
    expect((await compress(token)).status).toBe(200);
    const refused = await compress(token);
    expect(refused.status).toBe(402);
    expect((refused.json as ErrorBody).error.code).toBe("quota_exceeded");
    expect(refused.headers.get("x-quota-remaining")).toBe("0");
    expect(new Date(refused.headers.get("x-quota-reset")!).getUTCDate()).toBe(1);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("admits exactly the remaining quota under 50 concurrent requests, and charges only successes", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma, { quota: 10 });
    const results = await Promise.all(Array.from({ length: 50 }, () => compress(token)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(10);
    const succeeded = await db.prisma.compression.count({
      where: { subscriberId: subscriber.id, status: "succeeded" },
    });
    expect(succeeded).toBe(10);
  });
});

describe("rate limit per key", () => {
  it("refuses the 121st request in a minute with 429 and retry-after", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    // Requests without a file are cheap and still count.
    const noFile = [{ name: "profile", value: "balanced" }];
    const first = await Promise.all(Array.from({ length: 120 }, () => compress(token, noFile)));
    expect(first.every((r) => r.status === 400)).toBe(true);
    expect(first[0]!.headers.get("ratelimit-policy")).toContain('"api-key";q=120;w=60');
    const refused = await compress(token, noFile);
    expect(refused.status).toBe(429);
    expect((refused.json as ErrorBody).error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another key is not affected.
    const other = await subscriberWithKey(db.prisma);
    expect((await compress(other.token)).status).toBe(200);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  });
});

describe("aborted uploads", () => {
  it("leave no temporary file and no charge", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const { contentType } = multipart([]);
    const boundary = contentType.split("boundary=")[1]!;
    await new Promise<void>((resolve) => {
      const target = new URL(`${server.url}/v1/compress`);
      const req = http.request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { "content-type": contentType, authorization: `Bearer ${token}`, "content-length": "500000" },
      });
      req.on("error", () => resolve());
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n`);
      req.write(pdf.subarray(0, 1000));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    await expect.poll(leftovers, { timeout: 5000 }).toBe(0);
    await expect.poll(() => usedThisMonth(db.prisma, subscriber.id), { timeout: 5000 }).toBe(0);
    await expect
      .poll(() => db.prisma.compression.count({ where: { subscriberId: subscriber.id, status: "failed" } }))
      .toBe(1);
  });

  it("cut off a stalled upload with 408", async () => {
    const slow = await start({ UPLOAD_IDLE_TIMEOUT_SECONDS: "1" });
    try {
      const { token, subscriber } = await subscriberWithKey(db.prisma);
      const { contentType } = multipart([]);
      const boundary = contentType.split("boundary=")[1]!;
      const { req, response: answer } = openPost(`${slow.url}/v1/compress`, {
        "content-type": contentType,
        authorization: `Bearer ${token}`,
        "transfer-encoding": "chunked",
      });
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n`);
      const response = await answer;
      expect(response.status).toBe(408);
      expect(JSON.parse(response.body)).toMatchObject({ error: { code: "upload_timeout" } });
      expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
      expect(await leftovers()).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

/** A multipart upload with Transfer-Encoding: chunked, so the server cannot know the size in advance. */
function chunkedUpload(token: string, file: Buffer): Promise<{ status: number; body: string }> {
  const { body, contentType } = multipart([{ name: "file", value: file, filename: "big.pdf" }]);
  const { req, response } = openPost(`${server.url}/v1/compress`, {
    "content-type": contentType,
    authorization: `Bearer ${token}`,
    "transfer-encoding": "chunked",
  });
  const source = Readable.from([body.subarray(0, 100_000), body.subarray(100_000)]);
  source.on("error", () => undefined);
  source.pipe(req);
  return response;
}

describe("the 300 MB limit itself", () => {
  const LIMIT = 300 * 1024 * 1024;

  /** Streams a multipart upload whose file part is `size` bytes: a PDF header, then spaces. */
  function streamUpload(base: string, token: string, size: number, declareLength: boolean) {
    const upload = largePdfUpload(size);
    const { req, response } = openPost(`${base}/v1/compress`, {
      authorization: `Bearer ${token}`,
      "content-type": upload.contentType,
      ...(declareLength ? { "content-length": String(upload.length) } : { "transfer-encoding": "chunked" }),
    });
    const source = upload.body();
    source.on("error", () => undefined);
    source.pipe(req);
    return response;
  }

  it("accepts exactly 314,572,800 bytes and refuses one more, without holding the upload in memory", async () => {
    const big = await start();
    try {
      const { token } = await subscriberWithKey(db.prisma);
      const rssBefore = process.memoryUsage().rss;
      const exact = await streamUpload(big.url, token, LIMIT, true);
      expect(exact.status, exact.body).toBe(200);
      expect(JSON.parse(exact.body)).toMatchObject({ original_size: LIMIT });
      // The server runs in this process: 300 MB of upload must not have landed in its memory.
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(150 * 1024 * 1024);
      const over = await streamUpload(big.url, token, LIMIT + 1, false);
      expect(over.status).toBe(413);
      expect(JSON.parse(over.body)).toMatchObject({ error: { code: "file_too_large" } });
      expect(await leftovers()).toBe(0);
    } finally {
      await big.close();
    }
  }, 180_000);
});

describe("the OpenAPI description of /v1", () => {
  it("documents every answer the tests provoke, in shape", async () => {
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Record<string, unknown>;
    expect(doc["openapi"]).toBe("3.1.0");
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: "https://v1.test/openapi.json" });
    const check = (status: number, body: unknown) => {
      const ref = `https://v1.test/openapi.json#/paths/~1v1~1compress/post/responses/${status}/content/application~1json/schema`;
      const validate = ajv.getSchema(ref);
      expect(validate, `status ${status} is documented`).toBeDefined();
      expect(validate!(body), `${status}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
    };
    const { token } = await subscriberWithKey(db.prisma, { quota: 1 });
    const ok = await compress(token);
    check(ok.status, ok.json);
    expect(ok.status).toBe(200);
    const quota = await compress(token);
    expect(quota.status).toBe(402);
    check(quota.status, quota.json);
    for (const response of [await compress(null), await compress(token, [{ name: "profile", value: "x" }])]) {
      check(response.status, response.json);
    }
  });
});
