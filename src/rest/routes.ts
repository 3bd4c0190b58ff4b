// The /api/v1 routes. Each runs one typed GraphQL operation against the read model and
// presents the result; none touches the database. The table below is also what the OpenAPI
// document (./openapi.ts) is generated from, so the description lists exactly what is served.
import Router from "@koa/router";
import type { ZodType } from "zod";
import type { ContextFactory } from "../graphql/context.ts";
import { CHANGES_LIMIT_DEFAULT, CHANGES_LIMIT_MAX } from "../graphql/types/job-changes.ts";
import { LOCATION_FILTER_DESCRIPTION, NEAR_DESCRIPTION, RADIUS_KM_MAX } from "../graphql/types/location.ts";
import { SUGGEST_LIMIT_DEFAULT, SUGGEST_LIMIT_MAX, SUGGEST_Q_MAX } from "../graphql/search/suggest.ts";
import { FACET_LIMIT_DEFAULT, FACET_LIMIT_MAX, SALARY_INTERVAL_DEFAULT } from "../graphql/types/job/facets.ts";
import { HttpError } from "../errors.ts";
import { publicOrigin } from "../http/origin.ts";
import type { AppState } from "../http/state.ts";
import { runOperation } from "./execute.ts";
import {
  AgentOperation,
  AgentsListOperation,
  CompaniesListOperation,
  CompanyOperation,
  JobChangesOperation,
  JobFacetsOperation,
  JobOperation,
  JobsListOperation,
  SectorOperation,
  SectorsListOperation,
  SkillOperation,
  SkillsListOperation,
  SuggestOperation,
  TalentOperation,
  TalentsListOperation,
} from "./operations.ts";
import {
  amountParam,
  booleanParam,
  codeListParam,
  CONTROL,
  decimalParam,
  cursorParam,
  enumParam,
  enumListParam,
  formatQuery,
  instantParam,
  integer,
  limitParam,
  offsetParam,
  parseQuery,
  textParam,
  type ParamDef,
  type ParamValues,
} from "./params.ts";
import { JobPostingLd, JSON_LD, jobPosting } from "./job-posting.ts";
import * as present from "./present.ts";
import type { Linker } from "./present.ts";
import * as resources from "./resources.ts";
import { sendJson, sendList, UNTIL_EXACT, type CachePolicy, type PageResult } from "./respond.ts";

export const API_PREFIX = "/api/v1";
/** How many open jobs GET /companies/{slug} embeds; links.open_jobs pages through all of them. */
export const COMPANY_OPEN_JOBS = 50;
/** The longest slug or handle looked up: no identifier is longer. */
export const DETAIL_KEY_MAX = 200;

export interface RouteContext {
  context: ContextFactory;
  linker: Linker;
}

type Params = Record<string, ParamDef<unknown>>;

/** What every route has: where it is, how the OpenAPI document lists it, what it answers. */
interface RouteBase {
  path: string;
  tag: string;
  summary: string;
  description: string;
  item: ZodType;
}

export interface ListRoute<P extends Params = Params> extends RouteBase {
  kind: "list";
  params: P;
  load(rc: RouteContext, params: ParamValues<P>): Promise<PageResult<unknown>>;
}

export interface DetailRoute extends RouteBase {
  kind: "detail";
  /** What a 404 calls the resource. */
  noun: string;
  key: { name: string; description: string };
  load(rc: RouteContext, key: string): Promise<unknown>;
  /** Another representation of the item, answered when the client's Accept prefers its type. */
  alternate?: { type: string; schema: ZodType; present(item: never): unknown };
}

/** A feed: changes after a position (`since`), resumed from meta.next_since rather than paged by offset. */
export interface FeedRoute<P extends Params = Params> extends RouteBase {
  kind: "feed";
  params: P;
  load(rc: RouteContext, params: ParamValues<P>): Promise<{ items: unknown[]; nextSince: string; hasMore: boolean }>;
}

/** One object computed from parameters (facet counts): `{data}`, no paging. */
export interface SummaryRoute<P extends Params = Params> extends RouteBase {
  kind: "summary";
  params: P;
  load(rc: RouteContext, params: ParamValues<P>): Promise<unknown>;
}

export type Route = ListRoute | DetailRoute | FeedRoute | SummaryRoute;

