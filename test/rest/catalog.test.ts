// The catalog REST API's contract, through real HTTP against the app: every endpoint, field,
// parameter rule, error status, header and documented decision. Every response is checked
// against the served OpenAPI document by the client (test/helpers/api.ts).
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { publicJobWhere } from "../../src/graphql/gates.ts";
import { listTotals } from "../../src/graphql/totals.ts";
import { routes } from "../../src/rest/routes.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, openUnreachableDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
const keys: Record<string, string> = {};

type Body = Record<string, unknown>;
type List = {
  data: Body[];
  meta: { total: number; total_exact: boolean; limit: number; offset: number; self: string; next: string | null };
};
type Detail = { data: Body };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const ml = await f.sector("machine-learning", { name: "Machine Learning" });
  const python = await f.skill("python", { name: "Python", category: "backend" });
  const llm = await f.skill("llm-ops", { name: "LLM Ops", category: "llm" });
  const acme = await f.company("acme", {
    name: "Acme Robotics",
    size: "size_51_200",
    hqCity: "Berlin",
    hqCountry: "DE",
    logoUrl: "https://cdn.example.com/acme.png",
    sectors: { connect: { id: ml.id } },
  });
  keys["company"] = acme.slug;
  keys["sector"] = ml.slug;
  keys["skill"] = python.slug;
  keys["llmSkill"] = llm.slug;
  // Five public jobs, newest first: j0 .. j4.
  const jobs = [
    {
      title: "Senior Python Developer",
      workModel: "remote",
      employmentType: "full_time",
      text: "Build data pipelines.",
    },
    { title: "Robotics Engineer", workModel: "onsite", employmentType: "contract", text: "Program robot arms." },
    { title: "Data Engineer", workModel: "hybrid", employmentType: "part_time", text: "Developing pipelines daily." },
    { title: "ML Researcher", workModel: "remote", employmentType: "internship", text: "Research agents." },
    { title: "Support Engineer", workModel: "onsite", employmentType: "full_time", text: "Help customers." },
  ] as const;
  for (const [i, j] of jobs.entries()) {
    const job = await f.job(`j${i}`, {
      title: j.title,
      descriptionText: j.text,
      descriptionHtml: `<p>${j.text}</p>`,
      workModel: j.workModel,
      employmentType: j.employmentType,
      publishedAt: daysAgo(i + 1),
      companyId: i < 3 ? acme.id : null,
      sectorId: i === 0 ? ml.id : null,
      locationCity: i === 0 ? "Berlin" : null,
      locationState: i === 0 ? "BE" : null,
      locationCountry: i === 0 ? "DE" : null,
      seniority: i === 0 ? "senior" : null,
      applyUrl: i === 0 ? "https://acme.example.com/apply" : null,
      ...(i === 0
        ? { salaryMin: 70_000, salaryMax: 90_000, salaryCurrency: "EUR", salaryPeriod: "year" as const }
        : {}),
      skills: i === 0 ? { connect: [{ id: python.id }, { id: llm.id }] } : undefined,
    });
    keys[`j${i}`] = job.slug;
  }
  // Updated long ago: only updated_since can tell it apart.
  await db.sql.query(`UPDATE jobs SET updated_at = now() - interval '30 days' WHERE slug <> $1`, [keys["j0"]]);
  const talent = await f.talent("ada", {
    displayName: "Ada Lovelace",
    headline: "ML engineer",
    workModels: ["remote", "hybrid"],
    availability: "open_to_offers",
    skills: { connect: { id: python.id } },
    sectors: { connect: { id: ml.id } },
    links: { create: [{ kind: "github", url: "https://github.com/ada", position: 0 }] },
  });
  keys["talent"] = talent.handle;
  await f.talent("grace", { displayName: "Grace Hopper" });
  const agent = await f.agent("recruiter-bot", {
    category: "recruiting",
    pricingModel: "subscription",
    priceAmount: "49.90",
    priceCurrency: "USD",
    pricePeriod: "month",
    capabilities: ["screening", "scheduling"],
    vendorCompanyId: acme.id,
    skills: { connect: { id: llm.id } },
  });
  keys["agent"] = agent.slug;
  await f.agent("coder-bot", { category: "coding", publishedAt: daysAgo(3) });
  server = await startServer(db, {
    RATE_LIMIT_REQUESTS: "100000",
    PUBLIC_WEB_BASE_URL: "https://jobs.example.org/",
    // Behind a proxy that says how the client reached it (as Cloud Run's front end does).
    TRUST_PROXY: "true",
  });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const JOB_SUMMARY_FIELDS = [
  "id",
  "slug",
  "title",
  "work_model",
  "employment_type",
  "location_city",
  "location_state",
  "location_country",
  "salary",
  "company",
  "published_at",
  "links",
];

