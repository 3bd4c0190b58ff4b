// /mcp through the MCP SDK's own client (Client + StreamableHTTPClientTransport) against the real
// app over HTTP: initialize, tools/list, a call of every tool, the gates (no hidden row in any
// tool's output), bad arguments as tool errors (never a 500), the per-IP rate limit, the DNS
// rebinding checks, the body limit, batches refused, and /llms.txt.
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CUT_MARK, RESULT_MAX_CHARS } from "../../src/mcp/fit.ts";
import { MCP_PAGE_LIMIT_DEFAULT, MCP_PAGE_LIMIT_MAX, TOOL_OF_PATH } from "../../src/mcp/tools.ts";
import { routes } from "../../src/rest/routes.ts";
import { createTestDatabase, openUnreachableDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { seedGatedCatalog, type GatedCatalog } from "../helpers/gated-catalog.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let catalog: GatedCatalog;
const clients: Client[] = [];

async function connect(url = server.url): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  db = await createTestDatabase();
  catalog = await seedGatedCatalog(db.prisma);
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "10000" });
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await server?.close();
  await db?.close();
});

/** A POST with the headers as given (Host included), over node:http. */
function rawPost(
  port: number,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method: "POST", path: "/mcp", headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on("error", reject);
    request.end(body);
  });
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

/** Every tool with arguments that find something in the gated catalog. */
function everyCall(): [string, Record<string, unknown>][] {
  const { seen } = catalog;
  return [
    ["search_jobs", {}],
    ["search_jobs", { limit: MCP_PAGE_LIMIT_MAX, sector: seen["sector"], skill: seen["skill"] }],
    ["search_jobs", { q: "job", work_model: ["remote", "hybrid", "onsite"] }],
    ["search_jobs", { company: seen["company"] }],
    ["job_facets", {}],
    ["job_facets", { sector: seen["sector"], facets: ["work_model", "skill"] }],
    ["search_jobs", { q: "job", sort: "relevance" }],
    ["get_job", { slug: seen["openJob"] }],
    ["get_job", { slug: seen["jobOfHiddenCompany"] }],
    ["search_talents", { limit: MCP_PAGE_LIMIT_MAX, skill: seen["skill"], sector: seen["sector"] }],
    ["get_talent", { handle: seen["talent"] }],
    ["search_agents", { limit: MCP_PAGE_LIMIT_MAX }],
    ["get_agent", { slug: seen["agent"] }],
    ["get_agent", { slug: seen["unlistedAgent"] }],
    ["get_agent", { slug: seen["agentOfHiddenVendor"] }],
    ["list_companies", { limit: MCP_PAGE_LIMIT_MAX }],
    ["get_company", { slug: seen["company"] }],
    ["list_sectors", {}],
    ["get_sector", { slug: seen["sector"] }],
    ["list_skills", { limit: MCP_PAGE_LIMIT_MAX }],
    ["get_skill", { slug: seen["skill"] }],
    ["suggest", { q: "job" }],
  ];
}

