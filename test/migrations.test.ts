// Migrations apply once and record themselves the way `prisma migrate deploy` does, and an edited
// migration is refused (that they agree with schema.prisma: ./migrations-drift.test.ts).
import { cp, mkdtemp, rm, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations, defaultMigrationsDir, MigrationError, readMigrations } from "../src/db/migrate.ts";
import { companiesNamed } from "../src/graphql/search/names-in-query.ts";
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

  // A relevance walk checks each row's search_terms, a phrase its description_text: in line they cost
  // the row's block, out of line three more (migration search_text_in_row). A later migration that
  // drops and adds either column again (as relevance_and_places did) would lose this silently.
  it("keep what search reads row by row in the row, the HTML out of it first", async () => {
    const rows = await db.sql.query<{ name: string; storage: string }>(
      `SELECT attname::text AS name, attstorage::text AS storage FROM pg_attribute
        WHERE attrelid = 'jobs'::regclass AND attname IN ('search_terms', 'description_text', 'description_html')
        ORDER BY attname`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.storage]))).toEqual({
      description_html: "x",
      description_text: "m",
      search_terms: "m",
    });
  });

  // Prisma cannot describe an index's INCLUDE: schema.prisma does not name this one, the drift check
  // knows it (scripts/lib/schema-engine.ts), and this pins what it holds. Without the words, a
  // relevance tier reads every job it passes from the table (153 ms against 11 ms at 3 million jobs).
  it("keep the title and head words beside the public list order", async () => {
    const [index] = await db.sql.query<{ definition: string }>(
      `SELECT pg_get_indexdef('jobs_public_order_terms_idx'::regclass) AS definition`,
    );
    expect(index?.definition).toContain("(status, filled, published_at DESC, id DESC, valid_through)");
    expect(index?.definition).toContain("INCLUDE (title_terms, head_terms)");
  });

  // Nor an index on an expression: a search's words are looked up as company names by
  // search_plain(name) (names-in-query.ts), computed for every public company on every request with
  // q without it (50-70 ms at 5,000 companies). The test database is too small for the planner to
  // prefer the index by cost, so sequential scans are off: what is pinned is that the statement
  // companiesNamed sends can use it at all (its expression and condition are the index's).
  it("find public companies by their plain name through an index", async () => {
    const plan = await db.sql.exclusive(async (tx) => {
      await tx.query("SET LOCAL enable_seqscan = off");
      const lines: string[] = [];
      await companiesNamed(
        {
          query: async <T>(text: string, params?: unknown[]) => {
            const rows = await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, params);
            lines.push(...rows.map((r) => r["QUERY PLAN"]));
            return [] as T[];
          },
        },
        [["hegmann", "and", "sons"], ["engineer"]],
      );
      return lines.join("\n");
    });
    expect(plan).toContain("companies_search_plain_name_idx");
    expect(plan).not.toContain("Seq Scan");
  });

  // A partial index Prisma cannot describe either: the change feed's sweep (job_feed_sweep, every
  // 30 s on every instance) looks up the open jobs whose valid_through passed since the last sweep;
  // without it, it read every open job's entry of a wider index (224 ms at a million jobs). The
  // test table is too small for statistics to choose between the two branches of the sweep's
  // condition, so the expiry branch alone is planned, sequential scans off, as above.
  it("find the open jobs that expired since the last sweep through an index", async () => {
    const [index] = await db.sql.query<{ definition: string }>(
      `SELECT pg_get_indexdef('jobs_open_valid_through_idx'::regclass) AS definition`,
    );
    expect(index?.definition).toContain(
      "(valid_through) WHERE ((status = 'published'::\"JobStatus\") AND (NOT filled)",
    );
    const plan = await db.sql.exclusive(async (tx) => {
      await tx.query("SET LOCAL enable_seqscan = off");
      const rows = await tx.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT id FROM jobs WHERE status = 'published' AND NOT filled AND valid_through > $1 AND valid_through <= $2`,
        [new Date(Date.now() - 30_000), new Date()],
      );
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(plan).toContain("jobs_open_valid_through_idx");
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
