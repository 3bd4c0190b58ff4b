// Builds the Koa application; it never listens (src/main.ts does), so tests hand its callback
// real HTTP requests. Error middleware first, then health, then /graphql.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import cors from "@koa/cors";
import Router from "@koa/router";
import Koa from "koa";
import type { Config } from "./config/env.ts";
import type { Database } from "./db/database.ts";
import { createGraphQLServer } from "./graphql/yoga.ts";
import { errorMiddleware, HttpError } from "./http/errors.ts";
import type { Logger } from "./logger.ts";

export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
}

export function createApp({ config, db, logger }: AppDeps): Koa {
  const app = new Koa({ proxy: true, maxIpsCount: 1 });
  app.silent = true;

  app.use(async (ctx, next) => {
    const incoming = ctx.get("x-request-id");
    ctx.state["requestId"] = /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    ctx.set("X-Request-Id", ctx.state["requestId"] as string);
    await next();
  });
  app.use(errorMiddleware(logger));
  // Any origin, no credentials: the catalog is public. Inside the error middleware's reach but
  // outside everything that can fail, so errors and 429s carry the CORS headers too.
  app.use(
    cors({
      origin: "*",
      allowMethods: ["GET", "HEAD", "POST", "OPTIONS"],
      exposeHeaders: ["ETag", "Link", "Retry-After", "RateLimit", "RateLimit-Policy", "X-Request-Id"],
      maxAge: 86_400,
    }),
  );

  const health = new Router();
  // Liveness touches nothing: a slow database must not get the instance restarted.
  health.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  health.get("/readyz", async (ctx) => {
    try {
      await db.sql.query("SELECT 1");
    } catch {
      throw new HttpError(503, "database_unavailable", "The database is not reachable.", { "Retry-After": "5" });
    }
    ctx.body = { status: "ok", database: db.kind };
  });
  app.use(health.routes());

  const yoga = createGraphQLServer({ prisma: db.prisma, config, logger });
  const graphql = new Router();
  graphql.all("/graphql", async (ctx) => {
    const response = await yoga.handleNodeRequestAndResponse(ctx.req, ctx.res, {});
    ctx.status = response.status;
    response.headers.forEach((value, key) => ctx.append(key, value));
    // yoga answers with a ponyfilled web stream; it is async-iterable, which Node can wrap.
    ctx.body = response.body ? Readable.from(response.body) : null;
  });
  app.use(graphql.routes());

  return app;
}
