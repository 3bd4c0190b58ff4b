// The page of jobs (JobPage): its rows by the read model's own statement when it answers the query
// (./rows-sql.ts), else by Prisma (a deferred join past the first pages); its total from the kept
// counters or a count, bounded on a first count (../../totals.ts).
import type { Prisma } from "../../../generated/prisma/client.ts";
import type { GraphQLContext } from "../../context.ts";
import { countJobs, jobCounterScope } from "../../counters.ts";
import { definePage, loadStrategy, type PageWindow } from "../../paging.ts";
import { derivedFrom } from "../../planned-query.ts";
import { prismaSql, SqlParams, type SqlCondition } from "../../sql.ts";
import { COMPUTED_FIELDS, JOB_ORDERS, orderByOf } from "./order.ts";
import { distanceKm, distancePage, nearListPage, relevancePage, type RankedId } from "./ranked-sql.ts";
import type { SearchReading } from "../../search/reading.ts";
import { answersJobQuery, jobIdsPage, jobPage, rowsOfIds, type JobQuery } from "./rows-sql.ts";
import { shapeJobs } from "./shape.ts";

/** What a computed order needs: the reading of q (relevance), or the place (distance). */
export type JobRanking =
  | {
      kind: "relevance";
      reading: SearchReading;
      /** The list's conditions but q's words, which the title and head tiers' own conditions imply. */
      sqlWhereBesidesWords?: SqlCondition;
    }
  | { kind: "distance"; lat: number; lon: number; radiusKm: number };

type SqlWindow = PageWindow<unknown> & { sqlWhere: SqlCondition; ranking?: JobRanking };

/** A list within a radius in the default order (newest first): walked point by point (nearListPage). */
const nearInListOrder = (window: SqlWindow) =>
  window.near &&
  !window.ranking &&
  (!window.order || (window.order[0]?.field === "publishedAt" && window.order[0].direction === "desc"))
    ? window.near
    : null;

/**
 * A page whose order or filter Prisma cannot express (relevance, distance, a radius): its ids (with
 * their order keys) by SQL, then its rows by id. When the read model's statement answers the query
 * the rows are read in the ids' statement (a deferred join, one round trip); else by Prisma, by id.
 * In the ids' order, each row carrying its key for the cursor.
 */
async function pageByIds(ctx: GraphQLContext, query: JobQuery, window: SqlWindow) {
  const sql = ctx.sql ?? prismaSql(ctx.prisma);
  const ranking = window.ranking;
  const plain = derivedFrom(query, pageByIds, () => {
    const select =
      query.select && Object.fromEntries(Object.entries(query.select).filter(([k]) => !COMPUTED_FIELDS.includes(k)));
    return { ...query, ...(select ? { select } : {}) };
  });
  if (ctx.sql && answersJobQuery(plain)) {
    const read = rowsOfIds(plain.select, Boolean(window.near));
    if (ranking?.kind === "relevance") return relevancePage(ctx.sql, { ...window, now: ctx.now }, ranking, read);
    if (ranking?.kind === "distance") return distancePage(ctx.sql, window, ranking, read);
    const near = nearInListOrder(window);
    if (near) return nearListPage(ctx.sql, window, near, read);
    // The deferred join: the ids within a radius come off the coordinates' index alone, where
    // reading whole rows in date order walked the date index (Berlin: 485 ms against 53 ms).
    return jobPage(ctx.sql, plain.select, window);
  }
  const ids: RankedId[] =
    ranking?.kind === "relevance"
      ? await relevancePage(sql, { ...window, now: ctx.now }, ranking)
      : ranking?.kind === "distance"
        ? await distancePage(sql, window, ranking)
        : ((await jobIdsPage(sql, window)) as RankedId[]);
  if (ids.length === 0) return [];
  const rows: Record<string, unknown>[] = await ctx.prisma.job.findMany({
    ...(plain as object),
    relationLoadStrategy: loadStrategy("Job", plain),
    where: { id: { in: ids.map((r) => r.id) } },
  });
  const byId = new Map(shapeJobs(rows).map((row) => [row["id"] as string, row]));
  return ids.flatMap((key) => {
    const row = byId.get(key.id);
    return row ? [Object.assign(row, key)] : [];
  });
}

