// The subscriber's results under their control, through real HTTP on both storages (the local
// stand-in and Cloud Storage's, a GCS-compatible endpoint): every compression a resource (listed
// newest first with cursor paging and filters, read with its report and a fresh URL), deleted now
// (objects gone from storage, the URL refused, a second DELETE 204, another account's id 404, the
// usage record kept without the file's name, a queued job cancelled), and kept no longer than asked
// (retention per request and per account; 0: until the first complete download; the sweep at the
// expiry, tested against the clock, and with storage failing under it). Every response is checked
// against the served OpenAPI document.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { startJobWorker } from "../../src/compress/async-jobs/worker.ts";
import { createGcsStorage } from "../../src/compress/storage/gcs.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import type { ObjectStorage } from "../../src/compress/storage/storage.ts";
import { sweepExpiredResults } from "../../src/compress/workflow/results.ts";
import { createLogger } from "../../src/logger.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeGcs, type FakeGcs } from "../helpers/fake-gcs.ts";
import { fuzzRuns, hostileText } from "../helpers/fuzz.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

type Json = Record<string, unknown>;
type ErrorBody = { error: { code: string; message: string } };

const BUCKET = "results-under-control";
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const credentials = {
  client_email: "compressor@test-project.iam.gserviceaccount.com",
  private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
};
const silent = { warn: () => undefined };

let db: TestDatabase;
let work: string;
let gcs: FakeGcs;
let pdf: Buffer;

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "compressions-"));
  gcs = await startFakeGcs(BUCKET, publicKey);
  pdf = await makePdf(2);
});
afterAll(async () => {
  await gcs?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

interface Setup {
  server: TestServer;
  storage: ObjectStorage;
  /** Whether the result stored under this name is still in storage. */
  stored: (name: string) => Promise<boolean>;
  /** Whether any input is still in storage under inputs/. */
  inputs: () => Promise<string[]>;
  validate: (path: string, method: string, status: number, body: unknown) => void;
}

async function setUp(kind: "local" | "gcs"): Promise<Setup> {
  const dir = path.join(work, kind);
  const storage =
    kind === "local"
      ? await createLocalStorage(dir, null)
      : createGcsStorage({ bucket: BUCKET, apiEndpoint: gcs.url, projectId: "p", credentials });
  const server = await startServer(
    db,
    { UPLOAD_TMP_DIR: path.join(work, `${kind}-tmp`), COMPRESS_JOB_WORKERS: "0", RESULT_RETENTION_HOURS: "2" },
    { compress: { storage, runner: passThroughRunner } },
  );
  const stored =
    kind === "local"
      ? async (name: string) => (await readdir(dir)).includes(name)
      : (name: string) => Promise.resolve(gcs.objects.has(name));
  const inputs =
    kind === "local"
      ? async () => (await readdir(path.join(dir, "inputs"))).filter((name) => name.endsWith(".pdf"))
      : () => Promise.resolve([...gcs.objects.keys()].filter((name) => name.startsWith("inputs/")));
  const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Json;
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: `https://v1.test/${kind}/openapi.json` });
  const validate = (route: string, method: string, status: number, body: unknown) => {
    const pointer = route.replaceAll("~", "~0").replaceAll("/", "~1");
    const ref = `https://v1.test/${kind}/openapi.json#/paths/${pointer}/${method}/responses/${status}/content/application~1json/schema`;
    const check = ajv.getSchema(ref);
    expect(check, `${method} ${route} ${status} is documented`).toBeDefined();
    expect(check!(body), `${method} ${route} ${status}: ${ajv.errorsText(check!.errors)}`).toBe(true);
    // A refusal's code is among those its response documents.
    const code = (body as Partial<ErrorBody>).error?.code;
    const documented = (doc["paths"] as Record<string, Record<string, { responses: Record<string, Json> }>>)[route]?.[
      method
    ]?.responses[String(status)]?.["description"];
    if (code) expect(documented, `${method} ${route} ${status} documents ${code}`).toContain(code);
  };
  return { server, storage, stored, inputs, validate };
}

