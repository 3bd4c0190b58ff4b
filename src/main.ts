// Composition root: configuration, database, application, listen. The only place that listens.
import { createApp } from "./app.ts";
import { temporaryRoot } from "./compress/http/routes.ts";
import { createRunner } from "./compress/isolation/runner.ts";
import { startHousekeeping } from "./compress/maintenance.ts";
import { createStorage } from "./compress/storage/index.ts";
import { accounts } from "./auth/accounts.ts";
import { adminSocketPath, serveAccounts } from "./auth/admin-socket.ts";
import { ConfigError, loadConfig } from "./config/env.ts";
import { openDatabase } from "./db/database.ts";
import { applyMigrations } from "./db/migrate.ts";
import { isCatalogEmpty, seedCatalog } from "./db/seed/seed.ts";
import { seedDemoSubscribers } from "./db/seed/subscribers.ts";
import { createHttpServer } from "./http/server.ts";
import { createLogger } from "./logger.ts";
import { closeRedis, createRedis } from "./redis.ts";

let config;
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
// Connects in the background while the database opens; requests fail fast (503) until it is ready.
const redis = createRedis(config, logger);
const db = await openDatabase(config.database);

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
const accountsSocket =
  config.database.kind === "pglite" && !config.database.dataDir.startsWith("memory://")
    ? await serveAccounts(adminSocketPath(config.database.dataDir), accounts(db.prisma, config.apiKeyPepper))
    : null;

const storage = await createStorage(config.storage);
const runner = createRunner({
  concurrency: config.compress.concurrency,
  queueLimit: config.compress.queueLimit,
  timeoutMs: config.compress.timeoutMs,
  memoryMb: config.compress.memoryMb,
  // Native memory (libvips) is outside the heap limit: cap the whole process too.
  maxRssMb: config.compress.memoryMb * 2,
  onChildStderr: (text) => logger.warn({ stderr: text.slice(0, 2000) }, "compression process wrote to stderr"),
});
const housekeeping = startHousekeeping({
  prisma: db.prisma,
  storage,
  tmpRoot: temporaryRoot(config),
  retentionHours: config.resultRetentionHours,
  interruptedAfterMs: Math.max(3_600_000, config.compress.timeoutMs * 4),
  logger,
});

const app = createApp({ config, db, logger, redis, compress: { storage, runner } });
const server = createHttpServer(app).listen(config.port, config.host, () => {
  const where = config.database.kind === "pglite" ? config.database.dataDir : "PostgreSQL server";
  logger.info(
    `listening on http://${config.host}:${config.port} (database: ${where}); explorer at /graphql, API docs at /api/v1/docs`,
  );
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  const force = setTimeout(() => process.exit(1), 9_000);
  force.unref();
  server.close();
  server.closeIdleConnections();
  await new Promise<void>((resolve) => server.once("close", () => resolve()));
  housekeeping.stop();
  await runner.close();
  await accountsSocket?.close();
  await closeRedis(redis);
  await db.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
