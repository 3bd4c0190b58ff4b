// POST /v1/compress and POST /v1/unlock, GET /v1/usage, the description (/v1/openapi.json, /v1/docs),
// and GET /v1/files/<name> for the local storage's signed downloads. The order of checks is the contract: the key (401), the per-key rate limit
// (429), the declared size (413), the monthly quota (402) all come from the headers, before a
// byte of the body is read; only then does a client that sent `Expect: 100-continue` get its
// 100 and the upload start. A reserved quota unit is given back on every failure.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http2, { type Http2ServerRequest } from "node:http2";
import Router from "@koa/router";
import type { Context, Next } from "koa";
import type { AuthenticatedKey } from "../../auth/authenticate.ts";
import { usageBody, usageSummary } from "../../auth/usage.ts";
import { HttpError } from "../../errors.ts";
import { publicOrigin } from "../../http/origin.ts";
import { rateLimitBy } from "../../http/rate-limit.ts";
import { addSwaggerUiRoutes } from "../../http/swagger-ui.ts";
import { quotaHeaders } from "../compression.ts";
import type { EngineJob } from "../isolation/protocol.ts";
import type { LocalStorage } from "../storage/local.ts";
import { LOCAL_DOWNLOAD_PREFIX, LOCAL_UPLOAD_PREFIX } from "../storage/local.ts";
import { SIGNATURE_HEADER } from "../async-jobs/signature.ts";
import { rotateWebhookSecret, webhookSecret } from "../async-jobs/webhooks.ts";
import {
  acceptUploadAsJob,
  compressDirectUpload,
  createDirectUpload,
  getJob,
  JOB_FIELDS,
  prefersAsync,
  receiveDirectUpload,
  type JobDeps,
} from "./jobs.ts";
import { contentDisposition as contentDispositionOf } from "../storage/storage.ts";
import { expectsContinue } from "../../http/continue.ts";
import { buildCompressOpenApi } from "./openapi.ts";
import { createCompressService, OPTION_FIELDS, type CompressService } from "./service.ts";
import { MULTIPART_OVERHEAD, receiveUpload, tooLarge, type Upload } from "./upload.ts";

// The service's names, where the app, the dashboard and the composition root import them from.
export {
  createCompressService,
  OPTION_FIELDS,
  temporaryRoot,
  type CompressDeps,
  type CompressService,
  type CompressionResultBody,
  type EngineRunner,
  type UploadSource,
} from "./service.ts";

/**
 * A client that sent the body without waiting for 100 Continue must still receive our early
 * answer: keep reading (and discarding) what it sends, within reason, instead of closing on it.
 */
async function readNoMoreThanNeeded(ctx: Context, next: Next) {
  try {
    await next();
  } finally {
    const req = ctx.req;
    if (req.httpVersionMajor >= 2) {
      // HTTP/2 has a way to say it: once the answer is out, RST_STREAM with NO_ERROR tells the
      // client to stop sending the body (RFC 9113, section 8.1) while the connection carries on.
      const { stream } = req as unknown as Http2ServerRequest;
      const stop = () => {
        if (!req.complete && !stream.destroyed) setImmediate(() => stream.close(http2.constants.NGHTTP2_NO_ERROR));
      };
      if (ctx.res.writableFinished) stop();
      else ctx.res.once("finish", stop);
    } else if (!req.complete && !req.destroyed) {
      const giveUp = setTimeout(() => req.destroy(), 60_000);
      giveUp.unref();
      req.once("end", () => clearTimeout(giveUp));
      req.once("close", () => clearTimeout(giveUp));
      req.resume();
    }
  }
}

/** GET (created on first use) or POST (rotated) the subscriber's webhook signing secret. */
const answerWebhookSecret = (rotate: boolean) => async (deps: JobDeps, ctx: Context, key: AuthenticatedKey) => {
  const secret = await (rotate ? rotateWebhookSecret : webhookSecret)(deps.prisma, key.subscriberId);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { secret, algorithm: "HMAC-SHA256", header: SIGNATURE_HEADER };
};

