// POST /v1/mcp: compression for AI agents over the Model Context Protocol (Streamable HTTP, stateless,
// JSON answers, like the public /mcp: src/mcp/http.ts's transport handling is the one used). The
// subscriber's API key is the Bearer token (401 in the error shape, with WWW-Authenticate, without it
// or with a wrong one), and each call is a request of the key like /v1/compress: the same per-key
// rate limit, and compress_pdf reserves a unit of the same quota through the same service (a failure
// gives it back). The tools answer structured content (each has an outputSchema); a refusal of the
// caller's arguments (a 4xx of the API: a bad file_url, a quota used up) is a tool error naming its
// code, a fault of ours is the HTTP error every route answers. A file larger than MCP_SYNC_MAX_BYTES is
// queued as a job (the one async true asks for, charged once) and answered at once with its
// async_reason, as agents' clients commonly give a tool 60 s. docs/mcp.md, "Compression for agents".
import type Router from "@koa/router";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Middleware } from "koa";
import { z } from "zod";
import { usageBody, usageSummary } from "../../auth/usage.ts";
import type { Config } from "../../config/env.ts";
import { HttpError } from "../../errors.ts";
import { publicOrigin } from "../../http/origin.ts";
import type { AppState } from "../../http/state.ts";
import { withRequestInfo } from "../../http/request-info.ts";
import { answerMcp, readMcpMessage } from "../../mcp/http.ts";
import type { Faults } from "../../mcp/server.ts";
import { COMPRESSION_PROFILES } from "../../pdf/index.ts";
import { deleteCompression } from "../workflow/results.ts";
import type { CompressDeps, CompressService } from "../workflow/service.ts";
import { compressionOf, compressionPage } from "./compressions.ts";
import type { KeyedContext, KeyedState } from "./jobs-and-uploads.ts";

export const COMPRESSION_MCP_PATH = "/v1/mcp";

const SERVER_INFO = { name: "marketplace-compression", title: "Marketplace PDF compression", version: "1.0.0" };
const INSTRUCTIONS = [
  "Compresses PDFs for the subscriber whose API key authenticates the connection, against its monthly quota.",
  "compress_pdf takes the file by its https address (file_url) or a direct upload's upload_id (POST /v1/uploads); it answers the result (sizes, savings, report, a download url that expires) or a job whose id get_compression polls: with async true, or for a file larger than it compresses within the call (async_reason says so).",
  "list_compressions, get_compression and delete_compression manage the results kept; usage tells the quota left.",
].join(" ");

const record = z.record(z.string(), z.unknown());
const options = {
  profile: z.enum(COMPRESSION_PROFILES).optional().describe("lossless, balanced (the default) or extreme."),
  grayscale: z.boolean().optional(),
  max_image_ppi: z.number().int().optional(),
  remove_metadata: z.boolean().optional(),
  target_size: z.number().int().optional().describe("Bytes the result should not exceed (at least 1024)."),
  linearize: z.boolean().optional(),
  ocr: z
    .boolean()
    .optional()
    .describe(
      "An invisible text layer on scanned pages (slow: past 5 scanned pages a call without async is answered with a job and its async_reason).",
    ),
  ocr_languages: z.string().optional().describe("eng (the default), deu, fra, spa, por, ita, joined by +."),
  signatures: z.enum(["refuse", "remove"]).optional(),
  retention: z.number().int().min(0).optional().describe("Seconds the result is kept; 0: until its first download."),
};