const list = <P extends Params>(route: Omit<ListRoute<P>, "kind">) => ({ kind: "list", ...route }) as ListRoute;
const detail = (route: Omit<DetailRoute, "kind">): DetailRoute => ({ kind: "detail", ...route });
const feed = <P extends Params>(route: Omit<FeedRoute<P>, "kind">) => ({ kind: "feed", ...route }) as FeedRoute;
const summary = <P extends Params>(route: Omit<SummaryRoute<P>, "kind">) =>
  ({ kind: "summary", ...route }) as SummaryRoute;

const paging = { limit: limitParam, offset: offsetParam };
const slugKey = { name: "slug", description: "URL-safe identifier." };

const cursorPaging = { ...paging, cursor: cursorParam };

/** A page of the read model presented: total from the query, limit as applied, offset as served. */
function pageOf<T, U>(
  result: { total: number; totalExact: boolean; items: T[]; offset?: number; nextCursor?: string | null },
  p: { limit: number; offset: number },
  toItem: (item: T) => U,
): PageResult<U> {
  return {
    total: result.total,
    totalExact: result.totalExact,
    limit: p.limit,
    // A page reached by cursor stands at the offset the cursor carries.
    offset: result.offset ?? p.offset,
    nextCursor: result.nextCursor ?? null,
    items: result.items.map(toItem),
  };
}

/** The REST spelling of each job order, and the GraphQL one it stands for. */
const JOB_SORT_OF = {
  "-published_at": "PUBLISHED_AT_DESC",
  published_at: "PUBLISHED_AT_ASC",
  "-salary": "SALARY_DESC",
  salary: "SALARY_ASC",
  relevance: "RELEVANCE",
  distance: "DISTANCE",
} as const;
const JOB_SORTS = Object.keys(JOB_SORT_OF) as (keyof typeof JOB_SORT_OF)[];

/** The REST spelling of each talent order, and the GraphQL one it stands for. */
const TALENT_SORT_OF = { handle: "HANDLE", distance: "DISTANCE" } as const;
const TALENT_SORTS = Object.keys(TALENT_SORT_OF) as (keyof typeof TALENT_SORT_OF)[];

const upper = <T extends string>(values: T[] | undefined) => values?.map((v) => v.toUpperCase() as Uppercase<T>);

/** A place and a radius around it: /jobs, /jobs/facets and /talents. */
const nearParams = {
  near: textParam("near", NEAR_DESCRIPTION.replace("radiusKm", "radius_km"), 100),
  radius_km: decimalParam("radius_km", RADIUS_KM_MAX, "Kilometres from near (default 50). Needs near."),
};

/** The job list's filter parameters: /jobs and /jobs/facets take the same. */
const jobFilterParams = {
  q: textParam(
    "q",
    'Search, read as people write (docs: "How search reads your words"): every word must occur in the title, the names of the job\'s skills or the description; English stemming, any case, accents optional; hyphenated and joined forms alike (data-engineer, frontend, node.js); the last word may be unfinished (pyth); a word no public job holds is corrected within 1 typo (4+ letters) or 2 (8+); curated synonyms (ML, SRE, k8s). "quoted phrase", -word to leave out, OR between two terms. A known place or a public company named in q becomes that filter. meta.search says how q was read. A malformed q is a 400 invalid_q. At most 200 characters.',
  ),
  work_model: enumListParam("work_model", resources.WORK_MODELS, "Work model."),
  employment_type: enumListParam("employment_type", resources.EMPLOYMENT_TYPES, "Employment type."),
  sector: textParam("sector", "Slug of a sector."),
  skill: textParam("skill", "Slug of a skill the job asks for."),
  company: textParam("company", "Slug of a company with a public page."),
  updated_since: instantParam("updated_since", "Only jobs updated at or after this instant."),
  location: textParam("location", LOCATION_FILTER_DESCRIPTION),
  ...nearParams,
  country: codeListParam(
    "country",
    "ISO 3166-1 alpha-2 country codes (case-insensitive): jobs located in any of them.",
  ),
  remote: booleanParam(
    "remote",
    "true: remote jobs only (the same as work_model=remote); false: hybrid and onsite jobs only.",
  ),
  salary_min: amountParam(
    "salary_min",
    "Jobs whose published salary range reaches this amount: its maximum (or its minimum, when it has no maximum) is at least this, in salary_currency per salary_period. Needs salary_currency; jobs without a salary never match.",
  ),
  salary_currency: textParam(
    "salary_currency",
    "ISO 4217 code (e.g. EUR, case-insensitive): jobs paying in this currency. Amounts are never converted between currencies.",
    3,
  ),
  salary_period: enumParam(
    "salary_period",
    resources.SALARY_PERIODS,
    "Jobs paying per this period. Default year when salary_min is given or the order is by salary; amounts are never converted between periods.",
  ),
};

