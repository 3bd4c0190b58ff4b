// The MCP server of one request: the catalog's tools (./tools.ts) registered on the SDK's McpServer.
// A call that fails because of its arguments (a malformed filter, an unknown cursor) or asks for a
// row that is not public answers a tool error (isError) the agent can read and act on; a fault of
// ours (the database unreachable) is handed to the HTTP layer through `faults`, which answers it as
// every route does (503 with Retry-After, or a logged 500), never as a message with its detail.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListToolsRequestSchema, type CallToolResult, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import type { RouteContext } from "../rest/routes.ts";
import { catalogTools, isCallersError, type CatalogTool } from "./tools.ts";

export const SERVER_INFO = { name: "marketplace-catalog", title: "Marketplace catalog", version: "1.0.0" };

export const INSTRUCTIONS = [
  "Read-only access to the public catalog of a job marketplace: open jobs, talents with a public profile, the AI agents it sells, companies, sectors and skills.",
  "Everything here is public: rows that are not (drafts, closed or expired jobs, private profiles) are absent, and asking for one by slug answers not found.",
  "search_* and list_* tools answer pages: call again with next_arguments to read on. get_* tools take a slug (a talent: a handle) from a search result.",
  "Filters take slugs: find sector and skill slugs with list_sectors and list_skills.",
].join(" ");

/** Built once: the tools' schemas do not change between requests. */
const TOOLS: CatalogTool[] = catalogTools();

/** Where a request's tool calls leave a fault of ours for the HTTP layer to answer. */
export interface Faults {
  error?: Error;
}

const toolError = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

let toolList: Promise<ListToolsResult> | undefined;

/**
 * tools/list's answer, made once per process: the SDK turns every tool's zod schemas into JSON
 * Schema on each tools/list, which cost more than a tool call (about 55 KB of schemas).
 */
function listedTools(): Promise<ListToolsResult> {
  toolList ??= (async () => {
    const server = withTools(new McpServer(SERVER_INFO), null, {});
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "tools-list", version: SERVER_INFO.version });
    try {
      await client.connect(clientSide);
      return await client.listTools();
    } finally {
      await client.close();
      await server.close();
    }
  })().catch((error: unknown) => {
    toolList = undefined;
    throw error;
  });
  return toolList;
}

export function createMcpServer(rc: RouteContext, faults: Faults): McpServer {
  const server = withTools(new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS }), rc, faults);
  server.server.removeRequestHandler("tools/list");
  server.server.setRequestHandler(ListToolsRequestSchema, () => listedTools());
  return server;
}

/** Registers the tools; with rc null (tools/list only), a call is a fault. */
function withTools(server: McpServer, rc: RouteContext | null, faults: Faults): McpServer {
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      async (args: Record<string, unknown>): Promise<CallToolResult> => {
        try {
          if (!rc) throw new Error("a tool called on the server that only lists them");
          const outcome = await tool.run(rc, args);
          if ("notFound" in outcome) return toolError(outcome.notFound);
          const structured = outcome.structured;
          return { structuredContent: structured, content: [{ type: "text", text: JSON.stringify(structured) }] };
        } catch (error) {
          if (isCallersError(error)) return toolError(`${error.code}: ${error.message}`);
          faults.error ??=
            error instanceof Error ? error : new Error("a tool failed with a value that is not an Error");
          throw error;
        }
      },
    );
  }
  return server;
}
