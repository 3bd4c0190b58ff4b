// The typed client's asynchronous jobs, direct upload and webhook verification against the real
// service over HTTP, with a job worker: a job submitted with its callback_url, waited for as each
// poll's Retry-After says, its result downloaded (with Content-Length); its webhook refused once
// by the receiver and delivered again with the same webhook-id, verified by verifyWebhook (Standard
// Webhooks' headers, and Marketplace-Signature alone), a tampered body or another secret refused;
// a direct upload compressed at once and as a job.
import { openAsBlob } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import {
  compressUpload,
  createCompressionClient,
  submitJob,
  uploadFile,
  verifyWebhook,
  waitForJob,
} from "../../clients/typescript/src/index.ts";
import { makePdf, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let work: string;
let pdfPath: string;
let server: TestServer;
let worker: JobWorker;
let receiver: Server;
let receiverUrl: string;
const calls: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "client-jobs-"));
  pdfPath = path.join(work, "report.pdf");
  await writeFile(pdfPath, await makePdf(2));
  const storage = await createLocalStorage(path.join(work, "objects"), null);
  server = await startServer(
    db,
    // The receiver listens on loopback; the worker is started below, with short retry delays.
    { UPLOAD_TMP_DIR: path.join(work, "uploads"), COMPRESS_JOB_WORKERS: "0", WEBHOOK_ALLOW_PRIVATE: "true" },
    { compress: { storage, runner: passThroughRunner } },
  );
  const noop = () => undefined;
  const logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, trace: noop, child: () => logger };
  worker = startJobWorker(
    {
      config: server.config,
      prisma: db.prisma,
      storage,
      runner: passThroughRunner,
      logger: logger as never,
      pollMs: 100,
      retryBaseMs: 200,
    },
    1,
  );
  // Refuses the first call (500), accepts the next: the redelivery must carry the same id.
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.statusCode = calls.length === 1 ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/pdf`;
});

afterAll(async () => {
  await worker?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

describe("asynchronous jobs and webhooks with the typed client", () => {
  it("submits a job, waits for it, downloads it, and verifies its webhook and the redelivery", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const pdf = createCompressionClient({ baseUrl: server.url, apiKey: token });
    const queued = await submitJob(pdf, await openAsBlob(pdfPath), { profile: "lossless", callbackUrl: receiverUrl });
    // A job worker may have taken it before the answer was written (seen on the PostgreSQL server).
    expect(queued).toMatchObject({ object: "compression_job", profile: "lossless" });
    expect(["queued", "running"]).toContain(queued.status);
    const job = await waitForJob(pdf, queued.id, { timeoutMs: 60_000 });
    expect(job).toMatchObject({ id: queued.id, status: "succeeded", success: true });
    const download = await fetch(job.url!);
    expect(download.status).toBe(200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(download.headers.get("content-length")).toBe(String(bytes.length));
    expect(Buffer.from(bytes.subarray(0, 5)).toString()).toBe("%PDF-");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);

    await expect.poll(() => calls.length, { timeout: 20_000 }).toBe(2);
    const [refused, delivered] = calls as [(typeof calls)[0], (typeof calls)[0]];
    expect(delivered.headers["webhook-id"]).toBeTruthy();
    expect(delivered.headers["webhook-id"]).toBe(refused.headers["webhook-id"]);
    expect(JSON.parse(delivered.body)).toMatchObject({ type: "compression_job.succeeded", id: job.id });
    const { data: secret } = await pdf.GET("/v1/webhook-secret");
    expect(await verifyWebhook(delivered.body, delivered.headers, secret!.secret)).toBe(true);
    const standardOnly = { ...delivered.headers, "marketplace-signature": undefined };
    expect(await verifyWebhook(delivered.body, standardOnly, secret!.secret)).toBe(true);
    const legacyOnly = { "marketplace-signature": delivered.headers["marketplace-signature"] };
    expect(await verifyWebhook(delivered.body, legacyOnly, secret!.secret)).toBe(true);
    const tampered = delivered.body.replace("succeeded", "failed");
    expect(await verifyWebhook(tampered, delivered.headers, secret!.secret)).toBe(false);
    expect(await verifyWebhook(tampered, legacyOnly, secret!.secret)).toBe(false);
    expect(await verifyWebhook(delivered.body, delivered.headers, "whsec_" + "A".repeat(44))).toBe(false);
    const late = { now: Date.now() + 600_000 };
    expect(await verifyWebhook(delivered.body, delivered.headers, secret!.secret, late)).toBe(false);
  }, 90_000);

  it("uploads a file directly and compresses it by its upload_id, at once and as a job", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const pdf = createCompressionClient({ baseUrl: server.url, apiKey: token });
    const file = await openAsBlob(pdfPath);
    const first = await uploadFile(pdf, file, { filename: "report.pdf" });
    const now = await compressUpload(pdf, first.upload_id, { profile: "lossless" });
    expect(now.response.status).toBe(200);
    expect(now.data).toMatchObject({ success: true, original_size: file.size });
    const second = await uploadFile(pdf, file);
    const accepted = await compressUpload(pdf, second.upload_id, { async: true });
    expect(accepted.response.status).toBe(202);
    const job = await waitForJob(pdf, (accepted.data as { id: string }).id, { timeoutMs: 60_000 });
    expect(job).toMatchObject({ status: "succeeded", original_size: file.size });
    // Used once: the second compression of an upload is refused in the documented shape.
    const again = await compressUpload(pdf, first.upload_id);
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ error: { code: "upload_used" } });
  }, 90_000);
});
