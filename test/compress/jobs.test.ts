// Asynchronous compression jobs through real HTTP with the real engine in child processes:
// Prefer: respond-async answered 202 with Location, the job polled to success and its URL
// downloading a valid PDF; a failing job uncharged; another subscriber's job 404; a worker that
// dies mid-job (its lease left to expire) retried by another and charged once; webhooks signed and
// verified by the helper docs/compression-api.md shows; direct uploads (signed PUT, then upload_id).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PDFDocument } from "@cantoo/pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { verifyWebhook } from "../../src/compress/async-jobs/signature.ts";
import type { Runner } from "../../src/compress/isolation/runner.ts";
import type { LocalStorage } from "../../src/compress/storage/local.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import { multipart, subscriberWithKey } from "../helpers/compress.ts";
import type { TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { photoPdf } from "../pdf/fixtures.ts";

let db: TestDatabase;
let photo: Buffer;
let work: string;
let runner: Runner;
let storage: LocalStorage;
let server: TestServer;
let stack: CompressionStack | undefined;
const workers: JobWorker[] = [];

function worker(run: EngineRunner = runner, options: { leaseSeconds?: number; slots?: number } = {}) {
  const config = {
    ...server.config,
    jobs: { ...server.config.jobs, leaseMs: (options.leaseSeconds ?? 60) * 1000 },
  };
  const started = startJobWorker(
    { config, prisma: db.prisma, storage, runner: run, logger: silentLogger(), pollMs: 100, retryBaseMs: 200 },
    options.slots ?? 1,
  );
  workers.push(started);
  return started;
}

const silentLogger = () => {
  const noop = () => undefined;
  const logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, trace: noop, child: () => logger };
  return logger as never;
};

beforeAll(async () => {
  photo = Buffer.from((await photoPdf()).bytes);
  stack = await startCompressionStack({
    name: "compress-jobs",
    runner: { queueLimit: 8, warmProcesses: 1 },
    // The webhook receivers of these tests listen on loopback.
    // The polls (every 150 ms) of a job slowed by a busy machine would pass 120 requests a minute.
    env: { COMPRESS_JOB_WORKERS: "0", WEBHOOK_ALLOW_PRIVATE: "true", COMPRESS_RATE_LIMIT_PER_MINUTE: "100000" },
  });
  ({ db, work, runner, storage, server } = stack);
});
afterAll(async () => {
  for (const started of workers) await started.stop().catch(() => undefined);
  await stack?.close();
});

type Job = {
  id: string;
  status: string;
  attempts: number;
  url?: string;
  original_size?: number;
  compressed_size?: number;
  savings_percentage?: number;
  expires_in?: number;
  success?: boolean;
  error?: { code: string; message: string };
};

async function submit(token: string, file: Buffer, fields: Record<string, string> = {}) {
  const parts = [
    { name: "file", value: file, filename: "report.pdf", contentType: "application/pdf" },
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
  ];
  const { body, contentType } = multipart(parts);
  return fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType, prefer: "respond-async" },
    body: new Uint8Array(body),
  });
}

