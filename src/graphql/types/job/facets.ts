// Facet counts of the job list (jobFacets, GET /api/v1/jobs/facets): for the list's filter, how many
// public jobs each value of a facet would list. Multi-select semantics: a facet's counts leave out
// the facet's own condition (the work-model counts ignore work_model and remote), so a client can
// offer every value beside the ones already chosen; every other condition holds. Each count is the
// `total` the list would answer with that value chosen in place of the facet's own condition.
// Counted by SQL on the jobs table behind the job gate, remembered per filter and facet like list
// totals (../../totals.ts: stale-while-revalidate on the counting client); the counts the database
// keeps (the catalog's total, a sector's or skill's open jobs: ../../counters.ts) are read instead,
// so the facets of the whole catalog need no scan, cold or warm.
import type { PrismaClient } from "../../../generated/prisma/client.ts";
import { builder } from "../../builder.ts";
import { catalogOpenJobs, scopeCounts } from "../../counters.ts";
import type { GraphQLContext } from "../../context.ts";
import { listSize } from "../../cost.ts";
import { SalaryPeriodEnum } from "../../enums.ts";
import { publicJobSql } from "../../gates.ts";
import { badArgument } from "../../paging.ts";
import { allOf, enumValue, prismaSql, SqlParams, type SqlCondition } from "../../sql.ts";
import { jobFilterConditions, type JobCondition, type JobFacetName } from "./conditions.ts";
import { JobFilter, type JobFilterShape } from "./filter.ts";
import { facetLabel } from "./facet-labels.ts";

export const FACET_LIMIT_DEFAULT = 20;
export const FACET_LIMIT_MAX = 100;
export const SALARY_INTERVAL_DEFAULT = 10_000;
/** The most ranges a salary histogram lists; higher salaries are counted in the last, open range. */
export const SALARY_RANGES_MAX = 100;
const INT_MAX = 2_147_483_647;

interface FacetValue {
  value: string;
  name: string | null;
  count: number;
}
interface SalaryRangeShape {
  from: number;
  to: number | null;
  count: number;
}
interface HistogramShape {
  currency: string;
  period: "hour" | "day" | "week" | "month" | "year";
  interval: number;
  ranges: SalaryRangeShape[];
}
type FacetsShape = { total: number } & Partial<Record<Exclude<JobFacetName, "salary">, FacetValue[]>> & {
    salary?: HistogramShape;
  };

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
    total: t.exposeInt("total", { description: "Public jobs matching the whole filter (the list's total)." }),
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

/** The statement counting one facet's values over `where` (jobs aliased j). */
function facetStatement(
  facet: Exclude<JobFacetName, "salary">,
  where: SqlCondition,
  limit: number,
): (p: SqlParams) => string {
  return (p) => {
    const w = where(p);
    const top = `ORDER BY count DESC, value LIMIT ${p.add(limit, "int")}`;
    switch (facet) {
      case "workModel":
      case "employmentType": {
        const column = facet === "workModel" ? "j.work_model" : "j.employment_type";
        return `SELECT ${column}::text AS value, NULL AS name, count(*)::int AS count FROM jobs j WHERE ${w} GROUP BY 1 ${top}`;
      }
      case "country":
        return `SELECT j.location_country::text AS value, NULL AS name, count(*)::int AS count FROM jobs j
                 WHERE ${w} AND j.location_country IS NOT NULL GROUP BY 1 ${top}`;
      case "sector":
        return `SELECT s.slug AS value, s.name, f.count FROM
                  (SELECT j.sector_id, count(*)::int AS count FROM jobs j WHERE ${w} AND j.sector_id IS NOT NULL GROUP BY 1) f
                  JOIN sectors s ON s.id = f.sector_id ${top}`;
      case "skill":
        return `SELECT k.slug AS value, k.name, f.count FROM
                  (SELECT js."B" AS skill_id, count(*)::int AS count FROM jobs j JOIN "_JobSkills" js ON js."A" = j.id
                    WHERE ${w} GROUP BY 1) f
                  JOIN skills k ON k.id = f.skill_id ${top}`;
    }
  };
}

async function countFacet(
  prisma: PrismaClient,
  facet: Exclude<JobFacetName, "salary">,
  where: SqlCondition,
  limit: number,
): Promise<FacetValue[]> {
  const params = new SqlParams();
  const text = facetStatement(facet, where, limit)(params);
  return prismaSql(prisma).query<FacetValue>(text, params.values);
}

