// /graphql over real HTTP: answers, query limits with stable codes, masked unexpected errors;
// and the service's health routes and error shape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { factories } from "./helpers/factories.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let db: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  await factories(db.prisma).job("endpoint-job");
  server = await startServer(db, { GRAPHQL_MAX_DEPTH: "6", GRAPHQL_MAX_ALIASES: "3" });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

describe("/graphql", () => {
  it("answers a query", async () => {
    const result = await server.graphql<{ jobs: { total: number } }>(`{ jobs { total } }`);
    expect(result).toMatchObject({ status: 200, data: { jobs: { total: 1 } } });
  });

  it.each([
    ["depth", `{ companies { items { openJobs { company { openJobs { company { openJobs { slug } } } } } } } }`],
    ["aliases", `{ a: sectors { slug } b: sectors { slug } c: sectors { slug } d: sectors { slug } }`],
  ])("refuses a query over the %s limit with QUERY_LIMIT_EXCEEDED", async (_limit, query) => {
    const result = await server.graphql(query);
    expect(result.data).toBeUndefined();
    expect(result.errors?.[0]?.extensions?.["code"]).toBe("QUERY_LIMIT_EXCEEDED");
  });

  it("gives parse and validation errors stable codes", async () => {
    expect((await server.graphql(`{ jobs {`)).errors?.[0]?.extensions?.["code"]).toBe("GRAPHQL_PARSE_FAILED");
    expect((await server.graphql(`{ jobs { nope } }`)).errors?.[0]?.extensions?.["code"]).toBe(
      "GRAPHQL_VALIDATION_FAILED",
    );
  });

  it("masks unexpected errors in production", async () => {
    const broken = await createTestDatabase();
    const production = await startServer(broken, { NODE_ENV: "production", GRAPHQL_ACCESS: "public" });
    // A fault of ours, not an outage (an unreachable database is a 503: test/production/).
    await broken.sql.exec("DROP TABLE jobs CASCADE");
    // The page's rows are read from the dropped table (its total comes from the kept counters).
    const result = await production.graphql(`{ jobs(limit: 1) { items { slug } } }`);
    await production.close();
    await broken.close();
    expect(result.errors?.[0]?.message).toBe("Unexpected error.");
    expect(JSON.stringify(result)).not.toMatch(/prisma|pglite|stack|at \//i);
  });
});

describe("service routes", () => {
  it("reports liveness and readiness", async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ok" });
  });

  it("answers readiness 503 in the error shape when the database is gone", async () => {
    const gone = await createTestDatabase();
    const s = await startServer(gone);
    await gone.close();
    const response = await fetch(`${s.url}/readyz`);
    await s.close();
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.json()).toMatchObject({ error: { code: "database_unavailable" } });
  });

  it("answers unknown paths 404 in the error shape with the request id", async () => {
    const response = await fetch(`${server.url}/no/such/path`, { headers: { "x-request-id": "abc-123" } });
    expect(response.status).toBe(404);
    expect(response.headers.get("x-request-id")).toBe("abc-123");
    expect(await response.json()).toEqual({
      error: { code: "not_found", message: "No route for GET /no/such/path", request_id: "abc-123" },
    });
  });
});
