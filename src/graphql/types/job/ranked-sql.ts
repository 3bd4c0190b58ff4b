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
      seek: (p, [at, id]) => ({
        walk: ` AND (j.published_at, j.id) < (${p.add(at, "timestamptz")}, ${p.add(id, "uuid")})`,
        points: "",
      }),
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
