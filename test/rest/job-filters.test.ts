// The job list's place, salary and order parameters through real HTTP: location (city, state or
// region, country; every comma-separated part), remote, salary_min with salary_currency and
// salary_period, and sort, each order continuing by cursor without gap or overlap. Invalid values
// are 400s naming the parameter. Every response is checked against the served OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../src/generated/prisma/client.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
/** The test's jobs by letter, a newest. */
const slug: Record<string, string> = {};

type List = {
  data: { slug: string }[];
  meta: { total: number; next: string | null; self: string };
};

const salary = (currency: string, min: number | null, max: number | null, period: "year" | "hour" = "year") => ({
  salaryCurrency: currency,
  salaryMin: min,
  salaryMax: max,
  salaryPeriod: period,
});

const place = (city: string | null, state: string | null, country: string | null) => ({
  locationCity: city,
  locationState: state,
  locationCountry: country,
});

// Newest first: a (1 day ago) .. g (7 days ago). c and g tie on salary; the id breaks the tie.
const JOBS: Record<string, Partial<Prisma.JobUncheckedCreateInput>> = {
  a: { workModel: "hybrid", ...place("Toronto", "ON", "CA"), ...salary("CAD", 100_000, 120_000) },
  b: { workModel: "onsite", ...place("San Francisco", "CA", "US"), ...salary("USD", 150_000, 200_000) },
  c: { workModel: "remote", ...place("Berlin", "BE", "DE"), ...salary("EUR", 70_000, 90_000) },
  d: { workModel: "onsite", ...place("Portland", "OR", "US"), ...salary("USD", 60, 80, "hour") },
  e: { workModel: "hybrid", ...place("Portland", "ME", "US"), ...salary("USD", 90_000, null) },
  f: { workModel: "remote" },
  g: { workModel: "onsite", ...place("Munich", "BY", "DE"), ...salary("EUR", 70_000, 90_000) },
};

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  for (const [i, [letter, data]] of Object.entries(JOBS).entries()) {
    slug[letter] = (await f.job(`job-${letter}`, { publishedAt: daysAgo(i + 1), ...data })).slug;
  }
  await f.talent("toronto-talent", place("Toronto", "ON", "CA"));
  await f.talent("nowhere-talent");
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function letters(query: string): Promise<string> {
  const { status, body } = await api.get<List>(`/api/v1/jobs?${query}`);
  expect(status, query).toBe(200);
  const byslug = Object.fromEntries(Object.entries(slug).map(([letter, s]) => [s, letter]));
  return body.data.map((j) => byslug[j.slug] ?? "?").join("");
}

describe("GET /jobs?location=", () => {
  it.each([
    ["Toronto", "a"],
    ["toronto,%20on", "a"],
    ["CA", "ab"], // California and Canada: documented
    ["Portland,OR", "d"],
    ["portland", "de"],
    ["de", "cg"],
    ["Portland,%20ME,%20US", "e"],
    ["Atlantis", ""],
  ])("location=%s lists %s; a job without a location never matches", async (location, expected) => {
    expect(await letters(`location=${location}`)).toBe(expected);
  });

  it("filters talents by location the same way", async () => {
    const { body } = await api.get<{ data: { handle: string }[] }>("/api/v1/talents?location=Toronto,%20CA");
    expect(body.data.map((t) => t.handle)).toEqual([expect.stringMatching(/^toronto-talent-/)]);
  });
});

describe("GET /jobs?remote=", () => {
  it("true lists remote jobs, false hybrid and onsite ones, and combines with work_model by AND", async () => {
    expect(await letters("remote=true")).toBe("cf");
    expect(await letters("remote=false")).toBe("abdeg");
    expect(await letters("remote=false&work_model=hybrid")).toBe("ae");
    expect(await letters("remote=true&work_model=onsite")).toBe("");
  });
});