describe("GET /jobs", () => {
  it("lists public jobs newest first with the documented JobSummary fields and envelope", async () => {
    const { body, headers } = await api.get<List>("/api/v1/jobs");
    expect(body.data.map((j) => j["slug"])).toEqual(["j0", "j1", "j2", "j3", "j4"].map((k) => keys[k]));
    expect(body.meta).toEqual({
      total: 5,
      total_exact: true,
      limit: 50,
      offset: 0,
      self: `${server.url}/api/v1/jobs?limit=50&offset=0`,
      next: null,
    });
    expect(headers.get("link")).toBeNull();
    const [first] = body.data;
    expect(Object.keys(first!).sort()).toEqual([...JOB_SUMMARY_FIELDS].sort());
    expect(first).toMatchObject({
      title: "Senior Python Developer",
      work_model: "remote",
      employment_type: "full_time",
      location_city: "Berlin",
      location_state: "BE",
      location_country: "DE",
      salary: { min: 70_000, max: 90_000, currency: "EUR", period: "year" },
      company: {
        slug: keys["company"],
        name: "Acme Robotics",
        logo_url: "https://cdn.example.com/acme.png",
        links: {
          self: `${server.url}/api/v1/companies/${keys["company"]}`,
          html: `https://jobs.example.org/companies/${keys["company"]}`,
        },
      },
      links: { self: `${server.url}/api/v1/jobs/${keys["j0"]}`, html: `https://jobs.example.org/jobs/${keys["j0"]}` },
    });
    expect(first!["published_at"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(body.data[3]).toMatchObject({ company: null, salary: null, location_city: null });
  });

  it("pages with limit and offset; next leads on, is null on the last page, and is also the Link header", async () => {
    const seen: unknown[] = [];
    let path: string | null = "/api/v1/jobs?limit=2";
    const metas: List["meta"][] = [];
    while (path) {
      const response: Awaited<ReturnType<typeof api.get<List>>> = await api.get<List>(path);
      seen.push(...response.body.data.map((j) => j["slug"]));
      metas.push(response.body.meta);
      const next = response.body.meta.next;
      expect(response.headers.get("link")).toBe(next ? `<${next}>; rel="next"` : null);
      path = next ? new URL(next).pathname + new URL(next).search : null;
    }
    expect(seen).toEqual(["j0", "j1", "j2", "j3", "j4"].map((k) => keys[k]));
    expect(metas.map((m) => [m.offset, m.limit, m.total])).toEqual([
      [0, 2, 5],
      [2, 2, 5],
      [4, 2, 5],
    ]);
    // next continues by cursor beside the offset it stands for (test/rest/cursor.test.ts).
    expect(metas[0]!.next).toMatch(
      new RegExp(`^${server.url}/api/v1/jobs\\?limit=2&offset=2&cursor=[\\w-]+\\.[\\w-]+$`),
    );
  });

  it("answers an empty page past the end", async () => {
    // Past 1,000 the page is found over the list index first (a deferred join).
    const { body } = await api.get<List>("/api/v1/jobs?offset=5000");
    expect(body).toMatchObject({ data: [], meta: { total: 5, offset: 5000, next: null } });
  });

  it("filters by full text with English stemming, every word required", async () => {
    const slugs = async (query: string) =>
      (await api.get<List>(`/api/v1/jobs?${query}`)).body.data.map((j) => j["slug"]);
    // "developers" stems to "develop": the title "Developer" and the description "Developing" both match.
    expect(await slugs("q=developers")).toEqual([keys["j0"], keys["j2"]]);
    expect(await slugs("q=PIPELINES%20python")).toEqual([keys["j0"]]);
    expect(await slugs("q=engineer")).toEqual([keys["j1"], keys["j2"], keys["j4"]]);
    expect(await slugs("q=submarine")).toEqual([]);
  });

  it("filters by work_model and employment_type, comma-separated or repeated", async () => {
    const slugs = async (query: string) =>
      (await api.get<List>(`/api/v1/jobs?${query}`)).body.data.map((j) => j["slug"]);
    expect(await slugs("work_model=remote")).toEqual([keys["j0"], keys["j3"]]);
    expect(await slugs("work_model=remote,hybrid")).toEqual([keys["j0"], keys["j2"], keys["j3"]]);
    expect(await slugs("work_model=remote&work_model=hybrid")).toEqual([keys["j0"], keys["j2"], keys["j3"]]);
    expect(await slugs("employment_type=full_time")).toEqual([keys["j0"], keys["j4"]]);
    expect(await slugs("employment_type=contract,internship&work_model=onsite")).toEqual([keys["j1"]]);
  });

  it("filters by sector, skill, company and updated_since, and spells them out in meta.self", async () => {
    const list = async (query: string) => (await api.get<List>(`/api/v1/jobs?${query}`)).body;
    expect((await list(`sector=${keys["sector"]}`)).data.map((j) => j["slug"])).toEqual([keys["j0"]]);
    expect((await list(`skill=${keys["llmSkill"]}`)).data.map((j) => j["slug"])).toEqual([keys["j0"]]);
    expect((await list(`company=${keys["company"]}`)).meta.total).toBe(3);
    expect((await list("company=no-such-company")).meta.total).toBe(0);
    const recent = await list(`updated_since=${daysAgo(2).toISOString()}`);
    expect(recent.data.map((j) => j["slug"])).toEqual([keys["j0"]]);
    expect((await list("updated_since=2000-01-01")).meta.total).toBe(5);
    const combined = await list(`limit=1&work_model=remote&q=python`);
    expect(combined.meta.self).toBe(`${server.url}/api/v1/jobs?limit=1&offset=0&q=python&work_model=remote`);
  });

  it("finds a job by a skill as its links are now: a link added or removed, a skill given a new slug", async () => {
    // The filter reads the slugs the triggers on "_JobSkills" and skills keep in the job's row.
    const rust = await factories(db.prisma).skill("rust-lang", { name: "Rust" });
    const job = { slug: keys["j3"]! };
    const bySkill = async (slug: string) =>
      (await api.get<List>(`/api/v1/jobs?skill=${slug}`)).body.data.map((j) => j["slug"]);
    try {
      expect(await bySkill(rust.slug)).toEqual([]);
      await db.prisma.job.update({ where: job, data: { skills: { connect: { id: rust.id } } } });
      expect(await bySkill(rust.slug)).toEqual([keys["j3"]]);
      await db.prisma.skill.update({ where: { id: rust.id }, data: { slug: `${rust.slug}-v2` } });
      expect(await bySkill(rust.slug)).toEqual([]);
      expect(await bySkill(`${rust.slug}-v2`)).toEqual([keys["j3"]]);
      await db.prisma.job.update({ where: job, data: { skills: { disconnect: { id: rust.id } } } });
      expect(await bySkill(`${rust.slug}-v2`)).toEqual([]);
    } finally {
      await db.prisma.skill.delete({ where: { id: rust.id } });
    }
  });
});

describe("GET /jobs/{slug}", () => {
  it("answers the job detail: the summary fields and the rest of the posting", async () => {
    const { body } = await api.get<Detail>(`/api/v1/jobs/${keys["j0"]}`);
    for (const field of JOB_SUMMARY_FIELDS) expect(body.data).toHaveProperty(field);
    expect(body.data).toMatchObject({
      location_country: "DE",
      seniority: "senior",
      description_text: "Build data pipelines.",
      description_html: "<p>Build data pipelines.</p>",
      apply_url: "https://acme.example.com/apply",
      valid_through: null,
      sector: {
        slug: keys["sector"],
        name: "Machine Learning",
        links: { html: `https://jobs.example.org/sectors/${keys["sector"]}` },
      },
      skills: [
        { slug: keys["llmSkill"], name: "LLM Ops", category: "llm" },
        { slug: keys["skill"], name: "Python", category: "backend" },
      ],
    });
    expect(body.data).not.toHaveProperty("recruiter_email");
  });
});

describe("talents, agents, companies, sectors, skills", () => {
  it("GET /talents lists public talents by handle, filterable by skill and sector", async () => {
    const all = await api.get<List>("/api/v1/talents");
    expect(all.body.data.map((t) => t["display_name"])).toEqual(["Ada Lovelace", "Grace Hopper"]);
    const filtered = await api.get<List>(`/api/v1/talents?skill=${keys["skill"]}&sector=${keys["sector"]}`);
    expect(filtered.body.data).toHaveLength(1);
    expect(filtered.body.data[0]).toMatchObject({
      handle: keys["talent"],
      availability: "open_to_offers",
      work_models: ["remote", "hybrid"],
      links: { html: `https://jobs.example.org/talents/${keys["talent"]}` },
    });
  });

  it("GET /talents/{handle} answers with or without @ and in any case", async () => {
    for (const handle of [keys["talent"]!, `@${keys["talent"]}`, keys["talent"]!.toUpperCase()]) {
      const { status, body } = await api.get<Detail>(`/api/v1/talents/${encodeURIComponent(handle)}`);
      expect(status, handle).toBe(200);
      expect(body.data).toMatchObject({
        handle: keys["talent"],
        profile_links: [{ kind: "github", url: "https://github.com/ada" }],
        skills: [{ slug: keys["skill"] }],
        sectors: [{ slug: keys["sector"] }],
      });
      expect(body.data).not.toHaveProperty("email");
    }
  });

  it("GET /agents lists published agents newest first, filterable by category; detail has pricing and vendor", async () => {
    const all = await api.get<List>("/api/v1/agents");
    expect(all.body.meta.total).toBe(2);
    const recruiting = await api.get<List>("/api/v1/agents?category=Recruiting");
    expect(recruiting.body.data.map((a) => a["slug"])).toEqual([keys["agent"]]);
    const { body } = await api.get<Detail>(`/api/v1/agents/${keys["agent"]}`);
    expect(body.data).toMatchObject({
      category: "recruiting",
      pricing: { model: "subscription", amount: "49.90", currency: "USD", period: "month", unit: null },
      capabilities: ["screening", "scheduling"],
      vendor: { slug: keys["company"] },
      skills: [{ slug: keys["llmSkill"] }],
    });
  });

  it("GET /companies and /companies/{slug} with its open jobs", async () => {
    const list = await api.get<List>("/api/v1/companies");
    expect(list.body.data[0]).toMatchObject({
      slug: keys["company"],
      size: "51-200",
      headquarters: { city: "Berlin", state: null, country: "DE" },
      open_job_count: 3,
    });
    const { body } = await api.get<Detail>(`/api/v1/companies/${keys["company"]}`);
    expect(body.data).toMatchObject({
      open_job_count: 3,
      sectors: [{ slug: keys["sector"] }],
      links: { open_jobs: `${server.url}/api/v1/jobs?company=${keys["company"]}` },
    });
    const openJobs = body.data["open_jobs"] as Body[];
    expect(openJobs.map((j) => j["slug"])).toEqual([keys["j0"], keys["j1"], keys["j2"]]);
    expect(Object.keys(openJobs[0]!).sort()).toEqual([...JOB_SUMMARY_FIELDS].sort());
    // links.open_jobs is a working address.
    const all = await api.get<List>(
      new URL((body.data["links"] as Body)["open_jobs"] as string).pathname + `?company=${keys["company"]}`,
    );
    expect(all.body.meta.total).toBe(3);
  });

  it("GET /sectors lists every sector in one page; GET /sectors/{slug} answers one", async () => {
    const { body } = await api.get<List>("/api/v1/sectors");
    expect(body.meta).toEqual({
      total: 1,
      total_exact: true,
      limit: 1,
      offset: 0,
      self: `${server.url}/api/v1/sectors`,
      next: null,
    });
    expect(body.data[0]).toMatchObject({ slug: keys["sector"], open_job_count: 1, company_count: 1, talent_count: 1 });
    expect((await api.get(`/api/v1/sectors/${keys["sector"]}`)).status).toBe(200);
  });

  it("GET /skills pages and filters by category (case-insensitive); GET /skills/{slug} answers one", async () => {
    const all = await api.get<List>("/api/v1/skills?limit=1");
    expect(all.body.meta).toMatchObject({ total: 2, limit: 1, next: `${server.url}/api/v1/skills?limit=1&offset=1` });
    const llm = await api.get<List>("/api/v1/skills?category=LLM");
    expect(llm.body.data.map((s) => s["slug"])).toEqual([keys["llmSkill"]]);
    expect(llm.body.meta.self).toBe(`${server.url}/api/v1/skills?limit=50&offset=0&category=LLM`);
    const one = await api.get<Detail>(`/api/v1/skills/${keys["llmSkill"]}`);
    expect(one.body.data).toMatchObject({ category: "llm", open_job_count: 1, talent_count: 0, agent_count: 1 });
  });

  it("answers 404 for keys no resource can have: control characters, overlong, undecodable", async () => {
    for (const key of ["a%00b", "x".repeat(300), "%E0%A4%A"]) {
      const { status, body } = await api.get<{ error: Body }>(`/api/v1/jobs/${key}`);
      expect(status, key).toBe(404);
      expect(body.error["code"]).toBe("not_found");
    }
  });

  it("answers 404 not_found for every detail route with an unknown key", async () => {
    for (const route of routes.filter((r) => r.kind === "detail")) {
      const path = `/api/v1${route.path.replace(/\{\w+\}/, "does-not-exist")}`;
      const { status, body } = await api.get<{ error: Body }>(path);
      expect(status, path).toBe(404);
      expect(body.error["code"]).toBe("not_found");
      expect(body.error["message"]).toContain("does-not-exist");
    }
  });
});

describe("parameters", () => {
  const bad: [string, string][] = [
    ["/api/v1/jobs?limit=0", "invalid_limit"],
    ["/api/v1/jobs?limit=101", "invalid_limit"],
    ["/api/v1/jobs?limit=-1", "invalid_limit"],
    ["/api/v1/jobs?limit=1.5", "invalid_limit"],
    ["/api/v1/jobs?limit=1e1", "invalid_limit"],
    ["/api/v1/jobs?limit=ten", "invalid_limit"],
    ["/api/v1/jobs?limit=", "invalid_limit"],
    ["/api/v1/jobs?limit=10&limit=20", "invalid_limit"],
    ["/api/v1/jobs?offset=-1", "invalid_offset"],
    ["/api/v1/jobs?offset=x", "invalid_offset"],
    ["/api/v1/jobs?offset=2147483648", "invalid_offset"],
    ["/api/v1/talents?limit=1000", "invalid_limit"],
    ["/api/v1/agents?offset=-5", "invalid_offset"],
    ["/api/v1/companies?limit=abc", "invalid_limit"],
    ["/api/v1/skills?limit=0", "invalid_limit"],
    ["/api/v1/jobs?q=", "invalid_q"],
    ["/api/v1/jobs?q=%20%20", "invalid_q"],
    ["/api/v1/jobs?q=the%20and", "invalid_q"],
    [`/api/v1/jobs?q=${"a".repeat(201)}`, "invalid_q"],
    ["/api/v1/jobs?q=python%00", "invalid_q"],
    ["/api/v1/jobs?company=ac%01me", "invalid_company"],
    ["/api/v1/jobs?work_model=space", "invalid_work_model"],
    ["/api/v1/jobs?work_model=remote,", "invalid_work_model"],
    ["/api/v1/jobs?employment_type=FULL_TIME", "invalid_employment_type"],
    ["/api/v1/jobs?updated_since=yesterday", "invalid_updated_since"],
    ["/api/v1/jobs?updated_since=2026-13-45", "invalid_updated_since"],
    ["/api/v1/skills?category=", "invalid_category"],
    ["/api/v1/jobs?limt=10", "unknown_parameter"],
    ["/api/v1/talents?q=python", "unknown_parameter"],
    ["/api/v1/companies?sector=x", "unknown_parameter"],
    ["/api/v1/sectors?limit=10", "unknown_parameter"],
    [`/api/v1/jobs/x?expand=company`, "unknown_parameter"],
  ];
  it.each(bad)("%s is a 400 %s naming the parameter", async (path, code) => {
    const { status, body, headers } = await api.get<{ error: Body }>(path);
    expect(status).toBe(400);
    expect(body.error["code"]).toBe(code);
    const name =
      code === "unknown_parameter" ? new URL(path, "http://x").searchParams.keys().next().value : code.slice(8);
    expect(body.error["message"]).toContain(name);
    expect(headers.get("cache-control")).toBe("no-store");
  });

  it("applies the defaults when limit and offset are omitted", async () => {
    const { body } = await api.get<List>("/api/v1/skills");
    expect(body.meta).toMatchObject({ limit: 50, offset: 0 });
  });
});

describe("HTTP behaviour", () => {
  it("answers unknown paths with a JSON 404 and other methods with 405 and Allow", async () => {
    const unknown = await api.get<{ error: Body }>("/api/v1/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error["code"]).toBe("not_found");
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const response = await api.request<{ error: Body }>("/api/v1/jobs", { method });
      expect(response.status, method).toBe(405);
      expect(response.body.error["code"]).toBe("method_not_allowed");
      expect(response.headers.get("allow")).toBe("HEAD, GET");
    }
  });

  it("answers HEAD on every GET route with the GET headers and no body", async () => {
    for (const route of routes) {
      const path = `/api/v1${route.path.replace(/\{(\w+)\}/, (_m, name: string) => (name === "handle" ? keys["talent"]! : keyFor(route.path)))}`;
      const get = await api.get(path);
      const head = await api.request(path, { method: "HEAD" });
      expect(head.status, path).toBe(200);
      expect(head.text).toBe("");
      expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
      expect(head.headers.get("content-length")).toBe(get.headers.get("content-length"));
    }
  });

  it("sends strong ETags and answers a conditional GET with 304", async () => {
    for (const path of ["/api/v1/jobs?limit=2", `/api/v1/jobs/${keys["j0"]}`, "/api/v1/sectors"]) {
      const first = await api.get(path);
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[\w-]+"$/);
      expect(first.headers.get("cache-control")).toBe("public, max-age=60");
      const again = await api.get(path, { headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);
      expect(again.text).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      const stale = await api.get(path, { headers: { "if-none-match": '"something-else"' } });
      expect(stale.status).toBe(200);
    }
    // A different page is a different representation.
    const a = await api.get("/api/v1/jobs?limit=1");
    const b = await api.get("/api/v1/jobs?limit=2");
    expect(a.headers.get("etag")).not.toBe(b.headers.get("etag"));
  });

  it("allows any origin on every response, errors included, and answers preflights", async () => {
    const origin = { origin: "https://somewhere.example" };
    for (const path of ["/api/v1/jobs", "/api/v1/jobs?limit=0", "/api/v1/jobs/missing", "/nowhere"]) {
      const response = await api.get(path, { headers: origin });
      expect(response.headers.get("access-control-allow-origin"), path).toBe("*");
      const exposed = response.headers.get("access-control-expose-headers")!.toLowerCase().split(",");
      expect(exposed).toEqual(expect.arrayContaining(["etag", "link", "retry-after", "ratelimit", "ratelimit-policy"]));
    }
    const preflight = await api.request("/api/v1/jobs", {
      method: "OPTIONS",
      headers: { ...origin, "access-control-request-method": "GET", "access-control-request-headers": "if-none-match" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-max-age")).toBe("86400");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("if-none-match");
    const plain = await api.request("/api/v1/jobs", { method: "OPTIONS" });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("allow")).toBe("HEAD, GET");
  });

  it("builds absolute links from the public scheme and host behind Cloud Run's proxy", async () => {
    const body = await rawGet(server.url, "/api/v1/jobs?limit=1", {
      host: "api.jobs.example.org",
      "x-forwarded-proto": "https",
    });
    const list = JSON.parse(body) as List;
    expect(list.meta.self).toBe("https://api.jobs.example.org/api/v1/jobs?limit=1&offset=0");
    expect(list.meta.next).toMatch(/^https:\/\/api\.jobs\.example\.org\/api\/v1\/jobs\?limit=1&offset=1&cursor=/);
    expect((list.data[0]!["links"] as Body)["self"]).toMatch(/^https:\/\/api\.jobs\.example\.org\/api\/v1\/jobs\//);
  });

  it("uses PUBLIC_API_BASE_URL when it is set", async () => {
    const pinned = await startServer(db, { PUBLIC_API_BASE_URL: "https://api.example.net/" });
    try {
      const list = (await (await fetch(`${pinned.url}/api/v1/jobs?limit=1`)).json()) as List;
      expect(list.meta.self).toBe("https://api.example.net/api/v1/jobs?limit=1&offset=0");
    } finally {
      await pinned.close();
    }
  });

  it("answers 503 database_unavailable with Retry-After when the database cannot be reached", async () => {
    const down = await openUnreachableDatabase();
    const broken = await startServer(down);
    try {
      const response = await fetch(`${broken.url}/api/v1/jobs`);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      const body = (await response.json()) as { error: Body };
      expect(body.error["code"]).toBe("database_unavailable");
      expect(api.validate("/jobs", 503, body)).toBeNull();
    } finally {
      await broken.close();
      await down.close();
    }
  });
});

describe("the OpenAPI description", () => {
  it("is OpenAPI 3.1, version 1.0.0, and describes every route served", () => {
    expect(api.document["openapi"]).toBe("3.1.0");
    expect((api.document["info"] as Body)["version"]).toBe("1.0.0");
    expect(Object.keys(api.document["paths"] as Body).sort()).toEqual(routes.map((r) => r.path).sort());
    expect((api.document["servers"] as Body[])[0]!["url"]).toBe(`${server.url}/api/v1`);
  });

  it("is strict enough to catch a wrong body", () => {
    const good = {
      data: [],
      meta: { total: 0, total_exact: true, limit: 1, offset: 0, self: "https://a.example/x", next: null },
    };
    expect(api.validate("/jobs", 200, good)).toBeNull();
    expect(api.validate("/jobs", 200, { ...good, meta: { ...good.meta, next: 3 } })).not.toBeNull();
    expect(api.validate("/jobs", 200, { ...good, undocumented: true })).not.toBeNull();
    const job = { id: "nope", slug: "s", title: "t" };
    expect(api.validate("/jobs", 200, { ...good, data: [job] })).not.toBeNull();
  });
});

function keyFor(path: string): string {
  if (path.startsWith("/jobs")) return keys["j0"]!;
  if (path.startsWith("/agents")) return keys["agent"]!;
  if (path.startsWith("/companies")) return keys["company"]!;
  if (path.startsWith("/sectors")) return keys["sector"]!;
  return keys["skill"]!;
}

/** A GET with headers fetch will not send (Host), as Cloud Run's front end forwards them. */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<string> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve(body));
      })
      .on("error", reject);
  });
}

