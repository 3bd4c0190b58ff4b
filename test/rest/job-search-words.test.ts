// Search that forgives (issue 40), on crafted data through real HTTP, on either database: words as
// people write them (hyphens, joined forms, case, accents, the last word unfinished, typos), the
// curated synonyms, a place or a company named in q taken as that filter, the query syntax
// ("phrases", -exclude, OR; malformed is a 400 in the error shape), relevance as the default order
// with q, meta.search saying how q was read, distance_km, location_country and facet labels; and
// no hidden job, company or word showing through a reading.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../src/generated/prisma/client.ts";
import { readSuggestableNamesAhead } from "../../src/graphql/search/suggest-names.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
const slug: Record<string, string> = {};

type Expansion = { word: string; kind: string; to: string[] };
type Reading = {
  words: string[];
  phrases: string[];
  excluded: string[];
  expansions: Expansion[];
  place: { city: string; country: string; location: string } | null;
  company: { name: string; slugs: string[] } | null;
};
type Summary = { slug: string; location_country: string | null; distance_km?: number };
type List = { data: Summary[]; meta: { total: number; search?: Reading } };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const python = await f.skill("python", { name: "Python" });
  const acme = await f.company("acme", { name: "Quillfeather Robotics" });
  const hidden = await f.company("hidden", { name: "Umbral Holdings", hasPublicPage: false });
  const text = (words: string) => ({ descriptionText: words, descriptionHtml: `<p>${words}</p>` });
  const at = (city: string, country: string) => ({ locationCity: city, locationCountry: country });
  // By letter, with days since published (smaller is newer).
  const jobs: Record<string, Partial<Prisma.JobUncheckedCreateInput>> = {
    a: { title: "Data Engineer", ...text("Pipelines."), ...at("Berlin", "DE"), publishedAt: daysAgo(1) },
    b: { title: "Front-End Developer", ...text("Web."), ...at("Munich", "DE"), publishedAt: daysAgo(2) },
    c: { title: "Frontend Engineer", ...text("Web."), ...at("Zürich", "CH"), publishedAt: daysAgo(3) },
    d: { title: "Full-Stack Engineer", ...text("Web."), publishedAt: daysAgo(4) },
    e: { title: "Fullstack Developer", ...text("Web."), publishedAt: daysAgo(5) },
    f: {
      title: "Senior Backend Engineer",
      ...text("Services."),
      skills: { connect: [{ id: python.id }] },
      ...at("Berlin", "DE"),
      publishedAt: daysAgo(6),
    },
    g: { title: "Machine Learning Engineer", ...text("Models in Python."), publishedAt: daysAgo(7) },
    h: { title: "Site Reliability Engineer", ...text("Uptime."), publishedAt: daysAgo(8) },
    i: { title: "Node.js Developer", ...text("Servers."), companyId: acme.id, publishedAt: daysAgo(9) },
    j: { title: "Analyst", ...text("An engineer of data, the data of an engineer."), publishedAt: daysAgo(10) },
    k: { title: "Rust Developer", ...text("Systems."), companyId: acme.id, publishedAt: daysAgo(11) },
    // A draft whose words only it holds (hidden), and a public job of a company without a public
    // page (the job is listed, its company is not shown, and the company's name is never read).
    x: { title: "Zanzibarian Quokka Wrangler", ...text("Quokka."), status: "draft", publishedAt: daysAgo(0.5) },
    y: { title: "Umbral Engineer", ...text("Secret."), companyId: hidden.id, publishedAt: daysAgo(0.5) },
  };
  for (const [letter, data] of Object.entries(jobs)) slug[letter] = (await f.job(`sw-${letter}`, data)).slug;
  server = await startServer(db);
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const letterOf = (s: string) => Object.entries(slug).find(([, v]) => v === s)?.[0] ?? "?";

async function list(query: string): Promise<List> {
  const { status, body } = await api.get<List>(`/api/v1/jobs?${query}`);
  expect(status, query).toBe(200);
  return body;
}

/** The letters of every job q finds, sorted: which jobs, not their order. */
async function found(q: string, more = ""): Promise<string> {
  const body = await list(`q=${encodeURIComponent(q)}&limit=100${more}`);
  return body.data
    .map((j) => letterOf(j.slug))
    .sort()
    .join("");
}

const expansion = (reading: Reading | undefined, kind: string) => reading?.expansions.find((e) => e.kind === kind);

