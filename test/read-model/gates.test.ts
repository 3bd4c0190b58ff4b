// The public access gates: rows of every hidden kind are seeded beside public ones, and none may
// surface through any root field, relation, filter or count of the read model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { seedGatedCatalog, type GatedCatalog } from "../helpers/gated-catalog.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let seen: GatedCatalog["seen"];
let hidden: GatedCatalog["hidden"];

beforeAll(async () => {
  db = await createTestDatabase();
  ({ seen, hidden } = await seedGatedCatalog(db.prisma));
  // One query asks for every list at its largest, relations and nested objects included, to find
  // any hidden row: far over the cost limit a public client gets (docs/graphql-cost.md), which is not
  // what this test is about.
  server = await startServer(db, { GRAPHQL_MAX_ROWS: "1000000", GRAPHQL_MAX_COST: "10000000" });
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const companyFields = `slug name openJobCount openJobs(limit: 100) { slug company { slug } } sectors { slug }`;
const everything = `{
  jobs(limit: 100) { total items { slug company { ${companyFields} } sector { slug openJobCount talentCount companyCount } skills { slug openJobCount talentCount agentCount } } }
  companies(limit: 100) { total items { ${companyFields} } }
  talents(limit: 100) { total items { handle skills { slug talentCount } sectors { slug talentCount } } }
  agents(limit: 100) { total items { slug vendor { ${companyFields} } skills { slug agentCount } } }
  sectors { slug openJobCount talentCount companyCount }
  skills(limit: 100) { total items { slug openJobCount talentCount agentCount } }
}`;

describe("access gates", () => {
  it("never return a hidden row through any list, relation or nested object", async () => {
    const result = await server.graphql(everything);
    expect(result.errors).toBeUndefined();
    const text = JSON.stringify(result.data);
    for (const marker of hidden) expect(text).not.toContain(marker);
    for (const visible of Object.values(seen).filter((s) => s !== seen["unlistedAgent"])) {
      expect(text).toContain(visible);
    }
  });

  it("list exactly the public jobs, with company null where it has no public page", async () => {
    const { data } = await server.graphql<{
      jobs: { total: number; items: { slug: string; company: { slug: string } | null }[] };
    }>(`{ jobs { total items { slug company { slug } } } }`);
    expect(data?.jobs.total).toBe(3);
    const bySlug = Object.fromEntries(data!.jobs.items.map((j) => [j.slug, j.company?.slug ?? null]));
    expect(bySlug).toEqual({
      [seen["openJob"]!]: seen["company"],
      [seen["jobOfHiddenCompany"]!]: null,
      [seen["confidentialJob"]!]: null,
    });
  });

  it("answer null for every hidden row looked up by slug or handle", async () => {
    for (const marker of hidden.filter((m) => !m.includes("@"))) {
      const { data, errors } = await server.graphql<Record<string, unknown>>(
        `query ($id: String!) { job(slug: $id) { slug } company(slug: $id) { slug } talent(handle: $id) { handle } agent(slug: $id) { slug } }`,
        { id: marker },
      );
      expect(errors).toBeUndefined();
      expect(data).toEqual({ job: null, company: null, talent: null, agent: null });
    }
  });

  it("keep a company's open jobs to published, unfilled, live and unexpired ones", async () => {
    const { data } = await server.graphql<{ company: { openJobCount: number; openJobs: { slug: string }[] } }>(
      `query ($slug: String!) { company(slug: $slug) { openJobCount openJobs { slug } } }`,
      { slug: seen["company"] },
    );
    expect(data?.company).toEqual({ openJobCount: 1, openJobs: [{ slug: seen["openJob"] }] });
  });

  it("count only public rows through a skill or a sector", async () => {
    const { data } = await server.graphql<{ skill: unknown; sector: unknown }>(
      `query ($skill: String!, $sector: String!) {
        skill(slug: $skill) { openJobCount talentCount agentCount }
        sector(slug: $sector) { openJobCount talentCount companyCount } }`,
      { skill: seen["skill"], sector: seen["sector"] },
    );
    expect(data?.skill).toEqual({ openJobCount: 3, talentCount: 1, agentCount: 2 });
    expect(data?.sector).toEqual({ openJobCount: 3, talentCount: 1, companyCount: 1 });
  });

  it("do not let a filter name a hidden company", async () => {
    const hiddenCompany = hidden[0];
    const { data } = await server.graphql<{ hidden: { total: number }; visible: { items: { slug: string }[] } }>(
      `query ($hidden: String!, $visible: String!) {
        hidden: jobs(filter: { company: $hidden }) { total }
        visible: jobs(filter: { company: $visible }) { items { slug } } }`,
      { hidden: hiddenCompany, visible: seen["company"] },
    );
    expect(data?.hidden.total).toBe(0);
    expect(data?.visible.items).toEqual([{ slug: seen["openJob"] }]);
  });

  it("filter talents by skill and sector among public profiles only", async () => {
    const { data } = await server.graphql<{ a: { items: { handle: string }[] }; b: { total: number } }>(
      `query ($skill: String!, $sector: String!) {
        a: talents(filter: { skill: $skill }) { items { handle } }
        b: talents(filter: { sector: $sector }) { total } }`,
      { skill: seen["skill"], sector: seen["sector"] },
    );
    expect(data?.a.items).toEqual([{ handle: seen["talent"] }]);
    expect(data?.b.total).toBe(1);
  });

  it("answer an unlisted agent by slug but never list it", async () => {
    const { data } = await server.graphql<{
      agent: { slug: string; vendor: null } | null;
      agents: { items: { slug: string }[] };
    }>(`query ($slug: String!) { agent(slug: $slug) { slug vendor { slug } } agents { items { slug } } }`, {
      slug: seen["unlistedAgent"],
    });
    expect(data?.agent?.slug).toBe(seen["unlistedAgent"]);
    expect(data?.agents.items.map((a) => a.slug).sort()).toEqual([seen["agent"], seen["agentOfHiddenVendor"]].sort());
  });

  it("show an agent's vendor only when the vendor has a public page", async () => {
    const { data } = await server.graphql<{ a: { vendor: { slug: string } | null }; b: { vendor: null } }>(
      `query ($a: String!, $b: String!) { a: agent(slug: $a) { vendor { slug } } b: agent(slug: $b) { vendor { slug } } }`,
      { a: seen["agent"], b: seen["agentOfHiddenVendor"] },
    );
    expect(data?.a.vendor?.slug).toBe(seen["company"]);
    expect(data?.b.vendor).toBeNull();
  });

  it("keep internal fields out of the public schema", async () => {
    const { data } = await server.graphql<{
      __schema: { types: { name: string; fields: { name: string }[] | null }[] };
    }>(`{ __schema { types { name fields { name } } } }`);
    const fields = data!.__schema.types.flatMap((t) => (t.fields ?? []).map((f) => `${t.name}.${f.name}`));
    const internal = /\.(status|filled|email|contactEmail|recruiterEmail|hasPublicPage|visibility|accountState)$/;
    expect(fields.filter((f) => internal.test(f))).toEqual([]);
    expect(fields).toContain("Job.title");
  });
});
