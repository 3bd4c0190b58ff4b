// Migrations apply once and record themselves the way `prisma migrate deploy` does, and an edited
// migration is refused (that they agree with schema.prisma: ./migrations-drift.test.ts).
import { cp, mkdtemp, rm, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations, defaultMigrationsDir, MigrationError, readMigrations } from "../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe("migrations", () => {
  it("are recorded in _prisma_migrations with Prisma's checksums, and not applied twice", async () => {
    const files = await readMigrations();
    const rows = await db.sql.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(files.map((f) => [f.name, f.checksum]));
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
    expect(await applyMigrations(db.sql)).toEqual([]);
  });

  it("refuse a migration edited after it was applied", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
    try {
      await cp(defaultMigrationsDir, dir, { recursive: true });
      const [first] = await readMigrations(dir);
      await appendFile(path.join(dir, first!.name, "migration.sql"), "\n-- edited\n");
      await expect(applyMigrations(db.sql, dir)).rejects.toThrow(MigrationError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
