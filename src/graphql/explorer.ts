// The explorer page (GET /graphql from a browser): @graphql-yoga/render-graphiql's self-contained
// GraphiQL, 9 MB of HTML with the whole editor inline. Served here rather than by yoga so that it
// goes out compressed (brotli 1.9 MB, gzip 2.4 MB) and under a Content-Security-Policy: its two
// inline scripts are allowed by their hashes, computed from the page itself, so nothing else can run.
// Above the editor, a bar of links to the other surfaces (the list GET / and the OpenAPI documents
// use, given by the app): plain HTML and a <style>, which the policy already allows for Monaco.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import type { Context, Next } from "koa";

export interface ExplorerOptions {
  title: string;
  defaultQuery: string;
  /** The other surfaces, for the bar above the editor (src/http/root.ts's list, passed in by the app). */
  links: readonly { label: string; path: string }[];
}

interface Encoded {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
  csp: string;
}

/**
 * Monaco (the editor) adds <style> elements and runs its language workers from blob: URLs; the
 * icons and fonts are data: URIs; queries go to this origin. Nothing may frame the page.
 */
const policy = (scriptHashes: string[]) =>
  [
    "default-src 'none'",
    `script-src ${scriptHashes.map((h) => `'sha256-${h}'`).join(" ")}`,
    "style-src 'unsafe-inline'",
    "img-src data:",
    "font-src data:",
    "connect-src 'self'",
    "worker-src blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");

/** The sha256 of each inline <script>'s text, as CSP hashes it. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, text = ""]) =>
    createHash("sha256").update(text, "utf8").digest("base64"),
  );
}

/** The bar of links above the editor; the editor fills the rest of the window. */
const surfacesBar = (links: ExplorerOptions["links"]) => `<style>
      body { display: flex; flex-direction: column; height: 100vh; margin: 0; }
      #root { flex: 1; min-height: 0; }
      /* GraphiQL makes its container as tall as the window (100vh): under the bar, as tall as what is left. */
      #root > *, #root .graphiql-container { height: 100%; width: 100%; }
      .surfaces { flex: none; display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 1rem; padding: 0.4rem 1rem;
        font: 14px/1.4 system-ui, sans-serif; background: #f6f7f9; color: #1a1a1a; border-bottom: 1px solid #d0d4da; }
      .surfaces ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; margin: 0; padding: 0; list-style: none; }
      .surfaces a { color: #0b57d0; }
      .surfaces a:focus-visible { outline: 2px solid #0b57d0; outline-offset: 2px; }
    </style>
    <nav class="surfaces" aria-label="Other surfaces of this service">
      <strong>GraphQL explorer</strong>
      <ul>
        ${links.map(({ label, path }) => `<li><a href="${path}">${label}</a></li>`).join("\n        ")}
      </ul>
    </nav>`;

/** The explorer's page with the bar of links first in its body. */
export function explorerHtml(options: ExplorerOptions): string {
  const html = renderGraphiQL({ title: options.title, defaultQuery: options.defaultQuery });
  const body = /<body[^>]*>/.exec(html);
  if (!body) throw new Error("the GraphiQL page has no <body>");
  const at = body.index + body[0].length;
  return `${html.slice(0, at)}\n    ${surfacesBar(options.links)}${html.slice(at)}`;
}

/** Renders and compresses the page once, off the event loop (zlib's thread pool: about 1 s of work). */
async function encode(options: ExplorerOptions): Promise<Encoded> {
  const html = explorerHtml(options);
  const identity = Buffer.from(html, "utf8");
  const [br, gzipped] = await Promise.all([
    promisify(brotliCompress)(identity, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
    }),
    promisify(gzip)(identity, { level: 6 }),
  ]);
  return { identity, br, gzip: gzipped, csp: policy(inlineScriptHashes(html)) };
}

/** What yoga would answer with the explorer: a GET that accepts HTML. */
export const wantsExplorer = (ctx: Context) => ctx.method === "GET" && ctx.get("accept").includes("text/html");

/** Koa middleware answering the explorer page; every other request goes on to yoga. */
export function explorerPage(options: ExplorerOptions) {
  let encoded: Promise<Encoded> | null = null;
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!wantsExplorer(ctx)) {
      await next();
      return;
    }
    // A failed render is not kept: the next request tries again.
    encoded ??= encode(options).catch((error: unknown) => {
      encoded = null;
      throw error;
    });
    const page = await encoded;
    const encoding = ctx.acceptsEncodings("br", "gzip", "identity") || "identity";
    ctx.vary("Accept");
    ctx.vary("Accept-Encoding");
    ctx.set("Content-Security-Policy", page.csp);
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.type = "text/html; charset=utf-8";
    if (encoding === "br" || encoding === "gzip") ctx.set("Content-Encoding", encoding);
    ctx.body = encoding === "br" ? page.br : encoding === "gzip" ? page.gzip : page.identity;
  };
}