async function poll(
  token: string,
  location: string,
  until = (job: Job) => job.status === "succeeded" || job.status === "failed",
) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const response = await fetch(`${server.url}${location}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const job = (await response.json()) as Job;
    if (until(job)) return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** A runner that takes a job and never answers: the process running it "dies" with its worker. */
const hangingRunner = (started: () => void): EngineRunner => ({
  run: () => {
    started();
    return new Promise(() => undefined);
  },
});

describe("asynchronous jobs", () => {
  it("answers 202 with Location at once, and the polled job downloads a valid PDF, charged once", async () => {
    worker();
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const response = await submit(token, photo, { profile: "balanced" });
    expect(response.status).toBe(202);
    expect(response.headers.get("preference-applied")).toBe("respond-async");
    const location = response.headers.get("location")!;
    const accepted = (await response.json()) as Job;
    expect(location).toBe(`/v1/jobs/${accepted.id}`);
    expect(["queued", "running"]).toContain(accepted.status);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);

    const done = await poll(token, location);
    expect(done).toMatchObject({ status: "succeeded", success: true, attempts: 1, expires_in: 3600 });
    expect(done.original_size).toBe(photo.length);
    expect(done.compressed_size).toBeLessThan(done.original_size!);
    const download = await fetch(done.url!);
    expect(download.status).toBe(200);
    const pdf = await PDFDocument.load(new Uint8Array(await download.arrayBuffer()));
    expect(pdf.getPageCount()).toBe(2);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    // The job's input is gone from storage once it ended.
    expect(await readdir(path.join(work, "objects", "inputs"))).toEqual([]);
  });

  it("fails a damaged file's job with its code and gives the unit back", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const response = await submit(token, Buffer.from("%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n"));
    expect(response.status).toBe(202);
    const done = await poll(token, response.headers.get("location")!);
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("corrupted_pdf");
    expect(done.url).toBeUndefined();
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  });

  it("shows a job to its subscriber's keys only: another subscriber gets 404", async () => {
    const owner = await subscriberWithKey(db.prisma, { quota: 10 });
    const stranger = await subscriberWithKey(db.prisma, { quota: 10 });
    const response = await submit(owner.token, photo);
    const location = response.headers.get("location")!;
    const secondKey = await owner.admin.issueKey(owner.email, "second");
    for (const [token, status] of [
      [secondKey.token, 200],
      [stranger.token, 404],
    ] as const) {
      const answer = await fetch(`${server.url}${location}`, { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(status);
    }
    const unknown = await fetch(`${server.url}/v1/jobs/not-a-uuid`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("not_found");
    await poll(owner.token, location);
  });

  it("refuses a bad callback_url before reserving anything (400), and a profile it does not know", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const bad = await submit(token, photo, { callback_url: "ftp://example.com/hook" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_callback_url");
    const profile = await submit(token, photo, { profile: "maximum" });
    expect(profile.status).toBe(400);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  });

  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://[fe80::1]/hook",
    "http://[::ffff:169.254.169.254]/hook",
    "http://[::127.0.0.1]/hook",
    "http://[::ffff:0:7f00:1]/hook",
    "http://[fec0::1]/hook",
  ])("refuses callback_url %s even where private receivers are allowed (400, nothing reserved)", async (url) => {
    expect(server.config.webhookTargets).toBe("private");
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const response = await submit(token, photo, { callback_url: url });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_callback_url");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  });

  it("refuses loopback, private and embedded-private callback_urls by default (WEBHOOK_ALLOW_PRIVATE unset)", async () => {
    const strict = await startServer(
      db,
      { UPLOAD_TMP_DIR: path.join(work, "uploads"), COMPRESS_JOB_WORKERS: "0" },
      { compress: { storage, runner } },
    );
    try {
      expect(strict.config.webhookTargets).toBe("public");
      const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
      for (const url of [
        "http://127.0.0.1:8080/hook",
        "https://10.1.2.3/hook",
        "https://[2002:a00:1::1]/hook", // 6to4 carrying 10.0.0.1
        "https://[64:ff9b::a00:1]/hook", // NAT64 carrying 10.0.0.1
        "https://localhost/hook",
      ]) {
        const { body, contentType } = multipart([
          { name: "file", value: photo, filename: "report.pdf", contentType: "application/pdf" },
          { name: "callback_url", value: url },
        ]);
        const response = await fetch(`${strict.url}/v1/compress`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": contentType, prefer: "respond-async" },
          body: new Uint8Array(body),
        });
        expect(response.status, url).toBe(400);
        expect(((await response.json()) as { error: { code: string } }).error.code, url).toBe("invalid_callback_url");
      }
    } finally {
      await strict.close();
    }
  });

  it("retries the job of a worker that died mid-job, on another worker, and charges it once", async () => {
    for (const started of workers.splice(0)) await started.stop();
    let taken!: () => void;
    const takenByDoomed = new Promise<void>((resolve) => (taken = resolve));
    const doomed = worker(
      hangingRunner(() => taken()),
      { leaseSeconds: 2 },
    );
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const response = await submit(token, photo);
    const location = response.headers.get("location")!;
    await takenByDoomed;
    expect((await poll(token, location, (job) => job.status === "running")).attempts).toBe(1);
    doomed.abandon(); // as a killed process: no word to the database, the lease runs out
    const rescuer = worker(runner, { leaseSeconds: 2 });
    const done = await poll(token, location);
    expect(done).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    const records = await db.prisma.compression.findMany({ where: { subscriberId: subscriber.id } });
    expect(records.map((record) => record.status)).toEqual(["succeeded"]);
    await rescuer.stop();
    worker();
  });
});

interface Received {
  body: string;
  signature: string | undefined;
}

async function receiver(answers: number[]): Promise<{ url: string; calls: Received[]; server: Server }> {
  const calls: Received[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls.push({
        body: Buffer.concat(chunks).toString("utf8"),
        signature: req.headers["marketplace-signature"] as string,
      });
      res.statusCode = answers[calls.length - 1] ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pdf`, calls, server };
}

