// GET /jobs/facets on crafted data: every count of every facet equals GET /jobs's meta.total with
// that value in place of the facet's own parameter (multi-select), for several filters; total is
// the list's total; the salary histogram adds up to the list's jobs with a salary in that
// currency and its ranges to the differences of salary_min; hidden jobs are never counted; bad
// parameters are 400s naming them. GraphQL's jobFacets answers the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prisma, PrismaClient } from "../../src/generated/prisma/client.ts";
import { listTotals } from "../../src/graphql/totals.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, daysFromNow, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
const slugs: Record<string, string> = {};

type FacetValue = { value: string; name: string | null; count: number };
type Facets = {
  total: number;
  exact: boolean;
  work_model?: FacetValue[];
  employment_type?: FacetValue[];
  sector?: FacetValue[];
  skill?: FacetValue[];
  country?: FacetValue[];
  salary?: {
    currency: string;
    period: string;
    interval: number;
    ranges: { from: number; to: number | null; count: number }[];
  };
};

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const [s1, s2] = [await f.sector("facet-a"), await f.sector("facet-b")];
  const [k1, k2, k3] = [await f.skill("facet-x"), await f.skill("facet-y"), await f.skill("facet-z")];
  const hidden = await f.company("facet-hidden", { hasPublicPage: false });
  slugs["s1"] = s1.slug;
  slugs["s2"] = s2.slug;
  slugs["k1"] = k1.slug;
  const at = (city: string, country: string) => ({ locationCity: city, locationCountry: country });
  const pay = (currency: string, min: number, max: number | null) => ({
    salaryCurrency: currency,
    salaryMin: min,
    salaryMax: max,
    salaryPeriod: "year" as const,
  });
  const skills = (...ids: string[]) => ({ skills: { connect: ids.map((id) => ({ id })) } });
  const jobs: Partial<Prisma.JobUncheckedCreateInput>[] = [
    {
      workModel: "remote",
      employmentType: "full_time",
      sectorId: s1.id,
      ...skills(k1.id, k2.id),
      ...at("Berlin", "DE"),
      ...pay("EUR", 60_000, 75_000),
      title: "Heron engineer",
    },
    {
      workModel: "remote",
      employmentType: "contract",
      sectorId: s1.id,
      ...skills(k1.id),
      ...at("Munich", "DE"),
      ...pay("EUR", 80_000, 95_000),
      title: "Heron lead",
    },
    {
      workModel: "hybrid",
      employmentType: "contract",
      sectorId: s2.id,
      ...skills(k2.id, k3.id),
      ...at("Paris", "FR"),
      ...pay("EUR", 50_000, null),
    },
    {
      workModel: "onsite",
      employmentType: "full_time",
      sectorId: s2.id,
      ...skills(k3.id),
      ...at("Toronto", "CA"),
      ...pay("CAD", 90_000, 120_000),
      title: "Heron analyst",
    },
    {
      workModel: "onsite",
      employmentType: "part_time",
      sectorId: s1.id,
      ...skills(k1.id, k3.id),
      ...at("Berlin", "DE"),
    },
    { workModel: "remote", employmentType: "full_time", ...pay("EUR", 120_000, 140_000) },
    {
      workModel: "hybrid",
      employmentType: "full_time",
      sectorId: s1.id,
      ...at("Lisbon", "PT"),
      ...pay("EUR", 61_000, 69_000),
      title: "Heron tester",
    },
    // A confidential job (no company) counts; a job of a company without a public page counts too
    // (the job is public, its company shown as null).
    { workModel: "remote", employmentType: "contract", companyId: hidden.id, ...at("Dublin", "IE") },
  ];
  for (const [i, data] of jobs.entries()) await f.job(`facet-${i}`, { publishedAt: daysAgo(i + 1), ...data });
  // Hidden jobs, each in a country, sector and salary no public job has: never counted.
  const secret = {
    ...at("Auckland", "NZ"),
    sectorId: s2.id,
    ...skills(k1.id),
    ...pay("NZD", 10_000, 20_000),
    title: "Heron secret",
  };
  await f.job("facet-draft", { ...secret, status: "draft" });
  await f.job("facet-filled", { ...secret, filled: true });
  await f.job("facet-future", { ...secret, publishedAt: daysFromNow(3) });
  await f.job("facet-expired", { ...secret, publishedAt: daysAgo(9), validThrough: daysAgo(1) });
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function total(query: URLSearchParams): Promise<number> {
  const { status, body } = await api.get<{ meta: { total: number; total_exact: boolean } }>(`/api/v1/jobs?${query}`);
  expect(status, String(query)).toBe(200);
  expect(body.meta.total_exact).toBe(true);
  return body.meta.total;
}

async function facets(query: string, client = api): Promise<Facets> {
  const { status, body } = await client.get<{ data: Facets }>(`/api/v1/jobs/facets?${query}`);
  expect(status, query).toBe(200);
  if (client === api) expect(body.data.exact, query).toBe(true);
  return body.data;
}

