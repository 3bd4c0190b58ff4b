// Facet counts of the job list (jobFacets, GET /api/v1/jobs/facets): for the list's filter, how many
// public jobs each value of a facet would list. Multi-select semantics: a facet's counts leave out
// the facet's own condition (the work-model counts ignore work_model and remote), so a client can
// offer every value beside the ones already chosen; every other condition holds. Each count is the
// `total` the list would answer with that value chosen in place of the facet's own condition.
// Counted by SQL on the jobs table behind the job gate (./facet-counts.ts), remembered per filter
// and facets asked for like list totals (../../totals.ts: stale-while-revalidate on the counting
// client). A first count that outlasts the short wait (a common word at a million jobs: seconds) is
// answered from a sample of the matching jobs, as lower bounds (`exact: false`), while it goes on.
// The counts the database keeps (the catalog's total, a sector's or skill's open jobs:
// ../../counters.ts) are read instead, so the facets of the whole catalog need no scan, cold or warm.
import type { PrismaClient } from "../../../generated/prisma/client.ts";
import { builder } from "../../builder.ts";
import { catalogOpenJobs, scopeCounts } from "../../counters.ts";
import type { GraphQLContext } from "../../context.ts";
import { listSize } from "../../cost.ts";
import { SalaryPeriodEnum } from "../../enums.ts";
import { publicJobSql } from "../../gates.ts";
import { badArgument } from "../../paging.ts";
import { allOf, prismaSql, SqlParams, type SqlQuery } from "../../sql.ts";
import type { Counted } from "../../totals.ts";
import { jobFilterConditions, type JobCondition, type JobFacetName } from "./conditions.ts";
import {
  allRows,
  GROUPED_FACETS,
  groupedCounts,
  salaryHistogram,
  SALARY_RANGES_MAX,
  sampledRows,
  skillCounts,
  type Counts,
  type FacetValue,
  type GroupedFacet,
  type HistogramShape,
  type Rows,
  type SalaryRangeShape,
} from "./facet-counts.ts";
import { JobFilter, type JobFilterShape } from "./filter.ts";
import { facetLabel } from "./facet-labels.ts";

export const FACET_LIMIT_DEFAULT = 20;
export const FACET_LIMIT_MAX = 100;
export const SALARY_INTERVAL_DEFAULT = 10_000;

type CountedFacets = Partial<Record<Exclude<JobFacetName, "salary">, FacetValue[]>> & { salary?: HistogramShape };
type FacetsShape = { total: number; exact: boolean } & CountedFacets;

const FacetCount = builder.objectRef<FacetValue>("FacetCount").implement({
  description: "One value of a facet and the public jobs the list would answer with it chosen.",
  fields: (t) => ({
    value: t.exposeString("value", {
      description:
        "As the list's filter takes it: a work model or employment type (lowercase), a sector or skill slug, an ISO 3166-1 alpha-2 country code.",
    }),
    name: t.string({
      nullable: true,
      description:
        "A label to show: a sector's or skill's name, a work model's or employment type's (Full-time), a country's English name (Germany).",
      resolve: (f) => f.name ?? facetLabel(f.value),
    }),
    count: t.exposeInt("count"),
  }),
});

const SalaryRange = builder.objectRef<SalaryRangeShape>("SalaryRange").implement({
  description: "Jobs whose salary (the top of its range) is at least from and below to.",
  fields: (t) => ({
    from: t.exposeInt("from"),
    to: t.exposeInt("to", {
      nullable: true,
      description: "null for an open last range (when the ranges were capped at 100, or past the largest amount).",
    }),
    count: t.exposeInt("count"),
  }),
});

const SalaryHistogram = builder.objectRef<HistogramShape>("SalaryHistogram").implement({
  description:
    "Jobs by salary (the top of the range) in one currency and period, in ranges of interval; empty ranges left out.",
  fields: (t) => ({
    currency: t.exposeString("currency"),
    period: t.expose("period", { type: SalaryPeriodEnum }),
    interval: t.exposeInt("interval"),
    ranges: t.field({ type: [SalaryRange], ...listSize({ atMost: SALARY_RANGES_MAX }), resolve: (h) => h.ranges }),
  }),
});

const valuesField = (description: string) => ({
  nullable: true as const,
  description: `${description} Most jobs first, at most facetLimit values; null when not asked for.`,
  ...listSize({ atMost: FACET_LIMIT_MAX }),
});

