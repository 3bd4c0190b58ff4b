// GET /llms.txt: the API described for language models, in the llms.txt format (llmstxt.org): a
// title, a one-paragraph summary, notes, then sections of links. Absolute addresses, from the
// configured public origin or the request's; the MCP tools are listed from the same table /mcp
// serves, so the file cannot name a tool that is not there.
import Router from "@koa/router";
import type { Context } from "koa";
import { publicOrigin } from "../http/origin.ts";
import type { AppState } from "../http/state.ts";
import { API_PREFIX } from "../rest/routes.ts";
import { MCP_PATH } from "./http.ts";
import { catalogTools } from "./tools.ts";

export interface LlmsTxtOptions {
  publicBaseUrl: string | null;
  /** Who may use /graphql: it is listed unless off. */
  graphqlAccess: "public" | "internal" | "off";
  /** Whether this instance serves the compression API (/v1). */
  compression: boolean;
  rateLimit: { requests: number; windowSeconds: number };
}

const TOOLS = catalogTools();

/** A tool's description up to its first sentence's end, for a one-line list. */
const firstSentence = (text: string) => /^.*?\.(?=\s|$)/.exec(text)?.[0] ?? text;

function sections(origin: string, options: LlmsTxtOptions): string[] {
  const catalog = [
    "## Catalog",
    "",
    `- [REST API description](${origin}${API_PREFIX}/openapi.json): OpenAPI 3.1, every route, parameter, schema and error code of the read-only catalog at ${origin}${API_PREFIX}`,
    `- [REST API reference](${origin}${API_PREFIX}/docs): the same, readable, with a form to try each call`,
    `- [MCP endpoint](${origin}${MCP_PATH}): Model Context Protocol over Streamable HTTP (POST, stateless, JSON answers, one message per request); the tools below run the same operations as the REST API`,
  ];
  if (options.graphqlAccess !== "off") {
    const who =
      options.graphqlAccess === "public"
        ? "open to anyone"
        : "for internal callers only: a Google identity is required";
    catalog.push(`- [GraphQL](${origin}/graphql): the read model the other two are built on, ${who}`);
  }
  const compression = options.compression
    ? [
        "## PDF compression API",
        "",
        `- [Compression API description](${origin}/v1/openapi.json): OpenAPI 3.1 of /v1/compress, /v1/unlock, jobs and uploads, for subscribers with an API key`,
        `- [Compression API reference](${origin}/v1/docs): the same, readable`,
        `- [Compression MCP endpoint](${origin}/v1/mcp): Model Context Protocol (Streamable HTTP, stateless) for agents with the subscriber's API key as a Bearer token: compress_pdf (a file_url or an upload_id; the result, or for a large file a job that get_compression polls), get_compression, list_compressions, delete_compression, usage`,
      ]
    : [];
  return [catalog.join("\n"), ...(compression.length ? [compression.join("\n")] : [])];
}

export function llmsTxt(origin: string, options: LlmsTxtOptions): string {
  const { requests, windowSeconds } = options.rateLimit;
  return [
    "# Marketplace API",
    "> The public API of a job marketplace: a read-only catalog of open jobs, talents, the AI agents it sells, companies, sectors and skills (REST, MCP and GraphQL), and a PDF compression API for subscribers.",
    [
      "The catalog needs no key and shows exactly what the marketplace's public web pages show: a job that is a draft, closed, filled or expired, a private profile, a company without a public page do not exist here (asking for one is a 404, or a not-found tool error).",
      "Lists page by limit and offset, and continue by a cursor (REST: meta.next; MCP: next_arguments). Filters take slugs; sector and skill slugs come from /sectors and /skills.",
      `Every client IP may make ${requests} requests per ${windowSeconds} s across the catalog, /mcp and /graphql; over it, 429 with Retry-After. Errors are {"error": {"code", "message", "request_id"}}.`,
    ].join("\n"),
    [
      "The tools of /mcp (each with its argument and result schemas in tools/list):",
      "",
      ...TOOLS.map((tool) => `- ${tool.name}: ${firstSentence(tool.description)}`),
    ].join("\n"),
    ...sections(origin, options),
  ].join("\n\n");
}

export function createLlmsTxtRouter(options: LlmsTxtOptions): Router<AppState> {
  const router = new Router<AppState>();
  router.get("/llms.txt", (ctx: Context) => {
    ctx.type = "text/markdown; charset=utf-8";
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = `${llmsTxt(publicOrigin(ctx, options.publicBaseUrl), options)}\n`;
  });
  return router;
}