/** The parameters each facet leaves out of its counts. */
const OWN: Record<string, string[]> = {
  work_model: ["work_model", "remote"],
  employment_type: ["employment_type"],
  sector: ["sector"],
  skill: ["skill"],
  country: ["country"],
};

describe("GET /jobs/facets", () => {
  const filters = () => [
    "",
    "work_model=remote",
    "work_model=remote,hybrid&employment_type=full_time",
    "q=heron",
    "country=DE&employment_type=contract",
    `sector=${slugs["s1"]}&skill=${slugs["k1"]}`,
    "remote=false&salary_currency=EUR",
  ];

  it("counts each value as GET /jobs totals it with that value in place of the facet's own filter", async () => {
    for (const filter of filters()) {
      const result = await facets(
        `${filter}${filter ? "&" : ""}facets=work_model,employment_type,sector,skill,country`,
      );
      expect(result.total, filter).toBe(await total(new URLSearchParams(filter)));
      for (const [facet, own] of Object.entries(OWN)) {
        const values = result[facet as keyof Facets] as FacetValue[];
        expect(values, `${filter} ${facet}`).toBeDefined();
        for (const { value, count } of values) {
          const query = new URLSearchParams(filter);
          for (const name of own) query.delete(name);
          query.set(facet, value);
          expect(count, `${filter}: ${facet}=${value}`).toBe(await total(query));
          expect(count).toBeGreaterThan(0);
        }
        // Most frequent first.
        expect(values.map((v) => v.count)).toEqual([...values.map((v) => v.count)].sort((a, b) => b - a));
      }
    }
  });

  it("never counts a hidden job", async () => {
    const all = await facets("facets=work_model,employment_type,sector,skill,country");
    expect(all.country!.map((c) => c.value)).not.toContain("NZ");
    expect(all.total).toBe(8);
    const nzd = await facets("facets=salary&salary_currency=NZD");
    expect(nzd.salary!.ranges).toEqual([]);
    expect((await facets("q=secret&facets=country")).total).toBe(0);
  });

  it("answers a salary histogram in one currency and period, adding up to the list", async () => {
    for (const filter of [
      "salary_currency=EUR",
      "salary_currency=eur&salary_min=70000",
      "salary_currency=EUR&work_model=remote",
    ]) {
      const result = await facets(`${filter}&facets=salary&salary_interval=10000`);
      const salary = result.salary!;
      expect(salary).toMatchObject({ currency: "EUR", period: "year", interval: 10_000 });
      const base = new URLSearchParams(filter);
      base.delete("salary_min");
      base.set("salary_min", "0");
      const sum = salary.ranges.reduce((n, r) => n + r.count, 0);
      expect(sum, filter).toBe(await total(base));
      for (const r of salary.ranges) {
        const from = new URLSearchParams(base);
        from.set("salary_min", String(r.from));
        const to = new URLSearchParams(base);
        to.set("salary_min", String(r.to));
        expect(r.count, `${filter} ${r.from}`).toBe((await total(from)) - (await total(to)));
      }
    }
    // 50,000 (no maximum), 61-69k (top 69,000), 60-75k (75,000), 80-95k (95,000), 120-140k: by the top.
    const eur = (await facets("salary_currency=EUR&facets=salary&salary_interval=10000")).salary!;
    expect(eur.ranges).toEqual([
      { from: 50_000, to: 60_000, count: 1 },
      { from: 60_000, to: 70_000, count: 1 },
      { from: 70_000, to: 80_000, count: 1 },
      { from: 90_000, to: 100_000, count: 1 },
      { from: 140_000, to: 150_000, count: 1 },
    ]);
  });

  it("names sectors and skills, and keeps to limit", async () => {
    const result = await facets("facets=sector,skill&limit=1");
    expect(result.sector).toHaveLength(1);
    expect(result.sector![0]).toMatchObject({ value: slugs["s1"], count: 4 });
    expect(result.sector![0]!.name).toBe(slugs["s1"]);
    expect(result.skill).toHaveLength(1);
    expect(result.work_model).toBeUndefined();
  });

  it("refuses bad parameters with a 400 naming them", async () => {
    for (const [query, code] of [
      ["facets=colour", "invalid_facets"],
      ["facets=salary", "invalid_salary_currency"],
      ["limit=0", "invalid_limit"],
      ["limit=101", "invalid_limit"],
      ["salary_interval=0", "invalid_salary_interval"],
      ["country=Deutschland", "invalid_country"],
      ["sort=relevance", "unknown_parameter"],
      ["offset=1", "unknown_parameter"],
    ]) {
      const { status, body } = await api.get<{ error: { code: string } }>(`/api/v1/jobs/facets?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code, query).toBe(code);
    }
  });

  it("answers the same in GraphQL", async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `{ jobFacets(filter: {workModel: [REMOTE]}, facets: [WORK_MODEL, COUNTRY]) { total workModel { value count } country { value count } sector { value } } }`,
      }),
    });
    const { data } = (await response.json()) as { data: { jobFacets: Record<string, unknown> } };
    const rest = await facets("work_model=remote&facets=work_model,country");
    expect(data.jobFacets).toEqual({
      total: rest.total,
      workModel: rest.work_model!.map(({ value, count }) => ({ value, count })),
      country: rest.country!.map(({ value, count }) => ({ value, count })),
      sector: null,
    });
  });
});

describe("GET /jobs/facets while a first count is running", () => {
  it("answers a sample's counts as lower bounds (exact: false), a complete sample as exact, then the exact counts", async () => {
    // A million jobs, scaled down: samples of at most 3 jobs, and the full counts held back until released.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = {
      $queryRawUnsafe: async (...args: Parameters<PrismaClient["$queryRawUnsafe"]>) => {
        await held;
        return db.prisma.$queryRawUnsafe(...args);
      },
    } as unknown as PrismaClient;
    const totalsCache = listTotals(30, slow, { bounding: db.prisma, countCap: 3, firstCountBoundedWaitMs: 50 });
    const sampling = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" }, { totalsCache });
    const sampleApi = await createApiClient(sampling.url);
    const query =
      "work_model=hybrid,onsite,remote&salary_currency=EUR&facets=work_model,employment_type,sector,skill,country,salary";
    try {
      const sampled = await sampleApi.get<{ data: Facets }>(`/api/v1/jobs/facets?${query}`);
      const sample = sampled.body.data;
      expect(sample.exact).toBe(false);
      // Not kept by shared caches while it is not exact (catalog-api.md, Caching).
      expect(sampled.headers.get("cache-control")).toBe("public, max-age=0");
      const exact = await facets(query);
      expect(sample.total).toBe(3);
      expect(exact.total).toBeGreaterThan(3);
      for (const facet of ["work_model", "employment_type", "sector", "skill", "country"] as const) {
        const counts = new Map(exact[facet]!.map((v) => [v.value, v.count]));
        for (const { value, count } of sample[facet]!) {
          expect(count, `${facet}=${value}`).toBeLessThanOrEqual(counts.get(value)!);
          expect(count).toBeGreaterThan(0);
        }
      }
      // Every job has a work model: the sample's counts add up to the jobs it read.
      expect(sample.work_model!.reduce((n, v) => n + v.count, 0)).toBe(3);
      for (const range of sample.salary!.ranges) {
        const same = exact.salary!.ranges.find((r) => r.from === range.from);
        expect(range.count).toBeLessThanOrEqual(same!.count);
      }
      // Fewer matches than the cap: the sample read them all, so its counts are exact, counted or not.
      const small = await facets("country=FR&facets=work_model", sampleApi);
      expect(small).toEqual(await facets("country=FR&facets=work_model"));
      release();
      await expect.poll(async () => facets(query, sampleApi)).toEqual(exact);
      const counted = await sampleApi.get<{ data: Facets }>(`/api/v1/jobs/facets?${query}`);
      expect(counted.headers.get("cache-control")).toMatch(/^public, max-age=[1-9]/);
    } finally {
      release();
      await sampling.close();
    }
  });

  it("answers a flood of new filters it cannot count nor sample with a quick 503, never a 500, and runs no more than it may queue", async () => {
    // Counts and samples both held: two of each run, two of each wait; the rest are not started.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let statements = 0;
    const holding = {
      $queryRawUnsafe: async (...args: Parameters<PrismaClient["$queryRawUnsafe"]>) => {
        statements++;
        await held;
        return db.prisma.$queryRawUnsafe(...args);
      },
    } as unknown as PrismaClient;
    const totalsCache = listTotals(30, holding, {
      bounding: holding,
      countCap: 3,
      firstCountBoundedWaitMs: 50,
      firstCountWaitMs: 400,
      maxQueued: 2,
    });
    const flooded = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" }, { totalsCache });
    const floodApi = await createApiClient(flooded.url);
    const path = (n: number) => `/api/v1/jobs/facets?salary_min=${n}&salary_currency=EUR&facets=work_model`;
    try {
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, n) => floodApi.get<{ error?: { code: string } }>(path(n + 1))),
      );
      expect(performance.now() - started).toBeLessThan(5_000);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.body.error?.code).toBe("database_unavailable");
        expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
      }
      // Two counts and two samples ran (each held at its first statement); nothing else started.
      expect(statements).toBe(4);
      release();
      // Then the two of each that waited, at most: the refused ones left nothing queued behind them
      // (a sample whose count came in first reads nothing).
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(statements).toBeGreaterThanOrEqual(6);
      expect(statements).toBeLessThanOrEqual(8);
      // A refused filter is counted when asked again: not poisoned, not paused for long.
      await expect.poll(async () => (await floodApi.get(path(12))).status, { timeout: 10_000 }).toBe(200);
    } finally {
      release();
      await flooded.close();
    }
  });
});
