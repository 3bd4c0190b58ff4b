// The API's description: the OpenAPI document at /api/v1/openapi.json and a readable page at
// /api/v1/docs (Swagger UI, served as the compression API's page is: ../http/swagger-ui.ts).
import Router from "@koa/router";
import type { AppState } from "../http/state.ts";
import { publicOrigin } from "../http/origin.ts";
import { addSwaggerUiRoutes } from "../http/swagger-ui.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { sendJson } from "./respond.ts";
import { API_PREFIX } from "./routes.ts";

export interface DocsOptions {
  publicBaseUrl: string | null;
}

export function createDocsRouter(options: DocsOptions): Router<AppState> {
  const router = new Router<AppState>();
  const docsCache = { maxAgeSeconds: 300 };
  router.get(`${API_PREFIX}/openapi.json`, (ctx) => {
    sendJson(ctx, buildOpenApiDocument(`${publicOrigin(ctx, options.publicBaseUrl)}${API_PREFIX}`), docsCache);
  });
  // The catalog needs no key: every operation's "Try it out" form is open at once.
  addSwaggerUiRoutes(router, {
    prefix: `${API_PREFIX}/docs`,
    title: "Marketplace catalog API v1",
    specUrl: `${API_PREFIX}/openapi.json`,
    tryItOut: true,
  });
  return router;
}
