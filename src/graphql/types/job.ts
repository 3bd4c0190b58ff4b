import type { Prisma } from "../../generated/prisma/client.ts";
import { builder, plainRead } from "../builder.ts";
import { EmploymentTypeEnum, SalaryPeriodEnum, SeniorityEnum, WorkModelEnum } from "../enums.ts";
import { isPublicCompany, publicCompanySql, publicCompanyWhere, publicJobSql, publicJobWhere } from "../gates.ts";
import { allOf, enumValue, type SqlCondition } from "../sql.ts";
import type { GraphQLContext } from "../context.ts";
import { countJobs, jobCounterScope } from "../counters.ts";
import {
  badArgument,
  cursorArgs,
  definePage,
  loadStrategy,
  pageArgs,
  pagedByLimit,
  pageRequest,
  tagList,
  type ListOrder,
  type OrderField,
} from "../paging.ts";
import { Company } from "./company.ts";
import { answersJobQuery, jobBySlug, jobPage } from "./job-rows.ts";
import { Location, LOCATION_FILTER_DESCRIPTION, locationOf, locationWhere } from "./location.ts";

interface SalaryShape {
  min: number | null;
  max: number | null;
  currency: string;
  period: Prisma.JobGetPayload<object>["salaryPeriod"] & string;
}

const Salary = builder.objectRef<SalaryShape>("Salary").implement({
  description: "A salary range in whole units of an ISO 4217 currency per period.",
  fields: (t) => ({
    min: t.exposeInt("min", { nullable: true }),
    max: t.exposeInt("max", { nullable: true }),
    currency: t.exposeString("currency"),
    period: t.expose("period", { type: SalaryPeriodEnum }),
  }),
});