const JobFacets = builder.objectRef<FacetsShape>("JobFacets").implement({
  description:
    "Facet counts for a job filter. Each facet's counts leave out that facet's own condition (multi-select); total is the list's total under the whole filter.",
  fields: (t) => ({
    total: t.exposeInt("total", {
      description: "Public jobs matching the whole filter (the list's total); a lower bound when exact is false.",
    }),
    exact: t.exposeBoolean("exact", {
      description:
        "false only while the first count of a new filter is still running (a common word among a million jobs takes seconds): every count and total are then of a sample of the matching jobs (at most 1,000, any the server finds first), so each is a lower bound of the exact count, and values may be missing. The count goes on; a later request gets the exact counts.",
    }),
    workModel: t.field({
      type: [FacetCount],
      ...valuesField("By work model (leaving out workModel and remote)."),
      resolve: (f) => f.workModel,
    }),
    employmentType: t.field({
      type: [FacetCount],
      ...valuesField("By employment type."),
      resolve: (f) => f.employmentType,
    }),
    sector: t.field({ type: [FacetCount], ...valuesField("By sector."), resolve: (f) => f.sector }),
    skill: t.field({
      type: [FacetCount],
      ...valuesField("By skill (a job counts once for each of its skills)."),
      resolve: (f) => f.skill,
    }),
    country: t.field({
      type: [FacetCount],
      ...valuesField("By country (jobs without a location are not counted here)."),
      resolve: (f) => f.country,
    }),
    salary: t.field({
      type: SalaryHistogram,
      nullable: true,
      description: "By salary in filter.salaryCurrency and filter.salaryPeriod (default YEAR), leaving out salaryMin.",
      resolve: (f) => f.salary,
    }),
  }),
});

const JobFacetEnum = builder.enumType("JobFacet", {
  values: {
    WORK_MODEL: { value: "workModel" },
    EMPLOYMENT_TYPE: { value: "employmentType" },
    SECTOR: { value: "sector" },
    SKILL: { value: "skill" },
    COUNTRY: { value: "country" },
    SALARY: { value: "salary" },
  } as const,
});

/** Remembered like list totals (stale-while-revalidate per key), when the app keeps them. */
function remembered<T>(
  ctx: GraphQLContext,
  key: string,
  count: (sql: SqlQuery, rows: Rows) => Promise<Counts<T>>,
): Promise<Counted<T>> {
  const load = async (sql: SqlQuery) => (await count(sql, allRows)).counts;
  if (!ctx.totals) return load(prismaSql(ctx.prisma)).then((value) => ({ value, exact: true }));
  return ctx.totals.remember(
    key,
    (prisma: PrismaClient) => load(prismaSql(prisma)),
    async (prisma, cap) => {
      const { counts, sampled } = await count(prismaSql(prisma), sampledRows(cap));
      return { value: counts, exact: sampled !== null && sampled < cap };
    },
  );
}

const whereWithout = (ctx: GraphQLContext, conditions: JobCondition[], facet: JobFacetName | null) =>
  allOf([publicJobSql(ctx.now), ...conditions.filter((c) => facet === null || c.facet !== facet).map((c) => c.sql)]);

/** What jobFacets counts by SQL (the rest the kept counters answer). */
interface FacetPlan {
  /** Facets sharing the whole filter's where, counted in one statement with the total. */
  grouped: GroupedFacet[];
  /** Whether that statement's total is the answer's (the whole catalog's comes from a counter). */
  total: boolean;
  /** Grouped facets whose own condition the filter sets: a statement each. */
  ownWhere: GroupedFacet[];
  skill: boolean;
  salary: { currency: string; period: HistogramShape["period"]; interval: number } | null;
}

/**
 * Runs the plan's statements one after another over `rows` (on the counting pool they take one
 * slot); `sampled` is the most jobs any statement's sample read (null: every match was counted).
 */
async function countPlan(
  sql: SqlQuery,
  ctx: GraphQLContext,
  conditions: JobCondition[],
  plan: FacetPlan,
  { rows, limit }: { rows: Rows; limit: number },
): Promise<Counts<CountedFacets & { total: number }>> {
  const where = (facet: JobFacetName | null) => whereWithout(ctx, conditions, facet);
  const counted: CountedFacets & { total: number } = { total: 0 };
  let sampled: number | null = null;
  const read = <T>(result: Counts<T>): T => {
    if (result.sampled !== null) sampled = Math.max(sampled ?? 0, result.sampled);
    return result.counts;
  };
  if (plan.total || plan.grouped.length > 0) {
    const grouped = read(
      await groupedCounts(sql, new SqlParams(), { facets: plan.grouped, where: where(null), rows, limit }),
    );
    Object.assign(counted, { total: grouped.total }, grouped.values);
  }
  for (const facet of plan.ownWhere) {
    const own = read(await groupedCounts(sql, new SqlParams(), { facets: [facet], where: where(facet), rows, limit }));
    counted[facet] = own.values[facet];
  }
  if (plan.skill) counted.skill = read(await skillCounts(sql, new SqlParams(), { where: where("skill"), rows, limit }));
  if (plan.salary) {
    const unit = plan.salary;
    counted.salary = read(await salaryHistogram(sql, new SqlParams(), { where: where("salary"), rows, unit }));
  }
  return { counts: counted, sampled };
}