describe.each(["local", "gcs"] as const)("results under the subscriber's control (%s storage)", (kind) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(kind);
  });
  afterAll(async () => {
    await s?.server.close();
  });

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });

  async function compress(token: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const form = multipart([
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: "file", value: pdf, filename: "Offer letter - J. Doe.pdf" },
    ]);
    const response = await fetch(`${s.server.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth(token), "content-type": form.contentType, ...headers },
      body: new Uint8Array(form.body),
    });
    return { status: response.status, json: (await response.json()) as Json & ErrorBody };
  }

  const get = async (token: string, route: string) => {
    const response = await fetch(`${s.server.url}${route}`, { headers: auth(token) });
    return { status: response.status, json: (await response.json()) as Json & ErrorBody };
  };

  const del = (token: string, route: string) =>
    fetch(`${s.server.url}${route}`, { method: "DELETE", headers: auth(token) });

  const objectOf = (url: string) => path.basename(new URL(url).pathname);

  /** A direct upload with its file in storage. */
  async function createUpload(token: string, filename: string) {
    const created = await fetch(`${s.server.url}/v1/uploads`, {
      method: "POST",
      headers: { ...auth(token), "content-type": "application/json" },
      body: JSON.stringify({ filename }),
    });
    const upload = (await created.json()) as { upload_id: string; upload_url: string; headers: Record<string, string> };
    if (kind === "gcs") {
      // The fake bucket takes no signed PUT: the object is stored as Cloud Storage would have.
      const name = path.basename(new URL(upload.upload_url).pathname);
      const file = path.join(work, "upload.pdf");
      await writeFile(file, pdf);
      await s.storage.putInput(name, file);
    } else {
      const put = await fetch(upload.upload_url, { method: "PUT", headers: upload.headers, body: new Uint8Array(pdf) });
      expect(put.status).toBe(200);
    }
    return upload;
  }

  it("answers every compression with an id, and lists them newest first with cursor paging", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { status, json } = await compress(token);
      expect(status).toBe(200);
      s.validate("/v1/compress", "post", 200, json);
      expect(json).toMatchObject({ retention: 7200 });
      made.push(json["id"] as string);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(token, `/v1/compressions?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      s.validate("/v1/compressions", "get", 200, page.json);
      const data = page.json["data"] as Json[];
      expect(data.length).toBeLessThanOrEqual(2);
      for (const item of data) expect(item).not.toHaveProperty("url");
      seen.push(...data.map((item) => item["id"] as string));
      cursor = page.json["next_cursor"] as string | null;
      expect(page.json["has_more"]).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual([...made].reverse());

    const one = await get(token, `/v1/compressions/${made[0]}`);
    expect(one.status).toBe(200);
    s.validate("/v1/compressions/{id}", "get", 200, one.json);
    expect(one.json).toMatchObject({
      id: made[0],
      object: "compression",
      operation: "compress",
      status: "succeeded",
      filename: "Offer letter - J. Doe.pdf",
      original_size: pdf.length,
      retention: 7200,
      deleted_at: null,
    });
    expect((await fetch(one.json["url"] as string)).status).toBe(200);
  });

  it("filters by status and creation date, and refuses bad parameters in the error shape", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const ok = await compress(token);
    const notPdf = multipart([{ name: "file", value: Buffer.alloc(2048, 0x41), filename: "x.pdf" }]);
    const refused = await fetch(`${s.server.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth(token), "content-type": notPdf.contentType },
      body: new Uint8Array(notPdf.body),
    });
    expect(refused.status).toBe(422);
    const failed = await get(token, "/v1/compressions?status=failed");
    expect((failed.json["data"] as Json[]).map((item) => item["status"])).toEqual(["failed"]);
    expect((failed.json["data"] as Json[])[0]).toMatchObject({ error: { code: "not_a_pdf" }, filename: "x.pdf" });
    const succeeded = await get(token, "/v1/compressions?status=succeeded");
    expect((succeeded.json["data"] as Json[]).map((item) => item["id"])).toEqual([ok.json["id"]]);
    const future = await get(token, `/v1/compressions?created_after=${new Date(Date.now() + 60_000).toISOString()}`);
    expect(future.json["data"]).toEqual([]);
    const past = await get(token, "/v1/compressions?created_before=2000-01-01T00:00:00Z");
    expect(past.json["data"]).toEqual([]);

    for (const [query, code] of [
      ["limit=0", "invalid_limit"],
      ["limit=101", "invalid_limit"],
      ["limit=ten", "invalid_limit"],
      ["status=done", "invalid_status"],
      ["status=failed&status=succeeded", "invalid_status"],
      ["created_after=yesterday", "invalid_created_after"],
      ["created_before=2026-13-40T00:00:00Z", "invalid_created_before"],
      ["cursor=bm90IGEgY3Vyc29y", "invalid_cursor"],
      ["cursor=%FF", "invalid_cursor"],
      ["page=2", "unknown_parameter"],
    ] as const) {
      const answer = await get(token, `/v1/compressions?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.json.error.code, query).toBe(code);
      s.validate("/v1/compressions", "get", 400, answer.json);
    }
  });

  it("deletes now: objects gone, the URL refused, the record kept without its name, idempotent, others' 404", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const stranger = await subscriberWithKey(db.prisma);
    const { json } = await compress(token, {}, { "idempotency-key": `delete-${kind}` });
    const id = json["id"] as string;
    const object = objectOf(json["url"] as string);
    expect(await s.stored(object)).toBe(true);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);

    expect((await del(stranger.token, `/v1/compressions/${id}`)).status).toBe(404);
    expect((await get(stranger.token, `/v1/compressions/${id}`)).status).toBe(404);
    // By the job's URL as well, with the message of an id that does not exist (below).
    const strangers = await del(stranger.token, `/v1/jobs/${id}`);
    expect(strangers.status).toBe(404);
    expect(((await strangers.json()) as ErrorBody).error.message).toBe(
      "No job with this id belongs to this API key's subscriber.",
    );
    expect(await s.stored(object)).toBe(true);

    const deleted = await del(token, `/v1/compressions/${id}`);
    expect(deleted.status).toBe(204);
    expect(await s.stored(object)).toBe(false);
    const download = await fetch(json["url"] as string);
    expect([404, 410]).toContain(download.status);
    if (kind === "local") expect(((await download.json()) as ErrorBody).error.code).toBe("result_deleted");
    const after = await get(token, `/v1/compressions/${id}`);
    s.validate("/v1/compressions/{id}", "get", 200, after.json);
    expect(after.json).toMatchObject({ status: "succeeded", filename: null, deleted_by: "request", expires_at: null });
    expect(after.json).not.toHaveProperty("url");
    const row = await db.prisma.compression.findUniqueOrThrow({ where: { id } });
    expect(row.filename).toBeNull();
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    // The kept answer of the Idempotency-Key carried the URL and the name: it says the result is gone.
    const replay = await compress(token, {}, { "idempotency-key": `delete-${kind}` });
    expect(replay.status).toBe(410);
    expect(replay.json.error.code).toBe("result_deleted");
    s.validate("/v1/compress", "post", 410, replay.json);

    expect((await del(token, `/v1/compressions/${id}`)).status).toBe(204);
    // Unknown ids answer 404 naming what the route serves (another subscriber's id the same: above).
    for (const [route, what] of [
      ["/v1/compressions/", "compression"],
      ["/v1/jobs/", "job"],
    ] as const) {
      for (const bad of ["not-a-uuid", "00000000-0000-0000-0000-000000000000", "%00"]) {
        const answer = await del(token, `${route}${bad}`);
        expect(answer.status).toBe(404);
        const body = (await answer.json()) as ErrorBody;
        expect(body.error).toMatchObject({
          code: "not_found",
          message: `No ${what} with this id belongs to this API key's subscriber.`,
        });
        s.validate(`${route}{id}`, "delete", 404, body);
      }
    }
  });

  it("gives unlocks and jobs an id too; a finished job's result deleted through the job's URL", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const form = multipart([
      { name: "password", value: "open sesame" },
      { name: "file", value: pdf, filename: "signed offer.pdf" },
    ]);
    const unlocked = await fetch(`${s.server.url}/v1/unlock`, {
      method: "POST",
      headers: { ...auth(token), "content-type": form.contentType },
      body: new Uint8Array(form.body),
    });
    expect(unlocked.status).toBe(200);
    const unlock = (await unlocked.json()) as Json;
    s.validate("/v1/unlock", "post", 200, unlock);

    const submitted = await fetch(`${s.server.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth(token), "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ file_url: unlock["url"], retention: 3600 }),
    });
    expect(submitted.status).toBe(202);
    const job = (await submitted.json()) as Json;
    s.validate("/v1/compress", "post", 202, job);
    const worker = startJobWorker(
      {
        config: s.server.config,
        prisma: db.prisma,
        storage: s.storage,
        runner: passThroughRunner,
        logger: createLogger({ logLevel: "silent" }),
        pollMs: 100,
      },
      1,
    );
    let done: Json;
    try {
      await waitFor(async () => (await get(token, `/v1/jobs/${job["id"] as string}`)).json["status"] === "succeeded");
      done = (await get(token, `/v1/jobs/${job["id"] as string}`)).json;
    } finally {
      await worker.stop();
    }
    s.validate("/v1/jobs/{id}", "get", 200, done);
    const list = await get(token, "/v1/compressions");
    const data = list.json["data"] as Json[];
    expect(data.map((item) => [item["id"], item["operation"], item["job_id"]])).toEqual([
      [job["compression_id"], "compress", job["id"]],
      [unlock["id"], "unlock", null],
    ]);
    const object = objectOf(done["url"] as string);
    expect(await s.stored(object)).toBe(true);
    const { inputObject } = await db.prisma.compressionJob.findUniqueOrThrow({ where: { id: job["id"] as string } });
    expect((await s.inputs()).some((name) => name.endsWith(inputObject))).toBe(false);

    expect((await del(token, `/v1/jobs/${job["id"] as string}`)).status).toBe(204);
    expect(await s.stored(object)).toBe(false);
    expect([404, 410]).toContain((await fetch(done["url"] as string)).status);
    const after = await get(token, `/v1/jobs/${job["id"] as string}`);
    expect(after.status).toBe(200);
    s.validate("/v1/jobs/{id}", "get", 200, after.json);
    expect(after.json).toMatchObject({ status: "succeeded" });
    expect(after.json["url"] ?? null).toBeNull();
    const resource = await get(token, `/v1/compressions/${job["compression_id"] as string}`);
    expect(resource.json).toMatchObject({ deleted_by: "request", filename: null, job_id: job["id"] });
    expect((await del(token, `/v1/jobs/${job["id"] as string}`)).status).toBe(204);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(2);
  });

  it("cancels a queued job on DELETE /v1/jobs/{id}: not charged, its input gone; refuses a running one", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const form = multipart([{ name: "file", value: pdf, filename: "contract.pdf" }]);
    const submit = () =>
      fetch(`${s.server.url}/v1/compress`, {
        method: "POST",
        headers: { ...auth(token), "content-type": form.contentType, prefer: "respond-async" },
        body: new Uint8Array(form.body),
      });
    const queued = (await (await submit()).json()) as Json;
    expect(await s.inputs()).not.toEqual([]);
    const running = (await (await submit()).json()) as Json;
    await db.prisma.compressionJob.update({ where: { id: running["id"] as string }, data: { status: "running" } });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(2);

    const refused = await del(token, `/v1/compressions/${running["compression_id"] as string}`);
    expect(refused.status).toBe(409);
    expect(refused.headers.get("retry-after")).toBe("2");
    const running409 = (await refused.json()) as ErrorBody;
    expect(running409.error.code).toBe("compression_running");
    s.validate("/v1/compressions/{id}", "delete", 409, running409);

    const input = (await db.prisma.compressionJob.findUniqueOrThrow({ where: { id: queued["id"] as string } }))
      .inputObject;
    expect((await del(token, `/v1/jobs/${queued["id"] as string}`)).status).toBe(204);
    expect((await s.inputs()).some((name) => name.endsWith(input))).toBe(false);
    const job = await get(token, `/v1/jobs/${queued["id"] as string}`);
    expect(job.json).toMatchObject({ status: "failed", error: { code: "deleted" } });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    // The job's id names its compression too.
    const resource = await get(token, `/v1/compressions/${queued["id"] as string}`);
    expect(resource.json).toMatchObject({ id: queued["compression_id"], job_id: queued["id"], filename: null });
  });

  it("deletes the direct upload a compression came from, with it", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const upload = await createUpload(token, "cv.pdf");
    const answer = await fetch(`${s.server.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth(token), "content-type": "application/json" },
      body: JSON.stringify({ upload_id: upload.upload_id, retention: 600 }),
    });
    expect(answer.status).toBe(200);
    const result = (await answer.json()) as Json;
    expect(result).toMatchObject({ retention: 600 });
    expect(await db.prisma.directUpload.count({ where: { id: upload.upload_id } })).toBe(1);
    expect((await del(token, `/v1/compressions/${result["id"] as string}`)).status).toBe(204);
    expect(await db.prisma.directUpload.count({ where: { id: upload.upload_id } })).toBe(0);

    // A job queued from a direct upload: its file is the upload's object until the job ends; DELETE
    // takes it from storage at once.
    const second = await createUpload(token, "contract.pdf");
    const uploadObject = (await db.prisma.directUpload.findUniqueOrThrow({ where: { id: second.upload_id } }))
      .objectName;
    expect((await s.inputs()).some((name) => name.endsWith(uploadObject))).toBe(true);
    const queued = await fetch(`${s.server.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth(token), "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ upload_id: second.upload_id }),
    });
    expect(queued.status).toBe(202);
    const job = (await queued.json()) as Json;
    expect((await del(token, `/v1/compressions/${job["compression_id"] as string}`)).status).toBe(204);
    expect((await s.inputs()).some((name) => name.endsWith(uploadObject))).toBe(false);
    expect(await db.prisma.directUpload.count({ where: { id: second.upload_id } })).toBe(0);
  });

  it("takes retention per request (capped by the maximum) and from the account; refuses a bad one, not charged", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    expect((await compress(token, { retention: "90" })).json).toMatchObject({ retention: 90 });
    expect((await compress(token, { retention: "999999999" })).json).toMatchObject({ retention: 7200 });
    await db.prisma.subscriber.update({ where: { id: subscriber.id }, data: { retentionSeconds: 300 } });
    const byAccount = await compress(token);
    expect(byAccount.json).toMatchObject({ retention: 300 });
    const expiresAt = new Date(byAccount.json["expires_at"] as string).getTime();
    expect(Math.abs(expiresAt - (Date.now() + 300_000))).toBeLessThan(60_000);
    const used = await usedThisMonth(db.prisma, subscriber.id);
    for (const bad of ["-1", "1.5", "1e3", "soon", "0x10", " 5"]) {
      const answer = await compress(token, { retention: bad });
      expect(answer.status, bad).toBe(400);
      expect(answer.json.error.code, bad).toBe("invalid_retention");
      s.validate("/v1/compress", "post", 400, answer.json);
    }
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(used);
  });

  it("keeps a retention-0 result until its first complete download: not a HEAD, not a cut one", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const big = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(6 * 1024 * 1024, 0x20)]);
    const form = multipart([
      { name: "retention", value: "0" },
      { name: "file", value: big, filename: "payslip.pdf" },
    ]);
    const response = await fetch(`${s.server.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth(token), "content-type": form.contentType },
      body: new Uint8Array(form.body),
    });
    const json = (await response.json()) as Json;
    expect(json).toMatchObject({ retention: 0 });
    const url = json["url"] as string;
    expect(new URL(url).pathname).toMatch(/^\/v1\/results\//);
    const object = objectOf(url);

    expect((await fetch(url, { method: "HEAD" })).status).toBe(200);
    await cutDownload(url);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await s.stored(object)).toBe(true);
    expect((await get(token, `/v1/compressions/${json["id"] as string}`)).json["deleted_at"]).toBeNull();

    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).length).toBe(big.length);
    // The object goes first, then the record is marked: wait for both (the PostgreSQL pass saw the gap).
    const id = json["id"] as string;
    await waitFor(
      async () => !(await s.stored(object)) && (await get(token, `/v1/compressions/${id}`)).json["deleted_at"] !== null,
    );
    const again = await fetch(url);
    expect(again.status).toBe(410);
    expect(((await again.json()) as ErrorBody).error.code).toBe("result_deleted");
    const after = await get(token, `/v1/compressions/${json["id"] as string}`);
    expect(after.json).toMatchObject({ deleted_by: "download", filename: null });
    const altered = await fetch(url.replace("signature=", "signature=A"));
    expect(altered.status).toBe(403);
  });

  it("sweeps results at their expiry and not before, against the clock", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const short = await compress(token, { retention: "60" });
    const long = await compress(token, { retention: "3600" });
    const expiry = new Date(short.json["expires_at"] as string);
    const deps = { prisma: db.prisma, storage: s.storage };
    const shortObject = objectOf(short.json["url"] as string);
    const longObject = objectOf(long.json["url"] as string);

    await sweepExpiredResults(deps, silent, new Date(expiry.getTime() - 1000));
    expect(await s.stored(shortObject)).toBe(true);
    const swept = await sweepExpiredResults(deps, silent, new Date(expiry.getTime() + 1000));
    expect(swept.deleted).toBeGreaterThanOrEqual(1);
    expect(await s.stored(shortObject)).toBe(false);
    expect(await s.stored(longObject)).toBe(true);
    const gone = await get(token, `/v1/compressions/${short.json["id"] as string}`);
    expect(gone.json).toMatchObject({ deleted_by: "retention", filename: null });
    expect([404, 410]).toContain((await fetch(short.json["url"] as string)).status);

    // retention 0 whose download never comes: kept the maximum (RESULT_RETENTION_HOURS, 2 h here), then swept.
    const once = await compress(token, { retention: "0" });
    const onceExpiry = new Date(once.json["expires_at"] as string);
    expect(Math.abs(onceExpiry.getTime() - (Date.now() + 7200_000))).toBeLessThan(60_000);
    const onceObject = objectOf(once.json["url"] as string);
    await sweepExpiredResults(deps, silent, new Date(onceExpiry.getTime() - 1000));
    expect(await s.stored(onceObject)).toBe(true);
    await sweepExpiredResults(deps, silent, new Date(onceExpiry.getTime() + 1000));
    expect(await s.stored(onceObject)).toBe(false);
    expect((await get(token, `/v1/compressions/${once.json["id"] as string}`)).json).toMatchObject({
      deleted_by: "retention",
      filename: null,
    });
    expect((await fetch(once.json["url"] as string)).status).toBe(410);
  });

  it("sweeps on when storage fails for one result, and takes that one at the next sweep; two sweeps delete once", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const results = [];
    for (let i = 0; i < 4; i++) results.push((await compress(token, { retention: "30" })).json);
    const later = new Date(Date.now() + 120_000);
    const failing = objectOf(results[0]!["url"] as string);
    const faulty: ObjectStorage = {
      ...s.storage,
      deleteResult: (name) =>
        name === failing ? Promise.reject(new Error("503 backend unavailable")) : s.storage.deleteResult(name),
    };
    const first = await sweepExpiredResults({ prisma: db.prisma, storage: faulty }, silent, later);
    expect(first.failed).toBe(1);
    expect(await s.stored(failing)).toBe(true);
    for (const result of results.slice(1)) expect(await s.stored(objectOf(result["url"] as string))).toBe(false);
    const [a, b] = await Promise.all([
      sweepExpiredResults({ prisma: db.prisma, storage: s.storage }, silent, later),
      sweepExpiredResults({ prisma: db.prisma, storage: s.storage }, silent, later),
    ]);
    expect(a.failed + b.failed).toBe(0);
    expect(await s.stored(failing)).toBe(false);
    const row = await db.prisma.compression.findUniqueOrThrow({ where: { id: results[0]!["id"] as string } });
    expect(row.deletedBy).toBe("retention");
  });

  it("answers any list query in the documented shape, never 5xx (fuzzed)", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const name = fc.constantFrom("limit", "cursor", "status", "created_after", "created_before", "x");
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, hostileText), { maxLength: 4 }), async (pairs) => {
        const query = new URLSearchParams(pairs).toString();
        const answer = await get(token, `/v1/compressions?${query}`);
        expect([200, 400], query).toContain(answer.status);
        s.validate("/v1/compressions", "get", answer.status, answer.json);
      }),
      { numRuns: fuzzRuns(60) },
    );
  });
});

/** Reads the first bytes of a download and drops the connection. */
function cutDownload(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, (response) => {
      response.once("data", () => {
        request.destroy();
        resolve();
      });
    });
    request.on("error", (error) => (request.destroyed ? resolve() : reject(error)));
  });
}

async function waitFor(condition: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
