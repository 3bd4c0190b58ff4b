import type { Prisma } from "../../generated/prisma/client.ts";
import { builder } from "../builder.ts";
import { EmploymentTypeEnum, SalaryPeriodEnum, SeniorityEnum, WorkModelEnum } from "../enums.ts";
import { isPublicCompany, publicCompanyWhere, publicJobWhere } from "../gates.ts";
import type { GraphQLContext } from "../context.ts";
import { countJobs, jobCounterScope } from "../counters.ts";
import { badArgument, cursorArgs, definePage, loadStrategy, pageArgs, pageRequest } from "../paging.ts";
import { Company } from "./company.ts";
import { Location, locationOf } from "./location.ts";

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
  // data was loaded, which cost more CPU on a 50-row page than reading these columns.
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
    id: t.id({ resolve: (j) => j.id }),
    slug: t.string({ resolve: (j) => j.slug }),
    title: t.string({ resolve: (j) => j.title }),
    descriptionHtml: t.exposeString("descriptionHtml"),
    descriptionText: t.exposeString("descriptionText"),
    employmentType: t.field({ type: EmploymentTypeEnum, resolve: (j) => j.employmentType }),
    workModel: t.field({ type: WorkModelEnum, resolve: (j) => j.workModel }),
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
    skills: t.relation("skills", { query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
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
  }),
});

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

async function jobFilterWhere(ctx: GraphQLContext, filter: JobFilterShape | null | undefined) {
  if (!filter) return [];
  const where: Prisma.JobWhereInput[] = [];
  if (filter.q != null) where.push({ searchTerms: { hasEvery: await searchTerms(ctx, filter.q) } });
  if (filter.workModel?.length) where.push({ workModel: { in: filter.workModel } });
  if (filter.employmentType?.length) where.push({ employmentType: { in: filter.employmentType } });
  if (filter.sector) where.push({ sector: { slug: filter.sector } });
  if (filter.skill) where.push({ skills: { some: { slug: filter.skill } } });
  // Only a public company can be named: filtering by a hidden one must not reveal its jobs.
  if (filter.company) where.push({ company: { slug: filter.company, ...publicCompanyWhere } });
  if (filter.updatedSince) where.push({ updatedAt: { gte: filter.updatedSince } });
  return where;
}

const DEFERRED_JOIN_FROM = 1_000;

const jobOrder = [{ publishedAt: "desc" }, { id: "desc" }] satisfies Prisma.JobOrderByWithRelationInput[];

const JobPage = definePage("Job", "JobPage", {
  order: [
    { field: "publishedAt", direction: "desc", kind: "instant" },
    { field: "id", direction: "desc", kind: "uuid" },
  ],
  items: async (ctx, query, page) => {
    const relationLoadStrategy = loadStrategy("Job", query);
    // Near the start (or after a cursor, which seeks) the skipped rows are few: one statement.
    if (page.skip < DEFERRED_JOIN_FROM) {
      return ctx.prisma.job.findMany({
        ...query,
        relationLoadStrategy,
        where: page.where,
        orderBy: jobOrder,
        take: page.limit,
        skip: page.skip,
      });
    }
    // A deferred join: skip rows over the list index alone (an index-only scan), then load the
    // page's rows. Selecting full rows while skipping would read every skipped row's heap tuple.
    const ids = await ctx.prisma.job.findMany({
      select: { id: true },
      where: page.where,
      orderBy: jobOrder,
      take: page.limit,
      skip: page.skip,
    });
    if (ids.length === 0) return [];
    return ctx.prisma.job.findMany({
      ...query,
      relationLoadStrategy,
      where: { id: { in: ids.map((j) => j.id) } },
      orderBy: jobOrder,
    });
  },
  total: countJobs,
  // A million jobs: the first count of a broad filter or common word can take seconds; the kept
  // counters' filters answer in a few ms and need no bound. In the list's order (Prisma orders a
  // capped count; by id it would walk the primary key instead).
  countAtMost: (ctx, where, cap) =>
    jobCounterScope(where, ctx.now) ? null : ctx.prisma.job.count({ where, take: cap, orderBy: jobOrder }),
});

builder.queryFields((t) => ({
  jobs: t.field({
    type: JobPage,
    description: "Public open jobs, newest first (published_at descending, then id descending).",
    args: { ...pageArgs, ...cursorArgs, filter: t.arg({ type: JobFilter }) },
    resolve: async (_root, args, ctx) => {
      const page = pageRequest(args);
      const countKey = JSON.stringify(args.filter ?? null);
      return {
        ...page,
        after: args.after,
        countKey,
        where: { AND: [publicJobWhere(ctx.now), ...(await jobFilterWhere(ctx, args.filter))] },
      };
    },
  }),
  job: t.prismaField({
    type: "Job",
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: (query, _root, { slug }, ctx) =>
      ctx.prisma.job.findFirst({ ...query, where: { slug, ...publicJobWhere(ctx.now) } }),
  }),
}));
