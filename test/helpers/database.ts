// A fresh, migrated database per test file: an in-memory PGlite by default, or a new database
// on the PostgreSQL server named by DATABASE_URL (dropped afterwards), so files never share rows.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../../src/config/env.ts";
import { openDatabase, type Database, type OpenOptions } from "../../src/db/database.ts";
import { applyMigrations } from "../../src/db/migrate.ts";

export interface TestDatabase extends Database {
  /** Statements Prisma sent since the last reset. */
  queries: string[];
}

/** Creates an empty database `<prefix>_<pid>_<random>` on the server of `serverUrl`; returns its URL. */
export async function createServerDatabase(serverUrl: string, prefix: string): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Drops a database made by createServerDatabase, connections and all. */
export async function dropServerDatabase(serverUrl: string, name: string): Promise<void> {
  const dropper = new pg.Client({ connectionString: serverUrl });
  await dropper.connect();
  try {
    await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await dropper.end();
  }
}

export function testDatabaseKind(): "pglite" | "postgres" {
  return loadConfig().database.kind;
}

export async function createTestDatabase(options: OpenOptions = {}): Promise<TestDatabase> {
  const config = loadConfig().database;
  const queries: string[] = [];
  const onQuery = (sql: string) => {
    queries.push(sql);
    options.onQuery?.(sql);
  };
  if (config.kind === "pglite") {
    const db = await openDatabase({ ...config, dataDir: "memory://" }, { onQuery });
    await applyMigrations(db.sql);
    return Object.assign(db, { queries });
  }
  const { name, url } = await createServerDatabase(config.url, "test");
  const db = await openDatabase({ ...config, url, poolSize: 5 }, { onQuery });
  await applyMigrations(db.sql);
  const close = db.close.bind(db);
  return Object.assign(db, {
    queries,
    close: async () => {
      await close();
      await dropServerDatabase(config.url, name);
    },
  });
}

/**
 * A database whose server nobody listens on (port 1): every statement fails as in an outage, on
 * either test pass. Closing a test database instead ends node-postgres' pool, which is our own
 * fault (a 500), not an outage.
 */
export function openUnreachableDatabase(): Promise<Database> {
  return openDatabase({
    kind: "postgres",
    url: "postgresql://postgres@127.0.0.1:1/nowhere",
    poolSize: 1,
    migrateOnStart: false,
    seedDemoData: false,
    seed: 1,
  });
}
