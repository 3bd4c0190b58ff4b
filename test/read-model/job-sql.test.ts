// The job list and a job are read by a statement of our own (src/graphql/types/job/rows-sql.ts) when
// the context has plain SQL, and by Prisma when it has not. Both must answer every filter, order,
// page and gate the same: each case runs the same operation on both contexts and compares.
import { parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeCompiled } from "../../src/graphql/compiled-operations.ts";
import { createContext } from "../../src/graphql/context.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, daysFromNow, factories } from "../helpers/factories.ts";

let db: TestDatabase;
const slugs: string[] = [];
const named: Record<string, string> = {};

const JOB_FIELDS = `id slug title descriptionHtml descriptionText employmentType workModel seniority
  location { city state country } salary { min max currency period } applyUrl publishedAt validThrough updatedAt
  company { id slug name logoUrl } sector { id slug name } skills { id slug name category }`;

const LIST = parse(`query ($limit: Int, $offset: Int, $after: String, $filter: JobFilter, $sort: JobSort) {
  jobs(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {
    items { ${JOB_FIELDS} } total limit offset nextCursor
  }
}`);
const SUMMARY = parse(`query ($filter: JobFilter, $after: String) {
  jobs(limit: 2, filter: $filter, after: $after) { items { slug company { slug } } nextCursor }
}`);
const DETAIL = parse(`query ($slug: String!) { job(slug: $slug) { ${JOB_FIELDS} } }`);

const now = new Date();

async function seed() {
  const f = factories(db.prisma);
  const [s1, s2] = await Promise.all([f.sector("s1"), f.sector("s2")]);
  const skills = await Promise.all([
    f.skill("k-b", { name: "Beta" }),
    f.skill("k-a", { name: "Alpha" }),
    f.skill("k-c"),
  ]);
  const [open, other, hidden] = await Promise.all([
    f.company("open"),
    f.company("other", { logoUrl: "https://logo.example/o.png" }),
    f.company("hidden", { hasPublicPage: false }),
  ]);
  Object.assign(named, { s1: s1.slug, k0: skills[0].slug, open: open.slug, hidden: hidden.slug });
  const tie = daysAgo(3);
  const variants = [
    {
      companyId: open.id,
      sectorId: s1.id,
      workModel: "remote",
      salaryMin: 50_000,
      salaryMax: 70_000,
      salaryCurrency: "EUR",
      salaryPeriod: "year",
      locationCity: "Toronto",
      locationState: "ON",
      locationCountry: "CA",
      descriptionText: "senior engineer",
    },
    {
      companyId: other.id,
      sectorId: s2.id,
      workModel: "hybrid",
      employmentType: "contract",
      salaryMin: 80_000,
      salaryCurrency: "EUR",
      salaryPeriod: "year",
      locationCity: "Portland",
      locationState: "OR",
      locationCountry: "US",
      seniority: "senior",
    },
    {
      companyId: hidden.id,
      workModel: "onsite",
      salaryMin: 40,
      salaryMax: 60,
      salaryCurrency: "USD",
      salaryPeriod: "hour",
      locationCountry: "DE",
      descriptionText: "designer and engineer",
      applyUrl: "https://apply.example/x",
    },
    {
      sectorId: s1.id,
      workModel: "remote",
      salaryMax: 5_000,
      salaryCurrency: "EUR",
      salaryPeriod: "month",
      validThrough: daysFromNow(5),
    },
    { companyId: open.id, publishedAt: tie, employmentType: "part_time", descriptionText: "engineer" },
    {
      companyId: other.id,
      publishedAt: tie,
      sectorId: s2.id,
      salaryMin: 60_000,
      salaryMax: 90_000,
      salaryCurrency: "EUR",
      salaryPeriod: "year",
    },
  ] as const;
  const hiddenBy = [
    { status: "draft" },
    { filled: true },
    { publishedAt: daysFromNow(1) },
    { validThrough: daysAgo(1) },
  ] as const;
  let i = 0;
  for (const variant of variants) {
    for (const gate of [{}, ...hiddenBy]) {
      const job = await f.job("job", {
        publishedAt: daysAgo(1 + (i++ % 9)),
        ...variant,
        ...gate,
        skills: { connect: skills.slice(0, 1 + (i % 3)).map((s) => ({ id: s.id })) },
      });
      slugs.push(job.slug);
    }
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seed();
});
afterAll(async () => {
  await db?.close();
});

/** The operation's result with plain SQL and with Prisma alone, and the statements each sent. */
async function both(document: ReturnType<typeof parse>, variables: Record<string, unknown>) {
  const run = async (sql: TestDatabase["sql"] | null) => {
    db.queries.length = 0;
    const result = await executeCompiled(document, variables, createContext({ prisma: db.prisma, sql }, now));
    return { result, statements: [...db.queries] };
  };
  const bySql = await run(db.sql);
  const byPrisma = await run(null);
  return { bySql, byPrisma };
}

