// The direct-SQL baseline's search (./catalog.ts): `q` read as the read model reads it, and
// `/suggest`. A hand-written service that searches as people write needs the same vocabulary
// statements (the words' lexemes, joined forms, completions, corrections, places and companies
// named in q), so the baseline reads q with the read model's own reading (src/graphql/search/
// reading.ts: plain SQL over the vocabulary tables, no GraphQL) and writes every statement on the
// jobs table, the tiers of relevance and the JSON by hand. What the two sides then differ by is
// what the scenarios measure: Koa, the GraphQL operation, its gates and the presentation.
import { createContext } from "../src/graphql/context.ts";
import { groupsSql, searchSql } from "../src/graphql/search/read-conditions.ts";
import { readSearch, type SearchReading } from "../src/graphql/search/reading.ts";
import { rankSuggestions, SUGGEST_LIMIT_DEFAULT } from "../src/graphql/search/suggest.ts";
import { suggestableNames, type SuggestionKind } from "../src/graphql/search/suggest-names.ts";
import { SqlParams } from "../src/graphql/sql.ts";
import type { Database } from "../src/db/database.ts";

/** q as the read model reads it: a place in q is the place filter unless location or near is given. */
export function readQuery(database: Database, q: string, given: { location: boolean; near: boolean }, now: Date) {
  const ctx = createContext({ prisma: database.prisma, sql: database.sql }, now);
  return readSearch(ctx, q, { places: !given.location && !given.near, companies: true });
}

/** Placeholders numbered after `offset` parameters the caller's statement already has. */
export function paramsAfter(offset: number): { params: SqlParams; values: () => unknown[] } {
  const params = new SqlParams();
  for (let i = 0; i < offset; i++) params.values.push(undefined);
  return { params, values: () => params.values.slice(offset) };
}

/** The reading's conditions on jobs j: its words (and none of its excluded ones), its place, its company. */
export function readingSql(reading: SearchReading, p: SqlParams): string[] {
  const parts: string[] = [];
  if (reading.groups.length > 0 || reading.excluded.length > 0) parts.push(searchSql(reading)(p));
  // The jobs in the place: at its coordinates (the read model's condition, and the statement a hand
  // writer would choose: the coordinates' index gives them newest first).
  if (reading.place) {
    const { latitude, longitude } = reading.place;
    parts.push(`j.latitude = ${p.add(latitude, "float8")} AND j.longitude = ${p.add(longitude, "float8")}`);
  }
  if (reading.company) {
    parts.push(
      `j.company_id IN (SELECT c.id FROM companies c WHERE c.id = ANY(${p.add(reading.company.ids, "uuid[]")}) AND c.has_public_page)`,
    );
  }
  return parts;
}

/** The tiers of relevance, best first (title; title and skills; the rest), as conditions on jobs j. */
export function relevanceTierSql(reading: SearchReading): ((p: SqlParams) => string)[] {
  if (reading.groups.length === 0) return [() => "true"];
  const title = groupsSql(reading, "title");
  const head = groupsSql(reading, "head");
  return [(p) => title(p), (p) => `${head(p)} AND NOT (${title(p)})`, (p) => `NOT (${head(p)})`];
}

/** meta.search: how q was read, in the REST API's shape. */
export function searchBody(r: SearchReading) {
  return {
    words: r.words,
    phrases: r.phrases,
    excluded: r.excludedWords,
    ignored: r.ignored,
    expansions: r.expansions.map((e) => ({ word: e.word, kind: e.kind.toLowerCase(), to: e.to })),
    place: r.place
      ? { city: r.place.city, state: r.place.state ?? null, country: r.place.country, location: r.place.location }
      : null,
    company: r.company ? { name: r.company.name, slugs: r.company.slugs } : null,
    synonyms_version: r.synonymsVersion,
  };
}

const KINDS: SuggestionKind[] = ["TITLE", "SKILL", "COMPANY", "PLACE"];

/** The baseline's /api/v1/suggest: the read model's names and ranking, the JSON by hand. */
export async function suggestBody(database: Database, search: URLSearchParams, now: Date) {
  const q = search.get("q");
  if (q === null) return { data: { suggestions: [] } };
  const types = search.get("types")?.split(",");
  const kinds = types ? KINDS.filter((k) => types.includes(k.toLowerCase())) : KINDS;
  const limit = Number(search.get("limit") ?? SUGGEST_LIMIT_DEFAULT);
  const ctx = createContext({ prisma: database.prisma, sql: database.sql }, now);
  const found = rankSuggestions(await suggestableNames(ctx), q, kinds, limit);
  return {
    data: {
      suggestions: found.map((s) => ({
        type: s.kind.toLowerCase(),
        text: s.text,
        open_jobs: s.openJobs,
        typos: s.typos,
        filter: Object.fromEntries(Object.entries(s.filter).filter(([, v]) => v != null)),
      })),
    },
  };
}
