// A marketplace is never still. The bulk load is the change feed's starting point (its rows are
// not events), so on demo data alone GET /jobs/changes had nothing to show but a schema. After the
// load, with the feed's triggers on again, the seed makes the edits employers make every hour, so
// the feed answers each kind of event from the first call, and schedules a few drafts to go live in
// the minutes after the seed, which the feed's sweep (every 30 s, src/db/job-feed.ts) adds as they do.
// The jobs are picked by slug, so the same seed edits the same jobs.
import type { SqlRunner } from "../database.ts";

const PUBLIC_NOW = `status = 'published' AND NOT filled AND published_at <= now()
  AND (valid_through IS NULL OR valid_through > now())`;

/** How many drafts go live over the first minutes after the seed, and how far apart. */
export const GOING_LIVE = { count: 10, firstAfterSeconds: 5, everySeconds: 20 } as const;

export async function seedRecentActivity(sql: SqlRunner): Promise<void> {
  // Three drafts published now: `published`. The column keeps milliseconds and rounds: now() itself
  // could be stored up to half a millisecond after now(), and the job would not be live yet in this
  // transaction (the feed's trigger compares with now()); truncated, it is stored as it is.
  await sql.exec(`UPDATE jobs SET status = 'published', published_at = date_trunc('milliseconds', now()), updated_at = now()
    WHERE id IN (SELECT id FROM jobs WHERE status = 'draft' ORDER BY slug LIMIT 3)`);
  // A salary raised on a public job: `updated`.
  await sql.exec(`UPDATE jobs SET salary_max = salary_max + round(salary_max * 0.05, -3)::int, updated_at = now()
    WHERE id = (SELECT id FROM jobs WHERE ${PUBLIC_NOW} AND salary_max IS NOT NULL ORDER BY slug LIMIT 1)`);
  // A position filled: `removed`.
  await sql.exec(`UPDATE jobs SET filled = true, updated_at = now()
    WHERE id = (SELECT id FROM jobs WHERE ${PUBLIC_NOW} ORDER BY slug DESC LIMIT 1)`);
  // Drafts scheduled to go live over the next minutes: `published` by the clock, through the sweep.
  await sql.query(
    `WITH picked AS (
       SELECT id, row_number() OVER (ORDER BY slug) - 1 AS n FROM jobs WHERE status = 'draft' ORDER BY slug LIMIT $1)
     UPDATE jobs SET status = 'published', updated_at = now(),
       published_at = clock_timestamp() + make_interval(secs => $2 + picked.n * $3)
      FROM picked WHERE jobs.id = picked.id`,
    [GOING_LIVE.count, GOING_LIVE.firstAfterSeconds, GOING_LIVE.everySeconds],
  );
}
