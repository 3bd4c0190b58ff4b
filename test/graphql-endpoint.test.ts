// /graphql over real HTTP: answers, query limits with stable codes, masked unexpected errors;
// and the service's health routes and error shape.
import { get as httpGet, type IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inlineScriptHashes } from "../src/graphql/explorer.ts";
import { neighbourSurfaces } from "../src/http/root.ts";
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

  it("refuses a query whose lists multiply past the row limit, before it runs, while /healthz answers", async () => {
    // Issue 25: inside the depth, alias and token limits, this answered 38,152 jobs after 18.8 s.
    const nested = `{ ${["a", "b", "c"]
      .map(
        (alias) =>
          `${alias}: jobs(limit: 100) { items { company { openJobs(limit: 100) { company { openJobs(limit: 100) { slug title descriptionHtml } } } } } }`,
      )
      .join(" ")} }`;
    const deep = await startServer(db, { GRAPHQL_MAX_DEPTH: "10" });
    db.queries.length = 0;
    const health = async () => {
      const started = performance.now();
      const response = await fetch(`${deep.url}/healthz`);
      return { status: response.status, ms: performance.now() - started };
    };
    const [refused, , , healthz] = await Promise.all([
      deep.graphql(nested),
      deep.graphql(nested),
      deep.graphql(nested),
      health(),
    ]);
    await deep.close();
    expect(refused.status).toBe(400);
    expect(refused.data).toBeUndefined();
    // The walk stops at the first limit passed (issue 39): the figures are where it stopped.
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: "QUERY_LIMIT_EXCEEDED",
      limit: "rows",
      maxRows: 5_000,
    });
    expect(refused.errors?.[0]?.extensions?.["rows"]).toBeGreaterThan(5_000);
    expect(refused.errors?.[0]?.message).toMatch(/more than [\d,]+ rows .* the limits are 5,000 rows/);
    // Refused by the estimate alone: not one statement reached the database.
    expect(db.queries).toEqual([]);
    expect(healthz.status).toBe(200);
    expect(healthz.ms).toBeLessThan(1_000);
  });

  it("refuses issue 39's fragment fan-out within a second while /healthz answers in under 300 ms", async () => {
    // Three levels of named fragments, each spread 320 times by the one above: 5.9 KB, inside the
    // depth and token limits; its cost was found by expanding 32 million spreads (4.9 s).
    const fanOut = (n: number) => {
      const spreads = (name: string) => Array.from({ length: n }, () => `...${name}`).join(" ");
      return (
        `{ ${spreads("A")} } fragment A on Query { ${spreads("B")} } ` +
        `fragment B on Query { ${spreads("C")} } fragment C on Query { __typename }`
      );
    };
    const query = fanOut(320);
    // Deep enough for the fragments' levels: the cost limit must refuse it, not the depth limit.
    const deep = await startServer(db, { GRAPHQL_MAX_DEPTH: "10" });
    // A first, other document of the same shape: what is measured is not a new server's first
    // parse and validation (yoga caches those by the document's text, so not the same one).
    expect((await deep.graphql(fanOut(319))).status).toBe(400);
    const started = performance.now();
    const [refused, healthz] = await Promise.all([
      deep.graphql(query),
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const at = performance.now();
        const response = await fetch(`${deep.url}/healthz`);
        return { status: response.status, ms: performance.now() - at };
      })(),
    ]);
    await deep.close();
    expect(refused.status, JSON.stringify(refused).slice(0, 500)).toBe(400);
    expect(refused.errors?.[0]?.extensions?.["code"]).toBe("QUERY_LIMIT_EXCEEDED");
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(healthz).toMatchObject({ status: 200 });
    expect(healthz.ms).toBeLessThan(300);
  });

  it("sizes a list by a variable, and answers within the limits", async () => {
    const query = `query Q($n: Int) { companies(limit: $n) { items { openJobs(limit: 100) { slug } } } }`;
    const over = await server.graphql(query, { n: 50 });
    expect(over).toMatchObject({ status: 400, errors: [{ extensions: { code: "QUERY_LIMIT_EXCEEDED" } }] });
    const within = await server.graphql<{ companies: { items: unknown[] } }>(query, { n: 40 });
    expect(within.status).toBe(200);
    expect(within.errors).toBeUndefined();
    expect(within.data?.companies.items).toBeInstanceOf(Array);
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

describe("the explorer page", () => {
  /** GET /graphql as a browser asks for it, read raw (fetch would decode it). */
  const getPage = (acceptEncoding: string) =>
    new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const request = httpGet(
        `${server.url}/graphql`,
        { headers: { accept: "text/html", "accept-encoding": acceptEncoding } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
        },
      );
      request.on("error", reject);
    });

  it.each([
    ["br", brotliDecompressSync],
    ["gzip", gunzipSync],
    ["identity", (body: Buffer) => body],
  ])("goes out %s, under a CSP allowing exactly its inline scripts", async (encoding, decode) => {
    const { headers, body } = await getPage(`${encoding}, *;q=0.1`);
    expect(headers["content-encoding"]).toBe(encoding === "identity" ? undefined : encoding);
    expect(headers["vary"]).toMatch(/Accept-Encoding/);
    const html = decode(body).toString("utf8");
    expect(html).toContain("renderYogaGraphiQL");
    // 9 MB as it is; a quarter of that compressed.
    if (encoding !== "identity") expect(body.length).toBeLessThan(html.length / 3);
    const hashes = inlineScriptHashes(html);
    expect(hashes.length).toBeGreaterThan(0);
    const csp = headers["content-security-policy"] ?? "";
    expect(csp).toContain(`script-src ${hashes.map((h) => `'sha256-${h}'`).join(" ")};`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it("links the other surfaces, the list GET / and the OpenAPI documents use, with no script added", async () => {
    const { body } = await getPage("identity");
    const html = body.toString("utf8");
    const nav = /<nav class="surfaces" aria-label="[^"]+">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "";
    const links = [...nav.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map(([, href, label]) => ({
      label,
      path: href,
    }));
    expect(links).toEqual(neighbourSurfaces("graphql"));
    expect(links.map((link) => link.path)).toEqual([
      "/api/v1/docs",
      "/v1/docs",
      "/dashboard",
      "/mcp",
      "/llms.txt",
      "/",
    ]);
    expect(nav).not.toContain("<script");
  });

  it("is not what a GraphQL client gets from GET", async () => {
    const response = await fetch(`${server.url}/graphql?query=${encodeURIComponent("{ jobs { total } }")}`, {
      headers: { accept: "application/json" },
    });
    expect(await response.json()).toEqual({ data: { jobs: { total: 1 } } });
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
