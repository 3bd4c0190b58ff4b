// Presenters: the read model's GraphQL results (codegen types) to the REST representations
// (./resources.ts types). Pure functions; the only knowledge they add is where things live.
import type {
  RestJobChangesQuery,
  RestJobFacetsQuery,
  RestJobsListQuery,
  RestSuggestQuery,
  AgentSummaryFieldsFragment,
  CompanyRefFieldsFragment,
  CompanySize,
  CompanySummaryFieldsFragment,
  JobSummaryFieldsFragment,
  RestAgentQuery,
  RestCompanyQuery,
  RestJobQuery,
  RestTalentQuery,
  SectorFieldsFragment,
  SectorRefFieldsFragment,
  SkillFieldsFragment,
  SkillRefFieldsFragment,
  TalentSummaryFieldsFragment,
} from "./gql/graphql.ts";
import type {
  AgentDetailBody,
  AgentSummaryBody,
  CompanyDetailBody,
  CompanyRefBody,
  CompanySummaryBody,
  COMPANY_SIZES,
  JobChangeBody,
  JobDetailBody,
  JobFacetsBody,
  JobSummaryBody,
  LinksBody,
  SearchReadingBody,
  SuggestionBody,
  SectorBody,
  TalentDetailBody,
  TalentSummaryBody,
  SkillBody,
} from "./resources.ts";

export type Collection = "jobs" | "talents" | "agents" | "companies" | "sectors" | "skills";

/** Absolute addresses: the API's as the client reached it, the web site's as configured. */
export interface Linker {
  /** e.g. https://api.example.com/api/v1 */
  readonly apiBase: string;
  /** e.g. https://marketplace.example.com */
  readonly webBase: string;
}

export function linksOf(linker: Linker, collection: Collection, key: string): LinksBody {
  const path = `/${collection}/${encodeURIComponent(key)}`;
  return { self: `${linker.apiBase}${path}`, html: `${linker.webBase}${path}` };
}

// GraphQL enum names are the upper case of the stored values; REST speaks the stored values.
const lower = <T extends string>(value: T) => value.toLowerCase() as Lowercase<T>;
const iso = (date: Date) => date.toISOString();

const COMPANY_SIZE: Record<CompanySize, (typeof COMPANY_SIZES)[number]> = {
  SIZE_1_10: "1-10",
  SIZE_11_50: "11-50",
  SIZE_51_200: "51-200",
  SIZE_201_500: "201-500",
  SIZE_501_1000: "501-1000",
  SIZE_1001_5000: "1001-5000",
  SIZE_5001_PLUS: "5001+",
};

function companyRef(linker: Linker, c: CompanyRefFieldsFragment): CompanyRefBody {
  return { id: c.id, slug: c.slug, name: c.name, logo_url: c.logoUrl, links: linksOf(linker, "companies", c.slug) };
}

function sectorRef(linker: Linker, s: SectorRefFieldsFragment) {
  return { id: s.id, slug: s.slug, name: s.name, links: linksOf(linker, "sectors", s.slug) };
}

function skillRef(linker: Linker, s: SkillRefFieldsFragment) {
  return { id: s.id, slug: s.slug, name: s.name, category: s.category, links: linksOf(linker, "skills", s.slug) };
}

export function jobSummary(linker: Linker, j: JobSummaryFieldsFragment): JobSummaryBody {
  return {
    id: j.id,
    slug: j.slug,
    title: j.title,
    work_model: lower(j.workModel),
    employment_type: lower(j.employmentType),
    location_city: j.location?.city ?? null,
    location_state: j.location?.state ?? null,
    location_country: j.location?.country ?? null,
    ...(j.distanceKm != null ? { distance_km: Math.round(j.distanceKm * 10) / 10 } : {}),
    salary: j.salary && { ...j.salary, period: lower(j.salary.period) },
    company: j.company && companyRef(linker, j.company),
    published_at: iso(j.publishedAt),
    links: linksOf(linker, "jobs", j.slug),
  };
}

export function jobDetail(linker: Linker, j: NonNullable<RestJobQuery["job"]>): JobDetailBody {
  return {
    ...jobSummary(linker, j),
    seniority: j.seniority && lower(j.seniority),
    description_html: j.descriptionHtml,
    description_text: j.descriptionText,
    apply_url: j.applyUrl,
    valid_through: j.validThrough && iso(j.validThrough),
    updated_at: iso(j.updatedAt),
    sector: j.sector && sectorRef(linker, j.sector),
    skills: j.skills.map((s) => skillRef(linker, s)),
  };
}

export function talentSummary(linker: Linker, t: TalentSummaryFieldsFragment): TalentSummaryBody {
  return {
    id: t.id,
    handle: t.handle,
    display_name: t.displayName,
    headline: t.headline,
    avatar_url: t.avatarUrl,
    location: t.location,
    availability: lower(t.availability),
    work_models: t.workModels.map(lower),
    years_experience: t.yearsExperience,
    links: linksOf(linker, "talents", t.handle),
  };
}

export function talentDetail(linker: Linker, t: NonNullable<RestTalentQuery["talent"]>): TalentDetailBody {
  return {
    ...talentSummary(linker, t),
    bio: t.bio,
    member_since: iso(t.memberSince),
    updated_at: iso(t.updatedAt),
    profile_links: t.links.map((l) => ({ kind: lower(l.kind), url: l.url })),
    skills: t.skills.map((s) => skillRef(linker, s)),
    sectors: t.sectors.map((s) => sectorRef(linker, s)),
  };
}

