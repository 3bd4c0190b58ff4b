// Which words the planner knows the frequency of, in the jobs' title and head lexemes: the most
// common elements of those columns in PostgreSQL's statistics (pg_stats, kept by ANALYZE). A job
// title's vocabulary is small (42 lexemes make the list at a million jobs), so a word of a title is
// in it or is rare in titles. The relevance tiers (../types/job/ranked-sql.ts) use it to say q's
// words once where the planner can be trusted with them, and twice where it cannot.
import type { SqlQuery } from "../sql.ts";

export type TierColumn = "title_terms" | "head_terms";

/** Each column's known words with the share of jobs holding each; `rows`: the planner's row count of jobs. */
export type Known = Record<TierColumn, ReadonlyMap<string, number>> & { rows: number };

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
  const rows = await sql.query<{ column: TierColumn; words: string[] | null; shares: number[] | null; rows: number }>(
    `SELECT attname::text AS "column", most_common_elems::text::text[] AS words,
        most_common_elem_freqs::float8[] AS shares,
        (SELECT greatest(c.reltuples, 0)::float8 FROM pg_class c WHERE c.oid = 'jobs'::regclass) AS rows
      FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'jobs' AND attname IN ('title_terms', 'head_terms')`,
  );
  const of = (column: TierColumn) => {
    const row = rows.find((r) => r.column === column);
    // most_common_elem_freqs holds one share per word, then the minimum, maximum and null share.
    return new Map((row?.words ?? []).map((word, i) => [word, row?.shares?.[i] ?? 0]));
  };
  return { title_terms: of("title_terms"), head_terms: of("head_terms"), rows: rows[0]?.rows ?? 0 };
}
