// Builds the demo catalog as plain rows, deterministically: the same seed and day give the same
// catalog. Faker fills small pools of names and sentences once; a fast seeded PRNG then combines
// them, so a million jobs take seconds to generate rather than minutes.
import { en, Faker } from "@faker-js/faker";
import type { Prisma } from "../../generated/prisma/client.ts";
import * as v from "./vocabulary.ts";

export interface Rng {
  next(): number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
  sample<T>(items: readonly T[], count: number): T[];
  uuid(): string;
}

/** mulberry32: tiny, fast and good enough for test data. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const hex = (n: number) => {
    let s = "";
    for (let i = 0; i < n; i++) s += Math.floor(next() * 16).toString(16);
    return s;
  };
  return {
    next,
    int,
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T,
    chance: (p) => next() < p,
    sample: <T>(items: readonly T[], count: number) => {
      const copy = [...items];
      const out: T[] = [];
      while (out.length < count && copy.length) out.push(copy.splice(Math.floor(next() * copy.length), 1)[0] as T);
      return out;
    },
    // A version-4 layout; uniqueness comes from 122 random bits.
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[int(0, 3)]}${hex(3)}-${hex(12)}`,
  };
}

export function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

export interface Pools {
  companyNames: string[];
  sentences: string[];
  firstNames: string[];
  lastNames: string[];
  productWords: string[];
}

export function createPools(seed: number): Pools {
  const faker = new Faker({ locale: [en] });
  faker.seed(seed);
  const times = <T>(n: number, f: () => T) => Array.from({ length: n }, f);
  return {
    companyNames: times(600, () => faker.company.name()),
    sentences: times(400, () => faker.company.catchPhrase() + ". " + faker.lorem.sentence({ min: 8, max: 16 })),
    firstNames: times(300, () => faker.person.firstName()),
    lastNames: times(300, () => faker.person.lastName()),
    productWords: times(200, () => faker.word.adjective()),
  };
}

const day = 86_400_000;

export interface Taxonomy {
  sectors: Prisma.SectorCreateManyInput[];
  skills: Prisma.SkillCreateManyInput[];
}

export function generateTaxonomy(rng: Rng): Taxonomy {
  return {
    sectors: v.sectors.map((name) => ({ id: rng.uuid(), slug: slugify(name), name })),
    skills: v.skills.map(([name, category]) => ({ id: rng.uuid(), slug: slugify(name), name, category })),
  };
}

const sizes = [
  "size_1_10",
  "size_11_50",
  "size_51_200",
  "size_201_500",
  "size_501_1000",
  "size_1001_5000",
  "size_5001_plus",
] as const;

export function generateCompany(rng: Rng, pools: Pools, index: number, taxonomy: Taxonomy) {
  const name = rng.pick(pools.companyNames);
  const slug = `${slugify(name)}-${index.toString(36)}`;
  const [country, state, city] = rng.pick(v.places);
  const row: Prisma.CompanyCreateManyInput = {
    id: rng.uuid(),
    slug,
    name,
    tagline: rng.pick(pools.sentences).split(". ")[0] ?? null,
    description: [rng.pick(pools.sentences), rng.pick(pools.sentences), rng.pick(pools.sentences)].join(" "),
    logoUrl: `https://cdn.marketplace.example.com/logos/${slug}.png`,
    websiteUrl: `https://www.${slug}.example.com`,
    size: rng.pick(sizes),
    foundedYear: rng.int(1975, 2025),
    hqCity: city,
    hqState: state,
    hqCountry: country,
    // Hidden kind: companies without a branded public page.
    hasPublicPage: rng.chance(0.8),
    contactEmail: `talent@${slug}.example.com`,
  };
  const sectorIds = rng.sample(taxonomy.sectors, rng.int(1, 3)).map((s) => s.id as string);
  return { row, sectorIds };
}

// Internships are for interns and interns are hired as interns (issue 45: 190 jobs matched
// q=intern&employment_type=full_time); the other kinds of contract go with any other seniority.
const employmentTypes = [
  "full_time",
  "full_time",
  "full_time",
  "full_time",
  "part_time",
  "contract",
  "temporary",
  "freelance",
] as const;
const workModels = ["remote", "hybrid", "onsite"] as const;
const seniorities = ["intern", "junior", "mid", "mid", "senior", "senior", "lead", "principal", "executive"] as const;
type Seniority = (typeof seniorities)[number];

/** How a seniority's yearly base compares with a mid-level one, as job boards show them. */
const seniorityPay: Record<Seniority, number> = {
  intern: 0.35,
  junior: 0.7,
  mid: 1,
  senior: 1.3,
  lead: 1.5,
  principal: 1.75,
  executive: 2.1,
};

