// The typed client (clients/typescript) against the real catalog service: auto-paging that
// follows meta.next over several pages (the same rows as offset pages), typed errors in the
// documented shape, Retry-After honoured on the per-IP limit's 429 (bounded, abortable), and the
// generated types equal to what the served documents generate.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  catalogItems,
  catalogPages,
  createCatalogClient,
  type CatalogListQuery,
  type RetryEvent,
} from "../../clients/typescript/src/index.ts";
import { clientTypes, generatedClientFiles } from "../../scripts/generate-client.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
const JOBS = 7;
const REMOTE = 4;
let company = "";

/** A fetch that records the URL of every request it sends. */
function recordingFetch() {
  const urls: string[] = [];
  const fetcher = (request: Request) => {
    urls.push(request.url);
    return fetch(request);
  };
  return { urls, fetch: fetcher };
}

/** The slugs of a job list read by offset, page after page. */
async function offsetPages(query: CatalogListQuery<"/jobs"> & { limit: number }): Promise<string[]> {
  const client = createCatalogClient({ baseUrl: server.url });
  const slugs: string[] = [];
  for (let offset = 0; ; offset += query.limit) {
    const { data, error } = await client.GET("/jobs", { params: { query: { ...query, offset } } });
    expect(error).toBeUndefined();
    slugs.push(...data!.data.map((job) => job.slug));
    if (data!.data.length < query.limit) return slugs;
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  company = (await f.company("client-co")).slug;
  const companyId = (await db.prisma.company.findUniqueOrThrow({ where: { slug: company } })).id;
  for (let i = 0; i < JOBS; i++) {
    await f.job(`client-job${i}`, {
      workModel: i < REMOTE ? "remote" : "onsite",
      publishedAt: daysAgo(i + 1),
      companyId,
      locationCity: i % 2 === 0 ? "Berlin" : "Lisbon",
      // Salaries in EUR a year for all but the last, two of them equal (the order's tie-breaker decides).
      ...(i < JOBS - 1
        ? {
            salaryMin: 40_000,
            salaryMax: 50_000 + (i === 3 ? 2 : i) * 10_000,
            salaryCurrency: "EUR",
            salaryPeriod: "year",
          }
        : {}),
    });
  }
  // A job that is not public: never listed.
  await f.job("client-draft", { status: "draft", companyId });
  server = await startServer(db);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

describe("auto-paging", () => {
  it("follows meta.next over 4 pages, by cursor, to the same rows as offset pages", async () => {
    const recorder = recordingFetch();
    const client = createCatalogClient({ baseUrl: server.url, fetch: recorder.fetch });
    const followed = await collect(catalogItems(client, "/jobs", { query: { limit: 2, company } }));
    expect(followed).toHaveLength(JOBS);
    expect(recorder.urls).toHaveLength(4);
    for (const url of recorder.urls.slice(1)) expect(new URL(url).searchParams.get("cursor")).toBeTruthy();

    expect(followed.map((job) => job.slug)).toEqual(await offsetPages({ limit: 2, company }));
    expect(new Set(followed.map((job) => job.slug)).size).toBe(JOBS);
  });

  it.each<[string, CatalogListQuery<"/jobs">, number]>([
    ["by salary, highest first, with a tie", { sort: "-salary", salary_currency: "EUR" }, JOBS - 1],
    ["by salary, lowest first, from an amount", { sort: "salary", salary_currency: "EUR", salary_min: 60_000 }, 5],
    ["oldest first, in one city", { sort: "published_at", location: "berlin" }, 4],
    ["remote only, with a work model spelled out too", { remote: true, work_model: ["remote"] }, REMOTE],
  ])("pages %s over every page by cursor, as offset pages do", async (_, query, expected) => {
    const recorder = recordingFetch();
    const client = createCatalogClient({ baseUrl: server.url, fetch: recorder.fetch });
    // The company keeps other test files' rows out (the table is built before it exists).
    const followed = await collect(catalogItems(client, "/jobs", { query: { ...query, company, limit: 1 } }));
    expect(followed).toHaveLength(expected);
    expect(recorder.urls).toHaveLength(expected);
    for (const url of recorder.urls.slice(1)) expect(new URL(url).searchParams.get("cursor")).toBeTruthy();
    expect(followed.map((job) => job.slug)).toEqual(await offsetPages({ ...query, company, limit: 1 }));
  });

  it("keeps every filter on the following pages, and pages report their meta", async () => {
    const client = createCatalogClient({ baseUrl: server.url });
    const pages = await collect(
      catalogPages(client, "/jobs", { query: { limit: 1, company, work_model: ["remote"] } }),
    );
    expect(pages).toHaveLength(REMOTE);
    expect(pages.map((page) => page.meta.offset)).toEqual([0, 1, 2, 3]);
    expect(pages.at(-1)!.meta.next).toBeNull();
    for (const page of pages) {
      expect(page.meta.total).toBe(REMOTE);
      expect(page.data[0]!.work_model).toBe("remote");
    }
  });

  it("types /suggest and meta.search (issue 40)", async () => {
    const client = createCatalogClient({ baseUrl: server.url });
    const { data, error } = await client.GET("/suggest", { params: { query: { q: "a", types: ["skill"], limit: 5 } } });
    expect(error).toBeUndefined();
    for (const s of data!.data.suggestions) expect(s.type).toBe("skill");
    const jobs = await client.GET("/jobs", { params: { query: { q: "engineer", limit: 1 } } });
    expect(jobs.data?.meta.search?.words).toEqual(["engineer"]);
  });

  it("pages other lists by the same helper (offset-only /companies, parameterless /sectors)", async () => {
    const client = createCatalogClient({ baseUrl: server.url });
    const companies = await collect(catalogItems(client, "/companies", { query: { limit: 1 } }));
    expect(companies.map((c) => c.slug)).toContain(company);
    const sectors = await collect(catalogItems(client, "/sectors"));
    expect(sectors).toEqual(expect.any(Array));
  });

  it("stops at an empty page even when it carries a next (a feed's token to resume from)", async () => {
    let requests = 0;
    const feed = (request: Request) => {
      requests++;
      const next = `${new URL(request.url).origin}/api/v1/jobs?cursor=resume-later`;
      const meta = { total: 0, total_exact: true, limit: 50, offset: 0, self: request.url, next };
      return Promise.resolve(Response.json({ data: [], meta }));
    };
    const client = createCatalogClient({ baseUrl: "http://127.0.0.1:9", fetch: feed });
    expect(await collect(catalogItems(client, "/jobs"))).toEqual([]);
    expect(requests).toBe(1);
  });

  it("throws an ApiError in the documented shape when a page is refused", async () => {
    const client = createCatalogClient({ baseUrl: server.url });
    const error = await collect(catalogItems(client, "/jobs", { query: { limit: 500 } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: "invalid_limit" });
    expect((error as ApiError).requestId).toBeTruthy();
  });
});

describe("typed errors", () => {
  it("returns the documented error body, typed, beside the response", async () => {
    const client = createCatalogClient({ baseUrl: server.url });
    const missing = await client.GET("/jobs/{slug}", { params: { path: { slug: "no-such-job" } } });
    expect(missing.data).toBeUndefined();
    expect(missing.response.status).toBe(404);
    // The type is the document's Error schema: code and message are strings, request_id optional.
    const code: string | undefined = missing.error?.error.code;
    expect(code).toBe("not_found");
    expect(Object.keys(missing.error!.error).sort()).toEqual(["code", "message", "request_id"]);
    expect(missing.error!.error.request_id).toBe(missing.response.headers.get("x-request-id"));

    const unknown = await client.GET("/jobs", { params: { query: { limt: 10 } as never } });
    expect(unknown.error?.error.code).toBe("unknown_parameter");
  });

  it("types the success body by path (base given as the origin or with /api/v1)", async () => {
    const client = createCatalogClient({ baseUrl: `${server.url}/api/v1/` });
    const { data } = await client.GET("/companies/{slug}", { params: { path: { slug: company } } });
    expect(data!.data.slug).toBe(company);
  });
});

describe("Retry-After on 429", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startServer(db, { RATE_LIMIT_REQUESTS: "2", RATE_LIMIT_WINDOW_SECONDS: "1" });
  });
  afterAll(async () => {
    await limited?.close();
  });

  /**
   * Starts a fresh window and uses up its two requests, so that the next request is refused for
   * about a second whatever the timing: wait out the current window first, then spend the new one.
   */
  async function exhaust() {
    const raw = createCatalogClient({ baseUrl: limited.url, retry: false });
    let response: Response;
    do response = (await raw.GET("/sectors")).response;
    while (response.status !== 429);
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get("retry-after")) * 1000 + 50));
    for (let i = 0; i < 2; i++) expect((await raw.GET("/sectors")).response.status).toBe(200);
  }

  it("waits as Retry-After says, then answers the retried request", async () => {
    const events: RetryEvent[] = [];
    const client = createCatalogClient({ baseUrl: limited.url, retry: { onRetry: (e) => events.push(e) } });
    await exhaust();
    const started = Date.now();
    const { data, response } = await client.GET("/sectors");
    expect(response.status).toBe(200);
    expect(data!.data).toEqual(expect.any(Array));
    expect(events[0]).toMatchObject({ attempt: 1, status: 429, method: "GET" });
    expect(events[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("auto-paging goes on through a 429", async () => {
    const client = createCatalogClient({ baseUrl: limited.url });
    await exhaust();
    const jobs = await collect(catalogItems(client, "/jobs", { query: { limit: 3, company } }));
    expect(jobs).toHaveLength(JOBS);
  });

  it("returns the typed 429 when retries are off or the wait is longer than allowed", async () => {
    for (const retry of [{ retries: 0 }, { maxWaitMs: 500 }]) {
      const client = createCatalogClient({ baseUrl: limited.url, retry });
      await exhaust();
      const started = Date.now();
      const { error, response } = await client.GET("/sectors");
      expect(Date.now() - started).toBeLessThan(1_000); // a retry would have waited 1 s
      expect(response.status).toBe(429);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(error?.error.code).toBe("rate_limited");
    }
  });

  it("stops waiting when the request's signal aborts", async () => {
    const client = createCatalogClient({ baseUrl: limited.url, retry: { maxWaitMs: 60_000 } });
    await exhaust();
    const controller = new AbortController();
    const started = Date.now();
    const pending = client.GET("/sectors", {
      signal: controller.signal,
      // Abort once the 429 is in and the wait has begun.
      middleware: [{ onResponse: () => void setTimeout(() => controller.abort(), 50) }],
    });
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - started).toBeLessThan(900);
  });
});

describe("generated types", () => {
  it("are what the served catalog document generates, and what is committed", async () => {
    const files = await generatedClientFiles();
    for (const { filename, content } of files) {
      expect(await readFile(path.resolve(import.meta.dirname, "../..", filename), "utf8"), filename).toBe(content);
    }
    const served = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as object;
    const catalog = files.find((file) => file.filename.endsWith("/catalog.ts"))!;
    expect(await clientTypes(served, catalog.filename)).toBe(catalog.content);
  });
});
