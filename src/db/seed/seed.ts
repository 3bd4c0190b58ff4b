// Seeds the catalog with a deterministic demo data set (see generate.ts), in one transaction:
// a seed that fails leaves the database as it was.
import type { Prisma } from "../../generated/prisma/client.ts";
import type { Database, SqlRunner } from "../database.ts";
import { seedRecentActivity } from "./activity.ts";
import { insertLinks, insertRows } from "./bulk.ts";
import {
  createPools,
  createRng,
  generateAgent,
  generateCompany,
  generateJob,
  generateTalent,
  generateTaxonomy,
} from "./generate.ts";

export interface SeedScale {
  companies: number;
  jobs: number;
  talents: number;
  agents: number;
}

/** What the service seeds into an empty embedded database. */
export const demoScale: SeedScale = { companies: 300, jobs: 5_000, talents: 3_000, agents: 1_200 };

export interface SeedOptions {
  seed: number;
  scale?: SeedScale;
  /** The instant dates are generated around; defaults to the start of today (UTC). */
  now?: Date;
  batchSize?: number;
  onProgress?: (table: string, done: number, total: number) => void;
}

const day = 86_400_000;

type Stamped<T> = T & { createdAt: Date; updatedAt: Date };

function stamp<T extends object>(row: T, created: Date): Stamped<T> {
  return { ...row, createdAt: created, updatedAt: created };
}

const sectorColumns = [
  ["id", "uuid"],
  ["slug", "text"],
  ["name", "text"],
] as const;

const skillColumns = [...sectorColumns, ["category", "text"]] as const;

const companyColumns = [
  ["id", "uuid"],
  ["slug", "text"],
  ["name", "text"],
  ["tagline", "text"],
  ["description", "text"],
  ["logoUrl", "text"],
  ["websiteUrl", "text"],
  ["size", '"CompanySize"'],
  ["foundedYear", "int4"],
  ["hqCity", "text"],
  ["hqState", "text"],
  ["hqCountry", "text"],
  ["hasPublicPage", "bool"],
  ["contactEmail", "text"],
  ["createdAt", "timestamptz"],
  ["updatedAt", "timestamptz"],
] as const;

const jobColumns = [
  ["id", "uuid"],
  ["slug", "text"],
  ["title", "text"],
  ["descriptionHtml", "text"],
  ["descriptionText", "text"],
  ["employmentType", '"EmploymentType"'],
  ["workModel", '"WorkModel"'],
  ["seniority", '"Seniority"'],
  ["locationCity", "text"],
  ["locationState", "text"],
  ["locationCountry", "text"],
  ["salaryMin", "int4"],
  ["salaryMax", "int4"],
  ["salaryCurrency", "text"],
  ["salaryPeriod", '"SalaryPeriod"'],
  ["applyUrl", "text"],
  ["status", '"JobStatus"'],
  ["filled", "bool"],
  ["publishedAt", "timestamptz"],
  ["validThrough", "timestamptz"],
  ["recruiterEmail", "text"],
  ["companyId", "uuid"],
  ["sectorId", "uuid"],
  ["skillNames", "text"],
  ["skillSlugs", "text[]"],
  ["createdAt", "timestamptz"],
  ["updatedAt", "timestamptz"],
] as const;

const talentColumns = [
  ["id", "uuid"],
  ["handle", "text"],
  ["displayName", "text"],
  ["headline", "text"],
  ["bio", "text"],
  ["locationCity", "text"],
  ["locationState", "text"],
  ["locationCountry", "text"],
  ["workModels", '"WorkModel"[]'],
  ["availability", '"Availability"'],
  ["yearsExperience", "int4"],
  ["avatarUrl", "text"],
  ["visibility", '"ProfileVisibility"'],
  ["accountState", '"AccountState"'],
  ["email", "text"],
  ["createdAt", "timestamptz"],
  ["updatedAt", "timestamptz"],
] as const;

const talentLinkColumns = [
  ["id", "uuid"],
  ["talentId", "uuid"],
  ["kind", '"TalentLinkKind"'],
  ["url", "text"],
  ["position", "int4"],
] as const;