export function agentSummary(linker: Linker, a: AgentSummaryFieldsFragment): AgentSummaryBody {
  return {
    id: a.id,
    slug: a.slug,
    name: a.name,
    tagline: a.tagline,
    category: a.category,
    pricing: {
      model: lower(a.pricing.model),
      amount: a.pricing.amount,
      currency: a.pricing.currency,
      period: a.pricing.period && lower(a.pricing.period),
      unit: a.pricing.unit,
    },
    vendor: a.vendor && companyRef(linker, a.vendor),
    published_at: iso(a.publishedAt),
    links: linksOf(linker, "agents", a.slug),
  };
}

export function agentDetail(linker: Linker, a: NonNullable<RestAgentQuery["agent"]>): AgentDetailBody {
  return {
    ...agentSummary(linker, a),
    description: a.description,
    capabilities: a.capabilities,
    version: a.version,
    website_url: a.websiteUrl,
    updated_at: iso(a.updatedAt),
    skills: a.skills.map((s) => skillRef(linker, s)),
  };
}

export function companySummary(linker: Linker, c: CompanySummaryFieldsFragment): CompanySummaryBody {
  return {
    id: c.id,
    slug: c.slug,
    name: c.name,
    tagline: c.tagline,
    logo_url: c.logoUrl,
    size: c.size && COMPANY_SIZE[c.size],
    headquarters: c.headquarters,
    open_job_count: c.openJobCount,
    links: linksOf(linker, "companies", c.slug),
  };
}

export function companyDetail(linker: Linker, c: NonNullable<RestCompanyQuery["company"]>): CompanyDetailBody {
  const summary = companySummary(linker, c);
  return {
    ...summary,
    description: c.description,
    website_url: c.websiteUrl,
    founded_year: c.foundedYear,
    updated_at: iso(c.updatedAt),
    sectors: c.sectors.map((s) => sectorRef(linker, s)),
    open_jobs: c.openJobs.map((j) => jobSummary(linker, j)),
    links: { ...summary.links, open_jobs: `${linker.apiBase}/jobs?company=${encodeURIComponent(c.slug)}` },
  };
}

export function sector(linker: Linker, s: SectorFieldsFragment): SectorBody {
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    open_job_count: s.openJobCount,
    company_count: s.companyCount,
    talent_count: s.talentCount,
    links: linksOf(linker, "sectors", s.slug),
  };
}

export function skill(linker: Linker, s: SkillFieldsFragment): SkillBody {
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    category: s.category,
    open_job_count: s.openJobCount,
    talent_count: s.talentCount,
    agent_count: s.agentCount,
    links: linksOf(linker, "skills", s.slug),
  };
}

export function jobChange(linker: Linker, c: RestJobChangesQuery["jobChanges"]["items"][number]): JobChangeBody {
  const kind = lower(c.kind);
  return { kind, slug: c.slug, at: iso(c.at), links: kind === "removed" ? null : linksOf(linker, "jobs", c.slug) };
}

type Facets = RestJobFacetsQuery["jobFacets"];

/** Facet counts: only the facets asked for, salary period in REST's lowercase. */
export function jobFacets(f: Facets): JobFacetsBody {
  const values = (list: Facets["workModel"]) =>
    list?.map(({ value, name, count }) => ({ value, name: name ?? null, count }));
  const body: JobFacetsBody = { total: f.total, exact: f.exact };
  if (f.workModel) body.work_model = values(f.workModel);
  if (f.employmentType) body.employment_type = values(f.employmentType);
  if (f.sector) body.sector = values(f.sector);
  if (f.skill) body.skill = values(f.skill);
  if (f.country) body.country = values(f.country);
  if (f.salary) {
    const { currency, period, interval, ranges } = f.salary;
    body.salary = {
      currency,
      period: period.toLowerCase() as Lowercase<typeof period>,
      interval,
      ranges: ranges.map(({ from, to, count }) => ({ from, to: to ?? null, count })),
    };
  }
  return body;
}

/** How q was read (meta.search): the read model's reading, kinds in REST's lowercase. */
export function searchReading(r: NonNullable<RestJobsListQuery["jobs"]["search"]>): SearchReadingBody {
  return {
    words: r.words,
    phrases: r.phrases,
    excluded: r.excluded,
    ignored: r.ignored,
    expansions: r.expansions.map((e) => ({ word: e.word, kind: lower(e.kind), to: e.to })),
    place: r.place
      ? { city: r.place.city, state: r.place.state ?? null, country: r.place.country, location: r.place.location }
      : null,
    company: r.company ? { name: r.company.name, slugs: r.company.slugs } : null,
    synonyms_version: r.synonymsVersion,
  };
}

/** A suggestion: kinds in REST's lowercase, only the filter parameter it stands for. */
export function suggestion(s: RestSuggestQuery["suggest"][number]): SuggestionBody {
  const filter = Object.fromEntries(Object.entries(s.filter).filter(([k, v]) => k !== "__typename" && v != null));
  return { type: lower(s.kind), text: s.text, open_jobs: s.openJobs, typos: s.typos, filter };
}
