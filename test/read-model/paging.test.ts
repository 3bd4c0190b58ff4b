// Lists are paged by limit and offset in a stable, documented order with a unique tie-breaker.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
type Page = { total: number; limit: number; offset: number; items: { id: string; slug: string }[] };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const sameInstant = daysAgo(2);
  // Seven jobs published at the same instant: only the id can order them.
  for (let i = 0; i < 7; i++) await f.job("tie", { publishedAt: sameInstant });
  for (let i = 0; i < 5; i++) await f.job("dated", { publishedAt: daysAgo(3 + i) });
  await f.skill("llm-skill", { category: "llm", name: "B skill" });
  await f.skill("cv-skill", { category: "cv", name: "A skill" });
  await f.skill("llm-skill", { category: "llm", name: "A skill" });
  server = await startServer(db);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function jobsPage(limit?: number, offset?: number) {
  const { data, errors } = await server.graphql<{ jobs: Page }>(
    `query ($limit: Int, $offset: Int) { jobs(limit: $limit, offset: $offset) { total limit offset items { id slug } } }`,
    { limit, offset },
  );
  expect(errors).toBeUndefined();
  return data!.jobs;
}

describe("paging", () => {
  it("defaults to limit 50 and offset 0", async () => {
    const page = await jobsPage();
    expect(page).toMatchObject({ total: 12, limit: 50, offset: 0 });
    expect(page.items).toHaveLength(12);
  });

  it("orders jobs newest first, ties broken by id descending", async () => {
    const { items } = await jobsPage();
    const ties = items.slice(0, 7).map((j) => j.id);
    expect(ties).toEqual([...ties].sort().reverse());
    const rows = await db.prisma.job.findMany({ where: { id: { in: items.map((j) => j.id) } } });
    const published = new Map(rows.map((r) => [r.id, r.publishedAt!.getTime()]));
    const times = items.map((j) => published.get(j.id)!);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("walks the list in pages that neither overlap nor skip", async () => {
    const all = (await jobsPage(100)).items.map((j) => j.id);
    const walked: string[] = [];
    for (let offset = 0; offset < all.length; offset += 5) {
      walked.push(...(await jobsPage(5, offset)).items.map((j) => j.id));
    }
    expect(walked).toEqual(all);
  });

  it("returns an empty page past the end, with the total", async () => {
    expect(await jobsPage(10, 1000)).toMatchObject({ total: 12, offset: 1000, items: [] });
  });

  it.each([
    ["limit", 0],
    ["limit", 101],
    ["limit", -1],
    ["offset", -1],
  ])("rejects %s = %i with BAD_USER_INPUT naming the argument", async (argument, value) => {
    const { errors, data } = await server.graphql(`query ($v: Int) { jobs(${argument}: $v) { total } }`, { v: value });
    expect(data).toBeNull();
    expect(errors?.[0]?.extensions).toEqual({ code: "BAD_USER_INPUT", argument });
  });

  it("filters skills by category, ordered by name then slug", async () => {
    const { data } = await server.graphql<{
      skills: { total: number; items: { slug: string; name: string; category: string }[] };
    }>(`{ skills(category: "llm") { total items { slug name category } } }`);
    expect(data?.skills.total).toBe(2);
    expect(data?.skills.items.map((s) => [s.name, s.category])).toEqual([
      ["A skill", "llm"],
      ["B skill", "llm"],
    ]);
  });
});
