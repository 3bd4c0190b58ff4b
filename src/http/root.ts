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

export function createRootRouter(publicBaseUrl: string | null): Router<AppState> {
  const router = new Router<AppState>();
  router.get("/", (ctx) => {
    const base = publicOrigin(ctx, publicBaseUrl);
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = {
      name: "Job marketplace API",
      links: Object.fromEntries(Object.entries(SURFACES).map(([name, path]) => [name, `${base}${path}`])),
    };
  });
  return router;
}
