// Housekeeping of the change feed of public jobs (the migration job_change_feed): what the clock
// changes (a job going live at published_at, expiring at valid_through) is swept into the feed
// every SWEEP_EVERY_MS, and changes older than FEED_RETENTION_DAYS are deleted. Both are SQL
// functions that lock what they touch, so any number of instances may run them.
import type { Logger } from "../logger.ts";
import type { SqlRunner } from "./database.ts";
import { guarded } from "../callbacks.ts";

export const FEED_RETENTION_DAYS = 30;
const SWEEP_EVERY_MS = 30_000;
const PRUNE_EVERY_MS = 60 * 60_000;

/** Writes the feed events of jobs that went live or expired since the last sweep; returns how many jobs. */
export async function sweepJobFeed(sql: SqlRunner): Promise<number> {
  const [row] = await sql.query<{ swept: number }>("SELECT job_feed_sweep() AS swept");
  return row?.swept ?? 0;
}

/** Deletes changes older than `keepSeconds`. */
export async function pruneJobFeed(sql: SqlRunner, keepSeconds = FEED_RETENTION_DAYS * 86_400): Promise<void> {
  await sql.query("SELECT job_feed_prune(make_interval(secs => $1))", [keepSeconds]);
}

export function startJobFeedHousekeeping(options: { sql: SqlRunner; logger: Logger }): { stop(): void } {
  let lastPrune = 0;
  const run = async () => {
    try {
      await sweepJobFeed(options.sql);
      if (Date.now() - lastPrune >= PRUNE_EVERY_MS) {
        await pruneJobFeed(options.sql);
        lastPrune = Date.now();
      }
    } catch (error) {
      options.logger.warn({ err: error }, "job feed housekeeping failed; retrying at the next run");
    }
  };
  guarded("job-feed", run)();
  const timer = setInterval(guarded("job-feed", run), SWEEP_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