describe("GET /jobs?q= reads words as people write them", () => {
  it("matches hyphenated, joined and spaced forms alike, in any case", async () => {
    expect(await found("data-engineer")).toBe(await found("data engineer"));
    expect(await found("DATA-ENGINEER")).toContain("a");
    expect(await found("frontend")).toBe("bc");
    expect(await found("front-end")).toBe("bc");
    expect(await found("Front End")).toBe("bc");
    expect(await found("fullstack")).toBe("de");
    expect(await found("full-stack")).toBe("de");
    expect(await found("nodejs")).toBe("i");
    expect(await found("node.js")).toBe("i");
    const reading = (await list("q=frontend")).meta.search;
    expect(expansion(reading, "joined")?.to).toContain("front-end");
  });

  it("takes the last word as a prefix (search as you type), reported as completions", async () => {
    expect(await found("pyth")).toBe("fg");
    expect(expansion((await list("q=pyth")).meta.search, "completion")?.to).toContain("python");
    expect(await found("machine lear")).toBe("g");
    expect(await found("senior backe")).toBe("f");
  });

  it("corrects a word no public job holds within its typos, and says so", async () => {
    expect(await found("pyhton")).toBe("fg");
    expect(await found("enginer reliability")).toBe("h");
    const reading = (await list("q=pyhton")).meta.search;
    expect(expansion(reading, "correction")).toEqual({ word: "pyhton", kind: "correction", to: ["python"] });
    // Three letters allow no typo: "rsut" has four (one typo), "rut" none.
    expect(await found("rsut systems")).toBe("k");
    expect(await found("rut systems")).toBe("");
  });

  it("measures a typo or an unfinished word against the words as titles write them, not their stems", async () => {
    // "engnieer" is one typo from engineer but three from its stem engin; "reliabilty" one from reliability.
    expect(await found("data engnieer")).toContain("a");
    expect(await found("reliabilty")).toBe("h");
    const reading = (await list("q=data%20engnieer")).meta.search;
    expect(expansion(reading, "correction")).toEqual({ word: "engnieer", kind: "correction", to: ["engin"] });
    // A word with punctuation is measured whole; one that ends unfinished is completed.
    expect(await found("noed.js")).toBe("i");
    expect(await found("node.")).toBe("i");
  });

  it("reads an abbreviation inside a compound, and an expression with a typo or unfinished", async () => {
    expect(await found("ml-engineer")).toBe("g");
    expect(await found("machine lerning")).toBe("g");
    expect(await found("site reliability engin")).toBe("h");
    const reading = (await list("q=site%20reliabilty%20engineer")).meta.search;
    expect(expansion(reading, "synonym")?.to).toContain("SRE");
  });

  it("applies the curated synonyms and abbreviations, both ways", async () => {
    expect(await found("ML engineer")).toBe("g");
    expect(await found("SRE")).toBe("h");
    const reading = (await list("q=ML%20engineer")).meta.search;
    expect(expansion(reading, "synonym")).toEqual({ word: "ML", kind: "synonym", to: ["machine learning"] });
    expect(await found("machine learning")).toBe("g");
    expect(await found("site reliability engineer")).toBe("h");
  });

  it("folds accents and case in places named in q, and takes them as the filter of the jobs in that city", async () => {
    const body = await list("q=engineer%20berlin");
    expect(
      body.data
        .map((j) => letterOf(j.slug))
        .sort()
        .join(""),
    ).toBe("af");
    expect(body.meta.search?.place).toMatchObject({ city: "Berlin", country: "DE", location: "Berlin, DE" });
    expect(body.meta.search?.words).toEqual(["engineer"]);
    // Local and English names, accents optional.
    expect(await found("developer münchen")).toBe("b");
    expect(await found("developer MUNCHEN")).toBe("b");
    expect(await found("frontend zurich")).toBe("c");
    // Only a place: the place filter alone.
    expect(await found("Zürich")).toBe("c");
    // With location given, a place in q is a word like any other.
    expect(await found("engineer berlin", "&location=CH")).toBe("");
  });

  it("takes a public company named in q as the company filter", async () => {
    const body = await list("q=quillfeather%20robotics%20developer");
    expect(body.meta.search?.company?.name).toBe("Quillfeather Robotics");
    expect(
      body.data
        .map((j) => letterOf(j.slug))
        .sort()
        .join(""),
    ).toBe("ik");
  });
});

describe("GET /jobs?q= query syntax", () => {
  it('finds "quoted phrases" only with the words side by side', async () => {
    expect(await found('"data engineer"')).toBe("a");
    expect(await found("data engineer")).toBe("aj");
    expect((await list(`q=${encodeURIComponent('"data engineer"')}`)).meta.search?.phrases).toEqual(["data engineer"]);
  });

  it("leaves out -words and -phrases", async () => {
    expect(await found("engineer -senior")).not.toContain("f");
    expect(await found("engineer -senior")).toContain("a");
    expect(await found('engineer -"data engineer"')).not.toContain("a");
    expect((await list("q=engineer%20-senior")).meta.search?.excluded).toEqual(["senior"]);
  });

  it("finds either side of OR", async () => {
    expect(await found("rust OR python")).toBe("fgk");
    expect(await found("rust OR python developer")).toBe("k");
  });

  it.each([
    ['"data engineer', "closing"],
    ["OR python", "OR"],
    ["python OR", "OR"],
    ["python OR OR rust", "OR"],
    ["python OR -rust", "OR"],
    ["-python", "besides"],
    ["python - rust", '"-"'],
    ['""', "phrase"],
    ["the and", "common"],
  ])("refuses the malformed q %j with 400 invalid_q", async (q, says) => {
    const { status, body } = await api.get<{ error: { code: string; message: string } }>(
      `/api/v1/jobs?q=${encodeURIComponent(q)}`,
    );
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_q");
    expect(body.error.message).toContain(says);
  });
});