const compressInput = z.object({
  file_url: z
    .string()
    .optional()
    .describe(
      "The PDF's https address (public hosts only, at most 300 MB), or the url of one of this account's results (read from storage).",
    ),
  upload_id: z.string().optional().describe("A direct upload's id (POST /v1/uploads, after the PUT)."),
  async: z
    .boolean()
    .optional()
    .describe(
      "true: queue a job and answer it at once; poll get_compression. Unset or false: the result, except for a file larger than the server compresses within a call (the tool's description says how large), which is answered as a job all the same, with async_reason.",
    ),
  ...options,
});
const compressOutput = z.looseObject({
  id: z.string(),
  // null while a job is queued or running (get_compression's answer then), or on a failure
  status: z.string().optional(),
  url: z.string().nullish(),
  original_size: z.number().nullish(),
  compressed_size: z.number().nullish(),
  savings_percentage: z.number().nullish(),
  report: record.nullish(),
  async_reason: z
    .looseObject({ code: z.string(), message: z.string() })
    .optional()
    .describe(
      "On a job compress_pdf was not asked for: mcp_size_limit (file_size over mcp_sync_max_bytes) or ocr_page_limit (ocr_pages over sync_ocr_page_limit).",
    ),
});
const idInput = z.object({ id: z.string().describe("A compression's (or job's) id.") });
const listInput = z.object({
  status: z.enum(["queued", "running", "succeeded", "failed"]).optional(),
  created_after: z.string().optional().describe("RFC 3339 date-time."),
  created_before: z.string().optional().describe("RFC 3339 date-time."),
  limit: z.number().int().min(1).max(100).optional(),
  cursor: z.string().optional().describe("next_cursor of the previous page."),
});
const listOutput = z.object({ data: z.array(record), has_more: z.boolean(), next_cursor: z.string().nullable() });
const usageOutput = z.looseObject({
  plan: z.string(),
  monthly_quota: z.number(),
  used: z.number(),
  remaining: z.number(),
});

/** What one request's tools act with: its key, its service, its origin. */
interface Caller {
  deps: CompressDeps;
  service: CompressService;
  ctx: KeyedContext;
}

/** The options of a call as the form fields of their names (the same parsers check them). */
function fieldsOf(args: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(args).filter(
    ([name, value]) => value !== undefined && name in options && typeof value !== "object",
  );
  return Object.fromEntries(entries.map(([name, value]) => [name, String(value)]));
}

async function compressPdf(caller: Caller, args: z.infer<typeof compressInput>): Promise<Record<string, unknown>> {
  const { deps, service, ctx } = caller;
  const key = ctx.state.apiKey;
  const fields = fieldsOf(args);
  if ((args.file_url === undefined) === (args.upload_id === undefined)) {
    throw new HttpError(400, "invalid_file_url", "Send exactly one of file_url and upload_id.");
  }
  const mode = args.async ? "job" : "now";
  // Past this size even async false is answered with a job: a call the client gives up on while the
  // file is compressed is charged for a result the agent never sees.
  const limit = { maxBytes: deps.config.compress.mcpSyncMaxBytes };
  return withRequestInfo(ctx, deps.config.publicApiBaseUrl, async (request) => {
    if (args.upload_id !== undefined) {
      const body = { uploadId: args.upload_id, fields };
      const answered = await service.compressDirectUpload(request, key, body, mode, limit);
      return { ...("job" in answered ? answered.job.body : answered.now.body) };
    }
    const url = { fileUrl: args.file_url!, fields };
    if (mode === "job") return { ...(await service.enqueue(request, key, { url })).body };
    const answered = await service.compress(request, key, "compress", { url }, limit);
    return { ...("job" in answered ? answered.job.body : answered.now.body) };
  });
}

