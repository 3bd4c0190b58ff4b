// The access gates through REST: hidden rows of every kind are a 404 identical to a resource
// that never existed, and never appear in any list, filter, nested object or count.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { seedGatedCatalog, type GatedCatalog } from "../helpers/gated-catalog.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
let catalog: GatedCatalog;

beforeAll(async () => {
  db = await createTestDatabase();
  catalog = await seedGatedCatalog(db.prisma);
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "10000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

type Item = { links: { self: string }; [key: string]: unknown };

/** Every list and filter, then every item's and nested item's links.self: the whole public surface. */
async function crawl(): Promise<string[]> {
  const { seen } = catalog;
  const lists = [
    "/api/v1/jobs?limit=100",
    `/api/v1/jobs?limit=100&sector=${seen["sector"]}`,
    `/api/v1/jobs?limit=100&skill=${seen["skill"]}`,
    `/api/v1/jobs?limit=100&company=${seen["company"]}`,
    "/api/v1/jobs?limit=100&q=job",
    "/api/v1/talents?limit=100",
    `/api/v1/talents?limit=100&skill=${seen["skill"]}&sector=${seen["sector"]}`,
    "/api/v1/agents?limit=100",
    "/api/v1/agents?limit=100&category=recruiting",
    "/api/v1/companies?limit=100",
    "/api/v1/sectors",
    "/api/v1/skills?limit=100",
    // Unlisted: reachable by address only.
    `/api/v1/agents/${seen["unlistedAgent"]}`,
  ];
  const bodies: string[] = [];
  const visited = new Set<string>();
  const links: string[] = [];
  const collect = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === "object") {
      const self = (value as Item).links?.self;
      if (typeof self === "string" && !visited.has(self)) {
        visited.add(self);
        links.push(self);
      }
      Object.values(value).forEach(collect);
    }
  };
  for (const path of lists) {
    const response = await api.get(path);
    expect(response.status, path).toBe(200);
    bodies.push(response.text);
    collect(response.body);
  }
  while (links.length) {
    const link = links.shift()!;
    const response = await api.get(new URL(link).pathname);
    expect(response.status, link).toBe(200);
    bodies.push(response.text);
    collect(response.body);
  }
  return bodies;
}

describe("hidden rows through REST", () => {
  it("never appear in any list, filter, nested object or detail", async () => {
    const bodies = await crawl();
    // Every public thing was reached, and nothing hidden was.
    const all = bodies.join("\n");
    for (const [kind, key] of Object.entries(catalog.seen)) expect(all, `${kind} ${key} is visible`).toContain(key);
    for (const secret of catalog.hidden) expect(all).not.toContain(secret);
    expect(all).not.toContain("@internal.example");
  });

  it("answer 404 exactly like a resource that never existed", async () => {
    const cases = [
      ...catalog.hiddenByKind.jobs.map((key) => ["jobs", key] as const),
      ...catalog.hiddenByKind.companies.map((key) => ["companies", key] as const),
      ...catalog.hiddenByKind.talents.map((key) => ["talents", key] as const),
      ...catalog.hiddenByKind.agents.map((key) => ["agents", key] as const),
    ];
    expect(cases.length).toBeGreaterThanOrEqual(12);
    for (const [collection, key] of cases) {
      const hidden = await api.get(`/api/v1/${collection}/${key}`);
      const missing = await api.get(`/api/v1/${collection}/${key}-never-existed`);
      expect(hidden.status, `${collection}/${key}`).toBe(404);
      const normalise = (r: typeof hidden, k: string) => ({
        status: r.status,
        body: JSON.stringify({ ...(r.body["error"] as object), request_id: "-" }).replace(k, "KEY"),
        headers: [...r.headers.keys()].filter((h) => !["date", "content-length"].includes(h)),
      });
      expect(normalise(hidden, key)).toEqual(normalise(missing, `${key}-never-existed`));
    }
  });

  it("cannot be named by a filter", async () => {
    const [hiddenCompany] = catalog.hiddenByKind.companies;
    const response = await api.get(`/api/v1/jobs?company=${hiddenCompany}`);
    expect(response.body).toMatchObject({ data: [], meta: { total: 0 } });
  });

  it("are not counted", async () => {
    const { seen } = catalog;
    const sector = await api.get<{ data: Record<string, number> }>(`/api/v1/sectors/${seen["sector"]}`);
    // Three public jobs (open, of a hidden company, confidential), one public company, one public talent.
    expect(sector.body.data).toMatchObject({ open_job_count: 3, company_count: 1, talent_count: 1 });
    const skill = await api.get<{ data: Record<string, number> }>(`/api/v1/skills/${seen["skill"]}`);
    // Listed agents only: the published one and the one of a hidden vendor; not unlisted, draft or retired.
    expect(skill.body.data).toMatchObject({ open_job_count: 3, talent_count: 1, agent_count: 2 });
    const company = await api.get<{ data: { open_job_count: number; open_jobs: unknown[] } }>(
      `/api/v1/companies/${seen["company"]}`,
    );
    expect(company.body.data.open_job_count).toBe(1);
    expect(company.body.data.open_jobs).toHaveLength(1);
    const jobs = await api.get<{ meta: { total: number } }>("/api/v1/jobs");
    expect(jobs.body.meta.total).toBe(3);
  });

  it("shows a job of a hidden company and a confidential job without a company", async () => {
    for (const key of ["jobOfHiddenCompany", "confidentialJob"]) {
      const response = await api.get<{ data: { company: unknown } }>(`/api/v1/jobs/${catalog.seen[key]}`);
      expect(response.body.data.company).toBeNull();
    }
    const agent = await api.get<{ data: { vendor: unknown } }>(`/api/v1/agents/${catalog.seen["agentOfHiddenVendor"]}`);
    expect(agent.body.data.vendor).toBeNull();
  });

  it("lets an unlisted agent be reached by its address but not listed", async () => {
    const slug = catalog.seen["unlistedAgent"]!;
    expect((await api.get(`/api/v1/agents/${slug}`)).status).toBe(200);
    const list = await api.get("/api/v1/agents?limit=100");
    expect(list.text).not.toContain(slug);
  });
});