describe("MCP over Streamable HTTP", () => {
  it("initializes and names the server, with instructions", async () => {
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe("marketplace-catalog");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain("next_arguments");
  });

  it("lists one read-only tool per catalog route, each with described arguments and an output schema", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const expected = routes.flatMap((route) => TOOL_OF_PATH[route.path]?.name ?? []);
    expect(tools.map((t) => t.name).sort()).toEqual(expected.sort());
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["search_jobs", "get_job", "list_sectors"]));
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((property as { description?: string }).description, `${tool.name}.${name}`).toBeTruthy();
      }
    }
    const search = tools.find((t) => t.name === "search_jobs");
    expect(search?.inputSchema.properties?.["work_model"]).toMatchObject({ type: "array" });
    expect(search?.inputSchema.properties?.["limit"]).toMatchObject({ maximum: MCP_PAGE_LIMIT_MAX });
  });

  it("calls every tool, with structured results (valid by its output schema) and the same JSON as text", async () => {
    const client = await connect();
    // The client validates each structured result against the output schema tools/list gave it.
    await client.listTools();
    const called = new Set<string>();
    for (const [name, args] of everyCall()) {
      const result = await call(client, name, args);
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent, name).toBeDefined();
      expect(JSON.parse(textOf(result)), name).toEqual(result.structuredContent);
      called.add(name);
    }
    expect([...called].sort()).toEqual(
      Object.values(TOOL_OF_PATH)
        .map((t) => t.name)
        .sort(),
    );
  });

  it("answers the REST API's items: the same job through both", async () => {
    const client = await connect();
    const slug = catalog.seen["openJob"];
    const result = await call(client, "get_job", { slug });
    const rest = (await (await fetch(`${server.url}/api/v1/jobs/${slug}`)).json()) as { data: unknown };
    expect(result.structuredContent).toEqual(rest.data);
  });

  it("never shows a hidden row: not in any result, and not found by its slug", async () => {
    const client = await connect();
    const outputs: string[] = [];
    for (const [name, args] of everyCall()) outputs.push(textOf(await call(client, name, args)));
    const everything = outputs.join("\n");
    for (const hidden of catalog.hidden) expect(everything, hidden).not.toContain(hidden);
    const detail = { jobs: "get_job", talents: "get_talent", agents: "get_agent", companies: "get_company" } as const;
    for (const [kind, keys] of Object.entries(catalog.hiddenByKind)) {
      const tool = detail[kind as keyof typeof detail];
      for (const key of keys) {
        const result = await call(client, tool, { [tool === "get_talent" ? "handle" : "slug"]: key });
        expect(result.isError, `${tool} ${key}`).toBe(true);
        expect(textOf(result)).toMatch(/^No public \w+ with/);
      }
    }
    // Unlisted agents answer by slug but are never listed.
    const agents = textOf(await call(client, "search_agents", { limit: MCP_PAGE_LIMIT_MAX }));
    expect(agents).not.toContain(catalog.seen["unlistedAgent"]);
  });

  it("answers bad arguments with a tool error naming the problem, never a 500", async () => {
    const client = await connect();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["search_jobs", { limit: MCP_PAGE_LIMIT_MAX + 1 }, /limit/],
      ["search_jobs", { limit: 0 }, /limit/],
      ["search_jobs", { limt: 10 }, /limt/],
      ["search_jobs", { work_model: ["everywhere"] }, /work_model/],
      ["search_jobs", { updated_since: "yesterday" }, /invalid_updated_since/],
      ["search_jobs", { q: "the" }, /invalid_q/],
      ["search_jobs", { salary_min: 1000 }, /salary_currency/],
      ["search_jobs", { cursor: "forged" }, /invalid_cursor/],
      ["search_jobs", { q: 42 }, /q/],
      ["get_job", {}, /slug/],
      ["get_job", { slug: "x".repeat(201) }, /slug/],
      ["get_job", { slug: "a\u0000b" }, /No public job/],
      ["list_sectors", { limit: 5 }, /limit/],
      ["no_such_tool", {}, /no_such_tool/],
    ];
    for (const [name, args, message] of cases) {
      const result = await call(client, name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(textOf(result), `${name} ${JSON.stringify(args)}`).toMatch(message);
    }
  });

  it("cuts a job too long for the result size limit, saying so, within its output schema", async () => {
    const f = factories(db.prisma);
    const long = "A long paragraph of the job. ".repeat(5_000);
    const job = await f.job("very-long-job", { descriptionText: long, descriptionHtml: `<p>${long}</p>` });
    const client = await connect();
    await client.listTools();
    const result = await call(client, "get_job", { slug: job.slug });
    expect(result.isError).toBeFalsy();
    const item = result.structuredContent as { description_text: string; description_html: string };
    expect(JSON.stringify(item).length).toBeLessThanOrEqual(RESULT_MAX_CHARS);
    expect(item.description_text.endsWith(CUT_MARK)).toBe(true);
  });

  it("pages with next_arguments: by cursor, to the end, without repeats", async () => {
    const f = factories(db.prisma);
    const company = await f.company("paging-company");
    for (let i = 0; i < 5; i++) await f.job(`paging-job-${i}`, { companyId: company.id });
    const client = await connect();
    const slugs: string[] = [];
    let args: Record<string, unknown> | null = { company: company.slug, limit: 2 };
    while (args) {
      const result = await call(client, "search_jobs", args);
      const page = result.structuredContent as {
        items: { slug: string }[];
        next_arguments: Record<string, unknown> | null;
        total: number;
      };
      slugs.push(...page.items.map((item) => item.slug));
      expect(page.total).toBe(5);
      args = page.next_arguments;
      if (args) expect(args).toMatchObject({ company: company.slug, limit: 2, cursor: expect.any(String) as string });
    }
    expect(new Set(slugs).size).toBe(5);
    const first = await call(client, "search_jobs", { company: company.slug });
    expect((first.structuredContent as { limit: number }).limit).toBe(MCP_PAGE_LIMIT_DEFAULT);
  });
});

