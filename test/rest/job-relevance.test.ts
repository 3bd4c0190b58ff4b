// sort=relevance on crafted data, through real HTTP and GraphQL: jobs whose title holds every word
// of q first, then those whose title and skills hold them, then the rest (a word only in the
// description), newest first within each; continued by cursor and by offset without gap or
// overlap; q matches a skill's name; a hidden job never appears; relevance without q is a 400;
// relevance is the default order when q is given.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { knownWordsKept } from "../../src/graphql/search/known-words.ts";
import type { Prisma } from "../../src/generated/prisma/client.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, daysFromNow, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { phraseWalk, walkBound, walkedRowInPostings } from "../../src/graphql/types/job/ranked-sql.ts";
import { parse } from "graphql";
import { executeCompiled } from "../../src/graphql/compiled-operations.ts";
import { createContext } from "../../src/graphql/context.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
const slug: Record<string, string> = {};

type List = { data: { slug: string }[]; meta: { total: number; total_exact: boolean; next: string | null } };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const kestrelSkill = await f.skill("kestrel", { name: "Kestrel Tracking" });
  const falconSkill = await f.skill("falcon", { name: "Falcon Ops" });
  const skills = (...ids: string[]) => ({ skills: { connect: ids.map((id) => ({ id })) } });
  const text = (words: string) => ({ descriptionText: words, descriptionHtml: `<p>${words}</p>` });
  // By letter: the place where "kestrel" occurs, and days since published (smaller is newer).
  const jobs: Record<string, Partial<Prisma.JobUncheckedCreateInput>> = {
    a: { title: "Plain role", ...text("We study kestrels in the field."), publishedAt: daysAgo(1) },
    b: { title: "Analyst", ...skills(kestrelSkill.id), publishedAt: daysAgo(2) },
    c: { title: "Kestrel Engineer", publishedAt: daysAgo(3) },
    d: { title: "Lead of Kestrel", ...skills(falconSkill.id), publishedAt: daysAgo(4) },
    e: { title: "Observer", ...skills(kestrelSkill.id), ...text("kestrel falcon"), publishedAt: daysAgo(5) },
    f: { title: "Gardener", ...text("Nothing to see"), publishedAt: daysAgo(6) },
    // Hidden three ways: a draft, a filled job, one not yet live. Each would rank first.
    x: { title: "Kestrel Draft", status: "draft", publishedAt: daysAgo(0.5) },
    y: { title: "Kestrel Filled", filled: true, publishedAt: daysAgo(0.5) },
    z: { title: "Kestrel Future", publishedAt: daysFromNow(2) },
  };
  for (const [letter, data] of Object.entries(jobs)) slug[letter] = (await f.job(`rel-${letter}`, data)).slug;
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const letterOf = (s: string) => Object.entries(slug).find(([, v]) => v === s)?.[0] ?? "?";

async function letters(query: string): Promise<string> {
  const { status, body } = await api.get<List>(`/api/v1/jobs?${query}`);
  expect(status, query).toBe(200);
  return body.data.map((j) => letterOf(j.slug)).join("");
}

/** Every page of a query followed by meta.next. */
async function follow(query: string): Promise<string> {
  let path: string | null = `/api/v1/jobs?${query}`;
  let all = "";
  while (path) {
    const { status, body }: { status: number; body: List } = await api.get<List>(path.replace(/^https?:\/\/[^/]+/, ""));
    expect(status, path).toBe(200);
    all += body.data.map((j) => letterOf(j.slug)).join("");
    path = body.meta.next;
  }
  return all;
}

