// The compression service as the tests over HTTP start it: a database of their own, the real
// engine runner, local storage and the app on a port, in a scratch directory (uploads, objects and
// mail); with a job worker
// when asked (the server's own workers off, COMPRESS_JOB_WORKERS=0, so the test's is the one that
// runs jobs). close() stops them in order and removes the directory.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Resolver } from "../../src/compress/address-policy.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { createRunner, type Runner, type RunnerOptions } from "../../src/compress/isolation/runner.ts";
import { createLocalStorage, type LocalStorage } from "../../src/compress/storage/local.ts";
import { createLogger } from "../../src/logger.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { startServer, type TestServer } from "./server.ts";

export interface CompressionStack {
  db: TestDatabase;
  /** The scratch directory (uploads/ and objects/ are in it). */
  work: string;
  runner: Runner;
  storage: LocalStorage;
  server: TestServer;
  /** The job worker, when `jobWorker` was asked for. */
  worker: JobWorker | undefined;
  close(): Promise<void>;
}

export interface CompressionStackOptions {
  /** Prefix of the scratch directory's name. */
  name: string;
  /** Environment beside the defaults (UPLOAD_TMP_DIR and MAIL_OUTBOX_DIR in the scratch directory). */
  env?: Record<string, string>;
  /** Runner settings beside the defaults (2 at once, 16 queued, 60 s, 1 GiB). */
  runner?: Partial<RunnerOptions>;
  /** What the server and the worker run jobs through, given the real runner (to record them, say). */
  engine?: (runner: Runner) => EngineRunner;
  /** Start one job worker polling every 100 ms. */
  jobWorker?: boolean;
  /** How the server resolves file_url hosts (a scripted resolver), instead of dns.lookup. */
  resolver?: Resolver;
}

export async function startCompressionStack(options: CompressionStackOptions): Promise<CompressionStack> {
  const db = await createTestDatabase();
  const work = await mkdtemp(path.join(tmpdir(), `${options.name}-`));
  const runner = createRunner({ concurrency: 2, queueLimit: 16, timeoutMs: 60_000, memoryMb: 1024, ...options.runner });
  const engine = options.engine?.(runner) ?? runner;
  const storage = await createLocalStorage(path.join(work, "objects"), null);
  const env = {
    UPLOAD_TMP_DIR: path.join(work, "uploads"),
    MAIL_OUTBOX_DIR: path.join(work, "mail"),
    ...(options.jobWorker ? { COMPRESS_JOB_WORKERS: "0" } : {}),
    ...options.env,
  };
  const resolver = options.resolver ? { resolver: options.resolver } : {};
  const server = await startServer(db, env, { compress: { storage, runner: engine, ...resolver } });
  const logger = createLogger({ logLevel: "silent" });
  const worker = options.jobWorker
    ? startJobWorker({ config: server.config, prisma: db.prisma, storage, runner: engine, logger, pollMs: 100 }, 1)
    : undefined;
  const close = async () => {
    await worker?.stop();
    await server.close();
    await runner.close();
    await db.close();
    await rm(work, { recursive: true, force: true });
  };
  return { db, work, runner, storage, server, worker, close };
}
