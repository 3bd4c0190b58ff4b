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
  const name = `test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: config.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(config.url);
  url.pathname = `/${name}`;
  const db = await openDatabase({ ...config, url: url.toString(), poolSize: 5 }, { onQuery });
  await applyMigrations(db.sql);
  const close = db.close.bind(db);
  return Object.assign(db, {
    queries,
    close: async () => {
      await close();
      const dropper = new pg.Client({ connectionString: config.url });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.end();
    },
  });
}
