// Property-based test of every MCP tool through the SDK's client over real HTTP: any arguments (each
// tool's own, with hostile values of any JSON type, and unknown ones) answer a tool result, a
// structured one or a tool error, never a protocol error or an HTTP error. The /api/v1 fuzz suite's
// counterpart (test/rest/params.fuzz.test.ts). FUZZ_RUNS=10000 runs that many per tool.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogTools } from "../../src/mcp/tools.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { fuzzRuns, hostileInstant, hostileText, integerEdges } from "../helpers/fuzz.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const company = await f.company("fuzz-company");
  await f.job("fuzz-job", { companyId: company.id, salaryCurrency: "EUR", salaryMin: 50_000, salaryPeriod: "year" });
  server = await startServer(db);
  client = new Client({ name: "mcp-fuzz", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  // The client validates structured results against the listed output schemas.
  await client.listTools();
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await db?.close();
});

/** A value of any kind an agent could send, pushed to the edges. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  hostileInstant,
  integerEdges.map(Number),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(hostileText, fc.constantFrom("remote", "full_time", "year"))),
  fc.jsonValue({ maxDepth: 2 }),
);

describe("any arguments of any tool answer a tool result, never a protocol or HTTP error", () => {
  it.each(catalogTools().map((tool) => [tool.name, Object.keys(tool.inputSchema.shape)] as const))(
    "%s",
    async (name, argumentNames) => {
      const key = fc.oneof(fc.constantFrom(...argumentNames, "limt", "__proto__"), fc.string({ maxLength: 8 }));
      await fc.assert(
        fc.asyncProperty(fc.dictionary(key, anyValue, { maxKeys: 4 }), async (args) => {
          const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
          if (!result.isError) expect(result.structuredContent, JSON.stringify(args)).toBeDefined();
          else expect(result.content[0]?.type).toBe("text");
        }),
        { numRuns: fuzzRuns(15) },
      );
    },
  );
});
