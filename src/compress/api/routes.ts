// POST /v1/compress and POST /v1/unlock, GET /v1/usage, the description (/v1/openapi.json, /v1/docs),
// and GET /v1/files/<name> for the local storage's signed downloads. The order of checks is the contract: the key (401), the per-key rate limit
// (429), the declared size (413), the monthly quota (402) all come from the headers, before a
// byte of the body is read; only then does a client that sent `Expect: 100-continue` get its
// 100 and the upload start. A reserved quota unit is given back on every failure.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import Router from "@koa/router";
import type { ParameterizedContext } from "koa";
import { authenticateApiKey } from "../../auth/authenticate.ts";
import { usageBody, usageSummary } from "../../auth/usage.ts";
import { HttpError } from "../../errors.ts";
import { publicOrigin } from "../../http/origin.ts";
import { rateLimitBy } from "../../http/rate-limit.ts";
import { withRequestInfo } from "../../http/request-info.ts";
import type { AppState } from "../../http/state.ts";
import { addSwaggerUiRoutes } from "../../http/swagger-ui.ts";
import { SIGNATURE_HEADER, STANDARD_HEADERS } from "../async-jobs/signature.ts";
import { rotateWebhookSecret, webhookSecretState } from "../async-jobs/webhooks.ts";
import { quotaHeaders } from "../compression.ts";
import type { EngineJob } from "../isolation/protocol.ts";
import type { LocalStorage } from "../storage/local.ts";
import { LOCAL_DOWNLOAD_PREFIX, LOCAL_UPLOAD_PREFIX } from "../storage/local.ts";
import { contentDisposition as contentDispositionOf } from "../storage/storage.ts";
import { createCompressService, type CompressDeps, type CompressService } from "../workflow/service.ts";
import {
  answerJob,
  answerSync,
  compressJson,
  createDirectUpload,
  getJob,
  prefersAsync,
  readJsonObject,
  readOptionalJson,
  receiveDirectUpload,
  type KeyedContext,
  type KeyedState,
} from "./jobs-and-uploads.ts";
import { maxRetentionSeconds, resultDeleted } from "../workflow/results.ts";
import { addCompressionRoutes } from "./compressions.ts";
import { addCompressionMcpRoute } from "./mcp.ts";
import { idempotent } from "./idempotency.ts";
import { buildCompressOpenApi } from "./openapi.ts";
import { isBodyOf } from "../../http/read-body.ts";
import { byteRange } from "../../http/range.ts";

/**
 * GET (created on first use) or POST (rotated) the subscriber's webhook signing secret, with the
 * headers calls carry and how long a rotated-out secret still signs them.
 */
const answerWebhookSecret = (deps: CompressDeps, rotate: boolean) => async (ctx: KeyedContext) => {
  const subscriberId = ctx.state.apiKey.subscriberId;
  const state = rotate
    ? await rotateWebhookSecret(deps.prisma, subscriberId, deps.config.webhookRotationOverlapMs)
    : await webhookSecretState(deps.prisma, subscriberId);
  ctx.set("Cache-Control", "no-store");
  ctx.body = {
    secret: state.secret,
    algorithm: "HMAC-SHA256",
    scheme: "standard-webhooks",
    headers: STANDARD_HEADERS,
    signed_content: "{webhook-id}.{webhook-timestamp}.{raw body}",
    previous_secret_valid_until: state.previousUntil?.toISOString() ?? null,
    header: SIGNATURE_HEADER,
  };
};

/** GET /v1/usage: the key's subscriber's month, the same numbers as the dashboard's Usage page; never charged. */
const answerUsage = (deps: CompressDeps) => async (ctx: KeyedContext) => {
  const key = ctx.state.apiKey;
  const summary = await usageSummary(deps.prisma, {
    id: key.subscriberId,
    plan: key.plan,
    monthlyQuota: key.monthlyQuota,
  });
  ctx.set(quotaHeaders(summary.monthlyQuota, summary.remaining, summary.resetsAt));
  ctx.set("Cache-Control", "no-store");
  ctx.body = usageBody(summary);
};

/**
 * POST /v1/compress and /v1/unlock: multipart (synchronous, or a job with Prefer: respond-async), the
 * file as a part or its address as file_url, or a JSON body naming a file_url or (compress) a direct
 * upload. The service does the rest.
 */
const compressRoute =
  (deps: CompressDeps, service: CompressService, kind: EngineJob["kind"]) => async (ctx: KeyedContext) => {
    if (isBodyOf(ctx.req, "application/json")) return compressJson(service, ctx, kind, deps.config.publicApiBaseUrl);
    const key = ctx.state.apiKey;
    const upload = { body: ctx.req, response: ctx.res };
    await withRequestInfo(ctx, deps.config.publicApiBaseUrl, async (request) => {
      if (kind === "compress" && prefersAsync(ctx)) answerJob(ctx, await service.enqueue(request, key, { upload }));
      else answerSync(ctx, await service.compress(request, key, kind, { upload }));
    });
  };

