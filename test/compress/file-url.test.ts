// Files by URL over real HTTP (issue 44 item 5): file_url instead of a file on POST /v1/compress,
// /v1/unlock and jobs (a multipart field or a JSON member), fetched under the webhook address policy.
// Two services: one on the defaults of a test or production process (public addresses only), where
// every class of address is refused by its spelling or at connect time (a name resolving to loopback);
// one as `npm start` runs (NODE_ENV=development: this machine allowed, nothing else private), which
// fetches from a local server of files and faults: a redirect to a private or metadata address, more
// than 3 redirects, a file over the limit (declared, and streamed without a length), not a PDF, a
// server that never answers, stalls mid-body or closes the connection. Each refusal is its code in
// the error shape, nothing is charged and no workspace is left; a fetched file compresses as the
// same file uploaded.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { Resolver } from "../../src/compress/address-policy.ts";
import { fetchFileUrl } from "../../src/compress/workflow/file-url.ts";
import { startJobWorker } from "../../src/compress/async-jobs/worker.ts";
import { createGcsStorage } from "../../src/compress/storage/gcs.ts";
import { createLogger } from "../../src/logger.ts";
import { compressUrl, createCompressionClient, unlockUrl } from "../../clients/typescript/src/index.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeGcs, testServiceAccount, type FakeGcs } from "../helpers/fake-gcs.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";

const MAX_BYTES = 200_000;

/** Answers every name with 127.0.0.1 (a name that rebinds to loopback), counting the lookups. */
const lookups: string[] = [];
const toLoopback: Resolver = (hostname, _options, callback) => {
  lookups.push(hostname);
  callback(null, [{ address: "127.0.0.1", family: 4 }]);
};

let strict: CompressionStack;
let local: CompressionStack;
let files: Server;
let origin: string;
let pdf: Buffer;
const open = new Set<ServerResponse>();
/** Requests the file server was sent, by path. */
const served: string[] = [];

/** The local server of files and faults. */
function fileServer(): Server {
  return createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    const route = req.url ?? "/";
    served.push(route);
    const redirect = (to: string) => res.writeHead(302, { Location: to }).end();
    if (route === "/cv.pdf") return res.writeHead(200, { "Content-Type": "application/pdf" }).end(pdf);
    if (route.startsWith("/hop/")) {
      const n = Number(route.slice(5));
      return n === 0 ? redirect("/cv.pdf") : redirect(`/hop/${n - 1}`);
    }
    if (route === "/to-private") return redirect("https://10.0.0.1/cv.pdf");
    if (route === "/to-metadata") return redirect("https://169.254.169.254/latest/meta-data/");
    if (route === "/to-http") return redirect("http://files.example.com/cv.pdf");
    if (route === "/page.html") return res.writeHead(200, { "Content-Type": "text/html" }).end("<html>hello</html>");
    if (route === "/missing.pdf") return res.writeHead(404).end("not here");
    if (route === "/declared-large.pdf") {
      res.writeHead(200, { "Content-Length": String(MAX_BYTES + 1) });
      return res.write("%PDF-1.7\n");
    }
    if (route === "/endless.pdf") {
      res.writeHead(200, { "Content-Type": "application/pdf" });
      res.write("%PDF-1.7\n");
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      return pump();
    }
    if (route === "/silent.pdf") return; // never answers
    if (route === "/stall.pdf") {
      res.writeHead(200, { "Content-Length": "50000" });
      return res.write(pdf.subarray(0, 100));
    }
    if (route === "/cut.pdf") {
      res.writeHead(200, { "Content-Length": String(pdf.length + 1000) });
      res.write(pdf);
      return setTimeout(() => res.socket?.destroy(), 50);
    }
    res.writeHead(404).end();
  });
}

beforeAll(async () => {
  pdf = await makePdf(2);
  files = fileServer();
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  // 2 s: a stalled body ends the case quickly, and a loaded machine (CI, load 10) still fetches within it.
  const env = { COMPRESS_MAX_UPLOAD_BYTES: String(MAX_BYTES), UPLOAD_IDLE_TIMEOUT_SECONDS: "2" };
  strict = await startCompressionStack({ name: "file-url-strict", env, resolver: toLoopback });
  local = await startCompressionStack({ name: "file-url-local", env: { ...env, NODE_ENV: "development" } });
});
afterAll(async () => {
  for (const res of open) res.destroy();
  files?.close();
  await strict?.close();
  await local?.close();
});

