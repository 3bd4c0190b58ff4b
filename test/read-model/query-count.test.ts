// N+1 guard: the SQL statements a page costs must not grow with the page size. The statement
// log is snapshotted (table and kind of each), so a change in query planning shows as a diff.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { statementLog } from "../helpers/statement-log.ts";

let db: TestDatabase;
let server: TestServer;
let companySlug = "";

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const sectors = await Promise.all([f.sector(), f.sector()]);
  const skills = await Promise.all([f.skill(), f.skill(), f.skill(), f.skill()]);
  const companies = await Promise.all([f.company(), f.company(), f.company()]);
  companySlug = companies[0].slug;
  for (let i = 0; i < 120; i++) {
    await f.job("job", {
      companyId: companies[i % 3]!.id,
      sectorId: sectors[i % 2]!.id,
      publishedAt: daysAgo(1 + (i % 10)),
      skills: { connect: skills.slice(0, 1 + (i % 4)).map((s) => ({ id: s.id })) },
    });
  }
  server = await startServer(db);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function statementsFor(query: string, variables: Record<string, unknown>) {
  db.queries.length = 0;
  const result = await server.graphql(query, variables);
  expect(result.errors).toBeUndefined();
  return statementLog(db.queries);
}

const jobsPage = `query ($limit: Int!) { jobs(limit: $limit) { total items {
  slug title company { name } sector { name } skills { name category } } } }`;
const companyWithJobs = `query ($slug: String!, $limit: Int!) { company(slug: $slug) { name sectors { name }
  openJobCount openJobs(limit: $limit) { slug company { name } sector { name } skills { name } } } }`;

describe("query count", () => {
  // A page that nests a to-many relation (skills) loads each relation with its own statement: as
  // one statement (relationJoins) PostgreSQL aggregates the skills per row, twice as slow at 50
  // rows (src/graphql/paging.ts, loadStrategy). A single row or a to-one relation is one statement.
  it("is fixed for a page of jobs with company, sector and skills, whatever the page size", async () => {
    const small = await statementsFor(jobsPage, { limit: 5 });
    const large = await statementsFor(jobsPage, { limit: 100 });
    expect(large).toEqual(small);
    expect(large).toMatchInlineSnapshot(`
      [
        "SELECT _JobSkills + skills + jobs + companies + sectors",
        "SELECT job_count_events + catalog_counters + sectors + skills + companies",
      ]
    `);
  });

  // /graphql runs compiled operations (graphql-jit), whose response paths are rebuilt per call, so
  // the planner's mapping is not found for relations beneath a relation (the open jobs' sector and
  // skills): their rows are loaded again, by one batched statement whatever the number of jobs.
  it("is fixed for a company with its open jobs, whatever the number of jobs", async () => {
    const small = await statementsFor(companyWithJobs, { slug: companySlug, limit: 2 });
    const large = await statementsFor(companyWithJobs, { slug: companySlug, limit: 100 });
    expect(large).toEqual(small);
    expect(large).toMatchInlineSnapshot(`
      [
        "SELECT catalog_counters + job_count_events",
        "SELECT companies + _CompanySectors + sectors + jobs + _JobSkills + skills",
        "SELECT jobs + sectors + companies + _JobSkills + skills",
      ]
    `);
  });
});