export function createCompressRouter(
  deps: CompressDeps,
  service: CompressService = createCompressService(deps),
): Router<AppState> {
  const { config, prisma, storage } = deps;
  const router = new Router<AppState>();
  const authenticate = authenticateApiKey({
    prisma,
    pepper: config.apiKeyPepper,
    onBackgroundError: (error) => deps.logger.warn({ err: error }, "could not record an API key's last use"),
  });
  // Every route with a key: authenticated (401), then counted by the per-key limit (429).
  const keyed = [authenticate, rateLimitBy(service.perKey, keyOf)] as const;

  router.get("/v1/openapi.json", (ctx) => {
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = buildCompressOpenApi(publicOrigin(ctx, config.publicApiBaseUrl), maxRetentionSeconds(config));
  });
  router.get<KeyedState>("/v1/usage", ...keyed, answerUsage(deps));
  addSwaggerUiRoutes(router, {
    prefix: "/v1/docs",
    title: "Marketplace document compression API v1",
    specUrl: "/v1/openapi.json",
  });
  // A retry with the same Idempotency-Key gets the first answer (idempotency.ts).
  const readCompressBody = (ctx: KeyedContext) =>
    isBodyOf(ctx.req, "application/json")
      ? readJsonObject(ctx)
      : service.readForDigest({ body: ctx.req, response: ctx.res });
  router.post<KeyedState>(
    "/v1/compress",
    ...keyed,
    idempotent(prisma, readCompressBody),
    compressRoute(deps, service, "compress"),
  );
  router.post<KeyedState>("/v1/unlock", ...keyed, compressRoute(deps, service, "unlock"));
  router.get<KeyedState>("/v1/jobs/:id", ...keyed, (ctx) => getJob(deps, ctx, ctx.params["id"] ?? ""));
  router.post<KeyedState>("/v1/uploads", ...keyed, idempotent(prisma, readOptionalJson), (ctx) =>
    createDirectUpload(deps, ctx),
  );
  addCompressionRoutes(router, deps, keyed);
  addCompressionMcpRoute(router, deps, service, keyed);
  router.get<KeyedState>("/v1/webhook-secret", ...keyed, answerWebhookSecret(deps, false));
  router.post<KeyedState>("/v1/webhook-secret", ...keyed, answerWebhookSecret(deps, true));

  if (storage.kind === "local") addLocalStorageRoutes(router, storage as LocalStorage, deps);
  return router;
}

const keyOf = (ctx: ParameterizedContext<AppState>) => ctx.state.apiKey?.id;

/** The local stand-in's signed download and upload paths (Cloud Storage serves its own). */
function addLocalStorageRoutes(router: Router<AppState>, local: LocalStorage, deps: CompressDeps): void {
  router.get(`${LOCAL_DOWNLOAD_PREFIX}:name`, async (ctx) => {
    const verdict = await local.verify(ctx.params["name"] ?? "", new URLSearchParams(ctx.querystring));
    if (!verdict.ok) {
      if (verdict.reason === "gone") throw resultDeleted();
      throw verdict.reason === "expired"
        ? new HttpError(403, "url_expired", "This download address has expired; compress the file again.")
        : new HttpError(403, "invalid_signature", "This download address is not valid.");
    }
    ctx.set("Content-Disposition", contentDispositionOf(verdict.downloadName));
    ctx.set("Cache-Control", "private, no-store");
    ctx.set("X-Content-Type-Options", "nosniff");
    // A download cut off is resumed where it stopped, as from Cloud Storage's signed URL.
    ctx.set("Accept-Ranges", "bytes");
    // With its length, so a browser shows the download's progress (Cloud Storage sends it too).
    const { size } = await stat(verdict.file);
    const range = byteRange(ctx.get("Range"), size);
    if (range === "unsatisfiable") {
      throw new HttpError(416, "range_not_satisfiable", `The file has ${size} bytes; ask for a range within them.`, {
        "Content-Range": `bytes */${size}`,
      });
    }
    ctx.type = "application/pdf";
    if (range) {
      ctx.status = 206;
      ctx.set("Content-Range", `bytes ${range.start}-${range.end}/${size}`);
    }
    ctx.body = createReadStream(verdict.file, range ?? {});
    ctx.length = range ? range.end - range.start + 1 : size;
  });
  router.put(`${LOCAL_UPLOAD_PREFIX}:name`, (ctx) => receiveDirectUpload(local, deps, ctx, ctx.params["name"] ?? ""));
}
