// Inputs that answered 500 (issue 25), through real HTTP on the test's database (PGlite, or the
// PostgreSQL server under DATABASE_URL): instants outside what PostgreSQL or Prisma can hold, an
// impossible calendar date, a change-feed position past bigint, an operation type the schema does
// not have. Each is a 400 in the documented shape, naming what was wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let development: TestServer;
let api: ApiClient;

beforeAll(async () => {
  db = await createTestDatabase();
  await factories(db.prisma).job("hostile-input-job");
  server = await startServer(db);
  // Development shows unexpected errors in full: a 500 there would carry a stack trace.
  development = await startServer(db, { NODE_ENV: "development" });
  api = await createApiClient(server.url);
});
afterAll(async () => {
  await server?.close();
  await development?.close();
  await db?.close();
});

type ErrorBody = { error: { code: string; message: string } };

/**
 * POST /graphql accepting application/graphql-response+json, with which yoga answers a request
 * error (validation, variables) with 400; with application/json it answers 200, as GraphQL over
 * HTTP asks for that legacy type.
 */
async function graphqlResponse(url: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
  return { status: response.status, ...body };
}

const feedPosition = (txid: string, seq: string) => Buffer.from(`${txid}.${seq}`).toString("base64url");

describe("GET /api/v1/jobs?updated_since=", () => {
  it.each([
    ["0000-01-01", "year 0 (PostgreSQL's calendar has none)"],
    ["9999-12-31T23:59:59-14:00", "an instant in year 10000 in UTC"],
    ["-000001-01-01", "an expanded year"],
    ["2026-02-31", "30 February"],
    ["2026-02-29", "29 February of a common year"],
    ["2026-13-01", "month 13"],
    ["2026-04-31T00:00:00Z", "31 April"],
    ["2026-01-01T24:00:00Z", "hour 24"],
    ["2026-01-01T23:60:00Z", "minute 60"],
    ["2026-01-01T00:00:00+24:00", "an offset of 24 hours"],
  ])("refuses %s (%s) with 400 invalid_updated_since", async (value, _why) => {
    const { status, body } = await api.get<ErrorBody>(`/api/v1/jobs?updated_since=${encodeURIComponent(value)}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_updated_since");
    expect(body.error.message).toContain(value);
  });

  it.each([
    ["0001-01-01", 1],
    ["2024-02-29T12:00:00+14:00", 1],
    ["9999-12-31T23:59:59Z", 0],
  ])("accepts %s, inside the calendar", async (value, total) => {
    const { status, body } = await api.get<{ meta: { total: number } }>(
      `/api/v1/jobs?updated_since=${encodeURIComponent(value)}`,
    );
    expect(status).toBe(200);
    expect(body.meta.total).toBe(total);
  });
});

describe("GraphQL jobs(filter: { updatedSince })", () => {
  it.each(["0000-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00", "2026-02-31T00:00:00Z"])(
    "refuses %s as a bad input, not a fault",
    async (value) => {
      const variables = await graphqlResponse(
        development.url,
        `query Q($since: DateTime) { jobs(filter: { updatedSince: $since }) { total } }`,
        { since: value },
      );
      const literal = await graphqlResponse(
        development.url,
        `{ jobs(filter: { updatedSince: "${value}" }) { total } }`,
      );
      // A literal fails validation (400); a variable fails coercion, which graphql-jit reports in
      // the execution result (200, no data).
      expect(literal.status).toBe(400);
      expect(variables.status).toBe(200);
      for (const result of [variables, literal]) {
        expect(result.data ?? null).toBeNull();
        expect(result.errors?.[0]?.message).toMatch(/DateTime/);
        expect(JSON.stringify(result.errors)).not.toMatch(/stack|Unexpected error/i);
      }
    },
  );
});

describe("GET /api/v1/jobs/changes?since=", () => {
  it.each([
    ["a sequence of 2^63", feedPosition("1", "9223372036854775808")],
    ["a sequence of 20 nines", feedPosition("1", "99999999999999999999")],
    ["a transaction id of 2^64", feedPosition("18446744073709551616", "1")],
  ])("refuses %s with 400 invalid_since", async (_case, since) => {
    const { status, body } = await api.get<ErrorBody>(`/api/v1/jobs/changes?since=${since}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_since");
  });

  it("accepts the largest position there can be", async () => {
    const { status } = await api.get(
      `/api/v1/jobs/changes?since=${feedPosition("18446744073709551615", "9223372036854775807")}`,
    );
    expect(status).toBe(200);
  });
});

describe("a parameter named beyond the Basic Multilingual Plane", () => {
  it("is a 400 unknown_parameter whose X-Error-Message header carries it percent-encoded", async () => {
    // The header's encoding threw on each half of the surrogate pair: a 500 (test/rest/params.fuzz.test.ts).
    const { status, body, headers } = await api.get<ErrorBody>("/api/v1/jobs?%F0%90%80%80=1");
    expect(status).toBe(400);
    expect(body.error.code).toBe("unknown_parameter");
    expect(body.error.message).toContain("\u{10000}");
    expect(headers.get("x-error-message")).toContain("%F0%90%80%80");
  });
});

describe("GraphQL string arguments holding NUL", () => {
  it.each([
    ["a variable", `query Q($slug: String!) { job(slug: $slug) { slug } }`, { slug: "a\u0000b" }],
    ["a literal", `{ company(slug: "a\\u0000b") { slug } }`, undefined],
    ["a filter", `query Q($f: JobFilter) { jobs(filter: $f) { total } }`, { f: { sector: "\u0000" } }],
  ])("in %s are a 400 BAD_USER_INPUT, not a masked fault", async (_case, query, variables) => {
    // PostgreSQL text cannot hold NUL: the statement failed (test/graphql-arguments.fuzz.test.ts).
    const result = await graphqlResponse(server.url, query, variables);
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions?.["code"]).toBe("BAD_USER_INPUT");
    expect(result.errors?.[0]?.message).toContain("NUL");
  });
});

describe("GraphQL operation types the schema does not have", () => {
  it.each(["mutation { __typename }", "subscription { __typename }", "mutation M { jobs { total } }"])(
    "%s is a 400 validation error without a stack trace",
    async (query) => {
      const result = await graphqlResponse(development.url, query);
      expect(result.status).toBe(400);
      expect(result.errors?.[0]?.extensions?.["code"]).toBe("GRAPHQL_VALIDATION_FAILED");
      expect(result.errors?.[0]?.message).toMatch(/read-only|no (mutation|subscription)/i);
      expect(JSON.stringify(result)).not.toMatch(/stack|at \//);
    },
  );
});
