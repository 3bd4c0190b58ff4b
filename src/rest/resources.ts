// The representations of the REST API, as zod schemas. They are the single description of what
// /api/v1 returns: the presenters are typed by them (z.infer), and the OpenAPI document's
// components are generated from them (z.toJSONSchema), so the two cannot drift apart.
import { z } from "zod";

export const WORK_MODELS = ["remote", "hybrid", "onsite"] as const;
export const EMPLOYMENT_TYPES = ["full_time", "part_time", "contract", "temporary", "internship", "freelance"] as const;
const SENIORITIES = ["intern", "junior", "mid", "senior", "lead", "principal", "executive"] as const;
export const SALARY_PERIODS = ["hour", "day", "week", "month", "year"] as const;
const AVAILABILITIES = ["actively_looking", "open_to_offers", "not_looking"] as const;
const PROFILE_LINK_KINDS = ["website", "github", "linkedin", "portfolio", "other"] as const;
const PRICING_MODELS = ["free", "one_time", "subscription", "usage_based"] as const;
const BILLING_PERIODS = ["month", "year"] as const;
export const COMPANY_SIZES = ["1-10", "11-50", "51-200", "201-500", "501-1000", "1001-5000", "5001+"] as const;

const dateTime = () => z.iso.datetime({ offset: true }).meta({ description: "RFC 3339 date-time, UTC." });

export const Links = z
  .object({
    self: z.url().meta({ description: "API address of the resource." }),
    html: z.url().meta({ description: "Address of the resource's public web page." }),
  })
  .meta({ id: "Links", description: "Where a resource lives, in this API and on the web site." });

export const Location = z
  .object({
    city: z.string().nullable(),
    state: z.string().nullable(),
    country: z.string().length(2).nullable().meta({ description: "ISO 3166-1 alpha-2 code." }),
  })
  .meta({ id: "Location", description: "A place; null as a whole when nothing is known." });

export const CompanyRef = z
  .object({ id: z.uuid(), slug: z.string(), name: z.string(), logo_url: z.url().nullable(), links: Links })
  .meta({ id: "CompanyRef", description: "A company, as nested in jobs and agents." });

export const SectorRef = z
  .object({ id: z.uuid(), slug: z.string(), name: z.string(), links: Links })
  .meta({ id: "SectorRef", description: "A sector, as nested in other resources." });

export const SkillRef = z
  .object({ id: z.uuid(), slug: z.string(), name: z.string(), category: z.string(), links: Links })
  .meta({ id: "SkillRef", description: "A skill, as nested in other resources." });

export const Salary = z
  .object({
    min: z.int().nullable().meta({ description: "Lower bound in whole currency units; null when open." }),
    max: z.int().nullable().meta({ description: "Upper bound in whole currency units; null when open." }),
    currency: z.string().length(3).meta({ description: "ISO 4217 code." }),
    period: z.enum(SALARY_PERIODS).meta({ description: "What one amount pays for." }),
  })
  .meta({ id: "Salary", description: "A published salary range; at least one of min and max is set." });

const jobSummaryShape = {
  id: z.uuid(),
  slug: z.string(),
  title: z.string(),
  work_model: z.enum(WORK_MODELS),
  employment_type: z.enum(EMPLOYMENT_TYPES),
  location_city: z.string().nullable(),
  location_state: z.string().nullable(),
  location_country: z.string().length(2).nullable().meta({ description: "ISO 3166-1 alpha-2 code." }),
  distance_km: z.number().min(0).optional().meta({
    description:
      "Kilometres from near (great-circle distance, rounded to 0.1 km); present when the list is filtered by near or sorted by distance.",
  }),
  salary: Salary.nullable().meta({ description: "null when the employer did not publish a salary." }),
  company: CompanyRef.nullable().meta({
    description: "null for a confidential posting or a company without a public page.",
  }),
  published_at: dateTime(),
  links: Links,
};

export const JobSummary = z.object(jobSummaryShape).meta({ id: "JobSummary", description: "A job, in lists." });

export const JobDetail = z
  .object({
    ...jobSummaryShape,
    seniority: z.enum(SENIORITIES).nullable(),
    description_html: z.string().meta({ description: "Sanitised HTML, as on the web page." }),
    description_text: z.string(),
    apply_url: z.url().nullable(),
    valid_through: dateTime().nullable().meta({ description: "When the posting expires; null when open-ended." }),
    updated_at: dateTime(),
    sector: SectorRef.nullable(),
    skills: z.array(SkillRef),
  })
  .meta({ id: "Job", description: "A published, open job." });