/** The GraphQL JobFilter of the filter parameters. */
function jobFilterOf(p: ParamValues<typeof jobFilterParams>) {
  return {
    q: p.q,
    workModel: upper(p.work_model),
    employmentType: upper(p.employment_type),
    sector: p.sector,
    skill: p.skill,
    company: p.company,
    updatedSince: p.updated_since,
    location: p.location,
    country: p.country,
    near: p.near,
    radiusKm: p.radius_km,
    remote: p.remote,
    salaryMin: p.salary_min,
    salaryCurrency: p.salary_currency,
    salaryPeriod: p.salary_period && (p.salary_period.toUpperCase() as Uppercase<typeof p.salary_period>),
  };
}

/** The REST spelling of each facet, and the GraphQL one it stands for. */
const FACET_OF = {
  work_model: "WORK_MODEL",
  employment_type: "EMPLOYMENT_TYPE",
  sector: "SECTOR",
  skill: "SKILL",
  country: "COUNTRY",
  salary: "SALARY",
} as const;
const FACETS = Object.keys(FACET_OF) as (keyof typeof FACET_OF)[];

const SUGGESTION_TYPES = ["title", "skill", "company", "place"] as const;

export const routes: Route[] = [
  list({
    path: "/jobs",
    tag: "Jobs",
    summary: "List published open jobs",
    description:
      "Published open jobs: with q, best match first (sort=relevance); without, newest first (published_at descending, then id descending); unless sort says otherwise. Filters combine with AND.",
    params: {
      ...cursorPaging,
      ...jobFilterParams,
      sort: enumParam(
        "sort",
        JOB_SORTS,
        "The order: -published_at (newest first), published_at, -salary (highest first: the top of the range), salary, relevance (needs q: jobs whose title holds every word first, then those whose title and skills hold them, then the rest; newest first within each), distance (needs near: nearest first). Each ends with the id, so pages are stable and meta.next continues by cursor. An order by salary needs salary_currency and lists only jobs with a salary in it. Default: relevance when q is given, else -published_at.",
      ),
    },
    item: resources.JobSummary,
    async load(rc, p) {
      const { jobs } = await runOperation(rc.context, JobsListOperation, {
        limit: p.limit,
        offset: p.offset,
        after: p.cursor,
        sort: p.sort && JOB_SORT_OF[p.sort],
        filter: jobFilterOf(p),
      });
      const page = pageOf(jobs, p, (j) => present.jobSummary(rc.linker, j));
      return jobs.search ? { ...page, search: present.searchReading(jobs.search) } : page;
    },
  }),
  // Before /jobs/{slug}, which would otherwise take "facets" for a slug.
  summary({
    path: "/jobs/facets",
    tag: "Jobs",
    summary: "Count the published open jobs by facet",
    description:
      "For the filter of GET /jobs (the same parameters), how many public jobs each value of a facet would list: work_model, employment_type, sector, skill, country, and salary as a histogram of ranges in salary_currency per salary_period (default year). Multi-select: a facet's counts leave out the facet's own parameter (the work_model counts ignore work_model and remote; the salary histogram ignores salary_min), every other parameter holds, so each count is the meta.total GET /jobs answers with that value in place of the facet's own. total is GET /jobs's total under the whole filter. Values are the most frequent first, at most limit per facet; jobs without a location, sector or salary are not counted in those facets. Counted and remembered like list totals (recounted in the background after 30 s); the first request of a filter whose count takes longer than 400 ms (a common word among a million jobs) is answered from a sample of at most 1,000 matching jobs, with exact: false (every count a lower bound), while the count goes on.",
    params: {
      ...jobFilterParams,
      facets: enumListParam(
        "facets",
        FACETS,
        "The facets to count (default all but salary; salary needs salary_currency).",
      ),
      limit: integer("limit", 1, FACET_LIMIT_MAX, FACET_LIMIT_DEFAULT, "Values per facet, the most frequent first."),
      salary_interval: integer(
        "salary_interval",
        1,
        10_000_000,
        SALARY_INTERVAL_DEFAULT,
        "Width of the salary histogram's ranges, in whole units of salary_currency.",
      ),
    },
    item: resources.JobFacets,
    async load(rc, p) {
      const facets = p.facets ?? FACETS.filter((f) => f !== "salary");
      const { jobFacets } = await runOperation(rc.context, JobFacetsOperation, {
        filter: jobFilterOf(p),
        facets: facets.map((f) => FACET_OF[f]),
        facetLimit: p.limit,
        salaryInterval: p.salary_interval,
      });
      return present.jobFacets(jobFacets);
    },
  }),
  summary({
    path: "/suggest",
    tag: "Search",
    summary: "Complete what is being typed",
    description:
      "Completions of q among job titles, skills, companies with a public page and known places that lead to open jobs, each with the GET /jobs filter it stands for: for a search box as a person types, or for an agent to find valid skill slugs, company slugs and places. q's words begin the name's words in order (the last may be unfinished); a word of 4+ letters may have one typo, of 8+ two. Exact matches first, then by open jobs, then by name. Names and counts are at most a minute old.",
    params: {
      q: textParam("q", "What is being typed (a letter or digit at least); without q, no suggestions.", SUGGEST_Q_MAX),
      types: enumListParam("types", SUGGESTION_TYPES, "The kinds of names to suggest (default all)."),
      limit: integer("limit", 1, SUGGEST_LIMIT_MAX, SUGGEST_LIMIT_DEFAULT, "Suggestions at most."),
    },
    item: resources.Suggestions,
    async load(rc, p) {
      // Nothing typed yet (an empty search box): nothing to complete.
      if (p.q === undefined) return { suggestions: [] };
      const { suggest } = await runOperation(rc.context, SuggestOperation, {
        q: p.q,
        kinds: upper(p.types),
        limit: p.limit,
      });
      return { suggestions: suggest.map(present.suggestion) };
    },
  }),
  // Before /jobs/{slug}, which would otherwise take "changes" for a slug.
  feed({
    path: "/jobs/changes",
    tag: "Jobs",
    summary: "Follow changes of the public jobs",
    description:
      "What entered the public job set (published), changed in it (updated) or left it (removed: filled, closed, unpublished, expired or deleted), in the order the changes were committed, after since (without it: from the oldest change kept). Keep meta.next_since and call again with it to read on; a change is never skipped, even one committed while you read. Changes are kept 30 days; an older since is a 410 since_expired (sync again from GET /jobs). A job going live or expiring by the clock appears within a minute. A removal gives the slug and the time, nothing else.",
    params: {
      since: textParam("since", "meta.next_since of an earlier call; opaque.", 100),
      limit: integer("limit", 1, CHANGES_LIMIT_MAX, CHANGES_LIMIT_DEFAULT, "Changes per call."),
    },
    item: resources.JobChange,
    load: async (rc, p) => {
      const { jobChanges } = await runOperation(rc.context, JobChangesOperation, { since: p.since, limit: p.limit });
      return {
        items: jobChanges.items.map((c) => present.jobChange(rc.linker, c)),
        nextSince: jobChanges.nextSince,
        hasMore: jobChanges.hasMore,
      };
    },
  }),
  detail({
    path: "/jobs/{slug}",
    noun: "job",
    tag: "Jobs",
    summary: "Get a job",
    description:
      "A published open job. A job that is not public (draft, closed, filled, expired) is a 404. With Accept: application/ld+json, the job as schema.org JobPosting (JSON-LD) for search engines' job search.",
    key: slugKey,
    item: resources.JobDetail,
    load: async (rc, slug) => {
      const { job } = await runOperation(rc.context, JobOperation, { slug });
      return job && present.jobDetail(rc.linker, job);
    },
    alternate: { type: JSON_LD, schema: JobPostingLd, present: jobPosting },
  }),
  list({
    path: "/talents",
    tag: "Talents",
    summary: "List talents with a public profile",
    description: "Talents whose profile is public and whose account is active, by handle.",
    params: {
      ...cursorPaging,
      skill: textParam("skill", "Slug of a skill the talent has."),
      sector: textParam("sector", "Slug of a sector the talent works in."),
      location: textParam("location", LOCATION_FILTER_DESCRIPTION),
      ...nearParams,
      sort: enumParam(
        "sort",
        TALENT_SORTS,
        "The order: handle, or distance (needs near: nearest first, then the id). Each continues by cursor.",
        "handle",
      ),
    },
    item: resources.TalentSummary,
    async load(rc, p) {
      const { talents } = await runOperation(rc.context, TalentsListOperation, {
        limit: p.limit,
        offset: p.offset,
        after: p.cursor,
        filter: { skill: p.skill, sector: p.sector, location: p.location, near: p.near, radiusKm: p.radius_km },
        sort: p.sort && TALENT_SORT_OF[p.sort],
      });
      return pageOf(talents, p, (t) => present.talentSummary(rc.linker, t));
    },
  }),
  detail({
    path: "/talents/{handle}",
    noun: "talent",
    tag: "Talents",
    summary: "Get a talent",
    description: "A talent with a public profile and an active account; anything else is a 404.",
    key: { name: "handle", description: "The talent's handle without the leading @ (case-insensitive)." },
    item: resources.TalentDetail,
    load: async (rc, handle) => {
      const { talent } = await runOperation(rc.context, TalentOperation, { handle });
      return talent && present.talentDetail(rc.linker, talent);
    },
  }),
  list({
    path: "/agents",
    tag: "Agents",
    summary: "List published AI agents",
    description: "Published agents, newest first (published_at descending, then id descending).",
    params: {
      ...cursorPaging,
      category: textParam("category", "Only agents of this category, e.g. recruiting.", 100),
    },
    item: resources.AgentSummary,
    async load(rc, p) {
      const { agents } = await runOperation(rc.context, AgentsListOperation, {
        limit: p.limit,
        offset: p.offset,
        after: p.cursor,
        filter: { category: p.category?.toLowerCase() },
      });
      return pageOf(agents, p, (a) => present.agentSummary(rc.linker, a));
    },
  }),
  detail({
    path: "/agents/{slug}",
    noun: "agent",
    tag: "Agents",
    summary: "Get an AI agent",
    description:
      "A published agent, or an unlisted one (reachable by its address, never listed). Draft and retired agents are a 404.",
    key: slugKey,
    item: resources.AgentDetail,
    load: async (rc, slug) => {
      const { agent } = await runOperation(rc.context, AgentOperation, { slug });
      return agent && present.agentDetail(rc.linker, agent);
    },
  }),
  list({
    path: "/companies",
    tag: "Companies",
    summary: "List companies with a public page",
    description: "Companies with a branded public page, by name then slug.",
    params: paging,
    item: resources.CompanySummary,
    async load(rc, p) {
      const { companies } = await runOperation(rc.context, CompaniesListOperation, {
        limit: p.limit,
        offset: p.offset,
      });
      return pageOf(companies, p, (c) => present.companySummary(rc.linker, c));
    },
  }),
  detail({
    path: "/companies/{slug}",
    noun: "company",
    tag: "Companies",
    summary: "Get a company with its open jobs",
    description: `A company with a public page, with its ${COMPANY_OPEN_JOBS} newest open jobs; links.open_jobs pages through all of them.`,
    key: slugKey,
    item: resources.CompanyDetail,
    load: async (rc, slug) => {
      const { company } = await runOperation(rc.context, CompanyOperation, { slug, openJobsLimit: COMPANY_OPEN_JOBS });
      return company && present.companyDetail(rc.linker, company);
    },
  }),
  list({
    path: "/sectors",
    tag: "Taxonomy",
    summary: "List every sector",
    description:
      "Every sector, by name then slug, in one page: the list is short, so it takes no parameters and meta.limit equals meta.total.",
    params: {},
    item: resources.Sector,
    async load(rc) {
      const { sectors } = await runOperation(rc.context, SectorsListOperation, {});
      return {
        items: sectors.map((s) => present.sector(rc.linker, s)),
        total: sectors.length,
        totalExact: true,
        limit: sectors.length,
        offset: 0,
      };
    },
  }),
  detail({
    path: "/sectors/{slug}",
    noun: "sector",
    tag: "Taxonomy",
    summary: "Get a sector",
    description: "A sector with its public counts (an addition to the documented endpoints: every item's links.self).",
    key: slugKey,
    item: resources.Sector,
    load: async (rc, slug) => {
      const { sector } = await runOperation(rc.context, SectorOperation, { slug });
      return sector && present.sector(rc.linker, sector);
    },
  }),
  list({
    path: "/skills",
    tag: "Taxonomy",
    summary: "List skills",
    description: "Skills by name then slug, optionally of one category.",
    params: {
      ...paging,
      category: textParam("category", "Only skills of this category (case-insensitive), e.g. llm, mlops, cv.", 100),
    },
    item: resources.Skill,
    async load(rc, p) {
      const { skills } = await runOperation(rc.context, SkillsListOperation, {
        limit: p.limit,
        offset: p.offset,
        category: p.category,
      });
      return pageOf(skills, p, (s) => present.skill(rc.linker, s));
    },
  }),
  detail({
    path: "/skills/{slug}",
    noun: "skill",
    tag: "Taxonomy",
    summary: "Get a skill",
    description: "A skill with its public counts (an addition to the documented endpoints: every item's links.self).",
    key: slugKey,
    item: resources.Skill,
    load: async (rc, slug) => {
      const { skill } = await runOperation(rc.context, SkillOperation, { slug });
      return skill && present.skill(rc.linker, skill);
    },
  }),
];

