// One example per response of the OpenAPI document (./openapi.ts), as the docs page shows them
// beside each operation: one small marketplace of a company, its job, a talent and an agent, typed
// by the representations (./resources.ts) so they cannot drift from them silently, and validated
// against the served document's schemas by test/rest/openapi-examples.test.ts.
import type * as r from "./resources.ts";

const API = "https://api.example.com/api/v1";
const WEB = "https://www.example.com";
const links = (path: string): r.LinksBody => ({ self: `${API}${path}`, html: `${WEB}${path}` });
const AT = "2026-11-30T09:15:00.000Z";

const sector = {
  id: "0193a0b4-6c1e-7f00-8a00-000000000101",
  slug: "fintech",
  name: "Fintech",
  links: links("/sectors/fintech"),
};
const skills = [
  { id: "0193a0b4-6c1e-7f00-8a00-000000000201", slug: "python", name: "Python", category: "language" },
  { id: "0193a0b4-6c1e-7f00-8a00-000000000202", slug: "pytorch", name: "PyTorch", category: "ml" },
].map((skill) => ({ ...skill, links: links(`/skills/${skill.slug}`) }));
const company: r.CompanyRefBody = {
  id: "0193a0b4-6c1e-7f00-8a00-000000000301",
  slug: "northwind-payments",
  name: "Northwind Payments",
  logo_url: "https://www.example.com/logos/northwind-payments.png",
  links: links("/companies/northwind-payments"),
};

const job: r.JobSummaryBody = {
  id: "0193a0b4-6c1e-7f00-8a00-000000000401",
  slug: "senior-machine-learning-engineer-northwind-payments-berlin",
  title: "Senior Machine Learning Engineer",
  work_model: "hybrid",
  employment_type: "full_time",
  location_city: "Berlin",
  location_state: null,
  location_country: "DE",
  salary: { min: 80000, max: 98000, currency: "EUR", period: "year" },
  company,
  published_at: AT,
  links: links("/jobs/senior-machine-learning-engineer-northwind-payments-berlin"),
};
const jobDetail: r.JobDetailBody = {
  ...job,
  seniority: "senior",
  description_html: "<p>Build the fraud models that score every card payment in under 50 ms.</p>",
  description_text: "Build the fraud models that score every card payment in under 50 ms.",
  apply_url: "https://careers.example.com/northwind/ml-engineer",
  valid_through: "2027-01-31T23:59:59.000Z",
  updated_at: AT,
  sector,
  skills,
};

const talent: r.TalentSummaryBody = {
  id: "0193a0b4-6c1e-7f00-8a00-000000000501",
  handle: "ada-k",
  display_name: "Ada Kowalska",
  headline: "Data engineer: streaming pipelines and dbt",
  avatar_url: null,
  location: { city: "Warsaw", state: null, country: "PL" },
  availability: "open_to_offers",
  work_models: ["remote", "hybrid"],
  years_experience: 7,
  links: links("/talents/ada-k"),
};
const talentDetail: r.TalentDetailBody = {
  ...talent,
  bio: "Seven years of Kafka and Spark at two payment companies.",
  member_since: "2025-03-02T10:00:00.000Z",
  updated_at: AT,
  profile_links: [{ kind: "github", url: "https://github.com/example" }],
  skills,
  sectors: [sector],
};

const agent: r.AgentSummaryBody = {
  id: "0193a0b4-6c1e-7f00-8a00-000000000601",
  slug: "invoice-reader",
  name: "Invoice Reader",
  tagline: "Reads supplier invoices into your ledger",
  category: "finance",
  pricing: { model: "subscription", amount: "49.00", currency: "EUR", period: "month", unit: null },
  vendor: company,
  published_at: AT,
  links: links("/agents/invoice-reader"),
};
const agentDetail: r.AgentDetailBody = {
  ...agent,
  description: "Extracts line items, VAT and due dates from PDF invoices and posts them to the ledger.",
  capabilities: ["pdf extraction", "vat validation"],
  version: "2.3.0",
  website_url: "https://www.example.com/agents/invoice-reader",
  updated_at: AT,
  skills: skills.slice(0, 1),
};

const companySummary: r.CompanySummaryBody = {
  id: company.id,
  slug: company.slug,
  name: company.name,
  tagline: "Card payments for European merchants",
  logo_url: company.logo_url,
  size: "201-500",
  headquarters: { city: "Berlin", state: null, country: "DE" },
  open_job_count: 1,
  links: company.links,
};
const companyDetail: r.CompanyDetailBody = {
  ...companySummary,
  description: "Northwind Payments processes card payments for 20,000 merchants.",
  website_url: "https://northwind.example.com",
  founded_year: 2014,
  updated_at: AT,
  sectors: [sector],
  open_jobs: [job],
  links: { ...company.links, open_jobs: `${API}/jobs?company=northwind-payments` },
};

const sectorItem: r.SectorBody = { ...sector, open_job_count: 412, company_count: 38, talent_count: 1290 };
const skillItem: r.SkillBody = { ...skills[0]!, open_job_count: 2310, talent_count: 5120, agent_count: 14 };

/** The example item of each representation the routes answer, by its schema id. */
const ITEMS: Record<string, unknown> = {
  JobSummary: job,
  Job: jobDetail,
  TalentSummary: talent,
  Talent: talentDetail,
  AgentSummary: agent,
  Agent: agentDetail,
  CompanySummary: companySummary,
  Company: companyDetail,
  Sector: sectorItem,
  Skill: skillItem,
  JobFacets: {
    total: 2,
    exact: true,
    work_model: [
      { value: "hybrid", name: "Hybrid", count: 1 },
      { value: "remote", name: "Remote", count: 1 },
    ],
  } satisfies r.JobFacetsBody,
  Suggestions: {
    suggestions: [
      {
        type: "skill",
        text: "PyTorch",
        open_jobs: 310,
        typos: 0,
        filter: { skill: "pytorch" },
      } satisfies r.SuggestionBody,
    ],
  },
  JobChange: { kind: "published", slug: job.slug, at: AT, links: job.links } satisfies r.JobChangeBody,
};

/** The example body of a route's 200, by its kind and item's schema id (null: none known). */
export function successExample(kind: "list" | "feed" | "detail" | "summary", itemId: string, path: string): unknown {
  const item = ITEMS[itemId];
  if (item === undefined) return null;
  if (kind === "detail" || kind === "summary") return { data: item };
  if (kind === "feed") {
    const self = `${API}${path}?since=01JDXK2M&limit=50`;
    return {
      data: [item],
      meta: {
        since: "01JDXK2M",
        next_since: "01JDXK9Q",
        has_more: false,
        self,
        next: self.replace("01JDXK2M", "01JDXK9Q"),
      },
    };
  }
  const self = `${API}${path}?limit=20&offset=0`;
  const meta: r.MetaBody = { total: 1, total_exact: true, limit: 20, offset: 0, self, next: null };
  return { data: [item], meta };
}

/** The example body of an error response: its code and a message as the API words them. */
export const errorExample = (code: string, message: string) => ({
  error: { code, message, request_id: "4bf92f3577b34da6a3ce929d0e0e4736" },
});
