// The explorer page (GET /graphql from a browser): @graphql-yoga/render-graphiql's self-contained
// GraphiQL, 9 MB of HTML with the whole editor inline. Served here rather than by yoga so that it
// goes out compressed (brotli 1.9 MB, gzip 2.4 MB) and under a Content-Security-Policy: its two
// inline scripts are allowed by their hashes, computed from the page itself, so nothing else can run.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import type { Context, Next } from "koa";

export interface ExplorerOptions {
  title: string;
  defaultQuery: string;
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

/** Renders and compresses the page once, off the event loop (zlib's thread pool: about 1 s of work). */
async function encode(options: ExplorerOptions): Promise<Encoded> {
  const html = renderGraphiQL(options);
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