interface Answer {
  status: number;
  body: { error?: { code: string; message: string }; compressed_size?: number; original_size?: number; id?: string };
  headers: Headers;
}

async function post(
  stack: CompressionStack,
  token: string,
  body: Record<string, string>,
  options: { form?: boolean; route?: string; async?: boolean; file?: Buffer } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.async) headers["prefer"] = "respond-async";
  let payload: Uint8Array<ArrayBuffer>;
  if (options.form || options.file) {
    const form = multipart([
      ...Object.entries(body).map(([name, value]) => ({ name, value })),
      ...(options.file ? [{ name: "file", value: options.file, filename: "cv.pdf" }] : []),
    ]);
    headers["content-type"] = form.contentType;
    payload = new Uint8Array(form.body);
  } else {
    headers["content-type"] = "application/json";
    payload = new Uint8Array(Buffer.from(JSON.stringify(body)));
  }
  const response = await fetch(`${stack.server.url}${options.route ?? "/v1/compress"}`, {
    method: "POST",
    headers,
    body: payload,
  });
  return { status: response.status, body: (await response.json()) as Answer["body"], headers: response.headers };
}

/** Workspaces left in the stack's temporary directory. */
const leftovers = async (stack: CompressionStack) =>
  (await readdir(path.join(stack.work, "uploads")).catch(() => [] as string[])).filter((name) =>
    name.startsWith("req-"),
  );

describe("file_url on the defaults (public addresses only)", () => {
  it.each([
    ["a private network (10/8)", "https://10.1.2.3/cv.pdf"],
    ["loopback (127/8)", "https://127.0.0.1/cv.pdf"],
    ["the metadata server (169.254.169.254)", "https://169.254.169.254/latest/meta-data/"],
    ["IPv6 loopback (::1)", "https://[::1]/cv.pdf"],
    ["IPv6 unique local (fc00::/7)", "https://[fc00::1]/cv.pdf"],
    ["IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/cv.pdf"],
    ["localhost by name", "https://localhost/cv.pdf"],
    ["a metadata name", "https://metadata.google.internal/computeMetadata/v1/"],
  ])("refuses %s: 400 file_url_forbidden, nothing charged", async (_what, url) => {
    const { token, subscriber } = await subscriberWithKey(strict.db.prisma);
    const answer = await post(strict, token, { file_url: url });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe("file_url_forbidden");
    expect(await usedThisMonth(strict.db.prisma, subscriber.id)).toBe(0);
  });

  it("refuses a name that resolves to loopback at connect time (the connection's own lookup)", async () => {
    const { token, subscriber } = await subscriberWithKey(strict.db.prisma);
    lookups.length = 0;
    const answer = await post(strict, token, { file_url: "https://files.example.com/cv.pdf" });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "file_url_forbidden" });
    expect(answer.body.error?.message).toContain("127.0.0.1");
    expect(lookups).toEqual(["files.example.com"]);
    expect(await usedThisMonth(strict.db.prisma, subscriber.id)).toBe(0);
    expect(await leftovers(strict)).toEqual([]);
  });

  it.each([
    ["http: on the defaults", { file_url: "http://files.example.com/cv.pdf" }],
    ["not a URL", { file_url: "cv.pdf" }],
    ["credentials in it", { file_url: "https://user:secret@files.example.com/cv.pdf" }],
    ["ftp:", { file_url: "ftp://files.example.com/cv.pdf" }],
    ["longer than 2048 characters", { file_url: `https://files.example.com/${"a".repeat(2048)}` }],
  ])("answers 400 invalid_file_url for %s", async (_what, body) => {
    const { token } = await subscriberWithKey(strict.db.prisma);
    for (const form of [false, true]) {
      const answer = await post(strict, token, body, { form });
      expect(answer.status, String(form)).toBe(400);
      expect(answer.body.error?.code, String(form)).toBe("invalid_file_url");
    }
  });

  it("refuses a file and a file_url together, and a file_url beside an upload_id", async () => {
    const { token, subscriber } = await subscriberWithKey(strict.db.prisma);
    const both = await post(strict, token, { file_url: "https://files.example.com/cv.pdf" }, { file: pdf });
    expect([both.status, both.body.error?.code]).toEqual([400, "invalid_file_url"]);
    const json = await post(strict, token, { file_url: "https://files.example.com/cv.pdf", upload_id: "x" });
    expect([json.status, json.body.error?.code]).toEqual([400, "invalid_file_url"]);
    expect(await usedThisMonth(strict.db.prisma, subscriber.id)).toBe(0);
  });

  it("says a form without a file may send file_url", async () => {
    const { token } = await subscriberWithKey(strict.db.prisma);
    const answer = await post(strict, token, { profile: "balanced" }, { form: true });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe("missing_file");
    expect(answer.body.error?.message).toContain("file_url");
  });
});

