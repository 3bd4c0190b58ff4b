// The demo seeder: deterministic for a seed, with every hidden kind present, and atomic; demo data
// that reads like a marketplace (salaries in each currency's range, internships for interns only)
// and a change feed with events from the first call and jobs going live in the first minutes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepJobFeed } from "../src/db/job-feed.ts";
import { GOING_LIVE } from "../src/db/seed/activity.ts";
import { seedCatalog, isCatalogEmpty } from "../src/db/seed/seed.ts";
import { createApiClient } from "./helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { startServer } from "./helpers/server.ts";

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

  it("writes what the disabled triggers would: each job's skill names and slugs as its links say", async () => {
    const [row] = await a.sql.query<{ wrong: number; linked: number }>(
      `SELECT count(*) FILTER (WHERE skill_names <> job_skill_names(id) OR skill_slugs <> job_skill_slugs(id))::int AS wrong,
              count(*) FILTER (WHERE cardinality(skill_slugs) > 0)::int AS linked
         FROM jobs`,
    );
    expect(row?.wrong).toBe(0);
    expect(row?.linked).toBeGreaterThan(0);
  });

  it("leaves the database untouched when it fails part way", async () => {
    const before = await fingerprint(b);
    // The same seed again collides on unique slugs in the jobs table, after companies went in.
    await expect(seedCatalog(b, { seed: 7, scale, now })).rejects.toThrow();
    expect(await fingerprint(b)).toEqual(before);
  });

  it("pays in each currency's range, and hires interns as interns only", async () => {
    const bands = await a.sql.query<{ currency: string; low: number; high: number }>(
      `SELECT salary_currency AS currency, min(salary_min)::int AS low, max(salary_max)::int AS high
         FROM jobs WHERE salary_min IS NOT NULL GROUP BY salary_currency`,
    );
    const band = Object.fromEntries(bands.map((b) => [b.currency, b]));
    // Yearly bases: yen in millions, kronor in hundreds of thousands, euros and dollars in tens of thousands.
    expect(band.JPY?.low).toBeGreaterThan(1_000_000);
    expect(band.SEK?.low).toBeGreaterThan(100_000);
    expect(band.EUR?.high).toBeLessThan(300_000);
    expect(band.USD?.low).toBeGreaterThan(20_000);
    const mismatched = await a.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs
        WHERE (seniority = 'intern') <> (employment_type = 'internship') OR (seniority = 'intern') <> (title LIKE '%Intern')`,
    );
    expect(mismatched[0]?.n).toBe(0);
  });

  it("gives the change feed events from the first call, and jobs going live in the first minutes", async () => {
    const db = await createTestDatabase();
    const server = await startServer(db);
    try {
      await seedCatalog(db, { seed: 3, scale });
      const api = await createApiClient(server.url);
      type Feed = { data: { kind: string }[]; meta: { next_since: string } };
      const first = await api.get<Feed>("/api/v1/jobs/changes?limit=100");
      expect(first.status).toBe(200);
      const kinds = new Set(first.body.data.map((c) => c.kind));
      // Read on to the end of what the seed wrote (its own events can fill the first page).
      let since = first.body.meta.next_since;
      for (let page = 0; page < 20 && kinds.size < 3; page++) {
        const more = await api.get<Feed>(`/api/v1/jobs/changes?limit=100&since=${since}`);
        if (more.body.data.length === 0) break;
        for (const c of more.body.data) kinds.add(c.kind);
        since = more.body.meta.next_since;
      }
      expect(kinds).toEqual(new Set(["published", "updated", "removed"]));
      // The first scheduled draft goes live a few seconds after the seed; the sweep adds it.
      await new Promise((resolve) => setTimeout(resolve, (GOING_LIVE.firstAfterSeconds + 1) * 1000));
      expect(await sweepJobFeed(db.sql)).toBeGreaterThanOrEqual(1);
      const next = await api.get<Feed>(`/api/v1/jobs/changes?since=${first.body.meta.next_since}`);
      expect(next.body.data.map((c) => c.kind)).toContain("published");
      const [{ waiting } = { waiting: 0 }] = await db.sql.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM jobs WHERE status = 'published' AND published_at > now()
            AND published_at < now() + make_interval(secs => $1)`,
        [GOING_LIVE.count * GOING_LIVE.everySeconds],
      );
      expect(waiting).toBe(GOING_LIVE.count - 1);
    } finally {
      await server.close();
      await db.close();
    }
  }, 60_000);
});