const ownStatement = (statements: string[]) => statements.some((s) => /\bFROM jobs j\b/.test(s));

const FILTERS: Record<string, unknown>[] = [
  {},
  { q: "engineer" },
  { q: "designer engineers" },
  { q: "designer OR engineers -lead" },
  { workModel: ["REMOTE", "HYBRID"] },
  { employmentType: ["CONTRACT"] },
  { remote: true },
  { remote: false },
  { location: "ca" },
  { location: "Portland, OR" },
  { salaryCurrency: "eur" },
  { salaryCurrency: "EUR", salaryMin: 65_000 },
  { salaryCurrency: "USD", salaryPeriod: "HOUR", salaryMin: 50 },
  { salaryPeriod: "MONTH" },
  { updatedSince: new Date(Date.now() - 3_600_000).toISOString() },
];

describe("the job list by its own statement", () => {
  it.each(FILTERS)("answers filter %j as Prisma does, in every order", async (filter) => {
    // With q the default order is relevance, which only SQL computes (test/rest/job-relevance.test.ts).
    const sorts = filter["salaryCurrency"]
      ? [undefined, "PUBLISHED_AT_ASC", "SALARY_DESC", "SALARY_ASC"]
      : filter["q"]
        ? ["PUBLISHED_AT_DESC", "PUBLISHED_AT_ASC"]
        : [undefined, "PUBLISHED_AT_ASC"];
    for (const sort of sorts) {
      // 997: past every list's end here, and as deep as a search's offset reaches (SEARCH_OFFSET_WINDOW).
      for (const offset of [0, 2, 997]) {
        const { bySql, byPrisma } = await both(LIST, { limit: 3, offset, filter, sort });
        expect(bySql.result.errors).toBeUndefined();
        expect(bySql.result).toEqual(byPrisma.result);
        expect(ownStatement(bySql.statements)).toBe(true);
        expect(ownStatement(byPrisma.statements)).toBe(false);
      }
    }
  });

  it.each([
    ["sector", "s1"],
    ["skill", "k0"],
    ["company", "open"],
    ["company", "hidden"],
  ] as const)("answers the relation filter %s=%s as Prisma does", async (key, name) => {
    const filter = { [key]: named[name] };
    const { bySql, byPrisma } = await both(LIST, { limit: 50, filter });
    expect(bySql.result).toEqual(byPrisma.result);
    const items = (bySql.result.data as { jobs: { items: unknown[] } }).jobs.items;
    expect(items.length > 0).toBe(name !== "hidden");
  });

  it("follows the cursor through every page as Prisma does, ties by id included", async () => {
    let after: string | null = null;
    const seen: string[] = [];
    do {
      const { bySql, byPrisma } = await both(SUMMARY, { after, filter: {} });
      expect(bySql.result).toEqual(byPrisma.result);
      const page = (bySql.result.data as { jobs: { items: { slug: string }[]; nextCursor: string | null } }).jobs;
      seen.push(...page.items.map((j) => j.slug));
      after = page.nextCursor;
    } while (after);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(6); // six variants, each public once (the other four of each hidden by a gate)
  });
});

describe("a job by its own statement", () => {
  it("answers every job, public or hidden by a gate, as Prisma does", async () => {
    let found = 0;
    for (const slug of slugs) {
      const { bySql, byPrisma } = await both(DETAIL, { slug });
      expect(bySql.result).toEqual(byPrisma.result);
      expect(ownStatement(bySql.statements)).toBe(true);
      if ((bySql.result.data as { job: unknown }).job) found++;
    }
    expect(found).toBe(6);
  });
});

describe("a company's open jobs", () => {
  // The third place job rows come from (Prisma, under the company's own query): their location and
  // salary are shaped there too, so they read as the list's rows of the same jobs do.
  const FIELDS = "slug location { city state country } salary { min max currency period } publishedAt company { slug }";
  const OPEN_JOBS = parse(`query ($company: String!) {
    company(slug: $company) { openJobs(limit: 10) { ${FIELDS} } }
    jobs(limit: 10, filter: { company: $company }) { items { ${FIELDS} } }
  }`);

  it("shows each job as the list does, location and salary included", async () => {
    const { bySql, byPrisma } = await both(OPEN_JOBS, { company: named["open"] });
    expect(bySql.result).toEqual(byPrisma.result);
    const data = bySql.result.data as {
      company: { openJobs: { location: unknown; salary: unknown }[] };
      jobs: { items: unknown[] };
    };
    expect(data.company.openJobs).toEqual(data.jobs.items);
    expect(data.company.openJobs.length).toBe(2);
    expect(data.company.openJobs.some((j) => j.location !== null && j.salary !== null)).toBe(true);
  });
});