describe("file_url fetched (development: this machine allowed)", () => {
  it("compresses a fetched file as the same file uploaded: JSON and form, compress and unlock, a job", async () => {
    const { token, subscriber } = await subscriberWithKey(local.db.prisma);
    const uploaded = await post(local, token, {}, { file: pdf });
    expect(uploaded.status).toBe(200);
    const byJson = await post(local, token, { file_url: `${origin}/cv.pdf`, profile: "balanced" });
    expect(byJson.status).toBe(200);
    expect(byJson.body).toMatchObject({
      original_size: pdf.length,
      compressed_size: uploaded.body.compressed_size,
    });
    const byForm = await post(local, token, { file_url: `${origin}/hop/2` }, { form: true });
    expect([byForm.status, byForm.body.compressed_size]).toEqual([200, uploaded.body.compressed_size]);
    const record = await local.db.prisma.compression.findUniqueOrThrow({ where: { id: byForm.body.id! } });
    expect(record.filename).toBe("cv.pdf");
    // unlock takes file_url too (here a file that is not encrypted: the engine's own answer)
    const unlock = await post(local, token, { file_url: `${origin}/cv.pdf`, password: "x" }, { route: "/v1/unlock" });
    expect([unlock.status, unlock.body.error?.code]).toEqual([422, "not_encrypted"]);
    const job = await post(local, token, { file_url: `${origin}/cv.pdf` }, { async: true });
    expect(job.status).toBe(202);
    expect(job.headers.get("location")).toMatch(/^\/v1\/jobs\//);
    // the typed client's compressUrl() and unlockUrl()
    const client = createCompressionClient({ baseUrl: local.server.url, apiKey: token });
    const typed = await compressUrl(client, `${origin}/cv.pdf`, { profile: "balanced", retention: 600 });
    expect(typed.data).toMatchObject({ compressed_size: uploaded.body.compressed_size, retention: 600 });
    const typedUnlock = await unlockUrl(client, `${origin}/page.html`, "x");
    expect([typedUnlock.response.status, typedUnlock.error?.error.code]).toEqual([422, "file_url_not_pdf"]);
    expect(await usedThisMonth(local.db.prisma, subscriber.id)).toBe(5);
    expect(await leftovers(local)).toEqual([]);
  });

  it.each([
    ["a redirect to a private address", "/to-private", 400, "file_url_forbidden"],
    ["a redirect to the metadata server", "/to-metadata", 400, "file_url_forbidden"],
    ["a redirect from https to http", "/to-http", 400, "invalid_file_url"],
    ["more than 3 redirects", "/hop/3", 422, "file_url_unreachable"],
    ["a 404", "/missing.pdf", 422, "file_url_unreachable"],
    ["a page that is not a PDF", "/page.html", 422, "file_url_not_pdf"],
    ["a length over the limit", "/declared-large.pdf", 413, "file_url_too_large"],
    ["an endless body (no length)", "/endless.pdf", 413, "file_url_too_large"],
    ["a server that never answers", "/silent.pdf", 422, "file_url_timeout"],
    ["a body that stalls", "/stall.pdf", 422, "file_url_timeout"],
    ["a connection closed mid-body", "/cut.pdf", 422, "file_url_unreachable"],
    ["a closed port", "http://127.0.0.1:9/cv.pdf", 422, "file_url_unreachable"],
  ])("refuses %s: its code, nothing charged, no workspace left", async (_what, route, status, code) => {
    const { token, subscriber } = await subscriberWithKey(local.db.prisma);
    const url = route.startsWith("http") ? route : `${origin}${route}`;
    for (const options of [{}, { form: true }, { async: true }]) {
      const answer = await post(local, token, { file_url: url }, options);
      expect([answer.status, answer.body.error?.code], JSON.stringify(options)).toEqual([status, code]);
    }
    expect(await usedThisMonth(local.db.prisma, subscriber.id)).toBe(0);
    expect(await leftovers(local)).toEqual([]);
  });
});

// The same fetches with Cloud Storage's stand-in behind the service: a fetched file's result and a
// job's input land in the bucket; a refused fetch leaves nothing there and charges nothing.
describe("file_url on Cloud Storage (the stand-in)", () => {
  const BUCKET = "file-url-results";
  const { publicKey, credentials } = testServiceAccount();
  let gcs: FakeGcs;
  let db: TestDatabase;
  let server: TestServer;
  let stack: CompressionStack;
  const storage = () => createGcsStorage({ bucket: BUCKET, apiEndpoint: gcs.url, projectId: "p", credentials });
  const inputs = () => [...gcs.objects.keys()].filter((name) => name.startsWith("inputs/"));
  beforeAll(async () => {
    gcs = await startFakeGcs(BUCKET, publicKey);
    db = await createTestDatabase();
    server = await startServer(
      db,
      {
        NODE_ENV: "development",
        COMPRESS_MAX_UPLOAD_BYTES: String(MAX_BYTES),
        UPLOAD_IDLE_TIMEOUT_SECONDS: "2",
        UPLOAD_TMP_DIR: path.join(local.work, "gcs-uploads"),
        COMPRESS_JOB_WORKERS: "0",
      },
      { compress: { storage: storage(), runner: passThroughRunner } },
    );
    // post() and leftovers() read these three
    stack = { ...local, db, server, work: path.join(local.work, "gcs") };
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await gcs?.close();
  });

  it("stores a fetched file's result in the bucket, a job's input too, which the worker reads and deletes", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const answer = (await post(stack, token, { file_url: `${origin}/hop/1` })) as Answer & { body: { url?: string } };
    expect([answer.status, answer.body.original_size]).toEqual([200, pdf.length]);
    const object = path.basename(new URL(answer.body.url!).pathname);
    expect(gcs.objects.get(object)?.data.length).toBe(pdf.length);
    const record = await db.prisma.compression.findUniqueOrThrow({ where: { id: answer.body.id! } });
    expect(record.filename).toBe("cv.pdf");

    const job = await post(stack, token, { file_url: `${origin}/cv.pdf` }, { form: true, async: true });
    expect(job.status).toBe(202);
    const { inputObject } = await db.prisma.compressionJob.findUniqueOrThrow({ where: { id: job.body.id! } });
    expect(inputs().some((name) => name.endsWith(inputObject))).toBe(true);
    const logger = createLogger({ logLevel: "silent" });
    const worker = startJobWorker(
      { config: server.config, prisma: db.prisma, storage: storage(), runner: passThroughRunner, logger, pollMs: 100 },
      1,
    );
    try {
      await expect
        .poll(async () => (await db.prisma.compressionJob.findUniqueOrThrow({ where: { id: job.body.id! } })).status, {
          timeout: 10_000,
        })
        .toBe("succeeded");
    } finally {
      await worker.stop();
    }
    expect(inputs().some((name) => name.endsWith(inputObject))).toBe(false);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(2);
  });

  it.each([
    ["a redirect to a private address", "/to-private", 400, "file_url_forbidden"],
    ["a page that is not a PDF", "/page.html", 422, "file_url_not_pdf"],
    ["an endless body (no length)", "/endless.pdf", 413, "file_url_too_large"],
    ["a body that stalls", "/stall.pdf", 422, "file_url_timeout"],
  ])("refuses %s: its code, nothing in the bucket, nothing charged", async (_what, route, status, code) => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const before = gcs.objects.size;
    for (const options of [{}, { async: true }]) {
      const answer = await post(stack, token, { file_url: `${origin}${route}` }, options);
      expect([answer.status, answer.body.error?.code], JSON.stringify(options)).toEqual([status, code]);
    }
    expect(gcs.objects.size).toBe(before);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  });
});

