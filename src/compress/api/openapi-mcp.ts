// The OpenAPI description of POST /v1/mcp (mcp.ts): compression for AI agents over the Model
// Context Protocol. The endpoint speaks JSON-RPC 2.0, so the document describes its envelope, its
// authentication and its HTTP answers, and points to the tools' own schemas (tools/list) and to
// docs/mcp.md, "Compression for agents"; merged into /v1/openapi.json by openapi.ts.
import { COMPRESSION_MCP_PATH } from "./mcp.ts";
import type { Shared } from "./openapi-jobs.ts";

type Json = Record<string, unknown>;

const TOOLS = "compress_pdf, get_compression, list_compressions, delete_compression and usage";

const jsonRpcRequest = {
  type: "object",
  required: ["jsonrpc", "method"],
  properties: {
    jsonrpc: { type: "string", const: "2.0" },
    id: { type: ["string", "integer"], description: "Absent in a notification (answered 202 without a body)." },
    method: {
      type: "string",
      description: "initialize, tools/list, tools/call, ping, or a notification such as notifications/initialized.",
    },
    params: { type: "object" },
  },
};

const jsonRpcResponse = {
  type: "object",
  required: ["jsonrpc"],
  properties: {
    jsonrpc: { type: "string", const: "2.0" },
    id: { type: ["string", "integer", "null"] },
    result: {
      type: "object",
      description:
        "tools/call: structuredContent (each tool's outputSchema) and the same JSON as text; a refused argument is isError with the error code first in its text.",
    },
    error: {
      type: "object",
      properties: { code: { type: "integer" }, message: { type: "string" } },
    },
  },
};

/** /v1/mcp: POST only (stateless: GET and DELETE are 405), the subscriber's key as the Bearer token. */
export function mcpPath({ error, retryAfter, common }: Shared): Record<string, Json> {
  return {
    [COMPRESSION_MCP_PATH]: {
      post: {
        operationId: "mcp",
        tags: ["Agents (MCP)"],
        summary: "Compression for AI agents: the Model Context Protocol over Streamable HTTP",
        description: [
          `An MCP endpoint (Streamable HTTP, stateless: POST only, one JSON-RPC 2.0 message per request, JSON answers) with the tools ${TOOLS}; tools/list gives each tool's input and output schemas. The subscriber's API key is the Bearer token, as for every route here: without it or with a wrong one, 401 in the error shape before any tool runs. Each request counts against the key's rate limit; compress_pdf charges a unit of the monthly quota as POST /v1/compress does (a failure gives it back), and answers the result with its report, or a job to poll with get_compression: when asked (async true), or for a file larger than it compresses within the call (MCP_SYNC_MAX_BYTES, 10 MB by default; the job's async_reason is mcp_size_limit), charged once.`,
          `An MCP client's configuration, with this API's origin in place of <origin>: {"mcpServers": {"marketplace-compression": {"type": "http", "url": "<origin>${COMPRESSION_MCP_PATH}", "headers": {"Authorization": "Bearer <API key>"}}}} (the dashboard's API keys page shows it filled in). Also listed in /llms.txt; the full description is docs/mcp.md, "Compression for agents (/v1/mcp)", in the service's repository.`,
        ].join("\n\n"),
        parameters: [
          {
            name: "Accept",
            in: "header",
            required: true,
            description: "Streamable HTTP clients send both; the answer is JSON.",
            schema: { type: "string", default: "application/json, text/event-stream" },
          },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: jsonRpcRequest,
              example: { jsonrpc: "2.0", id: 1, method: "tools/list" },
            },
          },
        },
        responses: {
          "200": {
            description: "The JSON-RPC answer (a result, or a JSON-RPC error for a message it cannot take).",
            content: {
              "application/json": {
                schema: jsonRpcResponse,
                example: {
                  jsonrpc: "2.0",
                  id: 1,
                  result: {
                    structuredContent: { plan: "corporate", monthly_quota: 1000, used: 12, remaining: 988 },
                    content: [
                      { type: "text", text: '{"plan":"corporate","monthly_quota":1000,"used":12,"remaining":988}' },
                    ],
                  },
                },
              },
            },
          },
          "202": { description: "A notification or a response was accepted; no body." },
          "400": {
            description: "Not one JSON-RPC message (a batch, invalid JSON): a JSON-RPC error.",
            content: {
              "application/json": {
                schema: jsonRpcResponse,
                example: {
                  jsonrpc: "2.0",
                  id: null,
                  error: { code: -32700, message: "Parse error: the body is not JSON." },
                },
              },
            },
          },
          "401": common["401"],
          "406": { description: "Accept names neither application/json nor text/event-stream: a JSON-RPC error." },
          "413": error("body_too_large: a message over 64 KiB."),
          "429": common["429"],
          "503": error("rate_limit_unavailable or database_unavailable.", retryAfter),
        },
      },
    },
  };
}
