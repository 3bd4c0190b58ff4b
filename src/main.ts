// Composition root: configuration, database, application, listen. The only place that listens,
// and the one that shuts down on SIGTERM/SIGINT (the steps are in src/lifecycle.ts).
import { createApp } from "./app.ts";
import { configureCallbacks } from "./callbacks.ts";
import { temporaryRoot } from "./compress/workflow/workspace.ts";
import { createRunner, serviceRunnerOptions, TARGET_MAX_RUNS } from "./compress/isolation/runner.ts";
import { removeOrphanedCopies } from "./compress/isolation/stripped-copy.ts";
import { startJobWorker } from "./compress/async-jobs/worker.ts";
import { webhookPolicyNotice } from "./compress/async-jobs/webhooks.ts";
import { logRunnerEvents } from "./compress/runner-events.ts";
import { recoverDeadBoots, removeBootMarker } from "./compress/boot.ts";
import { startHousekeeping } from "./compress/maintenance.ts";
import { createStorage } from "./compress/storage/index.ts";
import { accounts } from "./auth/accounts.ts";
import { adminSocketPath, serveAccounts } from "./auth/admin-socket.ts";
import { ConfigError, loadConfig, type Config } from "./config/env.ts";
import { openDatabase, type Database } from "./db/database.ts";
import { startJobFeedHousekeeping } from "./db/job-feed.ts";
import { applyMigrations } from "./db/migrate.ts";
import { isCatalogEmpty, seedCatalog } from "./db/seed/seed.ts";
import { seedDemoSubscribers } from "./db/seed/subscribers.ts";
import { createServiceServer } from "./http/server.ts";
import { createLifecycle } from "./http/drain.ts";
import { shutdown } from "./lifecycle.ts";
import { createLogger, flushLogger } from "./logger.ts";
import { readSuggestableNamesAhead } from "./graphql/search/suggest-names.ts";
import { DirectoryLocked, lockDirectory } from "./process-lock.ts";
import { closeRedis, createRedis } from "./redis.ts";

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(78); // EX_CONFIG
  }
  throw error;
}
const logger = createLogger(config);

// The process policy (docs/process-policy.md). An error inside a request is that request's 500 in
// the error shape (the error middleware logs it) and the process serves on; every stream a client
// feeds has its errors handled where it is read. What still escapes is a fault of ours whose
// damage no one can bound: an exception nobody caught (an 'error' event without a listener, a throw
// in a timer) is logged at CRITICAL and the instance drains as on SIGTERM, then exits 1 for the
// platform to start a fresh one. A promise rejected with no one waiting unwound only its own chain:
// it is logged (ERROR) and the process serves on.
let crash: ((error: unknown) => void) | null = null;
process.on("uncaughtException", (error) => {
  logger.fatal({ err: error }, "uncaught exception: this instance stops for the platform to restart it");
  if (crash) return crash(error);
  void flushLogger(logger).finally(() => process.exit(1));
});
process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
// The callbacks the server owns (timers, event handlers) log what they throw and serve on.
configureCallbacks({
  report: (callback, error) =>
    logger.error({ err: error, callback }, `${callback} callback failed; the process serves on`),
  failpoints: config.failpoints,
});
if (config.failpoints.length)
  logger.warn({ failpoints: config.failpoints }, "failpoints armed (FAILPOINTS): a fault suite is running");

// The embedded database's directory is this process's alone (and its admin socket with it): a
// second service on it exits here, before it touches anything; a dead one's lock is taken over.
const dataDir =
  config.database.kind === "pglite" && !config.database.dataDir.startsWith("memory://")
    ? config.database.dataDir
    : null;
let dataDirLock: Awaited<ReturnType<typeof lockDirectory>> | null = null;
try {
  dataDirLock = dataDir ? await lockDirectory(dataDir) : null;
} catch (error) {
  if (!(error instanceof DirectoryLocked)) throw error;
  logger.fatal(
    { dataDir, ownerPid: error.ownerPid },
    `another service (pid ${error.ownerPid}) is running on the data directory ${dataDir}; stop it first, or give this one another PGLITE_DATA_DIR`,
  );
  await flushLogger(logger);
  process.exit(1);
}
// Anything that fails from here until the service listens (the database, migrations, the seed,
// storage, the port) is one JSON line at CRITICAL and exit 1, not a bare stack on stderr.
/**
 * The names `suggest` completes, read while the service starts taking requests: three tries a few
 * seconds apart (at start-up, beside the other first connections, opening one can take longer than
 * its limit on a busy machine), then the first suggest reads them.
 */
async function readNamesAhead(db: Database): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readSuggestableNamesAhead(db.prisma, db.counting);
    } catch (error) {
      if (attempt === 3) {
        logger.warn(
          { err: error },
          "the names suggest completes could not be read ahead; the first suggest reads them",
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, attempt * 2_000).unref());
    }
  }
}

