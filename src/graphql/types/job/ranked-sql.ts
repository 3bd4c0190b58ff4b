// The job orders by a value computed per request, which no column or index holds: relevance (where
// the words of `q` occur) and distance (from `near`). Prisma cannot order by either, so a page's ids
// (with their order keys) come from these statements, and its rows are then read by id (./page.ts).
import type { PageWindow } from "../../paging.ts";
import { SqlParams, type SqlCondition, type SqlQuery } from "../../sql.ts";
import type { RowsOfIds } from "./rows-sql.ts";
import { groupsSql } from "../../search/read-conditions.ts";
import { knownWords, type Known, type TierColumn } from "../../search/known-words.ts";
import type { SearchReading } from "../../search/reading.ts";

/**
 * An id of the page with its order key, named as the cursor reads it from the row; with the row's
 * selected fields when the page was read with its rows (`read`).
 */
export type RankedId = { id: string } & Record<string, unknown>;

type Window = PageWindow<unknown> & { sqlWhere: SqlCondition };

/**
 * The tiers of `sort=relevance`, best first: every term of q in the title; in the title and the
 * skills; anywhere (the `q` filter itself: some term only in the description). Each tier is a
 * condition on stored lexeme arrays with GIN indexes (migration relevance_and_places), so a page
 * is a walk of the list order (a common word) or an index lookup (a rare one) within its tier,
 * never a rank computed for every match. A q that named only a place or a company has one tier.
 */
export function relevanceTiers(reading: SearchReading): { tier: number; sql: SqlCondition }[] {
  if (reading.groups.length === 0) return [{ tier: 1, sql: () => "true" }];
  const title = groupsSql(reading, "title");
  const head = groupsSql(reading, "head");
  return [
    { tier: 3, sql: (p) => title(p) },
    { tier: 2, sql: (p) => `${head(p)} AND NOT (${title(p)})` },
    { tier: 1, sql: (p) => `NOT (${head(p)})` },
  ];
}

/**
 * How many of the newest listed jobs a page of a phrase reads first, in the list's order, before
 * the phrase's own statement (`rows`; tests make it small). The planner cannot tell how common a
 * phrase is (it multiplies its words' frequencies, and a phrase's words come together: "machine
 * learning" is in 38,481 titles of a million, estimated at 1,515, then at 1 with the phrase's
 * check), so it read every match from the GIN indexes and sorted them (29,607 rows, 2-4 s: a 503).
 * A common phrase fills its page within the walk (136 of the newest 4,000 titles hold "machine
 * learning"); a rare one costs the walk and then its few matches. One walk a page, in its first
 * tier: a later tier is reached when the earlier ones ran out.
 */
export const phraseWalk = { rows: 4_000 };

/**
 * What walking one job of the list's order costs, in entries of the words' posting lists: the cost
 * of a tier that says q's words once (the planner walks the newest jobs through the index that
 * carries their lexemes and checks each) against one that says them twice (it reads the words'
 * posting lists from the GIN indexes, then the matching rows, and sorts them). Measured at a million
 * jobs, 8 connections (pgbench): a walked row 3.25 µs, a posting entry 0.34 µs in each of the two
 * indexes; tests set it to 0 (always walk where every word is known).
 */
export const walkedRowInPostings = { entries: 6 };

/**
 * What reading one match's row costs an offset page, in posting entries (walkIsCheaper). The first
 * pages' choice was measured without it and is kept. At a million jobs, `q=data&offset=20000`'s title
 * tier read its 88,886 matches' rows (97,000 blocks) and sorted them in 1.78 s, a 503; said once it
 * walks 308,000 index entries in 0.18-0.70 s. A row fetched costs some 20 µs, a walked entry 0.6-2.3,
 * a posting entry a sixth of that: 60 is the low end.
 */
export const matchFetch = { entries: 60 };

