// Two instances sharing one PostgreSQL server never run one job twice: each has its own database
// pool, its own app and its own worker, and jobs are submitted to both. Only on the server
// (DATABASE_URL): the embedded PGlite is one process's alone, so there is no second instance.
// Also a worker process killed (SIGKILL) mid-job: another instance's worker takes the job over.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { claim } from "../../src/compress/async-jobs/queue.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { loadConfig } from "../../src/config/env.ts";
import { openDatabase, type Database } from "../../src/db/database.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { createLogger } from "../../src/logger.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createServerDatabase, dropServerDatabase, testDatabaseKind } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const onServer = testDatabaseKind() === "postgres";
const JOBS = 24;

let work: string;
let dbName: string;
const dbs: Database[] = [];
const servers: TestServer[] = [];
const workers: JobWorker[] = [];
/** Every engine run of either instance (its input's path): one per job, or a job ran twice. */
const runs: string[] = [];

/** The pass-through engine, slow enough for the two workers' claims to race, recording each run. */
const recordingRunner: EngineRunner = {
  async run(job, options) {
    runs.push(job.inputPath);
    await sleep(50 + Math.random() * 100);
    return passThroughRunner.run(job, options);
  },
};

beforeAll(async () => {
  if (!onServer) return;
  const serverUrl = loadConfig().database;
  if (serverUrl.kind !== "postgres") return;
  work = await mkdtemp(path.join(tmpdir(), "jobs-two-"));
  const made = await createServerDatabase(serverUrl.url, "jobs2");
  dbName = made.name;
  for (let i = 0; i < 2; i++) dbs.push(await openDatabase({ ...serverUrl, url: made.url, poolSize: 5 }));
  await applyMigrations(dbs[0]!.sql);
  // One bucket for both, as Cloud Storage is in production.
  const storage = await createLocalStorage(path.join(work, "objects"), "a-shared-download-signing-secret-123");
  for (const db of dbs) {
    const server = await startServer(
      db,
      { UPLOAD_TMP_DIR: path.join(work, "uploads"), COMPRESS_JOB_WORKERS: "0" },
      { compress: { storage, runner: recordingRunner } },
    );
    servers.push(server);
    const config = { ...server.config, jobs: { ...server.config.jobs, leaseMs: 5_000 } };
    const logger = createLogger(config);
    workers.push(
      startJobWorker({ config, prisma: db.prisma, storage, runner: recordingRunner, logger, pollMs: 20 }, 3),
    );
  }
});

afterAll(async () => {
  for (const worker of workers) await worker.stop();
  for (const server of servers) await server.close();
  for (const db of dbs) await db.close();
  const config = loadConfig().database;
  if (dbName && config.kind === "postgres") await dropServerDatabase(config.url, dbName);
  if (work) await rm(work, { recursive: true, force: true });
});

it.skipIf(!onServer)("runs every job once, whichever instance accepted it, and charges each once", async () => {
  const { subscriber, token } = await subscriberWithKey(dbs[0]!.prisma, { quota: 100 });
  const pdf = await makePdf(1);
  const locations: string[] = [];
  await Promise.all(
    Array.from({ length: JOBS }, async (_, i) => {
      const { body, contentType } = multipart([{ name: "file", value: pdf, filename: `f${i}.pdf` }]);
      const response = await fetch(`${servers[i % 2]!.url}/v1/compress`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": contentType, prefer: "respond-async" },
        body: new Uint8Array(body),
      });
      expect(response.status).toBe(202);
      locations.push(response.headers.get("location")!);
    }),
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    const left = await dbs[0]!.prisma.compressionJob.count({ where: { status: { in: ["queued", "running"] } } });
    if (left === 0 || Date.now() > deadline) break;
    await sleep(100);
  }
  const jobs = await dbs[0]!.prisma.compressionJob.findMany({ where: { subscriberId: subscriber.id } });
  expect(jobs).toHaveLength(JOBS);
  expect(jobs.every((job) => job.status === "succeeded" && job.attempts === 1)).toBe(true);
  expect(runs).toHaveLength(JOBS);
  expect(await usedThisMonth(dbs[0]!.prisma, subscriber.id)).toBe(JOBS);
  const polled = await fetch(`${servers[1]!.url}${locations[0]}`, { headers: { authorization: `Bearer ${token}` } });
  expect(((await polled.json()) as { status: string }).status).toBe("succeeded");
});