const talentSummaryShape = {
  id: z.uuid(),
  handle: z.string().meta({ description: "Without the leading @." }),
  display_name: z.string(),
  headline: z.string().nullable(),
  avatar_url: z.url().nullable(),
  location: Location.nullable(),
  availability: z.enum(AVAILABILITIES),
  work_models: z.array(z.enum(WORK_MODELS)).meta({ description: "Work models the talent accepts." }),
  years_experience: z.int().nullable(),
  links: Links,
};

export const TalentSummary = z
  .object(talentSummaryShape)
  .meta({ id: "TalentSummary", description: "A talent, in lists." });

export const TalentDetail = z
  .object({
    ...talentSummaryShape,
    bio: z.string().nullable(),
    member_since: dateTime(),
    updated_at: dateTime(),
    profile_links: z
      .array(z.object({ kind: z.enum(PROFILE_LINK_KINDS), url: z.url() }))
      .meta({ description: "Links the talent publishes on the profile, in their order." }),
    skills: z.array(SkillRef),
    sectors: z.array(SectorRef),
  })
  .meta({ id: "Talent", description: "A candidate with a public profile." });

export const Pricing = z
  .object({
    model: z.enum(PRICING_MODELS),
    amount: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .nullable()
      .meta({ description: "Decimal string, exact; null when free." }),
    currency: z.string().length(3).nullable().meta({ description: "ISO 4217 code." }),
    period: z.enum(BILLING_PERIODS).nullable().meta({ description: "Billing period of a subscription." }),
    unit: z.string().nullable().meta({ description: "The unit of a usage price, e.g. 1k requests." }),
  })
  .meta({ id: "Pricing", description: "How an agent is sold." });

const agentSummaryShape = {
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  tagline: z.string().nullable(),
  category: z.string(),
  pricing: Pricing,
  vendor: CompanyRef.nullable().meta({ description: "The selling company; null when it has no public page." }),
  published_at: dateTime(),
  links: Links,
};

export const AgentSummary = z
  .object(agentSummaryShape)
  .meta({ id: "AgentSummary", description: "An agent, in lists." });

export const AgentDetail = z
  .object({
    ...agentSummaryShape,
    description: z.string(),
    capabilities: z.array(z.string()),
    version: z.string(),
    website_url: z.url().nullable(),
    updated_at: dateTime(),
    skills: z.array(SkillRef),
  })
  .meta({ id: "Agent", description: "An AI agent sold as a product." });

const companySummaryShape = {
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  tagline: z.string().nullable(),
  logo_url: z.url().nullable(),
  size: z.enum(COMPANY_SIZES).nullable().meta({ description: "Head-count range." }),
  headquarters: Location.nullable(),
  open_job_count: z.int().min(0),
  links: Links,
};

export const CompanySummary = z
  .object(companySummaryShape)
  .meta({ id: "CompanySummary", description: "A company, in lists." });

export const CompanyDetail = z
  .object({
    ...companySummaryShape,
    description: z.string().nullable(),
    website_url: z.url().nullable(),
    founded_year: z.int().nullable(),
    updated_at: dateTime(),
    sectors: z.array(SectorRef),
    open_jobs: z.array(JobSummary).meta({
      description:
        "The company's newest open jobs, at most 50; open_job_count says how many there are and links.open_jobs lists them all.",
    }),
    links: Links.extend({
      open_jobs: z.url().meta({ description: "GET /jobs filtered to this company: every open job, paged." }),
    }),
  })
  .meta({ id: "Company", description: "A company with a branded public page, with its open jobs." });

export const Sector = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    open_job_count: z.int().min(0),
    company_count: z.int().min(0),
    talent_count: z.int().min(0),
    links: Links,
  })
  .meta({ id: "Sector", description: "An industry sector, with public counts." });

export const Skill = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    category: z.string().meta({ description: "e.g. llm, mlops, cv." }),
    open_job_count: z.int().min(0),
    talent_count: z.int().min(0),
    agent_count: z.int().min(0),
    links: Links,
  })
  .meta({ id: "Skill", description: "A skill, with public counts." });