/** A yearly base salary in its currency (rounded to a thousand), from the currency's mid-level band. */
export function yearlySalary(rng: Rng, currency: string, seniority: Seniority): { min: number; max: number } {
  const [low, high] = v.midLevelSalaries[currency] ?? v.midLevelSalaries.USD ?? [90_000, 180_000];
  const factor = seniorityPay[seniority];
  const min = (low + rng.next() * (high - low) * 0.6) * factor;
  const max = min * (1.1 + rng.next() * 0.3);
  const round = (n: number) => Math.round(n / 1000) * 1000;
  return { min: round(min), max: round(max) };
}

/** Lifecycle mix: mostly public, with every hidden kind present. */
function jobLifecycle(rng: Rng, now: number) {
  const roll = rng.next();
  const publishedAt = new Date(now - rng.int(0, 90) * day - rng.int(0, day - 1));
  if (roll < 0.05) return { status: "draft" as const, filled: false, publishedAt: null, validThrough: null };
  if (roll < 0.1) return { status: "closed" as const, filled: false, publishedAt, validThrough: null };
  if (roll < 0.13) return { status: "archived" as const, filled: false, publishedAt, validThrough: null };
  if (roll < 0.17) return { status: "published" as const, filled: true, publishedAt, validThrough: null };
  if (roll < 0.21)
    return {
      status: "published" as const,
      filled: false,
      publishedAt,
      validThrough: new Date(now - rng.int(1, 30) * day),
    };
  if (roll < 0.23)
    return {
      status: "published" as const,
      filled: false,
      publishedAt: new Date(now + rng.int(1, 14) * day),
      validThrough: null,
    };
  const validThrough = rng.chance(0.6) ? new Date(now + rng.int(7, 120) * day) : null;
  return { status: "published" as const, filled: false, publishedAt, validThrough };
}

export function generateJob(
  rng: Rng,
  pools: Pools,
  index: number,
  now: number,
  companies: readonly { id: string; name: string }[],
  taxonomy: Taxonomy,
) {
  const seniority = rng.pick(seniorities);
  const employmentType = seniority === "intern" ? "internship" : rng.pick(employmentTypes);
  const role = rng.pick(v.roles);
  const title = seniority === "intern" ? `${role} Intern` : `${v.seniorityTitles[seniority]} ${role}`.trim();
  const slug = `${slugify(title)}-${index.toString(36)}`;
  const company = rng.chance(0.93) ? rng.pick(companies) : null; // else a confidential posting
  const workModel = rng.pick(workModels);
  const [country, state, city] = rng.pick(v.places);
  const remoteAnywhere = workModel === "remote" && rng.chance(0.4);
  const paragraphs = [rng.pick(pools.sentences), rng.pick(pools.sentences), rng.pick(pools.sentences)];
  const about = company ? `${company.name} is hiring a ${title}.` : `A confidential employer is hiring a ${title}.`;
  const withSalary = rng.chance(0.7);
  const currency = v.currencies[country] ?? "USD";
  const salary = yearlySalary(rng, currency, seniority);
  const row: Prisma.JobCreateManyInput = {
    id: rng.uuid(),
    slug,
    title,
    descriptionHtml: `<p>${about}</p>${paragraphs.map((p) => `<p>${p}</p>`).join("")}`,
    descriptionText: [about, ...paragraphs].join("\n\n"),
    employmentType,
    workModel,
    seniority,
    locationCity: remoteAnywhere ? null : city,
    locationState: remoteAnywhere ? null : state,
    locationCountry: remoteAnywhere ? null : country,
    salaryMin: withSalary ? salary.min : null,
    salaryMax: withSalary ? salary.max : null,
    salaryCurrency: withSalary ? currency : null,
    salaryPeriod: withSalary ? "year" : null,
    applyUrl: `https://jobs.marketplace.example.com/apply/${slug}`,
    recruiterEmail: `recruiting+${index}@example.com`,
    companyId: company?.id ?? null,
    sectorId: rng.pick(taxonomy.sectors).id ?? null,
    ...jobLifecycle(rng, now),
  };
  const skills = rng.sample(taxonomy.skills, rng.int(2, 6));
  // What the triggers on "_JobSkills" keep (disabled for the bulk load): the names, space-separated, and the slugs.
  row.skillNames = skills
    .map((s) => s.name)
    .sort()
    .join(" ");
  row.skillSlugs = skills.map((s) => s.slug).sort();
  return { row, skillIds: skills.map((s) => s.id as string) };
}

