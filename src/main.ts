// Composition root: configuration, database, application, listen. The only place that listens.
import { createApp } from "./app.ts";
import { accounts } from "./auth/accounts.ts";
import { adminSocketPath, serveAccounts } from "./auth/admin-socket.ts";
import { ConfigError, loadConfig } from "./config/env.ts";
import { openDatabase } from "./db/database.ts";
import { applyMigrations } from "./db/migrate.ts";
import { isCatalogEmpty, seedCatalog } from "./db/seed/seed.ts";
import { seedDemoSubscribers } from "./db/seed/subscribers.ts";
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

const app = createApp({ config, db, logger, redis });
const server = app.listen(config.port, config.host, () => {
  const where = config.database.kind === "pglite" ? config.database.dataDir : "PostgreSQL server";
  logger.info(`listening on http://${config.host}:${config.port} (database: ${where}); explorer at /graphql`);
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
  await accountsSocket?.close();
  await closeRedis(redis);
  await db.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