const FacetValue = z
  .object({
    value: z.string().meta({
      description:
        "As GET /jobs takes it: a work model or employment type, a sector or skill slug, an ISO 3166-1 alpha-2 country code.",
    }),
    name: z.string().nullable().meta({
      description:
        "A label to show: a sector's or skill's name, a work model's or employment type's (Full-time), a country's English name (Germany); null for a country code without one.",
    }),
    count: z
      .int()
      .min(0)
      .meta({ description: "GET /jobs's total with this value in place of the facet's own parameter." }),
  })
  .meta({ id: "FacetValue", description: "One value of a facet and the public jobs it would list." });

const facetValues = (description: string) =>
  z
    .array(FacetValue)
    .optional()
    .meta({ description: `${description} Present when asked for in facets.` });

export const JobFacets = z
  .object({
    total: z
      .int()
      .min(0)
      .meta({ description: "GET /jobs's meta.total under the whole filter; a lower bound when exact is false." }),
    exact: z.boolean().meta({
      description:
        "false only while the first count of a new filter is still running (a common word among a million jobs takes seconds): total and every count are then of a sample of the matching jobs (at most 1,000, any the server finds first), so each is a lower bound, and values may be missing. The count goes on; a later request gets the exact counts.",
    }),
    work_model: facetValues("By work model, leaving out work_model and remote."),
    employment_type: facetValues("By employment type, leaving out employment_type."),
    sector: facetValues("By sector, leaving out sector."),
    skill: facetValues("By skill, leaving out skill (a job counts once per skill it asks for)."),
    country: facetValues("By country, leaving out country (jobs without a location are not counted here)."),
    salary: z
      .object({
        currency: z.string().length(3).meta({ description: "ISO 4217 code: salary_currency." }),
        period: z.enum(SALARY_PERIODS).meta({ description: "salary_period (default year)." }),
        interval: z.int().min(1).meta({ description: "The width of each range: salary_interval." }),
        ranges: z
          .array(
            z.object({
              from: z.int().meta({ description: "The top of a job's salary range is at least this…" }),
              to: z.int().nullable().meta({ description: "…and below this; null for the last of 100 ranges." }),
              count: z.int().min(0),
            }),
          )
          .meta({ description: "Ranges with at least one job, lowest first." }),
      })
      .optional()
      .meta({ description: "By salary (the top of the range), leaving out salary_min. Present when asked for." }),
  })
  .meta({ id: "JobFacets", description: "Facet counts of the public jobs matching a filter (multi-select)." });

export const SearchReading = z
  .object({
    words: z.array(z.string()).meta({ description: "The words (or synonym expressions) searched for." }),
    phrases: z
      .array(z.string())
      .meta({ description: 'Quoted phrases ("data engineer"): the words next to each other, in order.' }),
    excluded: z.array(z.string()).meta({ description: "-words and -phrases: no job holding one is listed." }),
    ignored: z.array(z.string()).meta({ description: "Common words (the, and) that find nothing by themselves." }),
    expansions: z
      .array(
        z.object({
          word: z.string().meta({ description: "The word or words as typed." }),
          kind: z.enum(["joined", "synonym", "completion", "correction"]).meta({
            description:
              "joined: its hyphenated or joined forms (front-end for frontend); synonym: the curated synonyms (ML for machine learning); completion: the last word was unfinished, the catalog's words it begins; correction: no public job holds the word, the nearest words within its typos.",
          }),
          to: z.array(z.string()).meta({
            description:
              "What it was also taken for: words as the catalog stores them (English stems), or the synonyms.",
          }),
        }),
      )
      .meta({ description: "Each word also taken for others." }),
    place: z
      .object({
        city: z.string(),
        state: z.string().nullable(),
        country: z.string().meta({ description: "ISO 3166-1 alpha-2." }),
        location: z.string().meta({ description: "The location filter it stands for." }),
      })
      .nullable()
      .meta({
        description: "A known place named in q, taken as the location filter (not when location or near is given).",
      }),
    company: z
      .object({ name: z.string(), slugs: z.array(z.string()) })
      .nullable()
      .meta({
        description:
          "A public company named in q, taken as the company filter: every public company of that name (not when company is given).",
      }),
    synonyms_version: z.int().meta({ description: "The version of the curated synonym list that applied." }),
  })
  .meta({ id: "SearchReading", description: "How q was read. Present on /jobs when q is given." });