/**
 * How many jobs, at most, a tier that says q's words once may walk before the rest of the page is
 * read from the matches (`rows`). A walk is chosen where the words are common, on their share of all
 * jobs; a filter that no job holding them passes (`q=intern&employment_type=full_time`: interns are
 * always internships) then made the planner walk every listed job it admits: 360,000 at a million,
 * a 503. Bounded, the walk costs at most this many index entries (about 3 µs each), then one
 * statement reads the rest of the page from the words' and filters' indexes. Twice the walk a word
 * at the threshold needs for a page of 100. An offset page may walk `perSkipped` times the walk the
 * rows it skips need, beyond that (walkRows); tests set both small.
 */
export const walkBound = { rows: 12_000, perSkipped: 2 };

/**
 * How many jobs a tier's bounded walk may pass for a page after `skip` rows: walkBound.rows, and
 * twice (perSkipped) the walk the words' share needs for the skipped rows. An offset page deep in a
 * common word (`q=engineer&offset=9950`) needs more matches than the newest 12,000 jobs hold;
 * bounded at those, the rest of the page came from every match, read and sorted (528,000 at a
 * million jobs: past the statement's limit, a 503). Walked on the list's index instead, as a plain
 * list's offset is, it costs index entries in proportion to the offset.
 */
export function walkRows(reading: SearchReading, shares: ReadonlyMap<string, number>, skip: number): number {
  const together = groupShares(reading, shares).reduce((p, g) => p * g, 1);
  return walkBound.rows + (together > 0 ? Math.ceil((walkBound.perSkipped * skip) / together) : 0);
}

/**
 * The publication time after which about `rows` jobs were published up to `before`, by the
 * statistics' histogram of publication times (equal shares of the jobs between its bounds); null
 * without a histogram or where fewer jobs than that came before `before` (a walk from there is
 * short whatever it finds). Statistics trail the table: jobs published since are walked too.
 */
export function walkFloor(published: Known["published"], before: number, rows: number): number | null {
  if (!published || published.rows <= 0) return null;
  const { bounds } = published;
  const buckets = bounds.length - 1;
  const shareBefore = (at: number) => {
    if (at <= bounds[0]!) return 0;
    if (at >= bounds[buckets]!) return 1;
    let i = 0;
    while (bounds[i + 1]! <= at) i++;
    return (i + (at - bounds[i]!) / (bounds[i + 1]! - bounds[i]!)) / buckets;
  };
  const share = shareBefore(before) - rows / published.rows;
  if (share <= 0) return null;
  const position = share * buckets;
  const i = Math.min(buckets - 1, Math.floor(position));
  return bounds[i]! + (position - i) * (bounds[i + 1]! - bounds[i]!);
}

/**
 * Each group's share of the jobs by `shares`: the sum of its terms', a term's the product of its
 * words' (a phrase's, or an alternative's), at most 1. A word missing from `shares` is held by none.
 */
function groupShares(reading: SearchReading, shares: ReadonlyMap<string, number>): number[] {
  const share = (words: readonly string[]) => words.reduce((p, w) => p * (shares.get(w) ?? 0), 1);
  return reading.groups.map((group) =>
    Math.min(
      1,
      group.reduce(
        (sum, term) =>
          sum + (term.phrase ? share(term.phrase.lexemes) : term.alternatives.reduce((s, set) => s + share(set), 0)),
        0,
      ),
    ),
  );
}

/**
 * Whether a tier whose words the statistics count should say them once (walk the list) rather than
 * twice (read the matches). The walk stops at a full page: it passes `pageRows` / p jobs, p being the
 * share holding every group (each group's share the sum of its terms', a term's the product of its
 * words': independent, as the planner takes them). The matches cost the groups' posting lists,
 * which grow with the table. So a common word alone (`python`: a walk of 870 for 50) walks, and a
 * word held by few reads its matches. Two groups or more always read their matches: the share of
 * both is a product only for independent words, which a job's words are not (`python developer`:
 * 0.22 % of jobs, `kubeflow python` in the head words, none in a title; `frontend research` in no
 * title, estimated a walk of hundreds, walked 810,000). A word missing from `shares` counts as held
 * by none: a group with no term whose words all have a share makes the walk endless, and the
 * matches are read. An offset page (`skip`) counts what reading the matches costs beside their
 * postings too: every match's row, fetched and sorted to find the page (matchFetch).
 */