describe("remembered list totals", () => {
  it("are reused for LIST_TOTAL_CACHE_SECONDS, per list and filter, then recounted while the last value is served", async () => {
    const cached = await startServer(db, { LIST_TOTAL_CACHE_SECONDS: "2" });
    try {
      const total = async (query: string) =>
        ((await (await fetch(`${cached.url}/api/v1/jobs?${query}`)).json()) as List).meta.total;
      // A first total may be answered by the bounded count while the full count still runs; the
      // full count then replaces it. Let the first counts settle before the totals are read.
      await total("limit=1");
      await total("work_model=remote");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = await total("limit=1");
      const remote = await total("work_model=remote");
      const extra = await factories(db.prisma).job("late-arrival", { workModel: "remote" });
      // Within the window the totals stand; the new job is in the items already.
      expect(await total("limit=1")).toBe(before);
      expect(await total("work_model=remote")).toBe(remote);
      expect(await total("work_model=remote&limit=2")).toBe(remote);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      // Stale while revalidating: the first request past the window still gets the last total
      // and starts one recount in the background; the requests after it see the new count.
      expect(await total("work_model=remote")).toBe(remote);
      await expect.poll(() => total("work_model=remote")).toBe(remote + 1);
      await expect.poll(() => total("limit=1")).toBe(before + 1);
      await db.prisma.job.delete({ where: { id: extra.id } });
    } finally {
      await cached.close();
    }
  });

  it("answer a first total that takes long to count as a documented lower bound, next on full pages, exact afterwards", async () => {
    // Counts of a million jobs, scaled down: a cap of 2 rows, and full counts held back until released.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = {
      job: {
        count: async (args: object) => {
          await held;
          return db.prisma.job.count(args);
        },
      },
    } as unknown as PrismaClient;
    const bounded = await startServer(
      db,
      {},
      { totalsCache: listTotals(30, slow, { countCap: 2, firstCountBoundedWaitMs: 50 }) },
    );
    const boundedApi = await createApiClient(bounded.url);
    // Not one of the kept counters' filters, so it is counted.
    const path = "/api/v1/jobs?limit=2&offset=2&work_model=hybrid,onsite,remote";
    try {
      const first = await boundedApi.get<List>(path);
      expect(first.status).toBe(200);
      expect(first.body.meta).toMatchObject({ total_exact: false, offset: 2, limit: 2 });
      expect(first.headers.get("cache-control")).toBe("public, max-age=0");
      // At least what this request has seen, and one more since the page was full.
      expect(first.body.meta.total).toBe(5);
      expect(first.body.meta.next).toContain("offset=4");
      release();
      const exact = await db.prisma.job.count({ where: { AND: [publicJobWhere(new Date())] } });
      await expect
        .poll(async () => (await boundedApi.get<List>(path)).body.meta)
        .toMatchObject({ total_exact: true, total: exact });
    } finally {
      await bounded.close();
    }
  });
});
