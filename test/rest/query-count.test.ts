// The SQL each /api/v1 route costs, snapshotted: the tables each statement reads (a joined
// relation is named beside its row), so a route that starts sending one more statement, or loses
// its join, shows up as a diff. Same pages of 2 and of 20 items, so a statement per row would too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { statementLog } from "../helpers/statement-log.ts";

let db: TestDatabase;
let server: TestServer;
const key: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const sectors = await Promise.all([f.sector(), f.sector()]);
  const skills = await Promise.all([f.skill(), f.skill(), f.skill()]);
  const companies = await Promise.all(
    [0, 1, 2].map(() =>
      f.company("company", { hasPublicPage: true, sectors: { connect: sectors.map((s) => ({ id: s.id })) } }),
    ),
  );
  for (let i = 0; i < 30; i++) {
    const job = await f.job("job", {
      companyId: companies[i % 3]!.id,
      sectorId: sectors[i % 2]!.id,
      publishedAt: daysAgo(1 + (i % 10)),
      skills: { connect: skills.slice(0, 1 + (i % 3)).map((s) => ({ id: s.id })) },
    });
    key["job"] ??= job.slug;
  }
  for (let i = 0; i < 25; i++) {
    const talent = await f.talent("talent", {
      visibility: "public",
      skills: { connect: [{ id: skills[i % 3]!.id }] },
      sectors: { connect: [{ id: sectors[i % 2]!.id }] },
    });
    key["talent"] ??= talent.handle;
  }
  for (let i = 0; i < 25; i++) {
    const agent = await f.agent("agent", {
      status: "published",
      publishedAt: daysAgo(1 + i),
      vendorCompanyId: companies[i % 3]!.id,
      skills: { connect: [{ id: skills[i % 3]!.id }] },
    });
    key["agent"] ??= agent.slug;
  }
  key["company"] = companies[0]!.slug;
  key["sector"] = sectors[0].slug;
  key["skill"] = skills[0].slug;
  server = await startServer(db);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function statementsFor(path: string): Promise<string[]> {
  db.queries.length = 0;
  const response = await fetch(`${server.url}/api/v1${path}`);
  expect(response.status, path).toBe(200);
  await response.arrayBuffer();
  return statementLog(db.queries);
}

describe("SQL statements per REST route", () => {
  it.each([
    ["/jobs?limit=%i"],
    ["/talents?limit=%i"],
    ["/agents?limit=%i"],
    ["/companies?limit=%i"],
    ["/skills?limit=%i"],
  ])("%s costs the same statements for 2 items as for 20", async (template) => {
    const small = await statementsFor(template.replace("%i", "2"));
    const large = await statementsFor(template.replace("%i", "20"));
    expect(large).toEqual(small);
  });

  it("lists and details: one statement per page or resource where the shape allows", async () => {
    const routes = {
      "/jobs": "/jobs?limit=20",
      "/jobs (next page, by cursor)": "",
      "/jobs?q": "/jobs?limit=20&q=engineer",
      "/jobs/{slug}": `/jobs/${key["job"]}`,
      "/talents": "/talents?limit=20",
      "/talents/{handle}": `/talents/${key["talent"]}`,
      "/agents": "/agents?limit=20",
      "/agents/{slug}": `/agents/${key["agent"]}`,
      "/companies": "/companies?limit=20",
      "/companies/{slug}": `/companies/${key["company"]}`,
      "/sectors": "/sectors",
      "/sectors/{slug}": `/sectors/${key["sector"]}`,
      "/skills": "/skills?limit=20",
      "/skills/{slug}": `/skills/${key["skill"]}`,
    };
    const first = (await (await fetch(`${server.url}/api/v1/jobs?limit=5`)).json()) as { meta: { next: string } };
    routes["/jobs (next page, by cursor)"] = new URL(first.meta.next).search.replace(/^/, "/jobs");
    const log: Record<string, string[]> = {};
    for (const [name, path] of Object.entries(routes)) log[name] = await statementsFor(path);
    expect(log).toMatchInlineSnapshot(`
      {
        "/agents": [
          "COUNT agents",
          "SELECT agents + companies",
        ],
        "/agents/{slug}": [
          "SELECT agents + companies + _AgentSkills + skills",
        ],
        "/companies": [
          "COUNT companies",
          "SELECT catalog_counters + job_count_events",
          "SELECT companies",
        ],
        "/companies/{slug}": [
          "SELECT catalog_counters + job_count_events",
          "SELECT companies + _CompanySectors + sectors + jobs",
        ],
        "/jobs": [
          "SELECT job_count_events + catalog_counters + sectors + skills + companies",
          "SELECT jobs + companies",
        ],
        "/jobs (next page, by cursor)": [
          "SELECT job_count_events + catalog_counters + sectors + skills + companies",
          "SELECT jobs + companies",
        ],
        "/jobs/{slug}": [
          "SELECT _JobSkills + skills + jobs + companies + sectors",
        ],
        "/jobs?q": [
          "COUNT jobs",
          "SELECT companies",
          "SELECT jobs",
          "SELECT jobs + companies",
          "SELECT jobs + companies",
          "SELECT jobs + companies",
          "SELECT pg_class + pg_stats",
          "SELECT places",
          "SELECT search_words + search_spellings",
          "SELECT search_words + search_spellings",
          "SELECT search_words + search_spellings",
          "SELECT search_words + search_spellings",
          "SELECT unnest",
        ],
        "/sectors": [
          "SELECT catalog_counters + job_count_events",
          "SELECT sectors",
        ],
        "/sectors/{slug}": [
          "SELECT catalog_counters + job_count_events",
          "SELECT sectors",
        ],
        "/skills": [
          "COUNT skills",
          "SELECT catalog_counters + job_count_events",
          "SELECT skills",
        ],
        "/skills/{slug}": [
          "SELECT catalog_counters + job_count_events",
          "SELECT skills",
        ],
        "/talents": [
          "COUNT talents",
          "SELECT talents",
        ],
        "/talents/{handle}": [
          "SELECT talents + talent_links + _TalentSkills + skills + _TalentSectors + sectors",
        ],
      }
    `);
  });
});
