// Applies prisma/migrations/*/migration.sql in order and records them in _prisma_migrations,
// the table `prisma migrate deploy` keeps, with the same columns and checksums. Either tool
// can take over from the other. We apply migrations ourselves because the Prisma CLI needs a
// native schema engine that cannot be downloaded on every machine, and an embedded PGlite
// database has no server for the CLI to reach.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { SqlRunner } from "./database.ts";

export const defaultMigrationsDir = path.resolve(import.meta.dirname, "../../prisma/migrations");

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = defaultMigrationsDir): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

const createHistoryTable = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {
  override name = "MigrationError";
}

/** Applies the pending migrations; returns their names. Safe to run from several instances at once. */
export async function applyMigrations(sql: SqlRunner, dir = defaultMigrationsDir): Promise<string[]> {
  const migrations = await readMigrations(dir);
  return sql.exclusive(async (tx) => {
    await tx.exec(createHistoryTable);
    const applied = await tx.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const byName = new Map(applied.map((row) => [row.migration_name, row]));
    const done: string[] = [];
    for (const migration of migrations) {
      const previous = byName.get(migration.name);
      if (previous) {
        if (!previous.finished_at) {
          throw new MigrationError(`migration ${migration.name} started but never finished; resolve it by hand`);
        }
        if (previous.checksum !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was modified after it was applied`);
        }
        continue;
      }
      await tx.exec(migration.sql);
      await tx.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
         VALUES ($1, $2, $3, now(), now(), 1)`,
        [randomUUID(), migration.checksum, migration.name],
      );
      done.push(migration.name);
    }
    return done;
  });
}