async function start() {
  // Connects in the background while the database opens; requests fail fast (503) until it is ready.
  const redis = createRedis(config, logger);
  const db = await openDatabase(config.database, { timeouts: config.databaseTimeouts });

  if (config.database.migrateOnStart) {
    const applied = await applyMigrations(db.sql);
    if (applied.length) logger.info({ applied }, "migrations applied");
  }
  if (config.database.seedDemoData && (await isCatalogEmpty(db))) {
    const started = performance.now();
    const summary = await seedCatalog(db, { seed: config.database.seed });
    logger.info({ ...summary, ms: Math.round(performance.now() - started) }, "demo data seeded");
  }

  if (config.database.seedDemoData) {
    const created = await seedDemoSubscribers(db.prisma);
    if (created.length) logger.info({ subscribers: created }, "demo subscribers created");
  }
  // The embedded database is this process's alone: account commands reach it through a socket.
  const accountsSocket = dataDir
    ? await serveAccounts(adminSocketPath(dataDir), accounts(db.prisma, config.apiKeyPepper))
    : null;

  // Before the first request: a burst finds its connections open (src/db/database.ts).
  const warmed = await db.warm();
  if (config.database.kind === "postgres") {
    logger.info({ connections: warmed, poolSize: config.database.poolSize }, "database pool opened");
  }

  const storage = await createStorage(config.storage);
  // What a process killed on this machine left: its quota units, job leases and files (boot.ts).
  const tmpRoot = temporaryRoot(config);
  const recovered = await recoverDeadBoots(db.prisma, tmpRoot, storage);
  const copies = removeOrphanedCopies();
  if (recovered.deadBoots.length || copies) logger.info({ ...recovered, copies }, "cleared what killed processes left");
  const runner = createRunner({
    ...serviceRunnerOptions(config.compress),
    ...logRunnerEvents(logger, () => stopping),
  });
  const feedHousekeeping = startJobFeedHousekeeping({ sql: db.sql, logger });
  const housekeeping = startHousekeeping({
    prisma: db.prisma,
    storage,
    tmpRoot,
    retentionHours: config.resultRetentionHours,
    interruptedAfterMs: Math.max(3_600_000, runner.timeoutFor(config.compress.maxUploadBytes, TARGET_MAX_RUNS) * 2),
    logger,
  });

  // Asynchronous jobs and their webhooks: every instance with COMPRESS_JOB_WORKERS > 0 takes due
  // jobs from the database (a web-only instance sends webhooks but runs no job: slots 0).
  const jobWorker = startJobWorker({ config, prisma: db.prisma, storage, runner, logger });
  const webhookNotice = webhookPolicyNotice(config.webhookTargets);
  if (webhookNotice) logger.info({ webhookTargets: config.webhookTargets }, webhookNotice);
  const lifecycle = createLifecycle();
  const app = createApp({ config, db, logger, redis, compress: { storage, runner }, lifecycle });
  const server = createServiceServer(app, config.httpProtocol, config.httpLimits);
  const { port } = await server.listen(config.port, config.host);
  void readNamesAhead(db);
  {
    const where = config.database.kind === "pglite" ? config.database.dataDir : "PostgreSQL server";
    logger.info(
      { port, protocol: config.httpProtocol },
      `listening on http://${config.host}:${port} (${config.httpProtocol === "h2c" ? "HTTP/1.1 and h2c" : "HTTP/1.1"}; database: ${where}); catalog docs at /api/v1/docs, GraphQL explorer at /graphql, compression docs at /v1/docs, dashboard at /dashboard`,
    );
  }
  return {
    redis,
    db,
    accountsSocket,
    runner,
    jobWorker,
    housekeeping,
    feedHousekeeping,
    lifecycle,
    server,
    tmpRoot,
  };
}

// Set when shutdown begins; the runner's events read it from the start.
let stopping = false;
let service: Awaited<ReturnType<typeof start>>;
try {
  service = await start();
} catch (error) {
  logger.fatal({ err: error }, "startup failed");
  await flushLogger(logger);
  process.exit(1);
}
const { redis, db, accountsSocket, runner, jobWorker, housekeeping, feedHousekeeping, lifecycle, server, tmpRoot } =
  service;

let exitCode = 0;
async function stop(signal: NodeJS.Signals | "uncaughtException") {
  if (stopping) {
    // A second Ctrl-C does not wait.
    if (signal === "SIGINT") process.exit(130);
    return;
  }
  stopping = true;
  logger.info({ signal, graceMs: config.shutdownGraceMs }, "shutting down");
  // Whatever happens, the process is gone before Cloud Run's SIGKILL (10 s after SIGTERM).
  const force = setTimeout(() => process.exit(1), config.shutdownGraceMs + 1_500);
  force.unref();
  housekeeping.stop();
  feedHousekeeping.stop();
  await shutdown({
    lifecycle,
    server,
    graceMs: config.shutdownGraceMs,
    logger,
    steps: [
      // Running jobs go back to the queue (their attempt not counted) for another instance.
      { name: "job worker", run: () => jobWorker.stop() },
      { name: "compression runner", run: () => runner.close() },
      { name: "admin socket", run: () => accountsSocket?.close() },
      { name: "redis", run: () => closeRedis(redis) },
      // The embedded database writes its files on close: give it longer.
      { name: "database", run: () => db.close(), timeoutMs: 3_000 },
      // Last: once the database is closed, another service may open the directory.
      { name: "locks", run: () => Promise.all([removeBootMarker(tmpRoot), dataDirLock?.release()]) },
    ],
  });
  process.exit(exitCode);
}
crash = () => {
  exitCode = 1;
  void stop("uncaughtException");
};
process.on("SIGTERM", (signal) => void stop(signal));
process.on("SIGINT", (signal) => void stop(signal));
