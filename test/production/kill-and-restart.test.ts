// Fault injection against the real service process (src/main.ts), loopback only and bounded: the
// service is killed (SIGKILL: no shutdown, no exit hook) while a synchronous compression's upload,
// an asynchronous job and a direct upload's PUT are in flight, then started again on the same data
// directory and temporary directories. After the restart: the cut-off compression is not charged
// (released at start, keyed by the dead process's boot id), the job is taken over at once (not
// after its lease) and charged once when it delivers, and nothing of the killed process is left
// (request directories, partial uploads, the engine's module copies), and the cut-off request's
// Idempotency-Key is free for its retry (issue 39: 409 for an hour). A second service started on
// the same embedded data directory exits with a clear message and leaves the running one untouched.
// Runs on both databases (PGlite: the service's own; PostgreSQL: DATABASE_URL).
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminSocketPath } from "../../src/auth/admin-socket.ts";
import { multipart } from "../helpers/compress.ts";
import {
  createServiceDatabase,
  issueCorporateKey,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";
import sharp from "sharp";

let work: string;
let database: ServiceDatabase;
let env: Record<string, string>;
let token: string;
let restarted: ServiceProcess;
/** What the killed service had left, seen between the kill and the restart. */
let leftByKill: { requestDirs: string[]; partials: string[]; engineCopies: string[] };
let jobId: string;
let slowFile: Buffer;
/** The Idempotency-Key of the synchronous compression that is cut off by the kill. */
const KILLED_KEY = "cut-off-by-a-kill";

const dirs = () => ({
  uploads: path.join(work, "uploads"),
  inputs: path.join(work, "objects", "inputs"),
  tmp: path.join(work, "tmp"),
});

async function leftovers() {
  const list = (dir: string) => readdir(dir).catch(() => [] as string[]);
  return {
    requestDirs: (await list(dirs().uploads)).filter((name) => name.startsWith("req-")),
    partials: (await list(dirs().inputs)).filter((name) => name.endsWith(".part")),
    engineCopies: (await list(dirs().tmp)).filter((name) => name.startsWith("compress-engine-")),
  };
}

/** A request whose body the test writes and may never finish; `answer` settles with the response. */
function openRequest(method: string, url: string, headers: Record<string, string>) {
  const target = new URL(url);
  let req!: http.ClientRequest;
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve) => {
    req = http.request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method, headers },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", () => resolve({ status: 0, headers: {}, body }));
      },
    );
    req.on("error", () => resolve({ status: 0, headers: {}, body: "" }));
  });
  return { req, answer };
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const usedOf = async (service: ServiceProcess) => {
  const response = await fetch(`${service.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { used: number }).used;
};

const jobOf = async (service: ServiceProcess) => {
  const response = await fetch(`${service.url}/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as { status: string; attempts: number };
};

/**
 * Noise photographs big enough that the engine works on them for a while: the job is caught running.
 * Made by libvips (each one different, so the engine does not merge them), not pixel by pixel here.
 */
async function slowPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  for (let i = 0; i < 4; i++) {
    const create = { width: 2000, height: 1400, channels: 3 as const, background: { r: 40 * i, g: 128, b: 200 } };
    const jpeg = await sharp({ create: { ...create, noise: { type: "gaussian", mean: 128, sigma: 40 } } })
      .jpeg({ quality: 95 })
      .toBuffer();
    const image = await doc.embedJpg(jpeg);
    doc.addPage([612, 792]).drawImage(image, { x: 20, y: 20, width: 572, height: 405 });
  }
  return Buffer.from(await doc.save());
}

