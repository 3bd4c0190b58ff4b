// Which words the planner knows the frequency of, in the jobs' title and head lexemes: the most
// common elements of those columns in PostgreSQL's statistics (pg_stats, kept by ANALYZE). A job
// title's vocabulary is small (42 lexemes make the list at a million jobs), so a word of a title is
// in it or is rare in titles. The relevance tiers (../types/job/ranked-sql.ts) use it to say q's
// words once where the planner can be trusted with them, and twice where it cannot.
import type { SqlQuery } from "../sql.ts";

export type TierColumn = "title_terms" | "head_terms";

/**
 * Each column's known words with the share of jobs holding each; `rows`: the planner's row count of
 * jobs; `published`: the histogram of publication times (ms; equal shares of the jobs that have one
 * between each bound and the next) and how many jobs have one, or null before ANALYZE.
 */
export type Known = Record<TierColumn, ReadonlyMap<string, number>> & {
  rows: number;
  published: { bounds: readonly number[]; rows: number } | null;
};

/** Statistics change when ANALYZE runs (autovacuum, after many writes): read again after `ms` (tests: 0). */
export const knownWordsKept = { ms: 10 * 60_000 };
const cache = new WeakMap<SqlQuery, { at: number; known: Promise<Known> }>();

/** The words of the title and head lexemes whose frequency the planner knows (none before ANALYZE). */
export function knownWords(sql: SqlQuery): Promise<Known> {
  const hit = cache.get(sql);
  if (hit && Date.now() - hit.at < knownWordsKept.ms) return hit.known;
  const known = readKnownWords(sql);
  cache.set(sql, { at: Date.now(), known });
  known.catch(() => cache.get(sql)?.known === known && cache.delete(sql));
  return known;
}

async function readKnownWords(sql: SqlQuery): Promise<Known> {
  const rows = await sql.query<{
    column: TierColumn | "published_at";
    words: string[] | null;
    shares: number[] | null;
    bounds: (Date | string)[] | null;
    nullShare: number | null;
    rows: number;
  }>(
    `SELECT attname::text AS "column", most_common_elems::text::text[] AS words,
        most_common_elem_freqs::float8[] AS shares,
        CASE WHEN attname = 'published_at' THEN histogram_bounds::text::timestamptz[] END AS bounds,
        null_frac::float8 AS "nullShare",
        (SELECT greatest(c.reltuples, 0)::float8 FROM pg_class c WHERE c.oid = 'jobs'::regclass) AS rows
      FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'jobs'
        AND attname IN ('title_terms', 'head_terms', 'published_at')`,
  );
  const of = (column: TierColumn) => {
    const row = rows.find((r) => r.column === column);
    // most_common_elem_freqs holds one share per word, then the minimum, maximum and null share.
    return new Map((row?.words ?? []).map((word, i) => [word, row?.shares?.[i] ?? 0]));
  };
  const total = rows[0]?.rows ?? 0;
  const published = rows.find((r) => r.column === "published_at");
  // A Date from node-postgres and PGlite; Prisma's raw queries may give the array's text values.
  const bounds = published?.bounds?.map((at) => new Date(at).getTime()).filter(Number.isFinite) ?? [];
  return {
    title_terms: of("title_terms"),
    head_terms: of("head_terms"),
    rows: total,
    published: bounds.length > 1 ? { bounds, rows: total * (1 - (published?.nullShare ?? 0)) } : null,
  };
}
