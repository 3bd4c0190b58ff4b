// GET / : where to go from here. A newcomer who opens the service's address, and a client that
// asks the root for links (as GitHub's API root answers), get the map of the surfaces instead of
// a 404. Plain strings, so this plumbing still imports no feature.
import Router from "@koa/router";
import { publicOrigin } from "./origin.ts";
import type { AppState } from "./state.ts";

/** The surfaces the service serves, relative to its public address. */
export const SURFACES = {
  catalog_docs: "/api/v1/docs",
  catalog_openapi: "/api/v1/openapi.json",
  graphql: "/graphql",
  mcp: "/mcp",
  llms_txt: "/llms.txt",
  compression_docs: "/v1/docs",
  compression_openapi: "/v1/openapi.json",
  dashboard: "/dashboard",
  health: "/healthz",
} as const;

/** What each surface is, for the page a browser gets (the same links as the JSON). */
const DESCRIPTIONS: Record<keyof typeof SURFACES, string> = {
  catalog_docs: "Catalog REST API: jobs, talents, AI agents, companies — try any call",
  catalog_openapi: "Catalog REST API: OpenAPI 3.1 document",
  graphql: "GraphQL read model and its explorer",
  mcp: "MCP endpoint for AI agents (Streamable HTTP)",
  llms_txt: "llms.txt: the API described for language models",
  compression_docs: "PDF compression API — try any call with a key",
  compression_openapi: "PDF compression API: OpenAPI 3.1 document",
  dashboard: "Subscribers' dashboard: API keys, usage, history, webhooks, Try it",
  health: "Health check",
};

/** The names of the surfaces other pages link to, in the order they are listed. */
const NEIGHBOURS: Partial<Record<keyof typeof SURFACES, string>> = {
  catalog_docs: "Catalog REST API",
  graphql: "GraphQL explorer",
  compression_docs: "PDF compression API",
  dashboard: "Subscribers' dashboard",
  mcp: "MCP for AI agents",
  llms_txt: "llms.txt",
};

/**
 * The other surfaces a page links to, `self` left out, ending with the map of them all (GET /):
 * each one's label and path, relative to the service's public address.
 */
export function neighbourSurfaces(self: keyof typeof SURFACES): { label: string; path: string }[] {
  const links = Object.entries(NEIGHBOURS)
    .filter(([name]) => name !== self)
    .map(([name, label]) => ({ label, path: SURFACES[name as keyof typeof SURFACES] }));
  return [...links, { label: "every link", path: "/" }];
}

/** One line of Markdown linking a page to the other surfaces (the OpenAPI documents' descriptions). */
export function surfaceLinks(base: string, self: keyof typeof SURFACES): string {
  return `**Also here:** ${neighbourSurfaces(self)
    .map(({ label, path }) => `[${label}](${base}${path})`)
    .join(" · ")}`;
}

// No script, no inline style: one small page under a CSP that allows nothing else.
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Escapes text for HTML (the base comes from configuration or the request's Host). */
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function rootPage(links: Record<string, string>): string {
  const items = Object.entries(DESCRIPTIONS)
    .map(([name, what]) => {
      const href = escapeHtml(links[name] ?? "");
      return `<li><a href="${href}">${escapeHtml(what)}</a> <code>${href}</code></li>`;
    })
    .join("\n      ");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Job marketplace API</title>
    <style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
      li { margin: 0.5rem 0; }
      code { display: block; color: #555; font-size: 0.85rem; overflow-wrap: anywhere; }
    </style>
  </head>
  <body>
    <main>
      <h1>Job marketplace API</h1>
      <p>Where to go from here (a client asking for JSON gets these links as JSON):</p>
      <ul>
      ${items}
      </ul>
    </main>
  </body>
</html>
`;
}

export function createRootRouter(publicBaseUrl: string | null): Router<AppState> {
  const router = new Router<AppState>();
  router.get("/", (ctx) => {
    const base = publicOrigin(ctx, publicBaseUrl);
    const links = Object.fromEntries(Object.entries(SURFACES).map(([name, path]) => [name, `${base}${path}`]));
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.vary("Accept");
    // A browser (text/html first) gets a page of the links; anything else, curl's */* included, JSON.
    if (ctx.accepts("json", "html") === "html") {
      ctx.set("Content-Security-Policy", CSP);
      ctx.type = "html";
      ctx.body = rootPage(links);
      return;
    }
    ctx.body = { name: "Job marketplace API", links };
  });
  return router;
}
