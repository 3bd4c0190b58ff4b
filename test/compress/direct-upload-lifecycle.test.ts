// A direct upload's life after it is used, through real HTTP: an upload_id used again answers
// 409 upload_used (its file is gone, which is not "incomplete"); its signed PUT address takes no
// more writes (409, nothing written); POST /v1/uploads at a used-up quota answers 402 in the
// documented shape; and the housekeeping deletes old uploads, used ones' stray files included.
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expireDirectUploads } from "../../src/compress/maintenance.ts";
import { createLocalStorage, type LocalStorage } from "../../src/compress/storage/local.ts";
import { makePdf, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let work: string;
let storage: LocalStorage;
let server: TestServer;
let pdf: Buffer;

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "direct-upload-lifecycle-"));
  storage = await createLocalStorage(path.join(work, "objects"), null);
  pdf = await makePdf(2);
  server = await startServer(
    db,
    { UPLOAD_TMP_DIR: path.join(work, "uploads"), COMPRESS_JOB_WORKERS: "0" },
    { compress: { storage, runner: passThroughRunner } },
  );
});
afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

type ErrorBody = { error: { code: string; message: string } };
type Upload = { upload_id: string; upload_url: string; headers: Record<string, string> };

const createUpload = (token: string) =>
  fetch(`${server.url}/v1/uploads`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ filename: "scan.pdf" }),
  });

const compressNow = (token: string, uploadId: string) =>
  fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ upload_id: uploadId }),
  });

const put = (upload: Upload) =>
  fetch(upload.upload_url, { method: "PUT", headers: upload.headers, body: new Uint8Array(pdf) });

const inputsLeft = async () => (await readdir(path.join(work, "objects", "inputs"))).sort();

describe("a used direct upload", () => {
  it("answers 409 upload_used when its upload_id comes again, and its address takes no more writes", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const created = await createUpload(token);
    expect(created.status).toBe(201);
    const upload = (await created.json()) as Upload;
    expect((await put(upload)).status).toBe(200);
    const objectName = path.basename(new URL(upload.upload_url).pathname);
    expect(await inputsLeft()).toContain(objectName);
    expect((await compressNow(token, upload.upload_id)).status).toBe(200);
    // The synchronous compression deleted the input.
    expect(await inputsLeft()).not.toContain(objectName);

    const again = await compressNow(token, upload.upload_id);
    expect(again.status).toBe(409);
    expect(((await again.json()) as ErrorBody).error.code).toBe("upload_used");

    const late = await put(upload);
    expect(late.status).toBe(409);
    expect(((await late.json()) as ErrorBody).error.code).toBe("upload_used");
    expect((await inputsLeft()).filter((name) => name.startsWith(objectName))).toEqual([]);
  });
});

describe("POST /v1/uploads at a used-up quota", () => {
  it("answers 402 quota_exceeded with the quota headers, and makes no upload", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 1 });
    const first = (await (await createUpload(token)).json()) as Upload;
    await put(first);
    expect((await compressNow(token, first.upload_id)).status).toBe(200);

    const refused = await createUpload(token);
    expect(refused.status).toBe(402);
    const body = (await refused.json()) as ErrorBody;
    expect(body.error.code).toBe("quota_exceeded");
    expect(refused.headers.get("x-quota-remaining")).toBe("0");
    expect(refused.headers.get("x-quota-limit")).toBe("1");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await db.prisma.directUpload.count({ where: { subscriberId: subscriber.id } })).toBe(1);
  });
});

describe("housekeeping of direct uploads", () => {
  it("deletes uploads older than the retention, used ones' stray files included, but not a queued job's", async () => {
    const { subscriber, key } = await subscriberWithKey(db.prisma, { quota: 10 });
    const old = new Date(Date.now() - 48 * 3_600_000);
    const base = { subscriberId: subscriber.id, apiKeyId: key.id, filename: "a.pdf", expiresAt: old, createdAt: old };
    const names = ["housekeepingUnused0001.pdf", "housekeepingUsedStray1.pdf", "housekeepingJobInput01.pdf"];
    const [unused, stray, jobInput] = names;
    await db.prisma.directUpload.create({ data: { ...base, objectName: unused! } });
    await db.prisma.directUpload.create({ data: { ...base, objectName: stray!, usedAt: old } });
    const held = await db.prisma.directUpload.create({ data: { ...base, objectName: jobInput!, usedAt: old } });
    for (const name of names) await writeFile(path.join(work, "objects", "inputs", name), pdf);
    const compression = await db.prisma.compression.create({
      data: { subscriberId: subscriber.id, apiKeyId: key.id, month: new Date(), profile: "balanced" },
    });
    await db.prisma.compressionJob.create({
      data: {
        subscriberId: subscriber.id,
        apiKeyId: key.id,
        compressionId: compression.id,
        profile: "balanced",
        inputObject: jobInput!,
        filename: "a.pdf",
        originalSize: pdf.length,
        apiOrigin: server.url,
      },
    });

    await expireDirectUploads(db.prisma, storage, new Date(Date.now() - 24 * 3_600_000));
    const left = await inputsLeft();
    expect(left).toContain(jobInput);
    expect(left).not.toContain(unused);
    expect(left).not.toContain(stray);
    const rows = await db.prisma.directUpload.findMany({
      where: { subscriberId: subscriber.id },
      select: { id: true },
    });
    expect(rows).toEqual([{ id: held.id }]);
  });
});