it.skipIf(!onServer)("never gives one job to two claims racing from two pools", async () => {
  for (const worker of workers) await worker.stop();
  const { subscriber, key } = await subscriberWithKey(dbs[0]!.prisma, { quota: 100 });
  const month = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1));
  for (let i = 0; i < 5; i++) {
    const record = await dbs[0]!.prisma.compression.create({
      data: { subscriberId: subscriber.id, apiKeyId: key.id, month, profile: "balanced" },
    });
    await dbs[0]!.prisma.compressionJob.create({
      data: {
        subscriberId: subscriber.id,
        apiKeyId: key.id,
        compressionId: record.id,
        profile: "balanced",
        inputObject: `race-input-object-${i}.pdf`,
        filename: "r.pdf",
        originalSize: 1,
        apiOrigin: "http://localhost",
      },
    });
  }
  const claims = await Promise.all(
    Array.from({ length: 20 }, (_, i) => claim(dbs[i % 2]!.prisma, `racer-${i}`, 60_000)),
  );
  const taken = claims.filter((job) => job !== null).map((job) => job.id);
  expect(taken).toHaveLength(5);
  expect(new Set(taken).size).toBe(5);
});

it.skipIf(!onServer)("retries the job of a worker process killed mid-job (SIGKILL), and charges it once", async () => {
  for (const worker of workers) await worker.stop();
  const config = loadConfig().database;
  if (config.kind !== "postgres") return;
  const { subscriber, token } = await subscriberWithKey(dbs[0]!.prisma, { quota: 100 });
  const { body, contentType } = multipart([{ name: "file", value: await makePdf(1), filename: "k.pdf" }]);
  const accepted = await fetch(`${servers[0]!.url}/v1/compress`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType, prefer: "respond-async" },
    body: new Uint8Array(body),
  });
  expect(accepted.status).toBe(202);
  const { id } = (await accepted.json()) as { id: string };
  const url = new URL(config.url);
  url.pathname = `/${dbName}`;
  const child = spawn(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      fileURLToPath(new URL("./helpers/doomed-worker.ts", import.meta.url)),
      path.join(work, "objects"),
      "a-shared-download-signing-secret-123",
    ],
    {
      env: {
        PATH: process.env["PATH"] ?? "",
        DATABASE_URL: url.toString(),
        UPLOAD_TMP_DIR: path.join(work, "uploads"),
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("taken")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the worker process exited (${code}) before taking the job`)));
  });
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));
  const running = await dbs[0]!.prisma.compressionJob.findUniqueOrThrow({ where: { id } });
  expect(running).toMatchObject({ status: "running", attempts: 1 });
  runs.length = 0;
  const server = servers[1]!;
  const rescuerConfig = { ...server.config, jobs: { ...server.config.jobs, leaseMs: 2_000 } };
  const storage = await createLocalStorage(path.join(work, "objects"), "a-shared-download-signing-secret-123");
  workers.push(
    startJobWorker(
      {
        config: rescuerConfig,
        prisma: dbs[1]!.prisma,
        storage,
        runner: recordingRunner,
        logger: createLogger(rescuerConfig),
        pollMs: 50,
      },
      1,
    ),
  );
  const deadline = Date.now() + 30_000;
  let job = running;
  while (job.status !== "succeeded" && Date.now() < deadline) {
    await sleep(100);
    job = await dbs[0]!.prisma.compressionJob.findUniqueOrThrow({ where: { id } });
  }
  expect(job).toMatchObject({ status: "succeeded", attempts: 2 });
  expect(runs).toHaveLength(1);
  expect(await usedThisMonth(dbs[0]!.prisma, subscriber.id)).toBe(1);
});