/** The verification helper exactly as docs/compression-api.md shows it, loaded from its text. */
async function readmeVerifier(): Promise<typeof verifyWebhook> {
  const guide = readFileSync(new URL("../../docs/compression-api.md", import.meta.url), "utf8");
  const block = /<!-- webhook-verification -->\s*```js\n([\s\S]*?)```/.exec(guide);
  expect(block, "the guide's verification helper").not.toBeNull();
  const file = path.join(work, "readme-verify.mjs");
  await writeFile(file, block![1]!);
  const loaded = (await import(pathToFileURL(file).href)) as { verifyWebhook: typeof verifyWebhook };
  return loaded.verifyWebhook;
}

describe("webhooks", () => {
  it("posts the ended job, signed with the subscriber's secret; retries a failed call; a tampered body fails verification", async () => {
    const hook = await receiver([500, 200]);
    try {
      const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
      const secretAnswer = await fetch(`${server.url}/v1/webhook-secret`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const { secret } = (await secretAnswer.json()) as { secret: string };
      expect(secret).toMatch(/^whsec_/);
      const response = await submit(token, photo, { callback_url: hook.url });
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as Job;
      const deadline = Date.now() + 90_000;
      while (hook.calls.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(hook.calls).toHaveLength(2); // the first answered 500, retried after the backoff
      const call = hook.calls[1]!;
      const job = JSON.parse(call.body) as Job;
      expect(job).toMatchObject({ id, status: "succeeded", success: true });
      const readmeVerify = await readmeVerifier();
      for (const verify of [verifyWebhook, readmeVerify]) {
        expect(verify(call.body, call.signature, secret)).toBe(true);
        expect(verify(call.body.replace('"succeeded"', '"failed"'), call.signature, secret)).toBe(false);
        expect(verify(call.body, call.signature, "whsec_another")).toBe(false);
        // A replay an hour later is refused by the timestamp.
        expect(verify(call.body, call.signature, secret, 300, Date.now() + 3_600_000)).toBe(false);
      }
      const delivery = await db.prisma.webhookDelivery.findFirstOrThrow({ where: { jobId: id } });
      expect(delivery).toMatchObject({ status: "delivered", attempts: 2, lastStatus: 200 });
    } finally {
      hook.server.close();
    }
  });
});

describe("direct upload", () => {
  async function createUpload(token: string) {
    const response = await fetch(`${server.url}/v1/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ filename: "scan.pdf" }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { upload_id: string; upload_url: string; headers: Record<string, string> };
  }

  const compressUpload = (token: string, body: object, async = true) =>
    fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(async ? { prefer: "respond-async" } : {}),
      },
      body: JSON.stringify(body),
    });

  it("takes a PUT to the signed URL, then compresses it by upload_id as a job and synchronously", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const upload = await createUpload(token);
    expect(upload.upload_url).toContain("/v1/uploads/content/");
    // Not uploaded yet: 409.
    expect((await compressUpload(token, { upload_id: upload.upload_id })).status).toBe(409);
    const put = await fetch(upload.upload_url, {
      method: "PUT",
      headers: upload.headers,
      body: new Uint8Array(photo),
    });
    expect(put.status).toBe(200);
    const accepted = await compressUpload(token, { upload_id: upload.upload_id, profile: "extreme" });
    expect(accepted.status).toBe(202);
    const done = await poll(token, accepted.headers.get("location")!);
    expect(done).toMatchObject({ status: "succeeded", original_size: photo.length });
    expect((await fetch(done.url!)).status).toBe(200);
    // An upload is compressed once.
    expect((await compressUpload(token, { upload_id: upload.upload_id })).status).toBe(409);

    const second = await createUpload(token);
    await fetch(second.upload_url, { method: "PUT", headers: second.headers, body: new Uint8Array(photo) });
    const now = await compressUpload(token, { upload_id: second.upload_id }, false);
    expect(now.status).toBe(200);
    expect(((await now.json()) as Job).success).toBe(true);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(2);
  });

  it("refuses a PUT that is not a PDF, an altered signature, and another subscriber's upload_id", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const stranger = await subscriberWithKey(db.prisma, { quota: 10 });
    const upload = await createUpload(token);
    const notPdf = await fetch(upload.upload_url, { method: "PUT", body: new Uint8Array(4096).fill(0x41) });
    expect(notPdf.status).toBe(422);
    const altered = await fetch(upload.upload_url.replace("signature=", "signature=x"), {
      method: "PUT",
      body: new Uint8Array(photo),
    });
    expect(altered.status).toBe(403);
    await fetch(upload.upload_url, { method: "PUT", body: new Uint8Array(photo) });
    const foreign = await compressUpload(stranger.token, { upload_id: upload.upload_id });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe("upload_not_found");
    const badJson = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{",
    });
    expect(badJson.status).toBe(400);
    // Nothing partial is left beside the inputs.
    const left = await readdir(path.join(work, "objects", "inputs"));
    expect(left.filter((name) => name.endsWith(".part"))).toEqual([]);
  });
});
