// Builds the Koa application; it never listens (src/main.ts does), so tests hand its callback
// real HTTP requests. In order: the request log, the request id, the error middleware, CORS,
// dependency faults, the per-IP rate limit, then the routers: /api/v1, health, GET /, /graphql,
// the compression API, the dashboard, the REST docs, /mcp and /llms.txt.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import cors from "@koa/cors";
import Router from "@koa/router";
import type { Redis } from "ioredis";
import type { OAuth2Client } from "google-auth-library";
import Koa from "koa";
import { expectsContinue } from "./http/continue.ts";
import { createCompressRouter } from "./compress/api/routes.ts";
import type { Resolver } from "./compress/address-policy.ts";
import type { EngineRunner } from "./compress/compression.ts";
import { createCompressService, type CompressService } from "./compress/workflow/service.ts";
import type { ObjectStorage } from "./compress/storage/storage.ts";
import type { Config } from "./config/env.ts";
import { createDashboardRouter } from "./dashboard/routes.ts";
import { createMailer, type Mailer } from "./dashboard/mailer.ts";
import type { Database } from "./db/database.ts";
import { contextFactory } from "./graphql/context.ts";
import { finishUnreadBody, readBody } from "./http/read-body.ts";
import { HttpError } from "./errors.ts";
import { listTotals, type TotalsCache } from "./graphql/totals.ts";
import { accessWarning, graphqlAccess } from "./graphql/access.ts";
import { explorerPage } from "./graphql/explorer.ts";
import { createGraphQLServer, EXPLORER } from "./graphql/yoga.ts";
import { errorMiddleware } from "./http/errors.ts";
import { createHealthRouter, dependencyFaults } from "./http/health.ts";
import { createRateLimiter, rateLimitByClientIp } from "./http/rate-limit.ts";
import { requestLog } from "./http/request-log.ts";
import { createRootRouter, neighbourSurfaces } from "./http/root.ts";
import type { AppState } from "./http/state.ts";
import type { Lifecycle } from "./http/drain.ts";
import type { Logger } from "./logger.ts";
import { createDocsRouter } from "./rest/docs.ts";
import { createRestRouter } from "./rest/routes.ts";
import { createMcpRouter } from "./mcp/http.ts";
import { createLlmsTxtRouter } from "./mcp/llms-txt.ts";

export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
  /** Shares rate limits between instances; absent or null keeps them in this instance's memory. */
  redis?: Redis | null;
  /**
   * The compression API's storage and engine (and, for tests, how file_url hosts resolve); without
   * them /v1 is not served (catalog-only tests).
   */
  compress?: { storage: ObjectStorage; runner: EngineRunner; resolver?: Resolver } | null;
  /** Shutdown state: readiness turns 503 while draining; in-flight uploads give up at the deadline. */
  lifecycle?: Lifecycle | null;
  /** Where the dashboard's sign-in mail goes; by default from the configuration (SMTP or the outbox). */
  mailer?: Mailer | null;
  /** Verifies Google identities for /graphql's internal access; by default Google's keys over the network. */
  googleAuth?: OAuth2Client | null;
  /** The cache of list totals; by default one from the configuration (LIST_TOTAL_CACHE_SECONDS). */
  totalsCache?: TotalsCache | null;
}

export function createApp(deps: AppDeps): Koa<AppState> {
  const { config, db, logger, redis = null, lifecycle = null } = deps;
  // Behind a trusted proxy, ctx.ip is the LAST X-Forwarded-For entry: the one Cloud Run's front end
  // appends. Entries before it come from the client and are ignored.
  const app = new Koa<AppState>({ proxy: config.trustProxy, maxIpsCount: 1 });
  app.silent = true;
  useEdge(app, config, logger, redis);

  // One cache of list totals, for /graphql and /api/v1 alike.
  const totals =
    deps.totalsCache === undefined
      ? listTotals(config.listTotalCacheSeconds, db.counting, { bounding: db.bounding, sampling: db.sampling })
      : deps.totalsCache;
  // REST and MCP run the same typed operations, through contexts made alike. /api/v1 is the
  // busiest surface: its router comes first, so its requests are not matched against the others'
  // routes (no path of theirs is under /api/v1), not even health's or GET /'s.
  const context = contextFactory({ prisma: db.prisma, sql: db.sql, totals });
  const rest = createRestRouter({
    context,
    webBaseUrl: config.publicWebBaseUrl,
    publicBaseUrl: config.publicApiBaseUrl,
    cache: { maxAgeSeconds: config.catalogCacheMaxAge },
  });
  app.use(rest.routes());
  // Liveness (/healthz) touches nothing; readiness (/readyz) checks the database and Redis.
  const health = createHealthRouter({ db, redis, lifecycle });
  app.use(health.routes());
  // GET /: the map of the surfaces, for a newcomer and for clients that look for links.
  const root = createRootRouter(config.publicApiBaseUrl);
  app.use(root.routes());
  const graphql = graphqlRouter(deps, totals);
  app.use(graphql.routes());

  const docs = createDocsRouter({ publicBaseUrl: config.publicApiBaseUrl });
  const compressService = useCompressApi(app, deps);
  // The subscriber dashboard: sign-in, API keys, usage, and Try it through the same service as /v1.
  const dashboard = createDashboardRouter({
    config,
    prisma: db.prisma,
    logger,
    redis,
    mailer: deps.mailer ?? createMailer(config.dashboard, logger),
    compress: compressService,
    storage: deps.compress?.storage ?? null,
  });
  app.use(dashboard.routes());
  app.use(dashboard.allowedMethods());
  app.use(docs.routes());
  // /mcp for AI agents (the REST routes as tools) and /llms.txt describing the API to them.
  const mcp = createMcpRouter({
    context,
    webBaseUrl: config.publicWebBaseUrl,
    publicBaseUrl: config.publicApiBaseUrl,
    ...config.mcp,
  });
  app.use(mcp.routes());
  app.use(mcp.allowedMethods());
  const llms = createLlmsTxtRouter({
    publicBaseUrl: config.publicApiBaseUrl,
    graphqlAccess: config.graphql.access.mode,
    compression: compressService !== null,
    rateLimit: config.rateLimit,
  });
  app.use(llms.routes());
  app.use(llms.allowedMethods());
  // Another method on a known path: 405 with Allow (the error middleware writes the body);
  // OPTIONS without a CORS preflight: 200 with Allow.
  app.use(rest.allowedMethods());
  app.use(docs.allowedMethods());
  app.use(graphql.allowedMethods());
  app.use(health.allowedMethods());
  app.use(root.allowedMethods());

  return app;
}

