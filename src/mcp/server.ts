// The MCP server of one request: the catalog's tools (./tools.ts) registered on the SDK's McpServer.
// A call that fails because of its arguments (a malformed filter, an unknown cursor) or asks for a
// row that is not public answers a tool error (isError) the agent can read and act on; a fault of
// ours (the database unreachable) is handed to the HTTP layer through `faults`, which answers it as
// every route does (503 with Retry-After, or a logged 500), never as a message with its detail.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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

export function createMcpServer(rc: RouteContext, faults: Faults): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
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