describe("GET /jobs?q= paging", () => {
  type Error = { error: { code: string; message: string } };
  type Paged = { data: Summary[]; meta: { offset: number; next: string | null } };

  it("reaches offsets within the first 1,000 matches, and refuses deeper ones with 400 invalid_offset", async () => {
    expect((await api.get<Paged>("/api/v1/jobs?q=engineer&limit=2&offset=998")).status).toBe(200);
    for (const query of [
      "q=engineer&limit=2&offset=999",
      "q=engineer&offset=2000",
      "q=python%20OR%20rust&offset=5000",
    ]) {
      const { status, body } = await api.get<Error>(`/api/v1/jobs?${query}`);
      expect(status).toBe(400);
      expect(body.error.code).toBe("invalid_offset");
      expect(body.error.message).toContain("next cursor");
    }
    // Without words a list's offset is not bounded (it walks an index).
    for (const query of ["offset=5000", "work_model=remote&offset=5000"]) {
      expect((await api.get<Paged>(`/api/v1/jobs?${query}`)).status).toBe(200);
    }
  });

  it("goes past the window by cursor, as far as the matches go", async () => {
    const first = await api.get<Paged>("/api/v1/jobs?q=engineer&limit=1");
    const next = new URL(first.body.meta.next!);
    // A cursor standing for offset 5,000 (well-formed: the digest has no secret; a forged one only
    // moves the client's own window, docs/catalog-api.md) is a seek, not an offset page.
    const [payload] = next.searchParams.get("cursor")!.split(".");
    const body = JSON.parse(Buffer.from(payload!, "base64url").toString()) as [number, string, number, unknown[]];
    body[2] = 5_000;
    const moved = Buffer.from(JSON.stringify(body)).toString("base64url");
    const digest = createHash("sha256").update(moved).digest("base64url").slice(0, 16);
    const deep = await api.get<Paged>(`/api/v1/jobs?q=engineer&limit=1&cursor=${moved}.${digest}`);
    expect(deep.status).toBe(200);
    expect(deep.body.meta.offset).toBe(5_000);
  });

  it("refuses a deep search offset through GraphQL too, as a bad offset argument", async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: '{ jobs(filter: { q: "engineer" }, offset: 1000) { total } }' }),
    });
    const body = (await response.json()) as { errors: { extensions: { code: string; argument: string } }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "offset" });
  });
});

describe("GET /jobs shapes", () => {
  it("orders by relevance when q is given, unless sort says otherwise", async () => {
    // "python": f holds it in its skills, g only in its description.
    expect((await list("q=python")).data.map((j) => letterOf(j.slug)).join("")).toBe("fg");
    const byDate = await list("q=engineer&sort=-published_at&limit=3");
    expect(byDate.data.map((j) => letterOf(j.slug)).join("")).toBe("yac");
  });

  it("gives distance_km on near and distance-sorted hits, and location_country on every summary", async () => {
    const sorted = await list("near=Berlin&sort=distance");
    expect(sorted.data.map((j) => [letterOf(j.slug), j.distance_km])).toEqual([
      ["a", 0],
      ["f", 0],
    ]);
    const wide = await list("near=Berlin&radius_km=1000");
    const munich = wide.data.find((j) => letterOf(j.slug) === "b");
    expect(munich?.distance_km).toBeGreaterThan(480);
    expect(munich?.distance_km).toBeLessThan(510);
    expect(munich?.location_country).toBe("DE");
    const plain = await list("limit=100");
    expect(plain.data.every((j) => j.distance_km === undefined)).toBe(true);
    expect(plain.data.find((j) => letterOf(j.slug) === "c")?.location_country).toBe("CH");
  });

  it("labels every facet value", async () => {
    const { status, body } = await api.get<{ data: Record<string, { value: string; name: string | null }[]> }>(
      "/api/v1/jobs/facets?facets=work_model,employment_type,country",
    );
    expect(status).toBe(200);
    expect(body.data["work_model"]).toContainEqual(expect.objectContaining({ value: "remote", name: "Remote" }));
    expect(body.data["employment_type"]).toContainEqual(
      expect.objectContaining({ value: "full_time", name: "Full-time" }),
    );
    expect(body.data["country"]).toContainEqual(expect.objectContaining({ value: "DE", name: "Germany" }));
    expect(body.data["country"]).toContainEqual(expect.objectContaining({ value: "CH", name: "Switzerland" }));
  });
});