describe("the fields beside a file_url, checked before it is fetched", () => {
  it.each([
    ["a retention that is not whole seconds (JSON)", { retention: "-1" }, {}, "invalid_retention"],
    ["a retention that is not whole seconds (form)", { retention: "soon" }, { form: true }, "invalid_retention"],
    ["a retention that is not whole seconds (job)", { retention: "1.5" }, { async: true }, "invalid_retention"],
    ["an unknown profile (form)", { profile: "nope" }, { form: true }, "invalid_profile"],
    ["an unknown profile (job form)", { profile: "nope" }, { form: true, async: true }, "invalid_profile"],
    [
      "a retention on unlock (JSON)",
      { password: "x", retention: "soon" },
      { route: "/v1/unlock" },
      "invalid_retention",
    ],
    ["no password on unlock (form)", {}, { form: true, route: "/v1/unlock" }, "missing_password"],
  ])("refuses %s with its 400 and never fetches the file", async (_what, fields, options, code) => {
    const { token, subscriber } = await subscriberWithKey(local.db.prisma);
    const before = served.length;
    const answer = await post(local, token, { file_url: `${origin}/cv.pdf`, ...fields }, options);
    expect([answer.status, answer.body.error?.code]).toEqual([400, code]);
    expect(served.slice(before)).toEqual([]);
    expect(await usedThisMonth(local.db.prisma, subscriber.id)).toBe(0);
    expect(await leftovers(local)).toEqual([]);
  });
});