export function walkIsCheaper(
  reading: SearchReading,
  shares: ReadonlyMap<string, number>,
  rows: number,
  pageRows: number,
  skip = 0,
): boolean {
  const groups = groupShares(reading, shares);
  // Two groups or more are said twice whatever their shares: their share together is a product
  // only if they are independent, and words each common may never meet. `frontend research` (each in
  // a few % of a million titles, together in none) was taken for a walk of some hundreds and walked
  // all 810,000 listed jobs (2.8 s, past the statement's limit: a 503); its matches take 32 ms.
  if (groups.length > 1) return false;
  const together = groups.reduce((p, g) => p * g, 1);
  if (together <= 0) return false;
  const walked = Math.min(rows, pageRows / together);
  const postings = rows * groups.reduce((sum, g) => sum + g, 0);
  const fetched = skip > 0 ? rows * together * matchFetch.entries : 0;
  return walked * walkedRowInPostings.entries <= postings + fetched;
}

/**
 * The row with its tier, for the cursor. Set in place: Object.assign with a new literal per row was
 * the relevance pages' costliest line of JavaScript (pg's rows are wide, and the generic copy slow).
 */
function markTier(row: RankedId, tier: number): RankedId {
  row["relevanceTier"] = tier;
  return row;
}

/** A tier's statement: after `seek` in the list order, and published at `floor` or later when set. */
type TierStatement = { tier: number; inTier: SqlCondition; seek?: [Date, string]; floor?: Date };

/** The rows after a key in the list order (newest first, then the id), on table alias `alias`. */
function afterInListOrder(alias: string, [at, id]: readonly unknown[], params: SqlParams): string {
  return ` AND (${alias}.published_at, ${alias}.id) < (${params.add(at, "timestamptz")}, ${params.add(id, "uuid")})`;
}

/** The column whose words a tier holds. */
const TIER_COLUMNS: Record<number, TierColumn> = { 3: "title_terms", 2: "head_terms" };

/**
 * The tiers where some group of q has no word the column's statistics list: rare there (a title's
 * vocabulary is small, its common words are all listed). Their statements read the matches from the
 * indexes (OFFSET 0), whatever the planner guesses: for the 26 completions of `ö`, none in the
 * title list, it took 15,319 remote jobs to hold one in their title and walked all 270,000 remote
 * jobs of a million to find none (12 s, a 503).
 */
function tiersReadFromIndex(reading: SearchReading, known: Known | null): Record<number, boolean> {
  const rare = (column: TierColumn) => !!known && groupShares(reading, known[column]).some((share) => share === 0);
  return { 3: rare(TIER_COLUMNS[3]!), 2: rare(TIER_COLUMNS[2]!) };
}

/**
 * The ids of a page in relevance order: tier by tier, each in the list order (published_at, id
 * descending), until the page is full. An offset is spent on the tiers it passes (each counted
 * at most up to what is left of it); a cursor starts in its tier, after its row.
 */
