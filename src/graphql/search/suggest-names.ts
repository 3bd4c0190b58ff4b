// What `suggest` completes (./suggest.ts): the names that lead to open jobs, each with how many it
// leads to, read through the gates and kept a minute per database (a search box asks on every
// keystroke; the catalog's names change far more slowly). Skills and companies are counted by the
// kept counters (exact at the read's instant); places by the public jobs at each known place (an
// index-only count over the coordinates' index); titles by how often they occur among the newest
// TITLE_SAMPLE public jobs (a count of every title would scan every job: seconds at a million).
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { readCounts } from "../counters.ts";
import type { GraphQLContext } from "../context.ts";
import { publicCompanySql, publicJobSql } from "../gates.ts";
import { prismaSql, SqlParams } from "../sql.ts";
import { phraseKey } from "./synonyms.ts";

export type SuggestionKind = "TITLE" | "SKILL" | "COMPANY" | "PLACE";

export interface NamedEntry {
  kind: SuggestionKind;
  text: string;
  /** The plain words it is matched by: its name and, for a place, its other names. */
  keys: string[][];
  /** Open jobs it leads to (titles: among the sample; see above). */
  openJobs: number;
  filter: { q?: string; skill?: string; company?: string; location?: string };
}

export const TITLE_SAMPLE = 20_000;
const NAMES_CACHE_MS = 60_000;
const snapshots = new WeakMap<PrismaClient, { at: number; names: Promise<NamedEntry[]>; refreshing: boolean }>();
// The client the names of a database are read with, when it is not the request's own (see below).
const readers = new WeakMap<PrismaClient, PrismaClient>();

/**
 * Reads the names of `prisma`'s database now, with `reader` (the counting client: a statement limit
 * made for counts), and keeps reading them with it. Called at start-up: the first read counts the
 * jobs at every place, about a second at a million jobs on a cold cache, and the first `suggest`
 * after a start answered 503 at the request's statement limit while it waited for it.
 */
export function readSuggestableNamesAhead(prisma: PrismaClient, reader: PrismaClient, now = new Date()): Promise<void> {
  readers.set(prisma, reader);
  const names = readNames(reader, now);
  snapshots.set(prisma, { at: Date.now(), names, refreshing: false });
  names.catch(() => snapshots.get(prisma)?.names === names && snapshots.delete(prisma));
  return names.then(() => undefined);
}

const keysOf = (...names: string[]) => names.map((n) => phraseKey(n.split(/\s+/u)).split(" ").filter(Boolean));

/**
 * The names at the context's database, at most a minute old: a stale snapshot answers while the
 * next is read beside the request that found it stale; only the first request waits.
 */
export function suggestableNames(ctx: GraphQLContext): Promise<NamedEntry[]> {
  const hit = snapshots.get(ctx.prisma);
  if (hit && (hit.refreshing || Date.now() - hit.at < NAMES_CACHE_MS)) return hit.names;
  const names = readNames(readers.get(ctx.prisma) ?? ctx.prisma, ctx.now);
  if (!hit) {
    snapshots.set(ctx.prisma, { at: Date.now(), names, refreshing: false });
    names.catch(() => snapshots.delete(ctx.prisma));
    return names;
  }
  hit.refreshing = true;
  names.then(
    () => snapshots.set(ctx.prisma, { at: Date.now(), names, refreshing: false }),
    () => (hit.refreshing = false),
  );
  return hit.names;
}

async function readNames(prisma: PrismaClient, now: Date): Promise<NamedEntry[]> {
  const sql = prismaSql(prisma);
  // One statement at a time: the counting client has two connections, and a statement waiting for
  // one longer than the connect limit (the places' and titles' counts take a second or two on a
  // cold cache at a million jobs) failed the whole read.
  const skills = await sql.query<{ id: string; slug: string; name: string }>(`SELECT id::text, slug, name FROM skills`);
  const companies = await sql.query<{ id: string; slug: string; name: string }>(
    `SELECT c.id::text, c.slug, c.name FROM companies c WHERE ${publicCompanySql}`,
  );
  const places = await placeCounts(prisma, now);
  const titles = await titleCounts(prisma, now);
  const counts = await readCounts(
    prisma,
    [...skills, ...companies].map((r) => r.id),
    now,
  );
  const open = (id: string) => counts.get(id)?.openJobs ?? 0;
  const entries: NamedEntry[] = [
    ...skills.map((s) => ({
      kind: "SKILL" as const,
      text: s.name,
      keys: keysOf(s.name),
      openJobs: open(s.id),
      filter: { skill: s.slug },
    })),
    ...companies.map((c) => ({
      kind: "COMPANY" as const,
      text: c.name,
      keys: keysOf(c.name),
      openJobs: open(c.id),
      filter: { company: c.slug },
    })),
    ...places,
    ...titles,
  ];
  return entries.filter((e) => e.openJobs > 0);
}

async function placeCounts(prisma: PrismaClient, now: Date): Promise<NamedEntry[]> {
  const params = new SqlParams();
  const gate = publicJobSql(now)(params);
  const rows = await prismaSql(prisma).query<{
    city: string;
    country: string;
    nameKey: string;
    aliasKeys: string[] | null;
    n: number;
  }>(
    `SELECT p.city, p.country::text AS country, p.name_key AS "nameKey", p.alias_keys AS "aliasKeys", f.n
       FROM (SELECT j.latitude, j.longitude, count(*)::int AS n FROM jobs j
              WHERE ${gate} AND j.latitude IS NOT NULL GROUP BY 1, 2) f
       JOIN places p ON p.latitude = f.latitude AND p.longitude = f.longitude`,
    params.values,
  );
  return rows.map((r) => ({
    kind: "PLACE",
    text: r.city,
    keys: keysOf(r.city, r.nameKey, ...(r.aliasKeys ?? [])),
    openJobs: r.n,
    filter: { location: `${r.city}, ${r.country}` },
  }));
}

async function titleCounts(prisma: PrismaClient, now: Date): Promise<NamedEntry[]> {
  const params = new SqlParams();
  const gate = publicJobSql(now)(params);
  const rows = await prismaSql(prisma).query<{ title: string; n: number }>(
    `SELECT t.title, count(*)::int AS n FROM
       (SELECT j.title FROM jobs j WHERE ${gate} ORDER BY j.published_at DESC, j.id DESC
         LIMIT ${params.add(TITLE_SAMPLE, "int")}) t
      GROUP BY 1`,
    params.values,
  );
  return rows.map((r) => ({
    kind: "TITLE",
    text: r.title,
    keys: keysOf(r.title),
    openJobs: r.n,
    filter: { q: r.title },
  }));
}