async function salaryHistogram(
  prisma: PrismaClient,
  where: SqlCondition,
  unit: { currency: string; period: HistogramShape["period"]; interval: number },
): Promise<HistogramShape> {
  const params = new SqlParams();
  const w = where(params);
  const interval = params.add(unit.interval, "int8");
  const rows = await prismaSql(prisma).query<{ from: string | number; count: number }>(
    `SELECT (j.salary_top::int8 / ${interval}) * ${interval} AS "from", count(*)::int AS count FROM jobs j
      WHERE ${w} AND j.salary_currency = ${params.add(unit.currency, "bpchar")}
        AND j.salary_period = ${enumValue(params, unit.period, "SalaryPeriod")} AND j.salary_top IS NOT NULL
      GROUP BY 1 ORDER BY 1`,
    params.values,
  );
  const ranges: SalaryRangeShape[] = rows.map((r) => {
    const to = Number(r.from) + unit.interval;
    // A range reaching past the largest amount a salary can hold is open (GraphQL's Int is 32-bit).
    return { from: Number(r.from), to: to > INT_MAX ? null : to, count: r.count };
  });
  if (ranges.length > SALARY_RANGES_MAX) {
    const rest = ranges.splice(SALARY_RANGES_MAX - 1);
    ranges.push({ from: rest[0]!.from, to: null, count: rest.reduce((n, r) => n + r.count, 0) });
  }
  return { ...unit, ranges };
}

/** A count through SQL of the whole filter (the facets' total). */
async function countAll(prisma: PrismaClient, where: SqlCondition): Promise<number> {
  const params = new SqlParams();
  const [row] = await prismaSql(prisma).query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs j WHERE ${where(params)}`,
    params.values,
  );
  return row?.n ?? 0;
}

/** Remembered like list totals (stale-while-revalidate per key), when the app keeps them. */
function remembered<T>(ctx: GraphQLContext, key: string, load: (prisma: PrismaClient) => Promise<T>): Promise<T> {
  return ctx.totals ? ctx.totals.remember(key, load) : load(ctx.prisma);
}

const whereWithout = (ctx: GraphQLContext, conditions: JobCondition[], facet: JobFacetName | null) =>
  allOf([publicJobSql(ctx.now), ...conditions.filter((c) => facet === null || c.facet !== facet).map((c) => c.sql)]);

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
  const wanted = [...new Set(facets)];
  const currency = filter.salaryCurrency?.toUpperCase();
  if (wanted.includes("salary") && currency == null) {
    throw badArgument(
      "salaryCurrency",
      "the salary facet needs salary_currency: a histogram counts amounts in one currency and period",
    );
  }
  const conditions = await jobFilterConditions(ctx, filter, "PUBLISHED_AT_DESC");
  // The key names the filter as the list's totals do (not the instant): one count per filter and facet.
  const filterKey = JSON.stringify(filter);
  // Counts the database keeps (../../counters.ts) are read, not remembered: one short statement,
  // exact at this request's instant. They answer the whole catalog's total, and the sector and
  // skill facets when no condition but the facet's own applies (multi-select leaves that one out).
  const onlyOwn = (facet: JobFacetName) => conditions.every((c) => c.facet === facet);
  const result: FacetsShape = {
    total:
      conditions.length === 0
        ? await catalogOpenJobs(ctx.sql ?? prismaSql(ctx.prisma), ctx.now)
        : await remembered(ctx, `JobFacets:${filterKey}:total`, (prisma) =>
            countAll(prisma, whereWithout(ctx, conditions, null)),
          ),
  };
  await Promise.all(
    wanted.map(async (facet) => {
      // Built only when counting: a remembered answer (most requests) needs no SQL.
      const where = () => whereWithout(ctx, conditions, facet);
      if (facet === "salary") {
        const period = filter.salaryPeriod ?? "year";
        const unit = { currency: currency!, period, interval: salaryInterval };
        result.salary = await remembered(ctx, `JobFacets:${filterKey}:salary:${salaryInterval}`, (prisma) =>
          salaryHistogram(prisma, where(), unit),
        );
        return;
      }
      if ((facet === "sector" || facet === "skill") && onlyOwn(facet)) {
        const scopes = facet === "sector" ? "sectors" : "skills";
        result[facet] = await scopeCounts(ctx.sql ?? prismaSql(ctx.prisma), scopes, ctx.now, limit);
        return;
      }
      result[facet] = await remembered(ctx, `JobFacets:${filterKey}:${facet}:${limit}`, (prisma) =>
        countFacet(prisma, facet, where(), limit),
      );
    }),
  );
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