export async function relevancePage(
  sql: SqlQuery,
  window: Window & { now: Date },
  { reading, sqlWhereBesidesWords }: { reading: SearchReading; sqlWhereBesidesWords?: SqlCondition },
  read?: RowsOfIds,
): Promise<RankedId[]> {
  const tiers = relevanceTiers(reading);
  const cursor = window.seek as [number, Date, string] | undefined;
  const walkFirst = reading.groups.some((group) => group.some((term) => term.phrase));
  const rows: RankedId[] = [];
  let skip = window.skip;
  const order = "j.published_at DESC, j.id DESC";
  const run = async (ids: string, params: SqlParams) =>
    (read
      ? read.rows(await sql.query(read.statement(ids, order), params.values))
      : await sql.query(ids, params.values)) as RankedId[];
  // In the title and head tiers, q's words are in the tier's own condition (a title's words and
  // phrases are in the whole text too). Said twice, the planner takes them for independent: for a
  // word common in titles it estimated 2,055 of a million jobs with `machin` in the title and
  // anywhere where 29,607 are, and read them all to sort (1.7 s, a 503) instead of walking the
  // newest (0.15 s). Said once, for a word it has no frequency of it guesses a few hundred and walks
  // the whole list for a company's name that no title holds. So once where it knows every word.
  // Known: every group has a term with an alternative (all of a phrase's words) the statistics
  // count; an alternative they do not count is rare there (a prefix's own letters, `pyth`). And once
  // only where walking the list costs less than reading the matches. walkIsCheaper answers both: a
  // word the statistics do not count has no share, so a group without a counted term has none.
  const known = sqlWhereBesidesWords && reading.groups.length > 0 ? await knownWords(sql) : null;
  const once = (stats: Known | null, column: TierColumn) =>
    !!stats && walkIsCheaper(reading, stats[column], stats.rows, window.skip + window.limit, window.skip);
  const wordsOnce: Record<number, boolean> = { 3: once(known, TIER_COLUMNS[3]!), 2: once(known, TIER_COLUMNS[2]!) };
  const fromIndex = tiersReadFromIndex(reading, known);
  const conditions = (params: SqlParams, { tier, inTier, seek, floor }: TierStatement) =>
    `${(wordsOnce[tier] && sqlWhereBesidesWords ? sqlWhereBesidesWords : window.sqlWhere)(params)} AND ${inTier(params)}${seek ? afterInListOrder("j", seek, params) : ""}${floor ? ` AND j.published_at >= ${params.add(floor, "timestamptz")}` : ""}`;
  const tierPage = (statement: TierStatement, take: number, offset: number) => {
    const params = new SqlParams();
    const matches = `SELECT j.id, j.published_at AS "publishedAt" FROM jobs j WHERE ${conditions(params, statement)}`;
    const page = `LIMIT ${params.add(take, "int")} OFFSET ${params.add(offset, "int")}`;
    const ids = fromIndex[statement.tier]
      ? `SELECT m.id, m."publishedAt" FROM (${matches} OFFSET 0) AS m ORDER BY m."publishedAt" DESC, m.id DESC ${page}`
      : `${matches} ORDER BY ${order} ${page}`;
    return run(ids, params);
  };
  const spend = (statement: TierStatement, offset: number) =>
    spendOffset(sql, conditions, statement, { offset, fromIndex: !!fromIndex[statement.tier] });
  for (const { tier, sql: inTier } of tiers) {
    if (cursor && tier > cursor[0]) continue;
    const statement: TierStatement = {
      tier,
      inTier,
      ...(cursor && tier === cursor[0] ? { seek: [cursor[1], cursor[2]] as [Date, string] } : {}),
    };
    const take = () => window.limit - rows.length;
    // The page's first tier only: a later tier is reached when the earlier ones ran out, and a
    // walk there would cost its rows again for a phrase already found rare.
    const pageStartsHere = skip === 0 && rows.length === 0 && tier === (cursor?.[0] ?? tiers[0]!.tier);
    if (walkFirst && pageStartsHere) {
      const walked = await newestFirst(sql, window.now, statement, conditions, take(), run);
      for (const row of walked.rows) rows.push(markTier(row, tier));
      if (rows.length >= window.limit) break;
      if (!walked.after) continue; // the walk read every public job: the tier holds no more
      rows.push(...(await restInTierOrder(sql, window, tiers, [tier, ...walked.after], take(), 0, read)));
      break;
    }
    // A walk the words' shares chose, bounded: past walkBound.rows jobs the rest of the page comes
    // from the matches, so a filter that excludes the common word's jobs cannot walk the whole list
    // (at a million jobs, `q=intern&employment_type=full_time` walked 360,000: a 503). An offset is
    // spent on the bounded part first, then on the matches after it.
    const walkFrom = Math.min(window.now.getTime(), statement.seek?.[0].getTime() ?? Infinity);
    const floor = wordsOnce[tier]
      ? walkFloor(known!.published, walkFrom, walkRows(reading, known![TIER_COLUMNS[tier]!], skip))
      : null;
    if (floor !== null) {
      const bounded: TierStatement = { ...statement, floor: new Date(floor) };
      const found = await tierPage(bounded, take(), skip);
      for (const row of found) rows.push(markTier(row, tier));
      if (rows.length >= window.limit) break;
      const left = found.length > 0 ? 0 : await spend(bounded, skip);
      rows.push(...(await restInTierOrder(sql, window, tiers, [tier, bounded.floor!, LEAST_UUID], take(), left, read)));
      break;
    }
    const found = await tierPage(statement, take(), skip);
    if (found.length > 0 || skip === 0) {
      for (const row of found) rows.push(markTier(row, tier));
      skip = 0;
    } else {
      skip = await spend(statement, skip);
    }
    if (rows.length >= window.limit) break;
  }
  return rows;
}