describe("GET /jobs?salary_min=", () => {
  it("lists jobs whose range reaches the amount in the currency, per year unless salary_period says", async () => {
    expect(await letters("salary_min=100000&salary_currency=USD")).toBe("b");
    // e has only a minimum (90,000): the top of its range. d is paid per hour: not compared.
    expect(await letters("salary_min=85000&salary_currency=usd")).toBe("be");
    expect(await letters("salary_min=70&salary_currency=USD&salary_period=hour")).toBe("d");
    expect(await letters("salary_currency=EUR")).toBe("cg");
    expect(await letters("salary_currency=USD&salary_period=hour")).toBe("d");
    expect(await letters("salary_min=0&salary_currency=JPY")).toBe("");
  });

  it("spells the parameters out in meta.self", async () => {
    const { body } = await api.get<List>("/api/v1/jobs?sort=-salary&salary_currency=EUR&salary_min=1&location=DE");
    expect(body.meta.self).toBe(
      `${server.url}/api/v1/jobs?limit=50&offset=0&location=DE&salary_min=1&salary_currency=EUR&sort=-salary`,
    );
  });
});

describe("GET /jobs?sort=", () => {
  it("orders newest first by default, oldest first, and by the top of the salary range either way", async () => {
    expect(await letters("")).toBe("abcdefg");
    expect(await letters("sort=-published_at")).toBe("abcdefg");
    expect(await letters("sort=published_at")).toBe("gfedcba");
    // c and g both reach 90,000: the later id (g, created after c) comes first, descending.
    expect(await letters("sort=-salary&salary_currency=EUR")).toBe("gc");
    expect(await letters("sort=salary&salary_currency=EUR")).toBe("cg");
    expect(await letters("sort=salary&salary_currency=USD")).toBe("eb");
    expect(await letters("sort=-salary&salary_currency=USD&salary_period=hour")).toBe("d");
  });

  it.each([
    ["sort=published_at", "gfedcba"],
    ["sort=-salary&salary_currency=EUR", "gc"],
    ["sort=salary&salary_currency=USD", "eb"],
    ["remote=false&sort=published_at", "gedba"],
  ])("%s continues by cursor through every page, the same rows as by offset", async (query, expected) => {
    const seen: string[] = [];
    let next: string | null = `/api/v1/jobs?limit=1&${query}`;
    for (let pages = 0; next && pages < 10; pages++) {
      const { status, body }: { status: number; body: List } = await api.get<List>(next);
      expect(status).toBe(200);
      seen.push(...body.data.map((j) => j.slug));
      next = body.meta.next;
      if (next && pages > 0) expect(new URL(next).searchParams.get("cursor")).toBeTruthy();
    }
    const byslug = Object.fromEntries(Object.entries(slug).map(([letter, s]) => [s, letter]));
    expect(seen.map((s) => byslug[s]).join("")).toBe(expected);
  });

  it("refuses a cursor with another order than the one it came from", async () => {
    const first = await api.get<List>("/api/v1/jobs?limit=1&sort=published_at");
    const second = await api.get<List>(first.body.meta.next!);
    const cursor = new URL(second.body.meta.next!).searchParams.get("cursor")!;
    const { status, body } = await api.get<{ error: { code: string } }>(`/api/v1/jobs?limit=1&cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_cursor");
  });
});

describe("invalid place, salary and order parameters", () => {
  it.each([
    ["location=", "invalid_location"],
    ["location=%20,%20", "invalid_location"],
    [`location=${"a".repeat(201)}`, "invalid_location"],
    ["remote=yes", "invalid_remote"],
    ["remote=true&remote=false", "invalid_remote"],
    ["salary_min=-1&salary_currency=EUR", "invalid_salary_min"],
    ["salary_min=1.5&salary_currency=EUR", "invalid_salary_min"],
    ["salary_min=50000", "invalid_salary_min"],
    ["salary_currency=EURO", "invalid_salary_currency"],
    ["salary_currency=E1R", "invalid_salary_currency"],
    ["salary_period=annual", "invalid_salary_period"],
    ["sort=price", "invalid_sort"],
    ["sort=-salary", "invalid_sort"],
    ["sort=salary&sort=-salary", "invalid_sort"],
  ])("%s is a 400 %s naming the parameter", async (query, code) => {
    const { status, body } = await api.get<{ error: { code: string; message: string } }>(`/api/v1/jobs?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe(code);
    expect(body.error.message).toContain(code.slice("invalid_".length));
  });
});
