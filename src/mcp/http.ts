// POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (docs/mcp.md). Each request
// gets its own server and transport (the SDK's stateless pattern): no session to keep, so any
// Cloud Run instance answers any request. Answers are JSON (no event stream): every tool answers at
// once, and nothing is ever sent unasked, so GET (the server's own stream) and DELETE (ending a
// session) are 405. The request has passed the app's edge (request id, CORS, dependency faults, the
// per-IP rate limit); here: the Origin and Host checks against DNS rebinding, a body limit, one
// JSON-RPC message per request.
import Router from "@koa/router";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Context } from "koa";
import { HttpError } from "../errors.ts";
import { publicOrigin } from "../http/origin.ts";
import type { AppState } from "../http/state.ts";
import { API_PREFIX, type RouteContext } from "../rest/routes.ts";
import { createMcpServer, type Faults } from "./server.ts";
import { readBody } from "../http/read-body.ts";

export const MCP_PATH = "/mcp";
/** A JSON-RPC message of this protocol is small: the longest tool argument is a 1,000-character cursor. */
export const MCP_BODY_MAX = 64 * 1024;

export interface McpOptions {
  /** Makes each operation's context, as REST's: MCP reaches the read model only through REST's routes. */
  context: RouteContext["context"];
  /** Where links.html points. */
  webBaseUrl: string;
  /** The API's public origin; derived from each request when null. */
  publicBaseUrl: string | null;
  /** Origins a browser may call /mcp from (besides publicBaseUrl's); "*" is any. */
  allowedOrigins: readonly string[];
  /** Host names /mcp answers to (port-agnostic); null: any. */
  allowedHosts: readonly string[] | null;
}

/** The host name of a Host header, without its port (an IPv6 address keeps its brackets). */
export function hostName(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(0, value.indexOf("]") + 1);
  return value.replace(/:\d*$/, "");
}

/**
 * DNS rebinding and cross-site calls (the MCP transport's security warning): a browser's Origin must
 * be allowed, and, where host names are configured, the Host too. Clients that are not browsers
 * send no Origin.
 */
function checkCaller(ctx: Context, options: McpOptions): void {
  const host = ctx.get("host") || ctx.get(":authority");
  if (options.allowedHosts && !options.allowedHosts.includes(hostName(host))) {
    throw new HttpError(403, "host_not_allowed", `${MCP_PATH} does not answer to the host "${hostName(host)}".`);
  }
  const origin = ctx.get("origin");
  if (!origin) return;
  const allowed = options.allowedOrigins;
  const own = options.publicBaseUrl === null ? null : new URL(options.publicBaseUrl).origin;
  if (allowed.includes("*") || origin === own || allowed.includes(origin.toLowerCase())) return;
  throw new HttpError(
    403,
    "origin_not_allowed",
    `${MCP_PATH} is not open to pages of ${origin.slice(0, 200)} (MCP_ALLOWED_ORIGINS lists the origins that may call it).`,
  );
}

async function readMessage(ctx: Context): Promise<string> {
  return (await readBody(ctx.req, MCP_BODY_MAX, bodyTooLarge)).toString("utf8");
}

const bodyTooLarge = () =>
  new HttpError(413, "body_too_large", `An MCP message may carry at most ${MCP_BODY_MAX / 1024} KiB.`);

/** A JSON-RPC error for the whole request, as the SDK's transport answers its own. */
function jsonRpcError(ctx: Context, status: number, code: number, message: string, id: unknown = null): void {
  ctx.status = status;
  ctx.set("Cache-Control", "no-store");
  ctx.body = { jsonrpc: "2.0", error: { code, message }, id };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A tools/call whose params are not {name: string, arguments?: object}: -32602 Invalid params, as
 * JSON-RPC says. The SDK answered it as -32603 Internal error carrying its raw schema issues (issue 39).
 */
function invalidToolCall(message: Record<string, unknown>): string | null {
  if (message["method"] !== "tools/call") return null;
  const params = message["params"];
  if (!isObject(params)) return "params must be an object with the tool's name and its arguments.";
  if (typeof params["name"] !== "string") return "params.name must be the name of a tool (tools/list names them).";
  if (params["arguments"] !== undefined && !isObject(params["arguments"])) {
    return "params.arguments must be an object of the tool's arguments (its inputSchema says which).";
  }
  return null;
}

/** The web Request the SDK's transport reads: method, address and headers (the body is parsed already). */
function webRequest(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    // HTTP/2's pseudo-headers (:authority, :path) are not header names.
    if (name.startsWith(":") || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(new URL(ctx.originalUrl, "http://mcp.invalid"), { method: "POST", headers });
}

/** Parses the body: one JSON-RPC message, or answers the error itself and returns undefined. */
function parseMessage(ctx: Context, body: string): unknown {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    jsonRpcError(ctx, 400, -32700, "Parse error: the body is not JSON.");
    return undefined;
  }
  // The protocol dropped batches (2025-06-18); one call per request keeps one rate-limit point per call.
  if (Array.isArray(message)) {
    jsonRpcError(
      ctx,
      400,
      -32600,
      "Invalid Request: send one JSON-RPC message per request (batches are not accepted).",
    );
    return undefined;
  }
  const invalid = isObject(message) ? invalidToolCall(message) : null;
  if (invalid && isObject(message)) {
    jsonRpcError(ctx, 200, -32602, `Invalid params: ${invalid}`, message["id"] ?? null);
    return undefined;
  }
  return message;
}

async function handle(ctx: Context, options: McpOptions): Promise<void> {
  checkCaller(ctx, options);
  const message = await readMcpMessage(ctx);
  if (message === undefined) return;
  const apiBase = `${publicOrigin(ctx, options.publicBaseUrl)}${API_PREFIX}`;
  const rc: RouteContext = { context: options.context, linker: { apiBase, webBase: options.webBaseUrl } };
  const faults: Faults = {};
  await answerMcp(ctx, createMcpServer(rc, faults), faults, message);
}

/** Reads the body (within MCP_BODY_MAX) as one JSON-RPC message; or answers the error and returns undefined. */
export async function readMcpMessage(ctx: Context): Promise<unknown> {
  return parseMessage(ctx, await readMessage(ctx));
}

/**
 * Answers one message with `server` over the SDK's stateless transport (JSON, no session); a fault a
 * tool left in `faults` is thrown for the error middleware. Shared by /mcp and /v1/mcp.
 */
export async function answerMcp(ctx: Context, server: McpServer, faults: Faults, message: unknown): Promise<void> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MCP_BODY_MAX,
  });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(ctx), { parsedBody: message });
    if (faults.error !== undefined)
      throw faults.error instanceof Error ? faults.error : new Error(String(faults.error));
    const body = response.body ? Buffer.from(await response.arrayBuffer()) : null;
    response.headers.forEach((value, name) => ctx.set(name, value));
    ctx.set("Cache-Control", "no-store");
    // In this order: a null body set after the status would turn a 202 into a 204.
    ctx.body = body;
    ctx.status = response.status;
  } finally {
    await server.close();
  }
}

export function createMcpRouter(options: McpOptions): Router<AppState> {
  const router = new Router<AppState>();
  router.post(MCP_PATH, (ctx) => handle(ctx, options));
  return router;
}