export const Suggestion = z
  .object({
    type: z.enum(["title", "skill", "company", "place"]),
    text: z.string().meta({ description: "The name as the catalog spells it." }),
    open_jobs: z.int().min(0).meta({
      description:
        "Public open jobs it leads to: exact for skills, companies and places; for a title, how many of the newest 20,000 open jobs hold it.",
    }),
    typos: z.int().min(0).meta({ description: "Typos between what was typed and the name (0: it begins the name)." }),
    filter: z
      .object({
        q: z.string().optional(),
        skill: z.string().optional(),
        company: z.string().optional(),
        location: z.string().optional(),
      })
      .meta({ description: "The parameters of GET /jobs it stands for (one of them)." }),
  })
  .meta({ id: "Suggestion", description: "A completion of what is being typed, leading to open jobs." });

export const Suggestions = z
  .object({
    suggestions: z.array(Suggestion).meta({ description: "Exact matches first, then by open jobs, then by name." }),
  })
  .meta({ id: "Suggestions", description: "Completions of q." });

export const Meta = z
  .object({
    total: z.int().min(0).meta({
      description: "Rows matching the request, ignoring limit and offset; a lower bound when total_exact is false.",
    }),
    total_exact: z.boolean().meta({
      description:
        "false only for the first request of a filter whose count takes longer than a request waits (a common search word among a million jobs): total is then a lower bound (1,000, or the rows up to this page and one more when it is full), and next is given whenever the page is full. The count goes on, and the next requests get the exact total.",
    }),
    limit: z.int().min(0).meta({ description: "Page size applied." }),
    offset: z.int().min(0).meta({ description: "Rows before this page (exact also for a page reached by cursor)." }),
    self: z.url().meta({ description: "Address of this page, every parameter spelled out." }),
    next: z.url().nullable().meta({
      description:
        "Address of the next page; null on the last page. On /jobs, /talents and /agents it carries a cursor beside the offset it stands for, so following next seeks on the list order at constant cost however deep.",
    }),
    search: SearchReading.optional(),
  })
  .meta({ id: "Meta", description: "Paging information of a list." });

export const JobChange = z
  .object({
    kind: z.enum(["published", "updated", "removed"]).meta({
      description:
        "published: the job entered the public set (new, published, reopened, or gone live at published_at); updated: it changed while public; removed: it left the public set (filled, closed, unpublished, expired or deleted).",
    }),
    slug: z.string(),
    at: dateTime().meta({ description: "When the change took effect." }),
    links: Links.nullable().meta({ description: "Where the job is now; null for a removal." }),
  })
  .meta({ id: "JobChange", description: "One change of the public job set; a removal says nothing private." });

export const ChangesMeta = z
  .object({
    since: z.string().nullable().meta({ description: "The position this page starts after, as given." }),
    next_since: z.string().meta({ description: "Pass as since to read on (also after a call that found nothing)." }),
    has_more: z.boolean().meta({ description: "true when more changes are ready now: follow next at once." }),
    self: z.url(),
    next: z.url().meta({ description: "This route with since=next_since: poll it to read on." }),
  })
  .meta({ id: "ChangesMeta", description: "Where a page of the change feed stands." });

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().meta({ description: "Stable, machine-readable; see the list in the API description." }),
      message: z.string().meta({ description: "For people; may change." }),
      request_id: z.string().optional().meta({ description: "Quote it when reporting a problem." }),
    }),
  })
  .meta({ id: "Error", description: "The body of every error response." });

export type LinksBody = z.infer<typeof Links>;
export type CompanyRefBody = z.infer<typeof CompanyRef>;
export type JobSummaryBody = z.infer<typeof JobSummary>;
export type JobFacetsBody = z.infer<typeof JobFacets>;
export type JobDetailBody = z.infer<typeof JobDetail>;
export type TalentSummaryBody = z.infer<typeof TalentSummary>;
export type TalentDetailBody = z.infer<typeof TalentDetail>;
export type AgentSummaryBody = z.infer<typeof AgentSummary>;
export type AgentDetailBody = z.infer<typeof AgentDetail>;
export type CompanySummaryBody = z.infer<typeof CompanySummary>;
export type CompanyDetailBody = z.infer<typeof CompanyDetail>;
export type SectorBody = z.infer<typeof Sector>;
export type SkillBody = z.infer<typeof Skill>;
export type MetaBody = z.infer<typeof Meta>;
export type SearchReadingBody = z.infer<typeof SearchReading>;
export type SuggestionBody = z.infer<typeof Suggestion>;
export type JobChangeBody = z.infer<typeof JobChange>;
