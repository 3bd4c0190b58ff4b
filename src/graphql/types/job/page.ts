// The page of jobs (JobPage): its rows by the read model's own statement when it answers the query
// (./rows-sql.ts), else by Prisma (a deferred join past the first pages); its total from the kept
// counters or a count, bounded on a first count (../../totals.ts).
import { countJobs, jobCounterScope } from "../../counters.ts";
import { definePage, loadStrategy } from "../../paging.ts";
import { JOB_ORDERS, orderByOf } from "./order.ts";
import { answersJobQuery, jobPage } from "./rows-sql.ts";

const DEFERRED_JOIN_FROM = 1_000;

const jobOrder = orderByOf(JOB_ORDERS.PUBLISHED_AT_DESC);

export const JobPage = definePage("Job", "JobPage", {
  order: JOB_ORDERS.PUBLISHED_AT_DESC,
  items: async (ctx, query, page) => {
    const { sql } = ctx;
    const { sqlWhere } = page;
    if (sql && sqlWhere && answersJobQuery(query)) {
      return jobPage(sql, query.select, { ...page, sqlWhere }, DEFERRED_JOIN_FROM) as never;
    }
    const relationLoadStrategy = loadStrategy("Job", query);
    const orderBy = page.order ? orderByOf(page.order) : jobOrder;
    // Near the start (or after a cursor, which seeks) the skipped rows are few: one statement.
    if (page.skip < DEFERRED_JOIN_FROM) {
      return ctx.prisma.job.findMany({
        ...query,
        relationLoadStrategy,
        where: page.where,
        orderBy,
        take: page.limit,
        skip: page.skip,
      });
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
    return ctx.prisma.job.findMany({
      ...query,
      relationLoadStrategy,
      where: { id: { in: ids.map((j) => j.id) } },
      orderBy,
    });
  },
  total: countJobs,
  // A million jobs: the first count of a broad filter or common word can take seconds; the kept
  // counters' filters answer in a few ms and need no bound. In the list's order (Prisma orders a
  // capped count; by id it would walk the primary key instead).
  countAtMost: (where, now) =>
    jobCounterScope(where, now) ? null : (prisma, cap) => prisma.job.count({ where, take: cap, orderBy: jobOrder }),
});