export interface RestOptions {
  /** Makes each operation's GraphQL context: REST reaches the database only through the schema. */
  context: ContextFactory;
  /** Where links.html points. */
  webBaseUrl: string;
  /** The API's public origin, e.g. https://api.example.com; derived from each request when null. */
  publicBaseUrl: string | null;
  cache: CachePolicy;
}

const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

export function createRestRouter(options: RestOptions): Router<AppState> {
  const router = new Router<AppState>({ prefix: API_PREFIX });
  for (const route of routes) {
    router.get(koaPath(route.path), async (ctx) => {
      const apiBase = `${publicOrigin(ctx, options.publicBaseUrl)}${API_PREFIX}`;
      const rc: RouteContext = { context: options.context, linker: { apiBase, webBase: options.webBaseUrl } };
      const search = new URLSearchParams(ctx.querystring);
      if (route.kind === "feed") {
        const params = parseQuery(route.params, search, `${API_PREFIX}${route.path}`);
        const changes = await route.load(rc, params);
        const url = (since: string | undefined) =>
          `${apiBase}${route.path}${formatQuery(route.params, { ...params, since })}`;
        const meta = {
          since: (params as { since?: string }).since ?? null,
          next_since: changes.nextSince,
          has_more: changes.hasMore,
          self: url((params as { since?: string }).since),
          next: url(changes.nextSince),
        };
        // A feed's next call may answer more at any moment: revalidate every time (ETag, 304).
        sendJson(ctx, { data: changes.items, meta }, { maxAgeSeconds: 0 });
        return;
      }
      if (route.kind === "summary") {
        const params = parseQuery(route.params, search, `${API_PREFIX}${route.path}`);
        const data = await route.load(rc, params);
        sendJson(ctx, { data }, (data as { exact?: boolean }).exact === false ? UNTIL_EXACT : options.cache);
        return;
      }
      if (route.kind === "list") {
        const params = parseQuery(route.params, search, `${API_PREFIX}${route.path}`);
        const page = await route.load(rc, params);
        const pageUrl = (offset: number, cursor: string | undefined) =>
          `${apiBase}${route.path}${formatQuery(route.params, { ...params, offset, limit: page.limit, cursor })}`;
        const given = (params as { cursor?: string }).cursor;
        sendList(ctx, page, pageUrl, given, options.cache);
        return;
      }
      parseQuery({}, search, `${API_PREFIX}${route.path}`);
      const key = ctx.params[route.key.name] ?? "";
      const item = await loadDetail(route, rc, key);
      if (route.alternate) ctx.vary("Accept");
      if (!item) throw notFound(route, key);
      const alternate = route.alternate;
      // Only an Accept naming the alternate can prefer it (a wildcard gives the first, JSON): the
      // full negotiation runs only then.
      const named = alternate && ctx.get("Accept").toLowerCase().includes(alternate.type);
      if (named && ctx.accepts("application/json", alternate.type) === alternate.type) {
        sendJson(ctx, alternate.present(item as never), options.cache, alternate.type);
        return;
      }
      sendJson(ctx, { data: item }, options.cache);
    });
  }
  return router;
}

/** A detail route's item, or null when none is public; no identifier is that long or holds control characters. */
export async function loadDetail(route: DetailRoute, rc: RouteContext, key: string): Promise<unknown> {
  return key.length <= DETAIL_KEY_MAX && !CONTROL.test(key) ? await route.load(rc, key) : null;
}

/** The 404 of a detail route (its message is also MCP's answer for a row that is not public). */
export function notFound(route: DetailRoute, key: string): HttpError {
  const shown = key.length > 100 ? `${key.slice(0, 100)}…` : key;
  return new HttpError(404, "not_found", `No public ${route.noun} with ${route.key.name} "${shown}"`);
}