describe("gates through a reading", () => {
  it("never completes to, corrects to or reports a word only a hidden job holds", async () => {
    for (const q of ["quokk", "quoka ", "quokka", "zanzibarian", "zanzibaria"]) {
      const body = await list(`q=${encodeURIComponent(q)}`);
      expect(body.data, q).toEqual([]);
      expect(body.meta.search?.expansions, q).toEqual([]);
    }
  });

  it("never takes a hidden company's name as a filter, nor lists its jobs", async () => {
    const body = await list("q=umbral%20holdings%20engineer");
    expect(body.meta.search?.company).toBeNull();
    expect(body.meta.search?.words).toEqual(["umbral", "holdings", "engineer"]);
    expect(body.data).toEqual([]);
    // The job itself is public: its title's words find it.
    expect(await found("umbral")).toBe("y");
  });
});

type Suggested = { type: string; text: string; open_jobs: number; typos: number; filter: Record<string, string> };

async function suggest(query: string): Promise<Suggested[]> {
  const { status, body } = await api.get<{ data: { suggestions: Suggested[] } }>(`/api/v1/suggest?${query}`);
  expect(status, query).toBe(200);
  return body.data.suggestions;
}

describe("GET /suggest", () => {
  it("reads its names ahead at start-up (main.ts): the first suggest sends no statement for them", async () => {
    const fresh = await createTestDatabase();
    try {
      await factories(fresh.prisma).skill("go", { name: "Golang" });
      const f = factories(fresh.prisma);
      await f.job("ahead", { title: "Golang Developer", publishedAt: daysAgo(1) });
      await readSuggestableNamesAhead(fresh.prisma, fresh.prisma);
      const freshServer = await startServer(fresh);
      try {
        fresh.queries.length = 0;
        const answer = await (
          await createApiClient(freshServer.url)
        ).get<{ data: { suggestions: { text: string }[] } }>("/api/v1/suggest?q=gola");
        expect(answer.status).toBe(200);
        expect(answer.body.data.suggestions.map((s) => s.text)).toContain("Golang Developer");
        expect(fresh.queries.filter((q) => /FROM skills|FROM companies|GROUP BY/.test(q))).toEqual([]);
      } finally {
        await freshServer.close();
      }
    } finally {
      await fresh.close();
    }
  });

  it("completes skills, companies, places and titles, each with its filter and open jobs", async () => {
    expect(await suggest("q=pyth&types=skill")).toEqual([
      { type: "skill", text: "Python", open_jobs: 1, typos: 0, filter: { skill: expect.any(String) as string } },
    ]);
    const [company] = await suggest("q=quill&types=company");
    expect(company).toMatchObject({ text: "Quillfeather Robotics", open_jobs: 2, typos: 0 });
    const [munich] = await suggest("q=m%C3%BCnch&types=place");
    expect(munich).toMatchObject({ text: "Munich", open_jobs: 1, filter: { location: "Munich, DE" } });
    expect((await suggest("q=zur&types=place"))[0]?.text).toBe("Zürich");
    expect((await suggest("q=data%20eng&types=title"))[0]).toMatchObject({
      text: "Data Engineer",
      filter: { q: "Data Engineer" },
    });
    // Every kind at once, the most jobs first among exact matches.
    const all = await suggest("q=ber");
    expect(all.map((s) => s.text)).toEqual(expect.arrayContaining(["Berlin"]));
  });

  it("forgives typos, ranked after exact matches", async () => {
    expect((await suggest("q=pyhton&types=skill"))[0]).toMatchObject({ text: "Python", typos: 1 });
    expect((await suggest("q=quilfeather&types=company"))[0]).toMatchObject({ text: "Quillfeather Robotics" });
  });

  it("never suggests a hidden job's title or a company without a public page", async () => {
    expect(await suggest("q=zanzib")).toEqual([]);
    expect(await suggest("q=umbral&types=company")).toEqual([]);
  });

  it("answers no suggestions before anything is typed", async () => {
    expect(await suggest("")).toEqual([]);
  });

  it.each([
    ["q=", "invalid_q"],
    ["q=%20-%20", "invalid_q"],
    ["q=a&types=job", "invalid_types"],
    ["q=a&limit=0", "invalid_limit"],
    [`q=${"a".repeat(101)}`, "invalid_q"],
  ])("refuses %j with 400 %s", async (query, code) => {
    const { status, body } = await api.get<{ error: { code: string } }>(`/api/v1/suggest?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe(code);
  });
});