export const Job = builder.prismaObject("Job", {
  description: "A published, open job.",
  // Select mode: a row loads only the columns the query asks for, so a list of summaries never
  // reads the descriptions, and the search lexemes are never read at all. The small columns every
  // summary shows are always loaded instead, and their fields read them plainly: in select mode an
  // exposed field, or one with its own selection, is wrapped to look up for every row where its
  // data was loaded, which cost more CPU on a 50-row page than reading these columns. Those that
  // are the row's own property are plain reads (../builder.ts plainRead): no resolver at all.
  select: {
    id: true,
    slug: true,
    title: true,
    employmentType: true,
    workModel: true,
    locationCity: true,
    locationState: true,
    locationCountry: true,
    salaryMin: true,
    salaryMax: true,
    salaryCurrency: true,
    salaryPeriod: true,
    publishedAt: true,
    createdAt: true,
    // Every job shows its company's reference: loaded with the row, so the field below is a plain
    // read. A field with its own selection is resolved through the planner's mapping for its row,
    // which compiled operations (../compiled.ts) cannot find beneath a relation (their response
    // paths are rebuilt per call), and which costs a lookup per row either way.
    company: { select: { id: true, hasPublicPage: true, slug: true, name: true, logoUrl: true } },
  },
  fields: (t) => ({
    id: t.id({ ...plainRead("id"), resolve: (j) => j.id }),
    slug: t.string({ ...plainRead("slug"), resolve: (j) => j.slug }),
    title: t.string({ ...plainRead("title"), resolve: (j) => j.title }),
    descriptionHtml: t.exposeString("descriptionHtml"),
    descriptionText: t.exposeString("descriptionText"),
    employmentType: t.field({
      ...plainRead("employmentType"),
      type: EmploymentTypeEnum,
      resolve: (j) => j.employmentType,
    }),
    workModel: t.field({ ...plainRead("workModel"), type: WorkModelEnum, resolve: (j) => j.workModel }),
    seniority: t.expose("seniority", { type: SeniorityEnum, nullable: true }),
    location: t.field({
      type: Location,
      nullable: true,
      resolve: (j) => locationOf(j.locationCity, j.locationState, j.locationCountry),
    }),
    salary: t.field({
      type: Salary,
      nullable: true,
      description: "null when the employer did not publish a salary.",
      resolve: (j) =>
        j.salaryCurrency && j.salaryPeriod && (j.salaryMin !== null || j.salaryMax !== null)
          ? { min: j.salaryMin, max: j.salaryMax, currency: j.salaryCurrency, period: j.salaryPeriod }
          : null,
    }),
    applyUrl: t.exposeString("applyUrl", { nullable: true }),
    publishedAt: t.field({
      type: "DateTime",
      resolve: (j) => j.publishedAt ?? j.createdAt,
    }),
    validThrough: t.expose("validThrough", { type: "DateTime", nullable: true }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    company: t.field({
      type: Company,
      nullable: true,
      description: "null for a confidential posting or a company without a public page.",
      resolve: (j) => isPublicCompany(j.company),
    }),
    sector: t.relation("sector", { nullable: true }),
    skills: t.relation("skills", { ...tagList, query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
  }),
});

const JobFilter = builder.inputType("JobFilter", {
  description: "All given conditions must hold.",
  fields: (t) => ({
    q: t.string({
      description:
        "Words that must all occur in the title or description. English stemming (developers matches developer), case-insensitive; common words are ignored.",
    }),
    workModel: t.field({ type: [WorkModelEnum], description: "Any of these work models." }),
    employmentType: t.field({ type: [EmploymentTypeEnum], description: "Any of these employment types." }),
    sector: t.string({ description: "Slug of a sector." }),
    skill: t.string({ description: "Slug of a skill the job asks for." }),
    company: t.string({ description: "Slug of a public company." }),
    updatedSince: t.field({ type: "DateTime", description: "Only jobs updated at or after this instant." }),
    location: t.string({ description: LOCATION_FILTER_DESCRIPTION }),
    remote: t.boolean({
      description: "true: remote jobs only (workModel REMOTE); false: hybrid and onsite jobs only.",
    }),
    salaryMin: t.int({
      description:
        "Jobs whose published salary range reaches this amount (its maximum, or its minimum when it has no maximum, is at least this), in salaryCurrency per salaryPeriod. Needs salaryCurrency; jobs without a salary never match.",
    }),
    salaryCurrency: t.string({
      description:
        "ISO 4217 code (e.g. EUR): jobs paying in this currency. Amounts are never converted between currencies.",
    }),
    salaryPeriod: t.field({
      type: SalaryPeriodEnum,
      description:
        "Jobs paying per this period. Default YEAR when salaryMin is given or the order is by salary; amounts are never converted between periods.",
    }),
  }),
});

const JobSort = builder.enumType("JobSort", {
  description: "The order of a job list; each ends with the id, so pages are stable and continue by cursor.",
  values: {
    PUBLISHED_AT_DESC: { description: "Newest first (the default)." },
    PUBLISHED_AT_ASC: { description: "Oldest first." },
    SALARY_DESC: { description: "Highest salary first (the top of the range). Needs filter.salaryCurrency." },
    SALARY_ASC: { description: "Lowest salary first (the top of the range). Needs filter.salaryCurrency." },
  },
});

type JobSortValue = typeof JobSort.$inferType;

const byId = (direction: "asc" | "desc") => ({ field: "id", direction, kind: "uuid" }) as const;

/** Each order of the job list, with the unique id last (the keyset continuation needs a total order). */
const JOB_ORDERS = {
  PUBLISHED_AT_DESC: [{ field: "publishedAt", direction: "desc", kind: "instant" }, byId("desc")],
  PUBLISHED_AT_ASC: [{ field: "publishedAt", direction: "asc", kind: "instant" }, byId("asc")],
  SALARY_DESC: [{ field: "salaryTop", direction: "desc", kind: "int" }, byId("desc")],
  SALARY_ASC: [{ field: "salaryTop", direction: "asc", kind: "int" }, byId("asc")],
} as const satisfies Record<JobSortValue, readonly OrderField<"Job">[]>;

const orderByOf = (order: ListOrder) =>
  order.map((o) => ({ [o.field]: o.direction })) as Prisma.JobOrderByWithRelationInput[];

type JobFilterShape = typeof JobFilter.$inferInput;

const SEARCH_MAX_LENGTH = 200;

/** The lexemes of a search text, by the same to_tsvector configuration that fills jobs.search_terms. */
// The lexemes of a text never change: remember the most recent ones (a search box repeats).
const lexemeCache = new Map<string, string[]>();
const LEXEME_CACHE_SIZE = 1_000;

async function searchTerms(ctx: GraphQLContext, q: string): Promise<string[]> {
  if (q.length > SEARCH_MAX_LENGTH) throw badArgument("q", `q must be at most ${SEARCH_MAX_LENGTH} characters`);
  let terms = lexemeCache.get(q);
  if (!terms) {
    terms = await lexemesOf(ctx, q);
    if (lexemeCache.size >= LEXEME_CACHE_SIZE) lexemeCache.delete(lexemeCache.keys().next().value!);
    lexemeCache.set(q, terms);
  }
  if (terms.length === 0) throw badArgument("q", "q must contain at least one word that is not a common word");
  return terms;
}

async function lexemesOf(ctx: GraphQLContext, q: string): Promise<string[]> {
  const [row] = await ctx.prisma.$queryRaw<{ terms: string[] }[]>`
    SELECT tsvector_to_array(to_tsvector('english'::regconfig, ${q})) AS terms`;
  return row?.terms ?? [];
}

/** One condition of the job list, in both of its forms: Prisma's, and SQL on jobs aliased j (../sql.ts). */
interface JobCondition {
  where: Prisma.JobWhereInput;
  sql: SqlCondition;
}

const anyOf =
  (column: string, values: string[], enumType: string): SqlCondition =>
  (p) =>
    `${column} IN (${values.map((v) => enumValue(p, v, enumType)).join(", ")})`;

async function jobFilterConditions(ctx: GraphQLContext, filter: JobFilterShape, sort: JobSortValue) {
  const all: JobCondition[] = [];
  if (filter.q != null) {
    const terms = await searchTerms(ctx, filter.q);
    all.push({
      where: { searchTerms: { hasEvery: terms } },
      sql: (p) => `j.search_terms @> ${p.add(terms, "text[]")}`,
    });
  }
  if (filter.workModel?.length) {
    const values = filter.workModel;
    all.push({ where: { workModel: { in: values } }, sql: anyOf("j.work_model", values, "WorkModel") });
  }
  if (filter.employmentType?.length) {
    const values = filter.employmentType;
    all.push({ where: { employmentType: { in: values } }, sql: anyOf("j.employment_type", values, "EmploymentType") });
  }
  all.push(...relationConditions(filter));
  if (filter.updatedSince) {
    const since = filter.updatedSince;
    all.push({ where: { updatedAt: { gte: since } }, sql: (p) => `j.updated_at >= ${p.add(since, "timestamptz")}` });
  }
  if (filter.location != null) {
    const where = locationWhere(filter.location);
    all.push({ where, sql: (p) => `j.location_terms @> ${p.add(where.locationTerms.hasEvery, "text[]")}` });
  }
  if (filter.remote != null) {
    const remote = filter.remote;
    all.push({
      where: { workModel: remote ? "remote" : { not: "remote" } },
      sql: () => `j.work_model ${remote ? "=" : "<>"} 'remote'`,
    });
  }
  all.push(...salaryConditions(filter, sort));
  return all;
}

/** The filters by a sector, a skill or a company, each named by its slug. */
function relationConditions(filter: JobFilterShape): JobCondition[] {
  const all: JobCondition[] = [];
  const { sector, skill, company } = filter;
  if (sector) {
    all.push({
      where: { sector: { slug: sector } },
      sql: (p) => `j.sector_id = (SELECT id FROM sectors WHERE slug = ${p.add(sector, "text")})`,
    });
  }
  if (skill) {
    all.push({
      where: { skills: { some: { slug: skill } } },
      sql: (p) =>
        `EXISTS (SELECT 1 FROM "_JobSkills" js JOIN skills k ON k.id = js."B" WHERE js."A" = j.id AND k.slug = ${p.add(skill, "text")})`,
    });
  }
  // Only a public company can be named: filtering by a hidden one must not reveal its jobs.
  if (company) {
    all.push({
      where: { company: { slug: company, ...publicCompanyWhere } },
      sql: (p) =>
        `j.company_id = (SELECT c.id FROM companies c WHERE c.slug = ${p.add(company, "text")} AND ${publicCompanySql})`,
    });
  }
  return all;
}

const CURRENCY = /^[A-Z]{3}$/;

/** The salary conditions: currency and period, and the top of the range when a minimum or a salary order needs it. */
function salaryConditions(filter: JobFilterShape, sort: JobSortValue): JobCondition[] {
  const bySalary = sort === "SALARY_DESC" || sort === "SALARY_ASC";
  const currency = filter.salaryCurrency?.toUpperCase();
  if (currency != null && !CURRENCY.test(currency)) {
    throw badArgument(
      "salaryCurrency",
      `salary_currency must be an ISO 4217 code such as EUR; got "${filter.salaryCurrency}"`,
    );
  }
  if (filter.salaryMin != null && filter.salaryMin < 0) {
    throw badArgument("salaryMin", "salary_min must be an integer of at least 0");
  }
  if (currency == null) {
    if (filter.salaryMin != null) {
      throw badArgument("salaryMin", "salary_min needs salary_currency: amounts are compared in one currency");
    }
    if (bySalary)
      throw badArgument("sort", "sort by salary needs salary_currency: amounts are compared in one currency");
    return filter.salaryPeriod ? [periodCondition({}, filter.salaryPeriod)] : [];
  }
  const period = filter.salaryPeriod ?? (filter.salaryMin != null || bySalary ? "year" : undefined);
  const all: JobCondition[] = [periodCondition({ salaryCurrency: currency }, period)];
  const atLeast = filter.salaryMin;
  if (atLeast != null) {
    all.push({ where: { salaryTop: { gte: atLeast } }, sql: (p) => `j.salary_top >= ${p.add(atLeast, "int")}` });
  } else if (bySalary) all.push({ where: { salaryTop: { not: null } }, sql: () => "j.salary_top IS NOT NULL" });
  return all;
}

/** A salary's period, with its currency when one is given. */
function periodCondition(currency: { salaryCurrency?: string }, period: JobFilterShape["salaryPeriod"]): JobCondition {
  const parts: SqlCondition[] = [];
  const { salaryCurrency } = currency;
  // As char(3), the column's type: compared as text, the column would be cast and its index unused.
  if (salaryCurrency) parts.push((p) => `j.salary_currency = ${p.add(salaryCurrency, "bpchar")}`);
  if (period) parts.push((p) => `j.salary_period = ${enumValue(p, period, "SalaryPeriod")}`);
  return { where: { ...currency, ...(period ? { salaryPeriod: period } : {}) }, sql: allOf(parts) };
}

const DEFERRED_JOIN_FROM = 1_000;

const jobOrder = orderByOf(JOB_ORDERS.PUBLISHED_AT_DESC);

const JobPage = definePage("Job", "JobPage", {
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

builder.queryFields((t) => ({
  jobs: t.field({
    ...pagedByLimit,
    type: JobPage,
    description:
      "Public open jobs, newest first (published_at descending, then id descending) unless sort says otherwise.",
    args: {
      ...pageArgs,
      ...cursorArgs,
      filter: t.arg({ type: JobFilter }),
      sort: t.arg({ type: JobSort, defaultValue: "PUBLISHED_AT_DESC" }),
    },
    resolve: async (_root, args, ctx) => {
      const page = pageRequest(args);
      const sort = args.sort ?? "PUBLISHED_AT_DESC";
      // One remembered total per filter; an order by salary adds its conditions (jobs with a salary).
      const bySalary = sort === "SALARY_DESC" || sort === "SALARY_ASC";
      const countKey = JSON.stringify(args.filter ?? null) + (bySalary ? " by salary" : "");
      const filters = await jobFilterConditions(ctx, args.filter ?? {}, sort);
      return {
        ...page,
        after: args.after,
        countKey,
        order: sort === "PUBLISHED_AT_DESC" ? undefined : JOB_ORDERS[sort],
        where: { AND: [publicJobWhere(ctx.now), ...filters.map((f) => f.where)] },
        sqlWhere: allOf([publicJobSql(ctx.now), ...filters.map((f) => f.sql)]),
      };
    },
  }),
  job: t.prismaField({
    type: "Job",
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: (query, _root, { slug }, ctx) =>
      ctx.sql && answersJobQuery(query)
        ? (jobBySlug(ctx.sql, query.select, publicJobSql(ctx.now), slug) as never)
        : ctx.prisma.job.findFirst({ ...query, where: { slug, ...publicJobWhere(ctx.now) } }),
  }),
}));
