// Idempotency-Key on POST /v1/compress and POST /v1/uploads, through real HTTP on both databases: a
// retry of the same request gets the first answer without running or charging again (whatever its
// multipart boundary), another request under the key is refused, a request still running holds its
// key, a failure of ours or a refusal before the body lets the key go, and expired keys are swept.
import { copyFile, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { expireIdempotencyKeys } from "../../src/compress/idempotency.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { makePdf, multipart, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let work: string;
let pdf: Buffer;
let runs = 0;
/** While set, a compression waits for it (a request kept in flight). */
let gate: Promise<void> | null = null;

const countingRunner: EngineRunner = {
  async run(job) {
    runs++;
    if (gate) await gate;
    await copyFile(job.inputPath, job.outputPath);
    return { ok: true, outputSize: (await stat(job.outputPath)).size, pages: 0 };
  },
};

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "idempotency-"));
  pdf = await makePdf(2);
  const objects = path.join(work, "objects");
  server = await startServer(
    db,
    { UPLOAD_TMP_DIR: path.join(work, "uploads"), LOCAL_STORAGE_DIR: objects, COMPRESS_JOB_WORKERS: "0" },
    { compress: { storage: await createLocalStorage(objects, null), runner: countingRunner } },
  );
});
afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

function compress(token: string, key: string | null, file: Buffer, fields: Record<string, string> = {}, extra = {}) {
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename: "report.pdf" },
  ]);
  return fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": contentType,
      ...(key ? { "idempotency-key": key } : {}),
      ...extra,
    },
    body: new Uint8Array(body),
  });
}

const errorCode = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code;

describe("Idempotency-Key", () => {
  it("answers a retry of the same request with the first answer, run and charged once", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const before = runs;
    const first = await compress(token, "retry-1", pdf, { profile: "extreme" });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody: unknown = await first.json();
    // The retry is a new multipart body (another boundary) of the same fields and file.
    const again = await compress(token, "retry-1", pdf, { profile: "extreme" });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-quota-remaining")).toBe(first.headers.get("x-quota-remaining"));
    expect(await again.json()).toEqual(firstBody);
    expect(runs - before).toBe(1);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    // Without the key, the same request runs again.
    expect((await compress(token, null, pdf, { profile: "extreme" })).status).toBe(200);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(2);
  });

  it("refuses the key for another request (another file, field or route) with 409 idempotency_key_reused", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    expect((await compress(token, "once", pdf)).status).toBe(200);
    const other = await compress(token, "once", await makePdf(3));
    expect(other.status).toBe(409);
    expect(await errorCode(other)).toBe("idempotency_key_reused");
    const otherField = await compress(token, "once", pdf, { profile: "lossless" });
    expect(await errorCode(otherField)).toBe("idempotency_key_reused");
    const uploads = await fetch(`${server.url}/v1/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "idempotency-key": "once" },
    });
    expect(await errorCode(uploads)).toBe("idempotency_key_reused");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    // Keys are the API key's own: another subscriber's same key is another key.
    const stranger = await subscriberWithKey(db.prisma, { quota: 10 });
    expect((await compress(stranger.token, "once", await makePdf(3))).status).toBe(200);
  });

  it("answers 409 idempotency_key_in_use while the first request runs, then replays its answer", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const started = runs;
    const first = compress(token, "slow", pdf);
    while (runs === started) await new Promise((resolve) => setTimeout(resolve, 20));
    const during = await compress(token, "slow", pdf);
    expect(during.status).toBe(409);
    expect(during.headers.get("retry-after")).toBe("1");
    expect(await errorCode(during)).toBe("idempotency_key_in_use");
    gate = null;
    open();
    const firstBody: unknown = await (await first).json();
    const after = await compress(token, "slow", pdf);
    expect(after.headers.get("idempotent-replayed")).toBe("true");
    expect(await after.json()).toEqual(firstBody);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  });

  it("keeps a refusal of the request read whole, and lets the key go after one before the body was whole", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 1 });
    const refused = await compress(token, "bad-profile", pdf, { profile: "tiny" });
    expect(refused.status).toBe(400);
    const again = await compress(token, "bad-profile", pdf, { profile: "tiny" });
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // Not a PDF: refused while reading, so nothing is kept; the retry is read (and refused) again.
    const notPdf = Buffer.from("not a pdf at all");
    expect((await compress(token, "bad-file", notPdf)).status).toBe(422);
    const retriedFile = await compress(token, "bad-file", notPdf);
    expect(retriedFile.status).toBe(422);
    expect(retriedFile.headers.get("idempotent-replayed")).toBeNull();
    // Quota used up: 402 before the body is read, so the key is not spent on it.
    expect((await compress(token, null, pdf)).status).toBe(200);
    expect((await compress(token, "later", pdf)).status).toBe(402);
    await db.prisma.subscriber.update({ where: { id: subscriber.id }, data: { monthlyQuota: 2 } });
    const retried = await compress(token, "later", pdf);
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("replays a job's 202 with its Location, queued once", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const prefer = { prefer: "respond-async" };
    const first = await compress(token, "job-1", pdf, {}, prefer);
    expect(first.status).toBe(202);
    const again = await compress(token, "job-1", pdf, {}, prefer);
    expect(again.status).toBe(202);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(await db.prisma.compressionJob.count({ where: { subscriberId: subscriber.id } })).toBe(1);
  });

  it("makes POST /v1/uploads idempotent too, and refuses a malformed key", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const create = (key: string) =>
      fetch(`${server.url}/v1/uploads`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ filename: "scan.pdf" }),
      });
    const first = (await (await create("upload-1")).json()) as { upload_id: string };
    const again = await create("upload-1");
    expect(again.status).toBe(201);
    expect(((await again.json()) as { upload_id: string }).upload_id).toBe(first.upload_id);
    const bad = await create("x".repeat(256));
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("invalid_idempotency_key");
  });

  it("sweeps keys whose 24 hours have passed", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    expect((await compress(token, "old", pdf)).status).toBe(200);
    const tomorrow = new Date(Date.now() + 24 * 3_600_000 + 60_000);
    expect(await expireIdempotencyKeys(db.prisma, tomorrow)).toBeGreaterThanOrEqual(1);
    expect(await db.prisma.idempotencyKey.count({ where: { key: "old" } })).toBe(0);
  });
});