/** Starts the three kinds of work, each caught in flight, then kills the service with SIGKILL. */
async function killWithWorkInFlight(service: ServiceProcess) {
  const auth = { authorization: `Bearer ${token}` };
  // A direct upload whose PUT has sent part of its body.
  const created = await fetch(`${service.url}/v1/uploads`, { method: "POST", headers: auth });
  expect(created.status).toBe(201);
  const { upload_url: uploadUrl } = (await created.json()) as { upload_url: string };
  const put = openRequest("PUT", uploadUrl, { "content-type": "application/pdf", "content-length": "200000" });
  put.req.write(Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(60_000, 0x20)]));
  await until(
    "a partial upload",
    async () => (await leftovers()).partials.length,
    (n) => n === 1,
  );

  // A synchronous compression whose upload is on its way: its unit is reserved.
  const upload = multipart([
    { name: "file", value: Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(200_000, 0x20)]), filename: "a.pdf" },
  ]);
  const post = openRequest("POST", `${service.url}/v1/compress`, {
    ...auth,
    "content-type": upload.contentType,
    "content-length": String(upload.body.length),
    "idempotency-key": KILLED_KEY,
  });
  post.req.write(upload.body.subarray(0, 50_000));
  await until(
    "the reservation",
    () => usedOf(service),
    (used) => used === 1,
  );
  await until("the request's directory", leftovers, (left) => left.requestDirs.length === 1);

  // An asynchronous job, caught running in the engine.
  const slow = multipart([{ name: "file", value: slowFile, filename: "slow.pdf" }]);
  const accepted = await fetch(`${service.url}/v1/compress`, {
    method: "POST",
    headers: { ...auth, "content-type": slow.contentType, prefer: "respond-async" },
    body: new Uint8Array(slow.body),
  });
  expect(accepted.status).toBe(202);
  jobId = ((await accepted.json()) as { id: string }).id;
  const running = await until(
    "the job",
    () => jobOf(service),
    (job) => job.status !== "queued",
  );
  expect(running.status, "the job ended before it could be killed: make slowPdf heavier").toBe("running");
  // The job's own directory beside the request's.
  await until("the job's directory", leftovers, (left) => left.requestDirs.length === 2);

  service.kill("SIGKILL");
  await service.exited;
  put.req.destroy();
  post.req.destroy();
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "kill-restart-"));
  await mkdir(dirs().tmp, { recursive: true });
  database = await createServiceDatabase(work);
  token = await issueCorporateKey(database, "kill", 10);
  env = {
    ...database.env,
    // The engine's module copies go to the temporary directory of the process (os.tmpdir()).
    TMPDIR: dirs().tmp,
    UPLOAD_TMP_DIR: dirs().uploads,
    LOCAL_STORAGE_DIR: path.join(work, "objects"),
    DOWNLOAD_SIGNING_SECRET: "kill-restart-test-signing-secret-of-32-chars",
    RATE_LIMIT_REQUESTS: "1000000",
    // The test polls usage and the job: the per-key limit is not what is tested here.
    COMPRESS_RATE_LIMIT_PER_MINUTE: "1000000",
    COMPRESS_WARM_PROCESSES: "1",
    // Long: a job taken over only when its lease passes would not be within this test's patience.
    COMPRESS_JOB_LEASE_SECONDS: "600",
  };
  const [first] = await Promise.all([
    startService(env, { name: "service to kill" }),
    slowPdf().then((file) => (slowFile = file)),
  ]);
  await killWithWorkInFlight(first);
  leftByKill = await leftovers();
  restarted = await startService(env, { name: "restarted service" });
}, 300_000); // two service starts and a kill, on a machine that may be busy

afterAll(async () => {
  await restarted?.stop(5_000);
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("a service killed with work in flight, then started again", () => {
  it("had left a request directory, a partial upload and its engine's module copy (the test's premise)", () => {
    expect(leftByKill.requestDirs).toHaveLength(2); // the job's and the request's
    expect(leftByKill.partials).toHaveLength(1);
    expect(leftByKill.engineCopies.length).toBeGreaterThanOrEqual(1);
  });

  it("does not charge the synchronous compression that was cut off", async () => {
    // Read before the job (reserved at its acceptance, 1 unit) can end: the request's unit is back.
    const job = await jobOf(restarted);
    expect(job.status).not.toBe("failed");
    expect(await usedOf(restarted)).toBe(1);
  });

  it("takes the job over at once, not after its lease, and charges it once when it delivers", async () => {
    const done = await until(
      "the job after the restart",
      () => jobOf(restarted),
      (job) => job.status !== "running" && job.status !== "queued",
      // The engine's time on a busy machine; the lease (600 s) is far beyond it.
      120_000,
    );
    expect(done).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(await usedOf(restarted)).toBe(1);
  }, 150_000);

  it("leaves nothing of the killed process in the temporary directories", async () => {
    const now = await leftovers();
    expect(now.partials).toEqual([]);
    // The restarted service's own engine copy only (its name leads with its pid).
    expect(now.engineCopies.every((name) => name.startsWith(`compress-engine-${restarted.pid}-`))).toBe(true);
    const idle = await until("the job's own directory", leftovers, (left) => left.requestDirs.length === 0);
    expect(idle.requestDirs).toEqual([]);
  });

  it("lets the cut-off request's Idempotency-Key go at the restart: its retry runs (not 409)", async () => {
    const pdf = await PDFDocument.create();
    pdf.addPage([200, 200]);
    const upload = multipart([{ name: "file", value: Buffer.from(await pdf.save()), filename: "a.pdf" }]);
    const retry = await fetch(`${restarted.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": upload.contentType, "idempotency-key": KILLED_KEY },
      body: new Uint8Array(upload.body),
    });
    expect(retry.status, await retry.clone().text()).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });

  it("is the same process at the end, and logged nothing at CRITICAL", async () => {
    expect((await fetch(`${restarted.url}/healthz`)).status).toBe(200);
    expect(restarted.records().filter((record) => record["severity"] === "CRITICAL")).toEqual([]);
  });
});

describe("a second service on the same embedded data directory", () => {
  it("exits with a clear message and leaves the running service and its admin socket alone", async (context) => {
    if (database.kind !== "pglite") {
      context.skip("PostgreSQL: no embedded data directory to share (the PGlite pass tests it)");
      return;
    }
    const socket = adminSocketPath(database.env["PGLITE_DATA_DIR"]!);
    expect(existsSync(socket)).toBe(true);
    const second = await startService(env, { name: "second service", timeoutMs: 30_000 }).then(
      async (started) => {
        await started.stop(5_000);
        return new Error("the second service started");
      },
      (error: unknown) => error as Error,
    );
    expect(second.message).toMatch(/another service \(pid \d+\) is running on the data directory/);
    expect(existsSync(socket)).toBe(true);
    expect((await fetch(`${restarted.url}/readyz`)).status).toBe(200);
  });
});
