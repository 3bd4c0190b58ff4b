// The demo seeder: deterministic for a seed, with every hidden kind present, and atomic.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedCatalog, isCatalogEmpty } from "../src/db/seed/seed.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";

const scale = { companies: 40, jobs: 400, talents: 200, agents: 100 };
const now = new Date("2026-11-01T00:00:00Z");
let a: TestDatabase;
let b: TestDatabase;

beforeAll(async () => {
  [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const fingerprint = (db: TestDatabase) =>
  db.sql.query(
    `SELECT (SELECT string_agg(slug || status || coalesce(company_id::text, '-'), ',' ORDER BY slug) FROM jobs) AS jobs,
            (SELECT string_agg(handle || visibility || account_state, ',' ORDER BY handle) FROM talents) AS talents,
            (SELECT string_agg(slug || status, ',' ORDER BY slug) FROM agents) AS agents,
            (SELECT count(*) FROM "_JobSkills") AS job_skills`,
  );

describe("seedCatalog", () => {
  it("produces the same catalog for the same seed", async () => {
    expect(await isCatalogEmpty(a)).toBe(true);
    const progress: string[] = [];
    await seedCatalog(a, {
      seed: 7,
      scale,
      now,
      batchSize: 150,
      onProgress: (t, done, total) => progress.push(`${t} ${done}/${total}`),
    });
    await seedCatalog(b, { seed: 7, scale, now });
    expect(await fingerprint(a)).toEqual(await fingerprint(b));
    expect(await isCatalogEmpty(a)).toBe(false);
    expect(progress).toContain("jobs 150/400");
    expect(progress).toContain("jobs 400/400");
  });

  it("includes rows of every hidden kind", async () => {
    const rows = await a.sql.query<{ kind: string; n: number }>(
      `
      SELECT 'company without page' AS kind, count(*)::int AS n FROM companies WHERE NOT has_public_page
      UNION ALL SELECT 'job ' || status, count(*)::int FROM jobs WHERE status <> 'published' GROUP BY status
      UNION ALL SELECT 'job filled', count(*)::int FROM jobs WHERE filled
      UNION ALL SELECT 'job expired', count(*)::int FROM jobs WHERE valid_through < $1
      UNION ALL SELECT 'job scheduled', count(*)::int FROM jobs WHERE published_at > $1
      UNION ALL SELECT 'job confidential', count(*)::int FROM jobs WHERE company_id IS NULL
      UNION ALL SELECT 'talent private', count(*)::int FROM talents WHERE visibility = 'private'
      UNION ALL SELECT 'talent ' || account_state, count(*)::int FROM talents WHERE account_state <> 'active' GROUP BY account_state
      UNION ALL SELECT 'agent ' || status, count(*)::int FROM agents WHERE status <> 'published' GROUP BY status`,
      [now.toISOString()],
    );
    const kinds = Object.fromEntries(rows.map((r) => [r.kind, r.n]));
    for (const kind of [
      "company without page",
      "job draft",
      "job closed",
      "job archived",
      "job filled",
      "job expired",
      "job scheduled",
      "job confidential",
      "talent private",
      "talent suspended",
      "talent deactivated",
      "agent draft",
      "agent unlisted",
      "agent retired",
    ]) {
      expect(kinds[kind], kind).toBeGreaterThan(0);
    }
  });

  it("leaves the database untouched when it fails part way", async () => {
    const before = await fingerprint(b);
    // The same seed again collides on unique slugs in the jobs table, after companies went in.
    await expect(seedCatalog(b, { seed: 7, scale, now })).rejects.toThrow();
    expect(await fingerprint(b)).toEqual(before);
  });
});
