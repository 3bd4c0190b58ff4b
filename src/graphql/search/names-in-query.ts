// A known place or a public company named in `q` ("engineer berlin", "data engineer münchen"):
// the reading takes it as the place or company filter and says so (./reading.ts).
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { publicCompanySql } from "../gates.ts";
import type { SqlQuery } from "../sql.ts";
import { placeKey } from "../types/location.ts";
import { phraseKey } from "./synonyms.ts";

export interface NamedPlace {
  city: string;
  state: string | null;
  country: string;
  /** The `location` filter it stands for ("Berlin, DE"). */
  location: string;
  /** The place's coordinates: the jobs in it stand there (a trigger copies them from places). */
  latitude: number;
  longitude: number;
}

export interface NamedCompanies {
  name: string;
  /** The words' key as phraseKey gives it. */
  key: string;
  /** Every public company of that name (a name can be shared). */
  ids: string[];
  slugs: string[];
}

/** The most companies one name in q stands for (names are shared: the seed reuses 600 of them). */
export const COMPANIES_NAMED_MAX = 50;

type PlaceRow = {
  city: string;
  state: string | null;
  country: string;
  nameKey: string;
  aliasKeys: string[];
  latitude: number;
  longitude: number;
};

// The known places change with a migration, not per request.
const PLACES_CACHE_MS = 60_000;
const placeLists = new WeakMap<PrismaClient, { at: number; byKey: Promise<Map<string, PlaceRow>> }>();

function placesByKey(prisma: PrismaClient): Promise<Map<string, PlaceRow>> {
  const hit = placeLists.get(prisma);
  if (hit && Date.now() - hit.at < PLACES_CACHE_MS) return hit.byKey;
  const byKey = prisma.place
    .findMany({
      select: {
        city: true,
        state: true,
        country: true,
        nameKey: true,
        aliasKeys: true,
        latitude: true,
        longitude: true,
      },
    })
    .then((rows) => {
      const map = new Map<string, PlaceRow>();
      for (const row of rows) for (const key of [row.nameKey, ...row.aliasKeys]) map.set(key, row);
      return map;
    });
  byKey.catch(() => placeLists.delete(prisma));
  placeLists.set(prisma, { at: Date.now(), byKey });
  return byKey;
}

/** The known place these words name (its name or another name of it, any case, accents optional). */
export async function placeNamed(prisma: PrismaClient, words: string): Promise<NamedPlace | null> {
  const row = (await placesByKey(prisma)).get(placeKey(words));
  if (!row) return null;
  const { city, state, country, latitude, longitude } = row;
  return { city, state, country, location: `${city}, ${country}`, latitude, longitude };
}

/**
 * The public companies named exactly by one of these runs of words (the longest first), if any.
 * The statement's condition is the index's (migration companies_named_index): keep them alike.
 */
export async function companiesNamed(sql: SqlQuery, candidates: string[][]): Promise<NamedCompanies | null> {
  const keys = [...new Set(candidates.map((words) => phraseKey(words)).filter((k) => k.length >= 3))];
  if (keys.length === 0) return null;
  const plains = keys.map((k) => k.replace(/ /g, ""));
  const rows = await sql.query<{ id: string; slug: string; name: string; plain: string }>(
    `SELECT c.id, c.slug, c.name, search_plain(c.name) AS plain FROM companies c
      WHERE ${publicCompanySql} AND search_plain(c.name) = ANY($1::text[]) ORDER BY c.slug LIMIT ${COMPANIES_NAMED_MAX * 6}`,
    [plains],
  );
  for (const key of keys) {
    const named = rows.filter((r) => r.plain === key.replace(/ /g, "")).slice(0, COMPANIES_NAMED_MAX);
    if (named.length > 0) {
      return { name: named[0]!.name, key, ids: named.map((r) => r.id), slugs: named.map((r) => r.slug) };
    }
  }
  return null;
}