/**
 * A tier's first rows among the phraseWalk.rows newest listed jobs (after the tier's seek), in the
 * list order. The walk's jobs are fixed by a LIMIT and each is checked by its own lookup (LATERAL,
 * not flattened: OFFSET 0), so the planner reads them off the list's index and stops at a full
 * page, whatever it estimates. The walk starts at `now` (jobs scheduled later are not listed yet:
 * 20,025 of them at a million). `after`: the walk's last key, where the tier's own statement goes
 * on (none when the walk reached the end of the list).
 */
async function newestFirst(
  sql: SqlQuery,
  now: Date,
  statement: TierStatement,
  conditions: (params: SqlParams, statement: TierStatement) => string,
  take: number,
  run: (ids: string, params: SqlParams) => Promise<RankedId[]>,
): Promise<{ rows: RankedId[]; after?: [Date, string] }> {
  const walk = (params: SqlParams) => {
    const seek = statement.seek ? afterInListOrder("w", statement.seek, params) : "";
    return `SELECT w.id, w.published_at FROM jobs w
        WHERE w.status = 'published' AND w.filled = false AND w.published_at <= ${params.add(now, "timestamptz")}${seek}
        ORDER BY w.published_at DESC, w.id DESC`;
  };
  const params = new SqlParams();
  const ids = `SELECT m.id, m."publishedAt" FROM (${walk(params)} LIMIT ${params.add(phraseWalk.rows, "int")}) AS walked
      CROSS JOIN LATERAL (SELECT j.id, j.published_at AS "publishedAt" FROM jobs j
        WHERE j.id = walked.id AND ${conditions(params, { tier: statement.tier, inTier: statement.inTier })} OFFSET 0) AS m
      ORDER BY walked.published_at DESC, walked.id DESC LIMIT ${params.add(take, "int")}`;
  const rows = await run(ids, params);
  if (rows.length >= take) return { rows };
  const last = new SqlParams();
  const [end] = await sql.query<{ at: Date; id: string }>(
    `SELECT walked.published_at AS at, walked.id FROM (${walk(last)} OFFSET ${last.add(phraseWalk.rows - 1, "int")} LIMIT 1) AS walked`,
    last.values,
  );
  return end ? { rows, after: [end.at, end.id] } : { rows };
}

