// The statements a search's reading needs (./reading.ts): the lexemes and plain forms of what was
// typed, and the vocabulary (tables search_words and search_spellings, migrations of the same
// names): a word's joined forms, an unfinished word's completions, a mistyped word's nearest
// entries, and which words a public job holds (the only ones a reading may use or report: a word
// only hidden jobs hold is never revealed, not even by being corrected to).
import { publicJobSql } from "../gates.ts";
import { SqlParams, type SqlQuery } from "../sql.ts";

export interface Analysed {
  /** The English lexemes, as jobs.search_terms holds them. */
  lexemes: string[];
  /** search_plain(): lowercase, accents folded, letters and digits only. */
  plain: string;
}

/** The lexemes and plain form of each text, in one statement. */
export async function analyse(sql: SqlQuery, texts: readonly string[]): Promise<Analysed[]> {
  if (texts.length === 0) return [];
  const rows = await sql.query<{ i: number; lexemes: string[]; plain: string | null }>(
    `SELECT t.i::int AS i, tsvector_to_array(to_tsvector('english'::regconfig, t.text)) AS lexemes,
            search_plain(t.text) AS plain
       FROM unnest($1::text[]) WITH ORDINALITY AS t(text, i)`,
    [texts],
  );
  const byIndex = new Map(rows.map((r) => [r.i, r]));
  return texts.map((_, i) => ({ lexemes: byIndex.get(i + 1)?.lexemes ?? [], plain: byIndex.get(i + 1)?.plain ?? "" }));
}

/** How many completions of an unfinished word are looked at, the shortest first. */
export const COMPLETIONS_MAX = 30;
/** How many of the nearest words (by trigrams) are measured for a mistyped word. */
const NEAREST_MAX = 40;

/**
 * An entry of the vocabulary: a lexeme of search_words (its lexemes: itself), or a spelling of
 * search_spellings, a word as titles and skill names write it ("engineer", "fine-tuning"), with
 * the lexemes a job holding it holds ("engin"; "fine", "fine-tun", "tune"). Searching for an
 * entry is searching for all of its lexemes.
 */
export interface Entry {
  plain: string;
  lexemes: string[];
}

// Both tables as one vocabulary: each part reads its own trigram index, then the union is ordered.
const entries = (where: string, order: string, limit: number) =>
  `SELECT plain, lexemes FROM (
     (SELECT plain, ARRAY[word] AS lexemes FROM search_words WHERE ${where} ORDER BY ${order} LIMIT ${limit})
     UNION ALL
     (SELECT plain, lexemes FROM search_spellings WHERE ${where} ORDER BY ${order} LIMIT ${limit})
   ) AS e ORDER BY ${order} LIMIT ${limit}`;

/** The entries whose plain form is one of these (joined forms: "frontend" for front-end). */
export async function entriesWithPlain(sql: SqlQuery, plains: readonly string[]): Promise<Entry[]> {
  if (plains.length === 0) return [];
  return sql.query(
    `SELECT plain, ARRAY[word] AS lexemes FROM search_words WHERE plain = ANY($1::text[])
     UNION ALL SELECT plain, lexemes FROM search_spellings WHERE plain = ANY($1::text[])`,
    [plains],
  );
}

/** The entries whose plain form begins with `plain`, the shortest first. */
export async function completionsOf(sql: SqlQuery, plain: string): Promise<Entry[]> {
  if (plain.length === 0) return [];
  // plain holds letters and digits only: nothing in it is special to LIKE.
  return sql.query(entries(`plain LIKE $1 || '%' AND plain <> $1`, "length(plain), plain", COMPLETIONS_MAX), [plain]);
}

/** The entries nearest `plain` by trigrams (a GiST index walk each), nearest first. */
export async function nearestEntries(sql: SqlQuery, plain: string): Promise<Entry[]> {
  return sql.query(entries("true", "plain <-> $1", NEAREST_MAX), [plain]);
}

/**
 * The words of `words` that some public job holds. One EXISTS per word, each with its own value,
 * so the planner picks per word: a common word's first public job by a scan that stops at once,
 * a rare word's few jobs from the GIN index.
 */
export async function heldByPublicJobs(sql: SqlQuery, words: readonly string[], now: Date): Promise<Set<string>> {
  const unique = [...new Set(words)];
  if (unique.length === 0) return new Set();
  const params = new SqlParams();
  const gate = publicJobSql(now);
  const parts = unique.map((word) => {
    const w = params.add(word, "text");
    return `SELECT ${w} AS word WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.search_terms @> ARRAY[${w}] AND ${gate(params)})`;
  });
  const rows = await sql.query<{ word: string }>(parts.join(" UNION ALL "), params.values);
  return new Set(rows.map((r) => r.word));
}