/**
 * What every request passes first: the request log and id, the error middleware, CORS, dependency
 * faults, the per-IP limit. Exported for bench/rest-floor.ts, which measures its cost alone.
 */
export function useEdge(app: Koa<AppState>, config: Config, logger: Logger, redis: Redis | null): void {
  app.use(requestLog(logger, config));
  app.use(async (ctx, next) => {
    const incoming = ctx.get("x-request-id");
    ctx.state.requestId = /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    ctx.set("X-Request-Id", ctx.state.requestId);
    // Only the upload routes decide when to invite the body; everything else invites it at once.
    // The routers match paths whatever their case, so this does too (/V1/COMPRESS is /v1/compress).
    if (!ctx.path.toLowerCase().startsWith("/v1/") && expectsContinue(ctx.req)) ctx.res.writeContinue();
    await next();
  });
  // A body the route did not read to its end is let go after the answer, never under it.
  app.use(finishUnreadBody);
  app.use(errorMiddleware(logger));
  // Any origin, no credentials: the catalog is public. Inside the error middleware's reach but
  // outside everything that can fail, so errors and 429s carry the CORS headers too.
  app.use(
    cors({
      origin: "*",
      allowMethods: ["GET", "HEAD", "POST", "OPTIONS"],
      exposeHeaders: [
        "ETag",
        "Link",
        "Retry-After",
        "RateLimit",
        "RateLimit-Policy",
        "X-Request-Id",
        "X-Error-Code",
        "X-Error-Message",
      ],
      maxAge: 86_400,
    }),
  );
  // A database that cannot be reached is a 503 wherever a route meets it (with the CORS headers).
  app.use(dependencyFaults());
  // Per client IP, for the service as a whole (health probes excepted); after CORS so 429s carry it.
  const limiter = createRateLimiter({
    name: "client-ip",
    points: config.rateLimit.requests,
    windowSeconds: config.rateLimit.windowSeconds,
    redis,
    logger,
  });
  app.use(rateLimitByClientIp(limiter));
}

// A GraphQL request body's limit: the largest query the token limit lets through is far smaller.
const GRAPHQL_BODY_MAX = 64 * 1024;
const graphqlBodyTooLarge = () =>
  new HttpError(413, "body_too_large", `A GraphQL request may carry at most ${GRAPHQL_BODY_MAX / 1024} KiB.`);

/** /graphql: graphql-yoga behind the access setting (GRAPHQL_ACCESS). */
function graphqlRouter(deps: AppDeps, totals: TotalsCache | null): Router<AppState> {
  const { config, db, logger } = deps;
  const yoga = createGraphQLServer({ prisma: db.prisma, sql: db.sql, config, logger, totals });
  const graphql = new Router<AppState>();
  const warning = accessWarning(config.graphql.access);
  if (warning) logger.warn(warning);
  const explorer = config.graphql.explorer
    ? explorerPage({ ...EXPLORER, links: neighbourSurfaces("graphql") })
    : (_ctx: unknown, next: () => Promise<void>) => next();
  graphql.all("/graphql", graphqlAccess(config.graphql.access, deps.googleAuth ?? undefined), explorer, async (ctx) => {
    // The body is read here, within its limit, and handed to yoga whole: yoga would read any size.
    const body = ctx.method === "POST" ? await readBody(ctx.req, GRAPHQL_BODY_MAX, graphqlBodyTooLarge) : null;
    const request = body?.length ? { req: ctx.req, method: ctx.method, headers: ctx.req.headers, body } : ctx.req;
    const response = await yoga.handleNodeRequestAndResponse(request, ctx.res, {});
    ctx.status = response.status;
    response.headers.forEach((value, key) => ctx.append(key, value));
    // yoga answers with a ponyfilled web stream; it is async-iterable, which Node can wrap.
    ctx.body = response.body ? Readable.from(response.body) : null;
  });
  return graphql;
}

/** The compression API (/v1), when the app has storage and an engine; returns its service for the dashboard. */
function useCompressApi(app: Koa<AppState>, deps: AppDeps): CompressService | null {
  if (!deps.compress) return null;
  const compressDeps = {
    config: deps.config,
    prisma: deps.db.prisma,
    redis: deps.redis ?? null,
    logger: deps.logger,
    ...deps.compress,
    shutdown: deps.lifecycle?.deadline ?? null,
  };
  const service = createCompressService(compressDeps);
  const v1 = createCompressRouter(compressDeps, service);
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return service;
}