/**
 * A tier's statement that found no row after an offset holds at most that many rows: spends them,
 * and returns what is left of the offset for the tiers after it. A tier read from the index
 * (tiersReadFromIndex: some word rare in its column) counts all its matches, which are few: under a
 * LIMIT the planner walked every job's row for the completions of `ö` (`q=ö&remote=true&offset=20`:
 * 23.7 s, a 503 at a million jobs; counted whole from the indexes, 0.1 ms).
 */
async function spendOffset(
  sql: SqlQuery,
  conditions: (params: SqlParams, statement: TierStatement) => string,
  statement: TierStatement,
  { offset, fromIndex }: { offset: number; fromIndex: boolean },
): Promise<number> {
  if (offset === 0) return 0;
  const params = new SqlParams();
  const matches = `SELECT 1 FROM jobs j WHERE ${conditions(params, statement)}`;
  const [counted] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (${fromIndex ? matches : `${matches} LIMIT ${params.add(offset, "int")}`}) AS t`,
    params.values,
  );
  return Math.max(0, offset - (counted?.n ?? 0));
}

/** Below every other uuid: a key of (time, LEAST_UUID) leaves every row published at that time after it. */
const LEAST_UUID = "00000000-0000-0000-0000-000000000000";

/**
 * The rest of a page after a bounded walk: every job matching q and the filters that comes after
 * `after` (its tier, then its key in the list order), read from the indexes of the words and the
 * filters and sorted (OFFSET 0 keeps the planner from walking the list for them), with its tier.
 * One statement for every tier left: a filter that excludes a common word's jobs leaves them all
 * empty, and each tier's own statement would read the same matches again. `skip`: what is left of
 * an offset page's offset.
 */
async function restInTierOrder(
  sql: SqlQuery,
  window: Window,
  tiers: { tier: number; sql: SqlCondition }[],
  [tier, at, id]: [number, Date, string],
  take: number,
  skip: number,
  read?: RowsOfIds,
): Promise<RankedId[]> {
  const params = new SqlParams();
  const lowest = tiers[tiers.length - 1]!.tier;
  const tierOf = `CASE ${tiers
    .slice(0, -1)
    .map((t) => `WHEN ${t.sql(params)} THEN ${t.tier}`)
    .join(" ")} ELSE ${lowest} END`;
  const ids = `SELECT m.id, m."publishedAt", m.tier FROM (
      SELECT j.id, j.published_at AS "publishedAt", ${tierOf} AS tier FROM jobs j WHERE ${window.sqlWhere(params)} OFFSET 0) AS m
      WHERE (m.tier, m."publishedAt", m.id) < (${params.add(tier, "int")}, ${params.add(at, "timestamptz")}, ${params.add(id, "uuid")})
      ORDER BY m.tier DESC, m."publishedAt" DESC, m.id DESC LIMIT ${params.add(take, "int")} OFFSET ${params.add(skip, "int")}`;
  const raw = await sql.query<RankedId>(
    read ? read.statement(ids, `page.tier DESC, j.published_at DESC, j.id DESC`, ", page.tier") : ids,
    params.values,
  );
  const tiersOf = raw.map((row) => Number(row["tier"]));
  const rows = (read ? read.rows(raw) : raw) as RankedId[];
  return rows.map((row, i) => {
    delete row["tier"];
    return markTier(row, tiersOf[i]!);
  });
}

/** Mean Earth radius (IUGG), km. */
export const EARTH_RADIUS_KM = 6371.0088;

/** The great-circle distance in km between two points (haversine): distanceSql's formula, for rows already read. */
export function distanceKm(lat: number, lon: number, toLat: number, toLon: number): number {
  const rad = Math.PI / 180;
  const h =
    Math.sin(((toLat - lat) * rad) / 2) ** 2 +
    Math.cos(lat * rad) * Math.cos(toLat * rad) * Math.sin(((toLon - lon) * rad) / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The great-circle distance in km from (lat, lon) to a row's coordinates (haversine), in SQL. */
export function distanceSql(alias: string, lat: number, lon: number): SqlCondition {
  return (p) => {
    const la = p.add(lat, "float8");
    const lo = p.add(lon, "float8");
    return `(${2 * EARTH_RADIUS_KM} * asin(least(1, sqrt(power(sin(radians(${alias}.latitude - ${la}) / 2), 2) + cos(radians(${la})) * cos(radians(${alias}.latitude)) * power(sin(radians(${alias}.longitude - ${lo}) / 2), 2)))))`;
  };
}

/** The latitudes within `radiusKm` of a point's: the band every point of the radius lies in. */
function latitudeBand(lat: number, radiusKm: number): [number, number] {
  const dLat = (radiusKm / EARTH_RADIUS_KM) * (180 / Math.PI);
  return [lat - dLat, lat + dLat];
}

/**
 * The rows within `radiusKm` of (lat, lon), on table alias `alias`: a bounding box first (the
 * latitude band is an index range; the longitude is checked in the index), then the exact
 * distance. Rows without coordinates never match.
 */
export function withinSql(alias: string, lat: number, lon: number, radiusKm: number): SqlCondition {
  const [minLat, maxLat] = latitudeBand(lat, radiusKm);
  const dLat = maxLat - lat;
  // The longitude span at the box's widest latitude; none near a pole or across the whole globe.
  const widest = Math.min(89.9, Math.max(Math.abs(minLat), Math.abs(maxLat)));
  const dLon = dLat / Math.cos((widest * Math.PI) / 180);
  const distance = distanceSql(alias, lat, lon);
  return (p) => {
    const parts = [`${alias}.latitude BETWEEN ${p.add(minLat, "float8")} AND ${p.add(maxLat, "float8")}`];
    if (maxLat < 90 && minLat > -90 && dLon < 180) {
      const west = lon - dLon;
      const east = lon + dLon;
      // Across the antimeridian the box is two ranges of longitude.
      if (west < -180) {
        parts.push(
          `(${alias}.longitude >= ${p.add(west + 360, "float8")} OR ${alias}.longitude <= ${p.add(east, "float8")})`,
        );
      } else if (east > 180) {
        parts.push(
          `(${alias}.longitude >= ${p.add(west, "float8")} OR ${alias}.longitude <= ${p.add(east - 360, "float8")})`,
        );
      } else parts.push(`${alias}.longitude BETWEEN ${p.add(west, "float8")} AND ${p.add(east, "float8")}`);
    }
    parts.push(`${distance(p)} <= ${p.add(radiusKm, "float8")}`);
    return parts.join(" AND ");
  };
}

/**
 * The public jobs' points within the radius, nearest first, as `points_within` (latitude,
 * longitude, "distanceKm"). Jobs stand at their place's coordinates (a trigger copies them from
 * places), so the rows share a few points: their distinct points in the radius's latitude band are
 * found by skipping through the coordinates' index (one descent a point, a "loose index scan"),
 * then measured. Walking each point's jobs off the same index (./page.ts: distance and near
 * pages) then costs the page and the points in the radius, not every job at them.
 */
function pointsWithin(params: SqlParams, near: { lat: number; lon: number; radiusKm: number }): string {
  const [minLat, maxLat] = latitudeBand(near.lat, near.radiusKm);
  const [from, to] = [params.add(minLat, "float8"), params.add(maxLat, "float8")];
  const distance = distanceSql("p", near.lat, near.lon)(params);
  const onIndex = `j.status = 'published' AND j.filled = false`;
  return `WITH RECURSIVE points AS (
        (SELECT j.latitude, j.longitude FROM jobs j WHERE ${onIndex} AND j.latitude BETWEEN ${from} AND ${to}
          ORDER BY j.latitude, j.longitude LIMIT 1)
        UNION ALL
        SELECT n.latitude, n.longitude FROM points AS q, LATERAL (
          SELECT j.latitude, j.longitude FROM jobs j
           WHERE ${onIndex} AND (j.latitude, j.longitude) > (q.latitude, q.longitude) AND j.latitude <= ${to}
           ORDER BY j.latitude, j.longitude LIMIT 1) AS n),
      points_within AS (
        SELECT m.* FROM (SELECT p.latitude, p.longitude, ${distance} AS "distanceKm" FROM points AS p) AS m
         WHERE m."distanceKm" <= ${params.add(near.radiusKm, "float8")})`;
}

type Near = { lat: number; lon: number; radiusKm: number };

/** How a page walks each point's jobs and merges them: its key, and the cursor's seek on it. */
interface PointOrder {
  /** The page's key column as returned with each id ("publishedAt", "distanceKm"), and its value in a walk. */
  key: string;
  value: string;
  /** The order within a point and across the points (by the key, then the id), as SQL on the walk and on the page. */
  walk: string;
  merge: string;
  /** The seek past a cursor's key: within a point's walk, and on the points. */
  seek: (params: SqlParams, seek: unknown[]) => { walk: string; points: string };
}

/** A page within a radius in `order`: each point's jobs walked off its index, merged (see pointsWithin). */
async function walkPoints(sql: SqlQuery, window: Window, near: Near, order: PointOrder, read?: RowsOfIds) {
  const params = new SqlParams();
  const points = pointsWithin(params, near);
  const where = window.sqlWhere(params);
  const seek = window.seek ? order.seek(params, window.seek) : { walk: "", points: "" };
  const take = params.add(window.limit + window.skip, "int");
  const ids = `${points}
      SELECT page.id, page."${order.key}" FROM points_within AS p2 CROSS JOIN LATERAL (
        SELECT j.id, ${order.value} AS "${order.key}" FROM jobs j
         WHERE j.latitude = p2.latitude AND j.longitude = p2.longitude AND ${where}${seek.walk}
         ORDER BY ${order.walk} LIMIT ${take}) AS page${seek.points}
      ORDER BY ${order.merge} LIMIT ${params.add(window.limit, "int")} OFFSET ${params.add(window.skip, "int")}`;
  if (!read) return sql.query<RankedId>(ids, params.values);
  const extra = order.key === "distanceKm" ? `, page."distanceKm" AS "distanceKm"` : "";
  return read.rows(await sql.query(read.statement(ids, order.merge, extra), params.values)) as RankedId[];
}

/**
 * The ids of a page within a radius in the list order (newest first, then the id). Reading every
 * job of the radius to sort them read 27,589 index entries for Berlin at a million jobs, and three
 * times as many at three million.
 */
export function nearListPage(sql: SqlQuery, window: Window, near: Near, read?: RowsOfIds): Promise<RankedId[]> {
  return walkPoints(
    sql,
    window,
    near,
    {
      key: "publishedAt",
      value: "j.published_at",
      walk: "j.published_at DESC, j.id DESC",
      merge: `page."publishedAt" DESC, page.id DESC`,
      seek: (p, key) => ({ walk: afterInListOrder("j", key, p), points: "" }),
    },
    read,
  );
}

/** The ids of a page nearest first: the distance, then the id. */
export function distancePage(sql: SqlQuery, window: Window, near: Near, read?: RowsOfIds): Promise<RankedId[]> {
  return walkPoints(
    sql,
    window,
    near,
    {
      key: "distanceKm",
      value: `p2."distanceKm"`,
      walk: "j.id",
      merge: `page."distanceKm", page.id`,
      seek: (p, [distance, id]) => {
        const [d, after] = [p.add(distance, "float8"), p.add(id, "uuid")];
        return { walk: ` AND (p2."distanceKm" > ${d} OR j.id > ${after})`, points: ` WHERE p2."distanceKm" >= ${d}` };
      },
    },
    read,
  );
}