/** A count through SQL (for a filter Prisma cannot express), on the client given (the counting one). */
async function countBySql(sqlWhere: SqlCondition, sql: ReturnType<typeof prismaSql>, cap?: number): Promise<number> {
  const params = new SqlParams();
  const where = sqlWhere(params);
  const rows = cap === undefined ? "" : ` LIMIT ${params.add(cap, "int")}`;
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs j WHERE ${where}${rows}) AS t`,
    params.values,
  );
  return row?.n ?? 0;
}

const DEFERRED_JOIN_FROM = 1_000;

const jobOrder = orderByOf(JOB_ORDERS.PUBLISHED_AT_DESC);

/** The rows of a page: by ids (a computed order or a filter only SQL expresses), our statement, or Prisma. */
async function pageItems(
  ctx: GraphQLContext,
  query: JobQuery,
  page: PageWindow<Prisma.JobWhereInput>,
): Promise<unknown[]> {
  const { sql } = ctx;
  const { sqlWhere } = page;
  if (sqlWhere && (page.sqlOnly || page.ranking)) {
    return pageByIds(ctx, query, { ...page, sqlWhere, ranking: page.ranking as JobRanking | undefined });
  }
  // Our statement is always a deferred join (the page's ids off the list's index, then its rows),
  // as a hand-written one would be: a filter an index covers (work model, salary, a radius) then
  // reads no row it does not answer, and a deep offset reads none it skips.
  if (sql && sqlWhere && answersJobQuery(query)) return jobPage(sql, query.select, { ...page, sqlWhere });
  const relationLoadStrategy = loadStrategy("Job", query);
  const orderBy = page.order ? orderByOf(page.order) : jobOrder;
  // Near the start (or after a cursor, which seeks) the skipped rows are few: one statement.
  if (page.skip < DEFERRED_JOIN_FROM) {
    return shapeJobs(
      await ctx.prisma.job.findMany({
        ...query,
        relationLoadStrategy,
        where: page.where,
        orderBy,
        take: page.limit,
        skip: page.skip,
      }),
    );
  }
  // A deferred join: skip rows over the list index alone (an index-only scan), then load the
  // page's rows. Selecting full rows while skipping would read every skipped row's heap tuple.
  const ids = await ctx.prisma.job.findMany({
    select: { id: true },
    where: page.where,
    orderBy,
    take: page.limit,
    skip: page.skip,
  });
  if (ids.length === 0) return [];
  return shapeJobs(
    await ctx.prisma.job.findMany({
      ...query,
      relationLoadStrategy,
      where: { id: { in: ids.map((j) => j.id) } },
      orderBy,
    }),
  );
}

export const JobPage = definePage("Job", "JobPage", {
  order: JOB_ORDERS.PUBLISHED_AT_DESC,
  items: async (ctx, query, page) => {
    const rows = await pageItems(ctx, query, page);
    // A `near` filter: every row within the radius says how far it is (a distance order's rows already do).
    const near = page.near;
    if (near) {
      for (const row of rows as { latitude: number | null; longitude: number | null; distanceKm?: number }[]) {
        if (row.distanceKm === undefined && row.latitude !== null && row.longitude !== null) {
          row.distanceKm = distanceKm(near.lat, near.lon, row.latitude, row.longitude);
        }
      }
    }
    return rows as never;
  },
  total: (ctx, where, page) =>
    page.sqlOnly && page.sqlWhere ? countBySql(page.sqlWhere, prismaSql(ctx.prisma)) : countJobs(ctx, where),
  // A million jobs: the first count of a broad filter or common word can take seconds; the kept
  // counters' filters answer in a few ms and need no bound. In no order, so the server picks how to
  // find any `cap` matches: in the list's order (as Prisma's capped count had it, which by id would
  // walk the primary key) a word in few jobs walked the whole date index, 811 ms for `taedium`
  // (2 % of jobs) against 45 ms off its word index, and held the core its first page needed.
  // Every jobs page has its filter in SQL (./root-fields.ts); without it there is nothing to bound by.
  countAtMost: (where, now, { sqlOnly, sqlWhere }) => {
    if (!sqlWhere || (!sqlOnly && jobCounterScope(where, now))) return null;
    return (prisma, cap) => countBySql(sqlWhere, prismaSql(prisma), cap);
  },
});