export async function jobFacets(
  ctx: GraphQLContext,
  filter: JobFilterShape,
  facets: readonly JobFacetName[],
  limit: number,
  salaryInterval: number,
): Promise<FacetsShape> {
  if (limit < 1 || limit > FACET_LIMIT_MAX) {
    throw badArgument("facetLimit", `the values per facet must be an integer from 1 to ${FACET_LIMIT_MAX}`);
  }
  if (salaryInterval < 1) throw badArgument("salaryInterval", "salary_interval must be an integer of at least 1");
  const wanted = new Set(facets);
  const currency = filter.salaryCurrency?.toUpperCase();
  if (wanted.has("salary") && currency == null) {
    throw badArgument(
      "salaryCurrency",
      "the salary facet needs salary_currency: a histogram counts amounts in one currency and period",
    );
  }
  const conditions = await jobFilterConditions(ctx, filter, "PUBLISHED_AT_DESC");
  const ownSet = (facet: JobFacetName) => conditions.some((c) => c.facet === facet);
  // Counts the database keeps (../../counters.ts) are read, not remembered: one short statement,
  // exact at this request's instant. They answer the whole catalog's total, and the sector and
  // skill facets when no condition but the facet's own applies (multi-select leaves that one out).
  const kept = (facet: "sector" | "skill") => wanted.has(facet) && conditions.every((c) => c.facet === facet);
  const groupedWanted = GROUPED_FACETS.filter((f) => wanted.has(f) && !(f === "sector" && kept("sector")));
  const plan: FacetPlan = {
    grouped: groupedWanted.filter((f) => !ownSet(f)),
    total: conditions.length > 0,
    ownWhere: groupedWanted.filter(ownSet),
    skill: wanted.has("skill") && !kept("skill"),
    salary: wanted.has("salary")
      ? { currency: currency!, period: filter.salaryPeriod ?? "year", interval: salaryInterval }
      : null,
  };
  const sql = ctx.sql ?? prismaSql(ctx.prisma);
  const needed = plan.total || plan.grouped.length + plan.ownWhere.length > 0 || plan.skill || plan.salary;
  // The key names the filter as the list's totals do (not the instant), and what is counted.
  const key = `JobFacets:${JSON.stringify(filter)}:${JSON.stringify(plan)}:${limit}`;
  // The kept counters' reads and the counted facets at once: each a statement of its own.
  const [catalogTotal, sector, skill, counted] = await Promise.all([
    plan.total ? null : catalogOpenJobs(sql, ctx.now),
    kept("sector") ? scopeCounts(sql, "sectors", ctx.now, limit) : null,
    kept("skill") ? scopeCounts(sql, "skills", ctx.now, limit) : null,
    needed ? remembered(ctx, key, (q, rows) => countPlan(q, ctx, conditions, plan, { rows, limit })) : null,
  ]);
  const { total = 0, ...values } = counted?.value ?? {};
  const result: FacetsShape = { total: catalogTotal ?? total, exact: counted?.exact ?? true, ...values };
  if (sector) result.sector = sector;
  if (skill) result.skill = skill;
  return result;
}

builder.queryFields((t) => ({
  jobFacets: t.field({
    type: JobFacets,
    description:
      "Facet counts of the public jobs matching filter: for each facet asked for, its values with the number of jobs each would list. A facet's counts leave out its own condition (multi-select: choosing a second work model adds the first's jobs), every other condition holds; total is the list's total under the whole filter.",
    args: {
      filter: t.arg({ type: JobFilter }),
      facets: t.arg({ type: [JobFacetEnum], required: true }),
      facetLimit: t.arg.int({
        defaultValue: FACET_LIMIT_DEFAULT,
        description: `Values per facet, 1 to ${FACET_LIMIT_MAX}: the most frequent (then by value).`,
      }),
      salaryInterval: t.arg.int({
        defaultValue: SALARY_INTERVAL_DEFAULT,
        description: "Width of the salary histogram's ranges, in whole units of salaryCurrency.",
      }),
    },
    resolve: (_root, args, ctx) =>
      jobFacets(
        ctx,
        args.filter ?? {},
        args.facets,
        args.facetLimit ?? FACET_LIMIT_DEFAULT,
        args.salaryInterval ?? SALARY_INTERVAL_DEFAULT,
      ),
  }),
}));
