// A search's reading (./reading.ts) as conditions on the jobs' stored lexeme arrays, in both of
// the job list's forms (../types/job/conditions.ts): Prisma's `where` and SQL on jobs aliased j.
// A term holds when any of its alternatives does: a lexeme set all in the array (`@>`), or one of
// the single lexemes (`&&`); both are answered by the arrays' GIN indexes. A phrase also needs its
// words next to each other in order, which only the text says: SQL only (Prisma's form, the
// words anywhere, is a superset).
import type { Prisma } from "../../generated/prisma/client.ts";
import type { SqlCondition, SqlParams } from "../sql.ts";
import type { ReadTerm, SearchReading } from "./reading.ts";

/** Where the words are looked for: the whole text, the title with the skills' names, or the title. */
export type SearchScope = "all" | "head" | "title";

const COLUMN: Record<SearchScope, string> = { all: "j.search_terms", head: "j.head_terms", title: "j.title_terms" };
// The texts the generated columns are made of (migration relevance_and_places), for phrases.
const TEXT: Record<SearchScope, string> = {
  all: "j.title || ' ' || j.skill_names || ' ' || j.description_text",
  head: "j.title || ' ' || j.skill_names",
  title: "j.title",
};

// Each scope's text begins with the narrower ones' (title, then the skills' names), so a phrase in
// a narrower one is in it too: checked narrowest first, the description is parsed only for the jobs
// whose title and skills lack the phrase. In the order written, since PostgreSQL evaluates an OR's
// arms left to right and stops at the first true; unordered, a page of "machine learning" in titles
// parsed the whole text of every job holding both words and ran out of time.
const NARROWER: Record<SearchScope, SearchScope[]> = { title: [], head: ["title"], all: ["title", "head"] };

function termSql(term: ReadTerm, scope: SearchScope, p: SqlParams): string {
  const column = COLUMN[scope];
  if (term.phrase) {
    const query = `phraseto_tsquery('english'::regconfig, ${p.add(term.text, "text")})`;
    const inText = [...NARROWER[scope], scope].map((s) => `to_tsvector('english'::regconfig, ${TEXT[s]}) @@ ${query}`);
    return `(${column} @> ${p.add(term.phrase.lexemes, "text[]")} AND (${inText.join(" OR ")}))`;
  }
  const singles = term.alternatives.filter((set) => set.length === 1).map((set) => set[0]!);
  const parts = term.alternatives.filter((set) => set.length > 1).map((set) => `${column} @> ${p.add(set, "text[]")}`);
  if (singles.length > 0) parts.unshift(`${column} && ${p.add(singles, "text[]")}`);
  return `(${parts.join(" OR ")})`;
}

/** Every group of the reading holds in `scope` (true when q named only a place or company). */
export function groupsSql(reading: SearchReading, scope: SearchScope): SqlCondition {
  return (p) =>
    reading.groups.map((group) => `(${group.map((term) => termSql(term, scope, p)).join(" OR ")})`).join(" AND ") ||
    "true";
}

/** The reading's words as the q filter: its groups anywhere, none of its excluded terms. */
export function searchSql(reading: SearchReading): SqlCondition {
  const groups = groupsSql(reading, "all");
  return (p) => [groups(p), ...excludedTerms(reading, p)].join(" AND ");
}

const excludedTerms = (reading: SearchReading, p: SqlParams) =>
  reading.excluded.map((term) => `NOT ${termSql(term, "all", p)}`);

/** None of the reading's excluded terms anywhere (true without any). */
export function excludedSql(reading: SearchReading): SqlCondition {
  return (p) => excludedTerms(reading, p).join(" AND ") || "true";
}

function termWhere(term: ReadTerm): Prisma.JobWhereInput {
  const singles = term.alternatives.filter((set) => set.length === 1).map((set) => set[0]!);
  const all: Prisma.JobWhereInput[] = term.alternatives
    .filter((set) => set.length > 1)
    .map((set) => ({ searchTerms: { hasEvery: set } }));
  if (singles.length > 0) all.unshift({ searchTerms: { hasSome: singles } });
  return all.length === 1 ? all[0]! : { OR: all };
}

/**
 * The q filter in Prisma's form. Exact but for phrases (their words anywhere): `exact` says
 * whether it selects the same rows as searchSql.
 */
export function searchWhere(reading: SearchReading): { where: Prisma.JobWhereInput; exact: boolean } {
  const and: Prisma.JobWhereInput[] = reading.groups.map((group) =>
    group.length === 1 ? termWhere(group[0]!) : { OR: group.map(termWhere) },
  );
  // A job without an excluded phrase's words lacks the phrase; one with them may lack it too:
  // leaving such jobs out would be wrong, so excluded phrases make the form inexact.
  for (const term of reading.excluded) if (!term.phrase) and.push({ NOT: termWhere(term) });
  const exact = !reading.groups.flat().some((t) => t.phrase) && !reading.excluded.some((t) => t.phrase);
  return { where: and.length === 1 ? and[0]! : { AND: and }, exact };
}
