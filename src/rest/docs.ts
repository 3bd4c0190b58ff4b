// The API's description: the OpenAPI document at /api/v1/openapi.json and a readable page at
// /api/v1/docs (Swagger UI, served from the swagger-ui-dist package: it loads nothing from the
// internet, and its script is a file rather than inline, so the page runs under a strict CSP).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import Router from "@koa/router";
import type { Context } from "koa";
import { HttpError } from "../http/errors.ts";
import { publicOrigin } from "../http/origin.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { sendJson } from "./respond.ts";
import { API_PREFIX } from "./routes.ts";

export interface DocsOptions {
  publicBaseUrl: string | null;
}

const assetsDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Marketplace catalog API v1</title>
    <link rel="icon" type="image/png" href="${API_PREFIX}/docs/assets/favicon-32x32.png" />
    <link rel="stylesheet" href="${API_PREFIX}/docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${API_PREFIX}/docs/assets/swagger-ui-bundle.js"></script>
    <script src="${API_PREFIX}/docs/init.js"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({
  url: "${API_PREFIX}/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: true,
  displayRequestDuration: true,
});
`;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function createDocsRouter(options: DocsOptions): Router {
  const router = new Router({ prefix: API_PREFIX });
  const cache = new Map<string, Buffer>();
  const docsCache = { maxAgeSeconds: 300 };

  router.get("/openapi.json", (ctx) => {
    sendJson(ctx, buildOpenApiDocument(`${publicOrigin(ctx, options.publicBaseUrl)}${API_PREFIX}`), docsCache);
  });
  const page = (ctx: Context, body: string, type: string) => {
    ctx.set("Content-Security-Policy", CSP);
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.type = type;
    ctx.body = body;
  };
  router.get("/docs", (ctx) => page(ctx, PAGE, "text/html; charset=utf-8"));
  router.get("/docs/init.js", (ctx) => page(ctx, INIT, "text/javascript; charset=utf-8"));
  router.get("/docs/assets/:file", async (ctx) => {
    const file = ctx.params["file"] ?? "";
    const type = ASSETS[file];
    if (!type) throw new HttpError(404, "not_found", `No asset ${file}`);
    let body = cache.get(file);
    if (!body) {
      body = await readFile(path.join(assetsDir, file));
      cache.set(file, body);
    }
    ctx.set("Cache-Control", "public, max-age=86400");
    ctx.type = type;
    ctx.body = body;
  });
  return router;
}