export function createCompressRouter(deps: JobDeps, service: CompressService = createCompressService(deps)): Router {
  const { config, prisma, storage } = deps;
  const { perKey, authenticate } = service;
  const router = new Router();

  const receive = (ctx: Context, fields: string[]) => (dir: string) => {
    if (expectsContinue(ctx.req)) ctx.res.writeContinue();
    return receiveUpload(ctx.req, {
      dir,
      maxBytes: config.compress.maxUploadBytes,
      idleTimeoutMs: config.compress.uploadIdleTimeoutMs,
      fields,
      signal: deps.shutdown ?? undefined,
    });
  };
  // POST /v1/compress and /v1/unlock: multipart (synchronous, or a job with Prefer: respond-async)
  // or, for compress, a JSON body naming a direct upload.
  const handle = (kind: EngineJob["kind"]) => async (ctx: Context) => {
    const key = ctx.state["apiKey"] as AuthenticatedKey;
    if (kind === "compress" && ctx.is("application/json")) return compressDirectUpload(deps, service, ctx, key);
    const declared = Number(ctx.get("Content-Length"));
    if (declared > config.compress.maxUploadBytes + MULTIPART_OVERHEAD) throw tooLarge(config.compress.maxUploadBytes);
    if (kind === "compress" && prefersAsync(ctx)) {
      return acceptUploadAsJob(deps, ctx, key, receive(ctx, [...JOB_FIELDS]));
    }
    const fields = kind === "unlock" ? [...OPTION_FIELDS, "password"] : [...OPTION_FIELDS, "callback_url"];
    ctx.body = await service.compressFor(ctx, kind, key, {
      // The engine's room is checked once the unit is reserved, before the body is read: a 503 busy
      // costs the client its headers, not its upload (the unit goes back as for any failure).
      receive: (dir) => {
        service.assertRoom();
        return receive(ctx, fields)(dir).then(withoutCallback);
      },
    });
  };
  const withKey = (route: (deps: JobDeps, ctx: Context, key: AuthenticatedKey) => Promise<void>) => (ctx: Context) =>
    route(deps, ctx, ctx.state["apiKey"] as AuthenticatedKey);

  router.get("/v1/openapi.json", (ctx) => {
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = buildCompressOpenApi(publicOrigin(ctx, config.publicApiBaseUrl));
  });
  // The key's subscriber's month: the same numbers as the dashboard's Usage page. Counted by the
  // per-key rate limit like every request with a key; never charged.
  router.get("/v1/usage", authenticate, rateLimitBy(perKey, keyOf), async (ctx) => {
    const key = ctx.state["apiKey"] as AuthenticatedKey;
    const summary = await usageSummary(prisma, {
      id: key.subscriberId,
      plan: key.plan,
      monthlyQuota: key.monthlyQuota,
    });
    ctx.set(quotaHeaders(summary.monthlyQuota, summary.remaining, summary.resetsAt));
    ctx.set("Cache-Control", "no-store");
    ctx.body = usageBody(summary);
  });
  addSwaggerUiRoutes(router, {
    prefix: "/v1/docs",
    title: "Marketplace document compression API v1",
    specUrl: "/v1/openapi.json",
  });
  router.post("/v1/compress", readNoMoreThanNeeded, authenticate, rateLimitBy(perKey, keyOf), handle("compress"));
  router.post("/v1/unlock", readNoMoreThanNeeded, authenticate, rateLimitBy(perKey, keyOf), handle("unlock"));
  router.get("/v1/jobs/:id", authenticate, rateLimitBy(perKey, keyOf), withKey(getJob));
  router.post("/v1/uploads", authenticate, rateLimitBy(perKey, keyOf), withKey(createDirectUpload));
  router.get("/v1/webhook-secret", authenticate, rateLimitBy(perKey, keyOf), withKey(answerWebhookSecret(false)));
  router.post("/v1/webhook-secret", authenticate, rateLimitBy(perKey, keyOf), withKey(answerWebhookSecret(true)));

  if (storage.kind === "local") addLocalStorageRoutes(router, storage as LocalStorage, prisma);
  return router;
}

/**
 * A synchronous compression takes a callback_url only empty, as a form (the docs page's "Try it
 * out") sends every field it shows: a URL means the client expected a job and its webhook, which
 * only `Prefer: respond-async` asks for, so it is refused saying so rather than ignored.
 */
function withoutCallback(upload: Upload): Upload {
  const { callback_url: callbackUrl, ...fields } = upload.fields;
  if (callbackUrl) {
    throw new HttpError(
      400,
      "unexpected_field",
      'callback_url is taken only with the header "Prefer: respond-async" (a job, whose end is posted to callback_url); leave it empty to compress at once.',
    );
  }
  return { ...upload, fields };
}

const keyOf = (ctx: Context) => (ctx.state["apiKey"] as AuthenticatedKey | undefined)?.id;

/** The local stand-in's signed download and upload paths (Cloud Storage serves its own). */
function addLocalStorageRoutes(router: Router, local: LocalStorage, prisma: JobDeps["prisma"]): void {
  router.get(`${LOCAL_DOWNLOAD_PREFIX}:name`, async (ctx) => {
    const verdict = await local.verify(ctx.params["name"] ?? "", new URLSearchParams(ctx.querystring));
    if (!verdict.ok) {
      throw verdict.reason === "expired"
        ? new HttpError(403, "url_expired", "This download address has expired; compress the file again.")
        : new HttpError(403, "invalid_signature", "This download address is not valid.");
    }
    ctx.type = "application/pdf";
    ctx.set("Content-Disposition", contentDispositionOf(verdict.downloadName));
    ctx.set("Cache-Control", "private, no-store");
    // With its length, so a browser shows the download's progress (Cloud Storage sends it too).
    const { size } = await stat(verdict.file);
    ctx.body = createReadStream(verdict.file);
    ctx.length = size;
  });
  router.put(`${LOCAL_UPLOAD_PREFIX}:name`, readNoMoreThanNeeded, (ctx) =>
    receiveDirectUpload(local, prisma, ctx, () => {
      if (expectsContinue(ctx.req)) ctx.res.writeContinue();
    }),
  );
}
