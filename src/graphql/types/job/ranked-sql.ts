// The job orders by a value computed per request, which no column or index holds: relevance (where
// the words of `q` occur) and distance (from `near`). Prisma cannot order by either, so a page's ids
// (with their order keys) come from these statements, and its rows are then read by id (./page.ts).
import type { PageWindow } from "../../paging.ts";
import { SqlParams, type SqlCondition, type SqlQuery } from "../../sql.ts";
import type { RowsOfIds } from "./rows-sql.ts";
import { groupsSql } from "../../search/read-conditions.ts";
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
 * The ids of a page in relevance order: tier by tier, each in the list order (published_at, id
 * descending), until the page is full. An offset is spent on the tiers it passes (each counted
 * at most up to what is left of it); a cursor starts in its tier, after its row.
 */
export async function relevancePage(
  sql: SqlQuery,
  window: Window,
  reading: SearchReading,
  read?: RowsOfIds,
): Promise<RankedId[]> {
  const tiers = relevanceTiers(reading);
  const seek = window.seek as [number, Date, string] | undefined;
  const rows: RankedId[] = [];
  let skip = window.skip;
  for (const { tier, sql: inTier } of tiers) {
    if (seek && tier > seek[0]) continue;
    const inWindow = (params: SqlParams) =>
      `${window.sqlWhere(params)} AND ${inTier(params)}${
        seek && tier === seek[0]
          ? ` AND (j.published_at, j.id) < (${params.add(seek[1], "timestamptz")}, ${params.add(seek[2], "uuid")})`
          : ""
      }`;
    const params = new SqlParams();
    const where = inWindow(params);
    const order = "j.published_at DESC, j.id DESC";
    const ids = `SELECT j.id, j.published_at AS "publishedAt" FROM jobs j WHERE ${where} ORDER BY ${order}
        LIMIT ${params.add(window.limit - rows.length, "int")} OFFSET ${params.add(skip, "int")}`;
    const found = (
      read ? read.rows(await sql.query(read.statement(ids, order), params.values)) : await sql.query(ids, params.values)
    ) as RankedId[];
    if (found.length > 0 || skip === 0) {
      for (const row of found) rows.push(Object.assign(row, { relevanceTier: tier }));
      skip = 0;
    } else {
      // The tier holds no more rows than the offset left: spend them and go on to the next tier.
      const counting = new SqlParams();
      const [counted] = await sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs j WHERE ${inWindow(counting)} LIMIT ${counting.add(skip, "int")}) AS t`,
        counting.values,
      );
      skip -= counted?.n ?? 0;
    }
    if (rows.length >= window.limit) break;
  }
  return rows;
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

/**
 * The rows within `radiusKm` of (lat, lon), on table alias `alias`: a bounding box first (the
 * latitude band is an index range; the longitude is checked in the index), then the exact
 * distance. Rows without coordinates never match.
 */
export function withinSql(alias: string, lat: number, lon: number, radiusKm: number): SqlCondition {
  const dLat = (radiusKm / EARTH_RADIUS_KM) * (180 / Math.PI);
  const minLat = lat - dLat;
  const maxLat = lat + dLat;
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

/** The ids of a page nearest first: the distance, then the id. */
export async function distancePage(
  sql: SqlQuery,
  window: Window,
  near: { lat: number; lon: number },
  read?: RowsOfIds,
): Promise<RankedId[]> {
  const params = new SqlParams();
  const distance = distanceSql("j", near.lat, near.lon)(params);
  const where = window.sqlWhere(params);
  const seek = window.seek as [number, string] | undefined;
  const after = seek
    ? ` AND (${distance}, j.id) > (${params.add(seek[0], "float8")}, ${params.add(seek[1], "uuid")})`
    : "";
  const ids = `SELECT j.id, ${distance} AS "distanceKm" FROM jobs j WHERE ${where}${after}
      ORDER BY 2, j.id LIMIT ${params.add(window.limit, "int")} OFFSET ${params.add(window.skip, "int")}`;
  if (!read) return sql.query<RankedId>(ids, params.values);
  const statement = read.statement(ids, `page."distanceKm", j.id`, `, page."distanceKm" AS "distanceKm"`);
  return read.rows(await sql.query(statement, params.values)) as RankedId[];
}