// "https, or a URL the service signed itself": on the defaults the service's own addresses are this
// machine's (http://127.0.0.1:…), which the policy refuses for any other URL; a result's url, a
// download-once url and a direct upload's upload_url of the same account are read from storage.
describe("file_url naming an address this service signed (local storage, public addresses only)", () => {
  const json = async (response: Response) => ({
    status: response.status,
    body: (await response.json()) as Answer["body"] & { url?: string; upload_url?: string },
  });

  it("reads the same account's result url, download-once url and upload_url from storage; refuses another account's, an altered one, a deleted one", async () => {
    const owner = await subscriberWithKey(strict.db.prisma);
    const other = await subscriberWithKey(strict.db.prisma);
    const first = await post(strict, owner.token, { retention: "3600" }, { file: pdf });
    expect(first.status).toBe(200);
    const { url } = first.body as { url: string };
    expect(new URL(url).hostname).toBe("127.0.0.1");
    lookups.length = 0;
    // JSON and form, compress and unlock, and a job: the result's bytes, read from storage
    const again = await post(strict, owner.token, { file_url: url, profile: "lossless" });
    expect([again.status, again.body.original_size]).toEqual([200, first.body.compressed_size]);
    const record = await strict.db.prisma.compression.findUniqueOrThrow({ where: { id: again.body.id! } });
    expect(record.filename).toBe("cv-compressed.pdf");
    const unlock = await post(
      strict,
      owner.token,
      { file_url: url, password: "x" },
      { form: true, route: "/v1/unlock" },
    );
    expect([unlock.status, unlock.body.error?.code]).toEqual([422, "not_encrypted"]);
    const job = await post(strict, owner.token, { file_url: url }, { async: true });
    expect(job.status).toBe(202);
    expect(lookups).toEqual([]);

    // a download-once url (retention 0): read, and still there for the client's own download
    const once = await post(strict, owner.token, { retention: "0" }, { file: pdf });
    const onceUrl = (once.body as { url: string }).url;
    expect(new URL(onceUrl).pathname).toMatch(/^\/v1\/results\//);
    expect((await post(strict, owner.token, { file_url: onceUrl })).status).toBe(200);
    expect((await fetch(onceUrl)).status).toBe(200);

    // a direct upload's upload_url, once its file is PUT
    const created = await json(
      await fetch(`${strict.server.url}/v1/uploads`, {
        method: "POST",
        headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
        body: JSON.stringify({ filename: "offer.pdf" }),
      }),
    );
    const uploadUrl = created.body.upload_url!;
    const early = await post(strict, owner.token, { file_url: uploadUrl });
    expect([early.status, early.body.error?.code]).toEqual([422, "file_url_unreachable"]);
    const put = await fetch(uploadUrl, {
      method: "PUT",
      headers: { "content-type": "application/pdf" },
      body: new Uint8Array(pdf),
    });
    expect(put.status).toBeLessThan(300);
    const byUpload = await post(strict, owner.token, { file_url: uploadUrl });
    expect([byUpload.status, byUpload.body.original_size]).toEqual([200, pdf.length]);
    const uploaded = await strict.db.prisma.compression.findUniqueOrThrow({ where: { id: byUpload.body.id! } });
    expect(uploaded.filename).toBe("offer.pdf");

    const used = await usedThisMonth(strict.db.prisma, owner.subscriber.id);
    expect(used).toBe(6);

    // another account's addresses, an altered signature, an altered name: refused, not charged
    const tampered = new URL(url);
    tampered.searchParams.set("signature", `${tampered.searchParams.get("signature")!.slice(0, -2)}AA`);
    const renamed = url.replace(/\/v1\/files\/[A-Za-z0-9_-]{4}/, "/v1/files/AAAA");
    for (const [token, address, status, code] of [
      [other.token, url, 400, "file_url_forbidden"],
      [other.token, onceUrl, 400, "file_url_forbidden"],
      [other.token, uploadUrl, 400, "file_url_forbidden"],
      [owner.token, tampered.toString(), 400, "invalid_file_url"],
      [owner.token, renamed, 400, "invalid_file_url"],
      [owner.token, `${strict.server.url}/v1/files/not-signed.pdf`, 400, "invalid_file_url"],
    ] as const) {
      for (const options of [{}, { form: true }, { async: true }, { route: "/v1/unlock" }]) {
        const fields: Record<string, string> = { file_url: address, ...(options.route ? { password: "x" } : {}) };
        const answer = await post(strict, token, fields, options);
        expect([answer.status, answer.body.error?.code], `${address} ${JSON.stringify(options)}`).toEqual([
          status,
          code,
        ]);
      }
    }
    // a result deleted since: its url names nothing any more
    const deleted = await fetch(`${strict.server.url}/v1/compressions/${first.body.id!}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(deleted.status).toBe(204);
    const gone = await post(strict, owner.token, { file_url: url });
    expect([gone.status, gone.body.error?.code]).toEqual([422, "file_url_unreachable"]);
    expect(await usedThisMonth(strict.db.prisma, other.subscriber.id)).toBe(0);
    expect(await usedThisMonth(strict.db.prisma, owner.subscriber.id)).toBe(used);
    expect(await leftovers(strict)).toEqual([]);
  }, 60_000); // a dozen compressions: 24-27 s on a loaded 2-core machine
});

describe("the fetcher's own timers", () => {
  it("leaves no timer and no socket behind after fetches that never answer, stall, are cut or run over", async () => {
    const count = (kind: string) => process.getActiveResourcesInfo().filter((resource) => resource === kind).length;
    const before = { timers: count("Timeout"), sockets: count("TCPSocketWrap") };
    const dest = path.join(local.work, "faults.pdf");
    const policy = { targets: "loopback" as const, maxBytes: MAX_BYTES, idleTimeoutMs: 300, totalTimeoutMs: 2000 };
    for (const [route, code] of [
      ["/silent.pdf", "file_url_timeout"],
      ["/stall.pdf", "file_url_timeout"],
      ["/cut.pdf", "file_url_unreachable"],
      ["/endless.pdf", "file_url_too_large"],
      ["/declared-large.pdf", "file_url_too_large"],
      ["/page.html", "file_url_not_pdf"],
    ] as const) {
      await expect(
        fetchFileUrl(`${origin}${route}`, dest, policy, new AbortController().signal),
        route,
      ).rejects.toMatchObject({ code });
    }
    await expect.poll(() => count("Timeout")).toBeLessThanOrEqual(before.timers);
    await expect.poll(() => count("TCPSocketWrap")).toBeLessThanOrEqual(before.sockets);
    expect(await readdir(local.work)).not.toContain("faults.pdf");
  });

  it("ends a fetch that trickles past its whole limit, and one the client gave up, leaving no file", async () => {
    const trickle = createServer((_req, res) => {
      res.writeHead(200);
      res.write(pdf.subarray(0, 10));
      const timer = setInterval(() => res.write(" "), 50);
      res.on("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => trickle.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/slow.pdf`;
    const dest = path.join(local.work, "trickle.pdf");
    const policy = { targets: "loopback" as const, maxBytes: MAX_BYTES, idleTimeoutMs: 1000, totalTimeoutMs: 400 };
    try {
      await expect(fetchFileUrl(url, dest, policy, new AbortController().signal)).rejects.toMatchObject({
        code: "file_url_timeout",
      });
      const gone = new AbortController();
      setTimeout(() => gone.abort(new Error("client gone")), 200);
      await expect(fetchFileUrl(url, dest, { ...policy, totalTimeoutMs: 10_000 }, gone.signal)).rejects.toThrow(
        "client gone",
      );
      expect(await readdir(local.work)).not.toContain("trickle.pdf");
    } finally {
      trickle.closeAllConnections();
      trickle.close();
    }
  });
});
