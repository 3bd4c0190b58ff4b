// Property-based tests of every /api/v1 route through real HTTP: any query string (each route's
// own parameters with hostile values, repeated, unknown ones, raw bytes) and any path key answers
// 2xx or 4xx in the documented shape (the ApiClient checks each answer against the OpenAPI
// document), never 5xx. Values come from what each parameter's documented schema says, pushed to
// and past its edges: integers at the 32- and 64-bit boundaries, instants with impossible days or
// years out of PostgreSQL's range, change-feed positions past bigint, control characters.
//
// Bounded for CI (a few hundred requests in all); FUZZ_RUNS=10000 runs that many per property
// (docs/input-validation.md). A failure prints the shrunk query and the seed that replays it.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes, type ListRoute, type FeedRoute, type DetailRoute, type SummaryRoute } from "../../src/rest/routes.ts";
import type { JsonSchema, ParamDef } from "../../src/rest/params.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { fuzzRuns, hostileInstant, hostileText, integerEdges } from "../helpers/fuzz.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const company = await f.company("fuzz-company");
  await f.job("fuzz-job", { companyId: company.id, salaryCurrency: "EUR", salaryMin: 50_000, salaryPeriod: "year" });
  await f.job("fuzz-remote", { workModel: "remote" });
  server = await startServer(db);
  api = await createApiClient(server.url);
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

/** A real next_since-shaped position: two numbers in base64url, at and past their types' edges. */
// Up to 20 digits, the most a position's parts may have, and the edges of bigint and xid8 below that.
const positionPart = fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }), {
  weight: 2,
  arbitrary: fc.constantFrom(0n, 2n ** 31n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, 10n ** 20n - 1n),
});
const feedPosition = fc
  .tuple(positionPart, positionPart)
  .map(([txid, seq]) => Buffer.from(`${txid}.${seq}`).toString("base64url"));

/** One value of a parameter, from its documented schema, its edges, or anything at all. */
function valueOf(def: ParamDef<unknown>): fc.Arbitrary<string> {
  const schema: JsonSchema = def.schema;
  const items = (schema["items"] as JsonSchema | undefined) ?? schema;
  const documented: fc.Arbitrary<string>[] = [];
  const allowed = items["enum"] as string[] | undefined;
  if (allowed) {
    documented.push(fc.constantFrom(...allowed));
    documented.push(fc.array(fc.constantFrom(...allowed, "", "x"), { maxLength: 4 }).map((v) => v.join(",")));
    documented.push(fc.constantFrom(...allowed).map((v) => v.toUpperCase()));
  }
  if (schema["type"] === "integer") documented.push(integerEdges);
  if (schema["type"] === "boolean") documented.push(fc.constantFrom("true", "false", "TRUE", "1", "0"));
  if (schema["format"] === "date-time") documented.push(hostileInstant);
  if (def.name === "since" || def.name === "cursor") documented.push(feedPosition);
  // What the parameter documents, out to its edges, more often than text of any kind.
  return fc.oneof(...documented.map((arbitrary) => ({ weight: 3, arbitrary })), hostileText);
}

/**
 * A query string for the route with `def` given a hostile value, maybe again, beside a few of the
 * route's other parameters and maybe an unknown one.
 */
function queryWith(def: ParamDef<unknown>, params: Record<string, ParamDef<unknown>>): fc.Arbitrary<string> {
  const defs = Object.values(params);
  const pair = (d: ParamDef<unknown>) => valueOf(d).map((value) => [d.name, value] as const);
  // Mostly the value alone, so that it reaches the route rather than a refusal of its company.
  const given = fc.oneof(
    { weight: 4, arbitrary: pair(def).map((p) => [p]) },
    { weight: 1, arbitrary: fc.array(pair(def), { minLength: 2, maxLength: 2 }) },
  );
  const others = fc.oneof(
    { weight: 3, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...defs).chain(pair), { maxLength: 2 }) },
  );
  const unknown = fc.oneof(
    { weight: 7, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: hostileText.map((name) => [name, "1"] as const) },
  );
  return fc.tuple(given, others, unknown).map(([given, rest, extra]) => {
    const search = new URLSearchParams();
    for (const [name, value] of [...given, ...rest, ...(extra ? [extra] : [])]) search.append(name, value);
    return search.toString();
  });
}

/** Raw query bytes, as a client might send them: stray %, +, &, = and non-ASCII included. */
const rawQuery = fc.string({ unit: fc.constantFrom(..."%+&=;?#/ab019zZ~é\u0000".split("")), maxLength: 40 });

async function expectDocumented(path: string): Promise<void> {
  const { status, body } = await api.get<{ error?: { code: string } }>(path);
  expect(status, `GET ${path} answered ${status}`).toBeLessThan(500);
  if (status >= 400) expect(body.error?.code, `GET ${path}`).toMatch(/^[a-z_]+$/);
}

const apiPath = (path: string) => `/api/v1${path}`;
const listed = routes.filter((r): r is ListRoute | FeedRoute | SummaryRoute => r.kind !== "detail");
const detailed = routes.filter((r): r is DetailRoute => r.kind === "detail");

describe("any value of any parameter of a list, feed or summary route answers 2xx or 4xx in the documented shape", () => {
  const cases = listed.flatMap((route) =>
    Object.values(route.params).map((def) => [route.path, def.name, route, def] as const),
  );
  it.each(cases)("GET %s ?%s=", async (_path, _name, route, def) => {
    await fc.assert(
      fc.asyncProperty(queryWith(def, route.params), async (query) => {
        await expectDocumented(`${apiPath(route.path)}?${query}`);
      }),
      { numRuns: fuzzRuns(10) },
    );
  });

  it.each(listed.map((r) => [r.path, r] as const))("GET %s with raw query bytes", async (_path, route) => {
    await fc.assert(
      fc.asyncProperty(rawQuery, async (query) => {
        await expectDocumented(`${apiPath(route.path)}?${query}`);
      }),
      { numRuns: fuzzRuns(5) },
    );
  });
});

describe("any key and query of a detail route answers 2xx or 4xx in the documented shape", () => {
  it.each(detailed.map((r) => [r.path, r] as const))("GET %s", async (_path, route) => {
    const key = fc.oneof(hostileText, fc.constantFrom("fuzz-job", "..", "%2e%2e", "a".repeat(201)));
    await fc.assert(
      fc.asyncProperty(key, fc.oneof(fc.constant(""), rawQuery), async (k, query) => {
        // A lone surrogate cannot be percent-encoded at all: the nearest text a client can send.
        const path = apiPath(
          route.path.replace(/\{\w+\}/, encodeURIComponent(Buffer.from(k, "utf8").toString("utf8"))),
        );
        await expectDocumented(query ? `${path}?${query}` : path);
      }),
      { numRuns: fuzzRuns(8) },
    );
  });
});
