// A readable page for an OpenAPI document, for both APIs (/api/v1/docs, /v1/docs): Swagger UI from
// the swagger-ui-dist package, its own assets under <prefix>/assets, so it loads nothing from the
// internet, and its start script a file rather than inline, so the page runs under a strict CSP.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type Router from "@koa/router";
import type { Context } from "koa";
import { HttpError } from "../errors.ts";

export interface SwaggerUiPage {
  /** Where the page is served; its script and assets live beneath it. */
  prefix: string;
  title: string;
  /** The OpenAPI document's path on this origin. */
  specUrl: string;
  /** Open every operation's "Try it out" form at once (for an API that needs no key). */
  tryItOut?: boolean;
}

const assetsDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const ASSET_TYPES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const page = ({ prefix, title }: SwaggerUiPage) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <link rel="icon" type="image/png" href="${prefix}/assets/favicon-32x32.png" />
    <link rel="stylesheet" href="${prefix}/assets/swagger-ui.css" />
    <link rel="stylesheet" href="${prefix}/a11y.css" />
  </head>
  <body>
    <main id="swagger-ui"></main>
    <script src="${prefix}/assets/swagger-ui-bundle.js"></script>
    <script src="${prefix}/init.js"></script>
  </body>
</html>
`;

// Accessibility repairs of Swagger UI's own markup (axe-core, in the dashboard's browser test): the
// version stamps', document link's, description links', method badges', Authorize and "Expand all" buttons' colours are darkened to
// at least 4.5:1, the page is one main landmark, and the servers menu, which
// Swagger UI renders without a label, is named once it appears.
const A11Y_CSS = `.swagger-ui .info .title small pre, .swagger-ui .info .title small.version-stamp pre { color: #fff; }
.swagger-ui .info .title small { background: #4a4f57; }
.swagger-ui .info .title small.version-stamp { background: #2f6b12; }
.swagger-ui .info a.link, .swagger-ui .info .url, .swagger-ui .info .description a { color: #1f4f99; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #1d7a4f; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1f5fa8; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b3261e; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #8a4f00; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0f6e5c; }
.swagger-ui .btn.authorize { color: #1d7a4f; border-color: #1d7a4f; }
.swagger-ui .btn.authorize svg { fill: #1d7a4f; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #595959; }
`;

const NAME_SERVERS = `new MutationObserver((_, observer) => {
  const servers = document.getElementById("servers");
  if (servers) {
    servers.setAttribute("aria-label", "Server");
    observer.disconnect();
  }
}).observe(document.body, { childList: true, subtree: true });
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
// persistAuthorization stays off: a key typed into "Authorize" is not kept in localStorage.
const init = ({ specUrl, tryItOut = false }: SwaggerUiPage) => `${NAME_SERVERS}window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(specUrl)},
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: ${tryItOut},
  displayRequestDuration: true,
});
`;

// Swagger UI sets inline styles and shows its logos as data: URIs; everything else is this origin.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function addSwaggerUiRoutes(router: Router, options: SwaggerUiPage): void {
  const { prefix } = options;
  const html = page(options);
  const script = init(options);
  const cache = new Map<string, Buffer>();
  const send = (ctx: Context, body: string | Buffer, type: string, maxAge: number) => {
    ctx.set("Content-Security-Policy", CSP);
    ctx.set("Cache-Control", `public, max-age=${maxAge}`);
    ctx.type = type;
    ctx.body = body;
  };
  router.get(prefix, (ctx) => send(ctx, html, "text/html; charset=utf-8", 300));
  router.get(`${prefix}/init.js`, (ctx) => send(ctx, script, "text/javascript; charset=utf-8", 300));
  router.get(`${prefix}/a11y.css`, (ctx) => send(ctx, A11Y_CSS, "text/css; charset=utf-8", 300));
  router.get(`${prefix}/assets/:file`, async (ctx) => {
    const file = ctx.params["file"] ?? "";
    const type = ASSET_TYPES[file];
    if (!type) throw new HttpError(404, "not_found", `No asset ${file}`);
    let body = cache.get(file);
    if (!body) {
      body = await readFile(path.join(assetsDir, file));
      cache.set(file, body);
    }
    send(ctx, body, type, 86_400);
  });
}