const availabilities = ["actively_looking", "open_to_offers", "not_looking"] as const;
const linkKinds = ["github", "linkedin", "website", "portfolio"] as const;

export function generateTalent(rng: Rng, pools: Pools, index: number, taxonomy: Taxonomy) {
  const first = rng.pick(pools.firstNames);
  const last = rng.pick(pools.lastNames);
  const handle = `${slugify(first + last).replace(/-/g, "")}${index.toString(36)}`;
  const [country, state, city] = rng.pick(v.places);
  const role = rng.pick(v.roles);
  const years = rng.int(0, 25);
  const roll = rng.next();
  // Hidden kinds: private profiles, suspended and deactivated accounts.
  const visibility = roll < 0.15 ? ("private" as const) : ("public" as const);
  const accountState =
    roll >= 0.15 && roll < 0.18 ? "suspended" : roll >= 0.18 && roll < 0.2 ? "deactivated" : "active";
  const row: Prisma.TalentCreateManyInput = {
    id: rng.uuid(),
    handle,
    displayName: `${first} ${last}`,
    headline: `${role} · ${years} years`,
    bio: `${rng.pick(pools.sentences)} ${rng.pick(pools.sentences)}`,
    locationCity: city,
    locationState: state,
    locationCountry: country,
    workModels: rng.sample(workModels, rng.int(1, 3)),
    availability: rng.pick(availabilities),
    yearsExperience: years,
    avatarUrl: `https://cdn.marketplace.example.com/avatars/${handle}.jpg`,
    visibility,
    accountState,
    email: `${handle}@mail.example.com`,
  };
  const links: Prisma.TalentLinkCreateManyInput[] = rng.sample(linkKinds, rng.int(0, 3)).map((kind, position) => ({
    id: rng.uuid(),
    talentId: row.id as string,
    kind,
    url:
      kind === "github"
        ? `https://github.com/${handle}`
        : kind === "linkedin"
          ? `https://www.linkedin.com/in/${handle}`
          : `https://${handle}.example.com/${kind}`,
    position,
  }));
  return {
    row,
    links,
    skillIds: rng.sample(taxonomy.skills, rng.int(3, 8)).map((s) => s.id as string),
    sectorIds: rng.sample(taxonomy.sectors, rng.int(1, 2)).map((s) => s.id as string),
  };
}

const pricingModels = ["free", "one_time", "subscription", "subscription", "usage_based"] as const;

export function generateAgent(
  rng: Rng,
  pools: Pools,
  index: number,
  now: number,
  companies: readonly { id: string }[],
  taxonomy: Taxonomy,
) {
  const category = rng.pick(v.agentCategories);
  const name = `${rng.pick(pools.productWords)} ${category.replace(/_/g, " ")} agent`.replace(/^\w/, (c) =>
    c.toUpperCase(),
  );
  const slug = `${slugify(name)}-${index.toString(36)}`;
  const pricingModel = rng.pick(pricingModels);
  const roll = rng.next();
  // Hidden kinds: drafts and retired agents; unlisted ones answer by slug only.
  const status = roll < 0.08 ? "draft" : roll < 0.14 ? "retired" : roll < 0.2 ? "unlisted" : "published";
  const capabilities = rng.sample(v.agentCapabilities, rng.int(2, 5));
  const row: Prisma.AgentCreateManyInput = {
    id: rng.uuid(),
    slug,
    name,
    tagline: `Automates ${capabilities[0]} for ${category.replace(/_/g, " ")} teams.`,
    description: `${rng.pick(pools.sentences)} ${rng.pick(pools.sentences)}`,
    category,
    capabilities,
    version: `${rng.int(0, 4)}.${rng.int(0, 20)}.${rng.int(0, 9)}`,
    pricingModel,
    priceAmount:
      pricingModel === "free" ? null : pricingModel === "usage_based" ? rng.int(1, 50) / 10 : rng.int(9, 499),
    priceCurrency: pricingModel === "free" ? null : rng.pick(["USD", "EUR", "GBP"]),
    pricePeriod: pricingModel === "subscription" ? rng.pick(["month", "year"] as const) : null,
    priceUnit: pricingModel === "usage_based" ? "1k requests" : null,
    websiteUrl: `https://agents.marketplace.example.com/${slug}`,
    status: status,
    publishedAt: status === "draft" ? null : new Date(now - rng.int(1, 400) * day),
    vendorCompanyId: rng.chance(0.9) ? rng.pick(companies).id : null,
  };
  return { row, skillIds: rng.sample(taxonomy.skills, rng.int(1, 4)).map((s) => s.id as string) };
}