describe("GET /jobs?sort=relevance", () => {
  it("ranks title, then title and skills, then description, newest first within each", async () => {
    // c, d: "kestrel" in the title; b, e: in the skills (e in its description too); a: description only.
    expect(await letters("q=kestrel&sort=relevance")).toBe("cdbea");
    // Relevance is the default order when q is given (issue 40); a sort still wins.
    expect(await letters("q=kestrel")).toBe("cdbea");
    expect(await letters("q=kestrel&sort=-published_at")).toBe("abcde");
  });

  it("ranks by where the weakest word occurs", async () => {
    // d: kestrel in the title, falcon in the skills; e: kestrel in the skills, falcon in the description.
    expect(await letters("q=kestrel%20falcon&sort=relevance")).toBe("de");
  });

  it("continues by cursor and by offset without gap or overlap, with the same total", async () => {
    expect(await follow("q=kestrel&sort=relevance&limit=1")).toBe("cdbea");
    expect(await follow("q=kestrel&sort=relevance&limit=2")).toBe("cdbea");
    const pages = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((o) => letters(`q=kestrel&sort=relevance&limit=1&offset=${o}`)),
    );
    expect(pages.join("")).toBe("cdbea");
    const { body } = await api.get<List>("/api/v1/jobs?q=kestrel&sort=relevance&limit=2");
    expect(body.meta.total).toBe(5);
    const { body: plain } = await api.get<List>("/api/v1/jobs?q=kestrel&limit=2");
    expect(plain.meta.total).toBe(5);
  });

  it("pages a phrase the same whether the newest-first walk finds its rows or its own statement does", async () => {
    const walkRows = phraseWalk.rows;
    try {
      // A walk past every job (the default here), then walks of 1 and 3 jobs that end before the
      // list does, so the phrase's own statement goes on after them.
      for (const rows of [walkRows, 1, 3]) {
        phraseWalk.rows = rows;
        // b, e: the phrase in their skills (tier 2); c's title (tier 3); a holds "kestrels" apart.
        expect(await letters(`q=${encodeURIComponent('"kestrel tracking"')}`), `walk ${rows}`).toBe("be");
        expect(await follow(`q=${encodeURIComponent('"kestrel tracking"')}&limit=1`), `walk ${rows}`).toBe("be");
        expect(await letters(`q=${encodeURIComponent('"kestrel engineer"')}`), `walk ${rows}`).toBe("c");
        expect(await follow(`q=${encodeURIComponent('"kestrel" OR "lead of"')}&limit=1`), `walk ${rows}`).toBe("cdbea");
      }
    } finally {
      phraseWalk.rows = walkRows;
    }
  });

  it("says q's words once in a tier whose words the statistics count and whose walk is cheaper, twice otherwise; same answers", async () => {
    const kept = knownWordsKept.ms;
    const walkCost = walkedRowInPostings.entries;
    knownWordsKept.ms = 0;
    try {
      await db.sql.exec("ANALYZE jobs");
      const [stats] = await db.sql.query<{ words: string[] | null }>(
        `SELECT most_common_elems::text::text[] AS words FROM pg_stats WHERE tablename = 'jobs' AND attname = 'title_terms'`,
      );
      expect(stats?.words).toContain("kestrel");
      const tierStatements = async (query: string, answer: string) => {
        db.queries.length = 0;
        expect(await letters(query)).toBe(answer);
        return db.queries.filter((q) => /j\.title_terms &&/.test(q) && !/NOT \(+j\.title_terms/.test(q));
      };
      // "kestrel" is in the title statistics: with a walk that costs nothing, the title tier's
      // statement says it once, in the title.
      walkedRowInPostings.entries = 0;
      const once = await tierStatements("q=kestrel", "cdbea");
      expect(once.length).toBeGreaterThan(0);
      for (const statement of once) expect(statement).not.toMatch(/j\.search_terms &&/);
      // With a walk dearer than reading every match, the same words are said twice.
      walkedRowInPostings.entries = 1e9;
      const dear = await tierStatements("q=kestrel", "cdbea");
      expect(dear.length).toBeGreaterThan(0);
      for (const statement of dear) expect(statement).toMatch(/j\.search_terms &&/);
      // "field" is in no title: the planner would guess, so the words stay said anywhere too.
      walkedRowInPostings.entries = 0;
      const twice = await tierStatements("q=field", "a");
      expect(twice.length).toBeGreaterThan(0);
      for (const statement of twice) expect(statement).toMatch(/j\.search_terms &&/);
      // Two words: said twice however cheap a walk, as their share together is unknown (words each
      // common in titles may never meet in one, and a walk for them would pass the whole list).
      const pair = await tierStatements("q=kestrel%20engineer", "c");
      expect(pair.length).toBeGreaterThan(0);
      for (const statement of pair) expect(statement).toMatch(/j\.search_terms &&/);
    } finally {
      knownWordsKept.ms = kept;
      walkedRowInPostings.entries = walkCost;
    }
  });

  it("bounds the walk of a common word, then reads the rest of the page from the matches: the same pages", async () => {
    const kept = knownWordsKept.ms;
    const walkCost = walkedRowInPostings.entries;
    const bound = { ...walkBound };
    knownWordsKept.ms = 0;
    walkedRowInPostings.entries = 0; // "kestrel" walks
    try {
      await db.sql.exec("ANALYZE jobs");
      // Walks of 1, 2 and 4 jobs end inside the title tier, before the list does; the default
      // reaches past every job.
      for (const rows of [bound.rows, 1, 2, 4]) {
        walkBound.rows = rows;
        expect(await letters("q=kestrel"), `walk ${rows}`).toBe("cdbea");
        expect(await follow("q=kestrel&limit=1"), `walk ${rows}`).toBe("cdbea");
        expect(await follow("q=kestrel&limit=2"), `walk ${rows}`).toBe("cdbea");
        // Offset pages spend the offset on the bounded walk, then on the matches after it.
        const byOffset = await Promise.all([0, 1, 2, 3, 4, 5].map((o) => letters(`q=kestrel&limit=2&offset=${o}`)));
        expect(byOffset, `walk ${rows}`).toEqual(["cd", "db", "be", "ea", "a", ""]);
        const { body } = await api.get<List>("/api/v1/jobs?q=kestrel&limit=2");
        expect(body.meta.total, `walk ${rows}`).toBe(5);
      }
      // The title tier's walk is bounded by a publication time, then one statement reads every tier
      // left from the matches. A filter that no job holding the word passes (the walk at a million
      // jobs passed every listed one: a 503) finds nothing that way too.
      walkBound.rows = 1;
      walkBound.perSkipped = 0; // offset pages bounded as first pages are
      db.queries.length = 0;
      expect(await letters("q=kestrel")).toBe("cdbea");
      expect(db.queries.some((q) => /j\.title_terms &&[^]*j\.published_at >= \$\d+::timestamptz/.test(q))).toBe(true);
      expect(db.queries.some((q) => /OFFSET 0\) AS m/.test(q))).toBe(true);
      expect(await letters("q=kestrel&employment_type=internship")).toBe("");
      db.queries.length = 0;
      expect(await letters("q=kestrel&employment_type=internship&offset=3")).toBe("");
      expect(db.queries.some((q) => /j\.title_terms &&[^]*j\.published_at >= \$\d+::timestamptz/.test(q))).toBe(true);
      expect(db.queries.some((q) => /OFFSET 0\) AS m/.test(q))).toBe(true);
      expect(await letters("q=kestrel&work_model=remote&employment_type=full_time")).toBe(
        await (async () => {
          Object.assign(walkBound, bound);
          return letters("q=kestrel&work_model=remote&employment_type=full_time");
        })(),
      );
    } finally {
      knownWordsKept.ms = kept;
      walkedRowInPostings.entries = walkCost;
      Object.assign(walkBound, bound);
    }
  });

  it("reads a tier from its index where some word of q is not among the column's listed words: the same pages", async () => {
    const kept = knownWordsKept.ms;
    knownWordsKept.ms = 0;
    try {
      await db.sql.exec("ANALYZE jobs");
      // "falcon" is in no title (the statistics cannot list it there): the title tier's statement
      // reads the matches from the indexes (OFFSET 0) instead of leaving the planner a walk; at a
      // million jobs it walked all 270,000 remote jobs for the 26 completions of `ö` (a 503).
      db.queries.length = 0;
      expect(await letters("q=falcon")).toBe("de");
      expect(await follow("q=falcon&limit=1")).toBe("de");
      expect(await Promise.all([0, 1, 2].map((o) => letters(`q=falcon&limit=1&offset=${o}`)))).toEqual(["d", "e", ""]);
      expect(db.queries.some((q) => /title_terms &&[^]*OFFSET 0\) AS m ORDER BY m\."publishedAt" DESC/.test(q))).toBe(
        true,
      );
      // An offset page counts the empty title tier's matches whole, from the index, not under a LIMIT
      // (the planner walked every job for `q=ö&remote=true&offset=20`).
      const titleSpends = db.queries.filter(
        (q) => /^SELECT count\(\*\)::int AS n FROM \(SELECT 1 FROM jobs j WHERE/.test(q) && !/head_terms/.test(q),
      );
      expect(titleSpends.some((q) => /title_terms &&/.test(q))).toBe(true);
      expect(titleSpends.some((q) => /LIMIT/.test(q))).toBe(false);
      expect(await letters("q=falcon&employment_type=internship")).toBe("");
    } finally {
      knownWordsKept.ms = kept;
    }
  });

  it("reads the statistics once per client when the reads go through Prisma alone (no plain SQL client)", async () => {
    const document = parse(`{ jobs(filter: { q: "kestrel" }, sort: RELEVANCE, limit: 2) { items { slug } } }`);
    const slugs = async () => {
      const result = await executeCompiled<{ jobs: { items: { slug: string }[] } }, Record<string, never>>(
        document,
        {},
        createContext({ prisma: db.prisma }),
      );
      expect(result.errors).toBeUndefined();
      return result.data!.jobs.items.map((job) => job.slug);
    };
    db.queries.length = 0;
    const first = await slugs();
    expect(await slugs()).toEqual(first);
    expect(first).toEqual([slug.c, slug.d]);
    expect(db.queries.filter((q) => /pg_stats/.test(q))).toHaveLength(1);
  });

  it("refuses relevance without q, and a cursor of another order", async () => {
    const { status, body } = await api.get<{ error: { code: string } }>("/api/v1/jobs?sort=relevance");
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_sort");
    const { body: first } = await api.get<List>("/api/v1/jobs?q=kestrel&sort=relevance&limit=1");
    const cursor = new URL(first.meta.next!).searchParams.get("cursor")!;
    const other = await api.get<{ error: { code: string } }>(
      `/api/v1/jobs?q=kestrel&sort=-published_at&limit=1&cursor=${cursor}`,
    );
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe("invalid_cursor");
  });

  it("answers the same order in GraphQL, with nested relations (the Prisma path)", async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `{ jobs(filter: {q: "kestrel"}, sort: RELEVANCE, limit: 3) { total nextCursor items { slug skills { slug } company { openJobs(limit: 1) { slug } } } } }`,
      }),
    });
    const { data, errors } = (await response.json()) as {
      data: { jobs: { total: number; nextCursor: string; items: { slug: string }[] } };
      errors?: unknown;
    };
    expect(errors).toBeUndefined();
    expect(data.jobs.items.map((j) => letterOf(j.slug)).join("")).toBe("cdb");
    expect(data.jobs.total).toBe(5);
    const next = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `query($after: String) { jobs(filter: {q: "kestrel"}, sort: RELEVANCE, limit: 3, after: $after) { items { slug } } }`,
        variables: { after: data.jobs.nextCursor },
      }),
    });
    const rest = (await next.json()) as { data: { jobs: { items: { slug: string }[] } } };
    expect(rest.data.jobs.items.map((j) => letterOf(j.slug)).join("")).toBe("ea");
  });

  it("keeps a job's skill names in step with its links and the skill's name", async () => {
    const f = factories(db.prisma);
    const skill = await f.skill("osprey", { name: "Osprey Watch" });
    const job = await f.job("rel-w", { title: "Watcher" });
    expect(await letters("q=osprey")).toBe("");
    await db.prisma.job.update({ where: { id: job.id }, data: { skills: { connect: [{ id: skill.id }] } } });
    const { body } = await api.get<List>("/api/v1/jobs?q=osprey");
    expect(body.data.map((j) => j.slug)).toEqual([job.slug]);
    await db.prisma.skill.update({ where: { id: skill.id }, data: { name: "Heron Watch" } });
    expect((await api.get<List>("/api/v1/jobs?q=osprey")).body.data).toEqual([]);
    expect((await api.get<List>("/api/v1/jobs?q=heron")).body.data.map((j) => j.slug)).toEqual([job.slug]);
    await db.prisma.job.update({ where: { id: job.id }, data: { skills: { disconnect: [{ id: skill.id }] } } });
    expect((await api.get<List>("/api/v1/jobs?q=heron")).body.data).toEqual([]);
  });
});