describe("the HTTP side of /mcp", () => {
  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body,
    });
  const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

  it("answers GET and DELETE 405 (stateless: no server stream, no session)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${server.url}/mcp`, { method, headers: { accept: "text/event-stream" } });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toContain("POST");
    }
  });

  it("refuses a browser page of another origin (403), takes an allowed one and callers without Origin", async () => {
    expect((await post(server.url, ping, { origin: "https://evil.example" })).status).toBe(403);
    expect((await post(server.url, ping)).status).toBe(200);
    const open = await startServer(db, { MCP_ALLOWED_ORIGINS: "https://agent.example" });
    try {
      expect((await post(open.url, ping, { origin: "https://agent.example" })).status).toBe(200);
      const refused = await post(open.url, ping, { origin: "https://evil.example" });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: { code: "origin_not_allowed" } });
    } finally {
      await open.close();
    }
  });

  it("on a loopback HOST answers loopback names only (DNS rebinding)", async () => {
    const local = await startServer(db, { HOST: "127.0.0.1" });
    try {
      expect((await post(local.url, ping)).status).toBe(200);
      // fetch() will not send another Host; node:http will.
      const port = Number(new URL(local.url).port);
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      for (const host of [`localhost:${port}`, `[::1]:${port}`]) {
        expect((await rawPost(port, ping, { ...headers, host })).status, host).toBe(200);
      }
      const rebound = await rawPost(port, ping, { ...headers, host: `attacker.example:${port}` });
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: "host_not_allowed" } });
    } finally {
      await local.close();
    }
  });

  it("refuses a body over 64 KiB (413), a batch and malformed JSON (400, JSON-RPC errors)", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(70_000) } });
    const tooLarge = await post(server.url, big);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ error: { code: "body_too_large" } });
    const batch = await post(server.url, `[${ping},${ping}]`);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ error: { code: -32600 } });
    const broken = await post(server.url, "{");
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { code: -32700 } });
  });

  it.each([
    ["arguments a string", { name: "list_sectors", arguments: "x" }],
    ["arguments an array", { name: "list_sectors", arguments: [1] }],
    ["arguments null", { name: "list_sectors", arguments: null }],
    ["no tool name", { arguments: {} }],
    ["params a number", 7],
  ])("answers a tools/call with %s as -32602 Invalid params, never -32603", async (_case, params) => {
    const response = await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params }));
    const body = (await response.json()) as { id: unknown; error: { code: number; message: string } };
    expect(body.id).toBe(9);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(/^Invalid params: /);
    expect(body.error.message).not.toMatch(/"code":|invalid_type/);
  });

  it("answers a database that cannot be reached as REST does: 503 with Retry-After, not a tool result", async () => {
    const down = await openUnreachableDatabase();
    const alone = await startServer(down);
    try {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "list_sectors", arguments: {} },
      });
      const response = await post(alone.url, body);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await response.json()).toMatchObject({ error: { code: "database_unavailable" } });
    } finally {
      await alone.close();
      await down.close();
    }
  });

  it("counts against the per-IP rate limit: a client over it gets 429 with Retry-After", async () => {
    const limited = await startServer(db, { RATE_LIMIT_REQUESTS: "4" });
    try {
      const client = await connect(limited.url);
      // initialize, notifications/initialized and the GET the client tries for a stream: 3 requests.
      await call(client, "list_sectors");
      await expect(call(client, "list_sectors")).rejects.toThrow(/rate_limited/);
      const response = await post(limited.url, ping);
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    } finally {
      await limited.close();
    }
  });
});

describe("/llms.txt", () => {
  it("describes the API in the llms.txt format, with absolute links and every tool", async () => {
    const response = await fetch(`${server.url}/llms.txt`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/markdown");
    const text = await response.text();
    expect(text).toMatch(/^# Marketplace API\n\n> /);
    for (const path of ["/api/v1/openapi.json", "/api/v1/docs", "/mcp", "/graphql"]) {
      expect(text).toContain(`](${server.url}${path})`);
    }
    for (const tool of Object.values(TOOL_OF_PATH)) expect(text).toContain(`- ${tool.name}: `);
    // This server has no compression API.
    expect(text).not.toContain(`${server.url}/v1/docs`);
    for (const link of text.matchAll(/\]\((http[^)]+)\)/g)) {
      const linked = await fetch(link[1] ?? "", { method: link[1]?.endsWith("/mcp") ? "POST" : "GET" });
      expect(linked.status, link[1]).not.toBe(404);
    }
  });
});
