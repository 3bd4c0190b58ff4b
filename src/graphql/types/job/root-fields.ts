// The root fields of jobs: `jobs` (the filtered, ordered page) and `job` (one by slug), both behind
// the job gate (../../gates.ts).
import { builder } from "../../builder.ts";
import { publicJobSql, publicJobWhere } from "../../gates.ts";
import { badArgument, cursorArgs, pageArgs, pagedByLimit, pageRequest, SEARCH_OFFSET_WINDOW } from "../../paging.ts";
import { allOf } from "../../sql.ts";
import { jobFilterConditions, searchReadingOf } from "./conditions.ts";
import { JobFilter } from "./filter.ts";
import { COMPUTED_ORDERS, isComputedSort, JOB_ORDERS, JobSort, type JobSortValue } from "./order.ts";
import { JobPage, type JobRanking } from "./page.ts";
import { resolveNear } from "../location.ts";
import { planned } from "../../planned-query.ts";
import { Job } from "./object.ts";
import { shapeJob } from "./shape.ts";
import { answersJobQuery, jobBySlug } from "./rows-sql.ts";
import type { JobFilterShape } from "./filter.ts";
import type { GraphQLContext } from "../../context.ts";

/** What an order computed per request needs, checked against the filter. */
async function rankingOf(
  ctx: GraphQLContext,
  filter: JobFilterShape,
  sort: JobSortValue,
): Promise<JobRanking | undefined> {
  if (sort === "RELEVANCE") {
    const reading = searchReadingOf(ctx, filter);
    if (!reading) throw badArgument("sort", "sort by relevance needs q: the words to rank by");
    return { kind: "relevance", reading: await reading };
  }
  if (sort === "DISTANCE") {
    const near = await resolveNear(ctx.prisma, filter.near, filter.radiusKm);
    if (!near) throw badArgument("sort", "sort by distance needs near: the place to measure from");
    return { kind: "distance", lat: near.lat, lon: near.lon, radiusKm: near.radiusKm };
  }
  return undefined;
}

/** A search's offset page within SEARCH_OFFSET_WINDOW; a page reached by cursor seeks at any depth. */
function checkSearchOffset(page: { limit: number; offset: number }, q: string | null | undefined, after: unknown) {
  if (!q?.trim() || after != null || page.offset + page.limit <= SEARCH_OFFSET_WINDOW) return;
  throw badArgument(
    "offset",
    `with q, offset + limit must be at most ${SEARCH_OFFSET_WINDOW}; to go further, follow the page's next cursor (meta.next), which seeks at any depth`,
  );
}

builder.queryFields((t) => ({
  jobs: t.field({
    ...pagedByLimit,
    type: JobPage,
    description:
      "Public open jobs: with filter.q, best match first (sort RELEVANCE); without, newest first (published_at descending, then id descending); unless sort says otherwise.",
    args: {
      ...pageArgs,
      ...cursorArgs,
      filter: t.arg({ type: JobFilter }),
      sort: t.arg({
        type: JobSort,
        description: "Default: RELEVANCE when filter.q is given, else PUBLISHED_AT_DESC.",
      }),
    },
    resolve: async (_root, args, ctx) => {
      const page = pageRequest(args);
      checkSearchOffset(page, args.filter?.q, args.after);
      const sort = args.sort ?? (args.filter?.q != null ? "RELEVANCE" : "PUBLISHED_AT_DESC");
      // One remembered total per filter; an order by salary adds its conditions (jobs with a salary).
      const bySalary = sort === "SALARY_DESC" || sort === "SALARY_ASC";
      const countKey = JSON.stringify(args.filter ?? null) + (bySalary ? " by salary" : "");
      const filters = await jobFilterConditions(ctx, args.filter ?? {}, sort);
      const ranked = await rankingOf(ctx, args.filter ?? {}, sort);
      const ranking =
        ranked?.kind === "relevance"
          ? {
              ...ranked,
              sqlWhereBesidesWords: allOf([publicJobSql(ctx.now), ...filters.map((f) => f.sqlBesidesWords ?? f.sql)]),
            }
          : ranked;
      const near = await resolveNear(ctx.prisma, args.filter?.near, args.filter?.radiusKm);
      return {
        ...page,
        after: args.after,
        countKey,
        order:
          sort === "PUBLISHED_AT_DESC" ? undefined : isComputedSort(sort) ? COMPUTED_ORDERS[sort] : JOB_ORDERS[sort],
        ranking,
        search: searchReadingOf(ctx, args.filter ?? {}),
        ...(near ? { near: { lat: near.lat, lon: near.lon, radiusKm: near.radiusKm } } : {}),
        sqlOnly: filters.some((f) => f.sqlOnly),
        where: { AND: [publicJobWhere(ctx.now), ...filters.map((f) => f.where)] },
        sqlWhere: allOf([publicJobSql(ctx.now), ...filters.map((f) => f.sql)]),
      };
    },
  }),
  // t.prismaField, with the planner's query kept per place in the operation (../../planned-query.ts).
  job: t.field({
    type: Job,
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: planned("Job", (query, { slug }, ctx) =>
      ctx.sql && answersJobQuery(query)
        ? jobBySlug(ctx.sql, query.select, publicJobSql(ctx.now), slug)
        : ctx.prisma.job
            .findFirst({ ...query, where: { slug, ...publicJobWhere(ctx.now) } })
            .then((row) => row && shapeJob(row)),
    ),
  }),
}));
