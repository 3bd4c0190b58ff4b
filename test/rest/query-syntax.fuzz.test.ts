// Property-based tests of q's syntax (issue 40; docs/catalog-api.md, "How search reads your
// words"): any text assembled from the syntax's own pieces (words, hyphenated and dotted forms,
// quotes, -, OR, accents, punctuation, a place, a company, spaces at the end) is either read (200
// with meta.search) or refused as 400 invalid_q in the error shape, on /jobs, /jobs/facets and
// /suggest, never a 5xx; the parser alone, on many more texts, either parses or throws its own
// error. Bounded for CI; FUZZ_RUNS=10000 runs that many per property (docs/input-validation.md).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseQuery, QuerySyntaxError } from "../../src/graphql/search/syntax.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { fuzzRuns } from "../helpers/fuzz.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const company = await f.company("syntax-co", { name: "Quillfeather Robotics" });
  await f.job("syntax-a", { title: "Data Engineer", locationCity: "Berlin", locationCountry: "DE" });
  await f.job("syntax-b", { title: "Front-End Developer", companyId: company.id });
  await f.job("syntax-c", { title: "Node.js Engineer", descriptionText: "Machine learning in Zürich." });
  server = await startServer(db);
  api = await createApiClient(server.url);
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

const word = fc.constantFrom(
  "data",
  "engineer",
  "engnieer",
  "pyth",
  "front-end",
  "node.js",
  "ML",
  "nlp-engineer",
  "zürich",
  "berlin",
  "quillfeather",
  "robotics",
  "the",
  "a",
  "c++",
  "c#",
  ".net",
  "x".repeat(60),
  "🙂",
  "ß",
  "İ",
);
const piece = fc.oneof(
  { weight: 6, arbitrary: word },
  { weight: 2, arbitrary: word.map((w) => `-${w}`) },
  { weight: 2, arbitrary: fc.array(word, { minLength: 0, maxLength: 3 }).map((ws) => `"${ws.join(" ")}"`) },
  { weight: 2, arbitrary: fc.constantFrom("OR", "or", "-", '"', "--", '-"', "(", ")", "*", ":", "\\", "%", "_") },
);
/** A q made of the syntax's own pieces, separated by spaces or not, maybe ending in a space. */
const query = fc
  .tuple(fc.array(fc.tuple(piece, fc.constantFrom(" ", " ", "  ", "")), { minLength: 1, maxLength: 8 }), fc.boolean())
  .map(([parts, trailing]) => parts.map(([p, sep]) => p + sep).join("") + (trailing ? " " : ""))
  .filter((q) => q.length <= 200);

async function expectReadOrRefused(path: string, q: string, code: string): Promise<void> {
  const { status, body } = await api.get<{ error?: { code: string }; meta?: { search?: unknown } }>(
    `${path}${path.includes("?") ? "&" : "?"}q=${encodeURIComponent(q)}`,
  );
  expect([200, 400], `${path} q=${JSON.stringify(q)} answered ${status}`).toContain(status);
  if (status === 400) expect(body.error?.code, `q=${JSON.stringify(q)}`).toBe(code);
}

describe("q's syntax, fuzzed", () => {
  it("is read or refused as invalid_q on GET /jobs, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        await expectReadOrRefused("/api/v1/jobs?limit=5", q, "invalid_q");
      }),
      { numRuns: fuzzRuns(40) },
    );
  });

  it("is read or refused as invalid_q on GET /jobs/facets, and suggested or refused on GET /suggest", async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        await expectReadOrRefused("/api/v1/jobs/facets?facets=work_model", q, "invalid_q");
        await expectReadOrRefused("/api/v1/suggest", q.slice(0, 100), "invalid_q");
      }),
      { numRuns: fuzzRuns(15) },
    );
  });

  it("parses or throws its own error, never anything else, and every group it returns holds a term", () => {
    fc.assert(
      fc.property(fc.oneof(query, fc.string({ maxLength: 60 })), (q) => {
        try {
          const parsed = parseQuery(q);
          expect(parsed.groups.length).toBeGreaterThan(0);
          for (const group of parsed.groups) expect(group.length).toBeGreaterThan(0);
        } catch (error) {
          expect(error).toBeInstanceOf(QuerySyntaxError);
        }
      }),
      { numRuns: fuzzRuns(2000) },
    );
  });
});