type Run = (caller: Caller, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

interface CompressionTool {
  name: string;
  title: string;
  /** compress_pdf's tells the size limit this server was configured with. */
  description: string | ((config: Config) => string);
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  run: Run;
}

/** Bytes as MB (2^20 bytes, as the engine's time limit counts them) to one decimal, or as bytes below 1 MB. */
const megabytes = (bytes: number) =>
  bytes < 2 ** 20
    ? `${bytes.toLocaleString("en-US")} bytes`
    : `${(bytes / 2 ** 20).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;

const subscriberOf = (caller: Caller) => caller.ctx.state.apiKey.subscriberId;
const originOf = (caller: Caller) => publicOrigin(caller.ctx, caller.deps.config.publicApiBaseUrl);

const TOOLS: CompressionTool[] = [
  {
    name: "compress_pdf",
    title: "Compress a PDF",
    description: (config) =>
      `Compresses the PDF at file_url (https, a public host) or of a direct upload (upload_id), charging one unit of the monthly quota (not when it fails). Answers the result with its report and a download url that expires, or a job (status queued or running): with async true, or for a file larger than ${megabytes(config.compress.mcpSyncMaxBytes)} (async_reason says so, async false included). Poll a job with get_compression and its id until it succeeded or failed.`,
    input: compressInput,
    output: compressOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: (caller, args) => compressPdf(caller, args),
  },
  {
    name: "get_compression",
    title: "Get a compression",
    description: "One compression or job by its id: its status, sizes, report and a download url signed now.",
    input: idInput,
    output: compressOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    run: async (caller, args) => ({
      ...(await compressionOf(caller.deps, subscriberOf(caller), String(args["id"]), originOf(caller))).resource,
    }),
  },
  {
    name: "list_compressions",
    title: "List compressions",
    description:
      "The subscriber's compressions, newest first, filtered by status and creation date; next_cursor reads on.",
    input: listInput,
    output: listOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    run: async (caller, args) => {
      const query = Object.fromEntries(Object.entries(args).map(([name, value]) => [name, String(value)]));
      const page = await compressionPage(caller.deps, subscriberOf(caller), query);
      return {
        data: page.data as unknown as Record<string, unknown>[],
        has_more: page.has_more,
        next_cursor: page.next_cursor,
      };
    },
  },
  {
    name: "delete_compression",
    title: "Delete a compression",
    description:
      "Deletes a compression's result, input and upload from storage now (the usage record stays, without its file name). Deleting again is harmless.",
    input: idInput,
    output: z.object({ id: z.string(), deleted: z.boolean() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    run: async (caller, args) => {
      await deleteCompression(caller.deps, subscriberOf(caller), String(args["id"]));
      return { id: String(args["id"]), deleted: true };
    },
  },
  {
    name: "usage",
    title: "Usage this month",
    description: "The subscriber's plan, monthly quota, units used and left, and when the quota renews.",
    input: z.object({}),
    output: usageOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    run: async (caller) => {
      const key = caller.ctx.state.apiKey;
      const summary = await usageSummary(caller.deps.prisma, {
        id: key.subscriberId,
        plan: key.plan,
        monthlyQuota: key.monthlyQuota,
      });
      return { ...usageBody(summary) };
    },
  },
];

const toolError = (error: HttpError): CallToolResult => ({
  content: [{ type: "text", text: `${error.code}: ${error.message}` }],
  isError: true,
});

/** The MCP server of one request, its tools bound to the request's key. */
function compressionServer(caller: Caller, faults: Faults): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    const { name, title, input, output, annotations } = tool;
    const description = typeof tool.description === "string" ? tool.description : tool.description(caller.deps.config);
    const config = { title, description, inputSchema: input, outputSchema: output, annotations };
    server.registerTool(name, config, async (args: Record<string, unknown>): Promise<CallToolResult> => {
      try {
        const structured = await tool.run(caller, args);
        return { structuredContent: structured, content: [{ type: "text", text: JSON.stringify(structured) }] };
      } catch (error) {
        if (error instanceof HttpError && error.status < 500) return toolError(error);
        faults.error ??= error instanceof Error ? error : new Error("a tool failed with a value that is not an Error");
        throw error;
      }
    });
  }
  return server;
}

/** POST /v1/mcp behind the key's authentication and per-key limit (`keyed`). */
export function addCompressionMcpRoute(
  router: Router<AppState>,
  deps: CompressDeps,
  service: CompressService,
  keyed: readonly [Middleware<KeyedState>, Middleware<KeyedState>],
): void {
  router.post<KeyedState>(COMPRESSION_MCP_PATH, ...keyed, async (ctx) => {
    const message = await readMcpMessage(ctx);
    if (message === undefined) return;
    const faults: Faults = {};
    await answerMcp(ctx, compressionServer({ deps, service, ctx }, faults), faults, message);
  });
}