const agentColumns = [
  ["id", "uuid"],
  ["slug", "text"],
  ["name", "text"],
  ["tagline", "text"],
  ["description", "text"],
  ["category", "text"],
  ["capabilities", "text[]"],
  ["version", "text"],
  ["pricingModel", '"PricingModel"'],
  ["priceAmount", "numeric"],
  ["priceCurrency", "text"],
  ["pricePeriod", '"BillingPeriod"'],
  ["priceUnit", "text"],
  ["websiteUrl", "text"],
  ["status", '"AgentStatus"'],
  ["publishedAt", "timestamptz"],
  ["vendorCompanyId", "uuid"],
  ["createdAt", "timestamptz"],
  ["updatedAt", "timestamptz"],
] as const;

/** Empties the catalog; CASCADE takes the join tables and talent links along. */
export async function truncateCatalog(db: Database): Promise<void> {
  await db.sql.exec(`TRUNCATE sectors, skills, companies, jobs, talents, agents CASCADE`);
}

export async function isCatalogEmpty(db: Database): Promise<boolean> {
  const [row] = await db.sql.query<{ empty: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM sectors) AND NOT EXISTS (SELECT 1 FROM jobs) AS empty`,
  );
  return row?.empty ?? true;
}

type CounterTrigger = { table: string; name: string };

/**
 * Disables or enables the triggers that keep catalog_counters (migration catalog_counters), the
 * change feed (migration job_change_feed), jobs.skill_names and skill_slugs (migrations relevance_and_places and job_skill_slugs, the
 * seed writes them itself) and the search vocabulary (migration search_that_forgives, rebuilt once
 * after the load): a bulk load is the feed's starting point, not a million events.
 */
async function setCounterTriggers(
  sql: SqlRunner,
  action: "DISABLE" | "ENABLE",
  triggers?: CounterTrigger[],
): Promise<CounterTrigger[]> {
  const list =
    triggers ??
    (await sql.query<CounterTrigger>(
      `SELECT format('%I', c.relname) AS "table", format('%I', t.tgname) AS name
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE (t.tgname LIKE 'catalog\\_counters\\_%' OR t.tgname LIKE 'catalog\\_feed\\_%'
               OR t.tgname LIKE 'job\\_skill\\_names\\_%' OR t.tgname LIKE 'job\\_search\\_words\\_%')
          AND NOT t.tgisinternal`,
    ));
  for (const { table, name } of list) await sql.exec(`ALTER TABLE ${table} ${action} TRIGGER ${name}`);
  return list;
}

async function inBatches(
  total: number,
  size: number,
  table: string,
  onProgress: SeedOptions["onProgress"],
  work: (from: number, to: number) => Promise<void>,
) {
  for (let from = 0; from < total; from += size) {
    const to = Math.min(total, from + size);
    await work(from, to);
    onProgress?.(table, to, total);
  }
}

/**
 * What the disabled triggers keep, rebuilt once after a bulk load: the counters (a few grouped
 * passes), and the search vocabulary (one pass over the loaded jobs' words instead of one insert
 * per word of every job).
 */
async function rebuildAfterLoad(sql: SqlRunner, progress: SeedOptions["onProgress"]) {
  await sql.exec("SELECT catalog_counters_rebuild()");
  progress?.("counters", 1, 1);
  await sql.exec("SELECT search_words_rebuild()");
  progress?.("search words", 1, 1);
}

export interface SeedSummary extends SeedScale {
  sectors: number;
  skills: number;
}

export async function seedCatalog(db: Database, options: SeedOptions): Promise<SeedSummary> {
  const scale = options.scale ?? demoScale;
  const batch = options.batchSize ?? 5_000;
  const now = (options.now ?? new Date(Math.floor(Date.now() / day) * day)).getTime();
  // Independent streams, so changing one scale leaves the rows of the others as they were.
  const rng = (stream: number) => createRng(options.seed * 7919 + stream);
  const pools = createPools(options.seed);
  const taxonomy = generateTaxonomy(rng(1));
  const progress = options.onProgress;

  await db.sql.exclusive(async (sql: SqlRunner) => {
    // The relation counters' triggers work row by row; for a bulk load, one rebuild at the end
    // (a few grouped passes) is much cheaper. Disabled inside this transaction only.
    const counterTriggers = await setCounterTriggers(sql, "DISABLE");
    await insertRows(sql, "sectors", sectorColumns, taxonomy.sectors);
    await insertRows(sql, "skills", skillColumns, taxonomy.skills);

    const companies: { id: string; name: string }[] = [];
    const companyRng = rng(2);
    await inBatches(scale.companies, batch, "companies", progress, async (from, to) => {
      const rows: Stamped<Prisma.CompanyCreateManyInput>[] = [];
      const links: [string, string][] = [];
      for (let i = from; i < to; i++) {
        const { row, sectorIds } = generateCompany(companyRng, pools, i, taxonomy);
        rows.push(stamp(row, new Date(now - companyRng.int(30, 2000) * day)));
        companies.push({ id: row.id as string, name: row.name });
        for (const s of sectorIds) links.push([row.id as string, s]);
      }
      await insertRows(sql, "companies", companyColumns, rows);
      await insertLinks(sql, "_CompanySectors", links);
    });

    const jobRng = rng(3);
    await inBatches(scale.jobs, batch, "jobs", progress, async (from, to) => {
      const rows: Stamped<Prisma.JobCreateManyInput>[] = [];
      const links: [string, string][] = [];
      for (let i = from; i < to; i++) {
        const { row, skillIds } = generateJob(jobRng, pools, i, now, companies, taxonomy);
        const created = new Date(
          (row.publishedAt ? new Date(row.publishedAt).getTime() : now) - jobRng.int(0, 5) * day,
        );
        rows.push(stamp(row, created));
        for (const s of skillIds) links.push([row.id as string, s]);
      }
      await insertRows(sql, "jobs", jobColumns, rows);
      await insertLinks(sql, "_JobSkills", links);
    });

    const talentRng = rng(4);
    await inBatches(scale.talents, batch, "talents", progress, async (from, to) => {
      const rows: Stamped<Prisma.TalentCreateManyInput>[] = [];
      const links: Prisma.TalentLinkCreateManyInput[] = [];
      const skills: [string, string][] = [];
      const sectors: [string, string][] = [];
      for (let i = from; i < to; i++) {
        const t = generateTalent(talentRng, pools, i, taxonomy);
        rows.push(stamp(t.row, new Date(now - talentRng.int(1, 1500) * day)));
        links.push(...t.links);
        for (const s of t.skillIds) skills.push([s, t.row.id as string]);
        for (const s of t.sectorIds) sectors.push([s, t.row.id as string]);
      }
      await insertRows(sql, "talents", talentColumns, rows);
      await insertRows(sql, "talent_links", talentLinkColumns, links);
      await insertLinks(sql, "_TalentSkills", skills);
      await insertLinks(sql, "_TalentSectors", sectors);
    });

    const agentRng = rng(5);
    await inBatches(scale.agents, batch, "agents", progress, async (from, to) => {
      const rows: Stamped<Prisma.AgentCreateManyInput>[] = [];
      const links: [string, string][] = [];
      for (let i = from; i < to; i++) {
        const { row, skillIds } = generateAgent(agentRng, pools, i, now, companies, taxonomy);
        rows.push(stamp(row, row.publishedAt ? new Date(row.publishedAt) : new Date(now)));
        for (const s of skillIds) links.push([row.id as string, s]);
      }
      await insertRows(sql, "agents", agentColumns, rows);
      await insertLinks(sql, "_AgentSkills", links);
    });

    await rebuildAfterLoad(sql, progress);
    await setCounterTriggers(sql, "ENABLE", counterTriggers);
    await seedRecentActivity(sql);
    progress?.("recent activity", 1, 1);
  });
  // Statistics for the planner, and the visibility map that lets counts and deep offsets use
  // index-only scans right after a bulk load. VACUUM cannot run inside the transaction.
  await db.sql.exec("VACUUM (ANALYZE)");
  return { ...scale, sectors: taxonomy.sectors.length, skills: taxonomy.skills.length };
}
