// POST /v1/compress and POST /v1/unlock, GET /v1/usage, the description (/v1/openapi.json, /v1/docs),
// and GET /v1/files/<name> for the local storage's signed downloads. The order of checks is the contract: the key (401), the per-key rate limit
// (429), the declared size (413), the monthly quota (402) all come from the headers, before a
// byte of the body is read; only then does a client that sent `Expect: 100-continue` get its
// 100 and the upload start. A reserved quota unit is given back on every failure.
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import http2, { type Http2ServerRequest } from "node:http2";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Router from "@koa/router";
import type { Context, Middleware, Next } from "koa";
import type { Redis } from "ioredis";
import { authenticateApiKey, type AuthenticatedKey } from "../../auth/authenticate.ts";
import { nextMonth, releaseQuota, reserveQuota, type Reservation } from "../../auth/quota.ts";
import { usageBody, usageSummary } from "../../auth/usage.ts";
import { failAndRelease } from "../maintenance.ts";
import type { Config } from "../../config/env.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { HttpError } from "../../http/errors.ts";
import { shuttingDown } from "../../http/health.ts";
import { publicOrigin } from "../../http/origin.ts";
import { createRateLimiter, rateLimitBy, type RateLimiter } from "../../http/rate-limit.ts";
import type { Logger } from "../../logger.ts";
import type { LocalStorage } from "../storage/local.ts";
import { LOCAL_DOWNLOAD_PREFIX } from "../storage/local.ts";
import { contentDisposition as contentDispositionOf, type ObjectStorage } from "../storage/storage.ts";
import { COMPRESSION_PROFILES, isCompressionProfile, type CompressionProfile } from "../engine/index.ts";
import type { EngineJob, EngineResult } from "../isolation/protocol.ts";
import { RunnerBusy, type Runner } from "../isolation/runner.ts";
import { expectsContinue } from "./continue.ts";
import { addSwaggerUiRoutes } from "../../http/swagger-ui.ts";
import { buildCompressOpenApi } from "./openapi.ts";
import { MULTIPART_OVERHEAD, receiveUpload, tooLarge, UploadAborted, type Upload } from "./upload.ts";

/** What the routes need of the runner (tests of the HTTP contract may hand in their own). */
export type EngineRunner = Pick<Runner, "run">;

export interface CompressDeps {
  config: Config;
  prisma: PrismaClient;
  redis: Redis | null;
  logger: Logger;
  storage: ObjectStorage;
  runner: EngineRunner;
  /**
   * Aborted when the service shuts down and in-flight work must give up: an upload or compression
   * still running is answered 503 `shutting_down` (not charged, its files removed).
   */
  shutdown?: AbortSignal | null;
}

// Every failure the engine or its process reports is about the file: a 422 with its code, not
// charged. A processing_timeout keeps the runner's message, which states the limit for the file's
// size (a valid large file may meet it on a slow instance: it is not called hostile); a
// processing_failed gets one message whatever the process died of.
const RUNNER_MESSAGES: Partial<Record<string, string>> = {
  processing_failed: "Processing the file exceeded the memory limit or failed; it is too complex or damaged.",
};

/** Where requests write their uploads, one directory each. */
export const temporaryRoot = (config: Config) => config.compress.tmpDir ?? path.join(tmpdir(), "marketplace-compress");

const objectName = () => `${randomBytes(18).toString("base64url")}.pdf`;

// eslint-disable-next-line no-control-regex -- control characters are what is being removed
const CONTROL_OR_SLASH = /[\u0000-\u001f\u007f/\\]/g;

function downloadName(uploaded: string, suffix: string): string {
  const stem =
    uploaded
      .replace(/\.pdf$/i, "")
      .replace(CONTROL_OR_SLASH, "_")
      .slice(0, 150) || "document";
  return `${stem}-${suffix}.pdf`;
}

function parseProfile(value: string | undefined): CompressionProfile {
  if (value === undefined) return "balanced";
  if (isCompressionProfile(value)) return value;
  throw new HttpError(
    400,
    "invalid_profile",
    `profile must be one of ${COMPRESSION_PROFILES.join(", ")}; got "${value.slice(0, 40)}"`,
  );
}

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

/** The answer of a successful compression (the spec's "compression result"). */
export interface CompressionResultBody {
  success: true;
  original_size: number;
  compressed_size: number;
  savings_percentage: number;
  url: string;
  expires_in: number;
}

/** Where a compression's upload comes from: read from the request into the request's directory, or already read. */
export type UploadSource =
  | { receive: (dir: string) => Promise<Upload> }
  | { received: Upload; /** Removed with the request's files. */ dir: string };

/**
 * The compression API's work, shared by POST /v1/compress and /v1/unlock and the dashboard's
 * "Try it" page: the per-key rate limit, the quota (reserved, given back on any failure), the
 * record, the isolated engine, storage and the signed URL.
 */
export interface CompressService {
  /** The per-key limit of 120 requests a minute (every surface a key is used from counts). */
  readonly perKey: RateLimiter;
  readonly authenticate: Middleware;
  /** Reserves a unit for key (402 when used up), compresses the upload, answers the result's body. */
  compressFor(
    ctx: Context,
    kind: EngineJob["kind"],
    key: AuthenticatedKey,
    source: UploadSource,
  ): Promise<CompressionResultBody>;
}

export function createCompressService(deps: CompressDeps): CompressService {
  const { config, prisma, logger, storage, runner } = deps;
  const perKey = createRateLimiter({
    name: "api-key",
    points: config.compress.ratePerMinute,
    windowSeconds: 60,
    redis: deps.redis,
    logger,
  });
  const authenticate = authenticateApiKey({
    prisma,
    pepper: config.apiKeyPepper,
    onBackgroundError: (error) => logger.warn({ err: error }, "could not record an API key's last use"),
  });
  const tmpRoot = temporaryRoot(config);

  async function compressFor(
    ctx: Context,
    kind: EngineJob["kind"],
    key: AuthenticatedKey,
    source: UploadSource,
  ): Promise<CompressionResultBody> {
    let dir = "received" in source ? source.dir : undefined;
    let reservation: Reservation | null;
    try {
      reservation = await reserveQuota(prisma, key.subscriberId, key.monthlyQuota);
    } catch (error) {
      if (dir) await rm(dir, { recursive: true, force: true });
      throw error;
    }
    const reset = nextMonth();
    if (!reservation) {
      if (dir) await rm(dir, { recursive: true, force: true });
      throw new HttpError(
        402,
        "quota_exceeded",
        `The monthly quota of ${key.monthlyQuota} compressions is used up; it renews at ${reset.toISOString()}.`,
        {
          "Retry-After": String(Math.ceil((reset.getTime() - Date.now()) / 1000)),
          ...quotaHeaders(key.monthlyQuota, 0, reset),
        },
      );
    }
    const record = await prisma.compression
      .create({
        data: { subscriberId: key.subscriberId, apiKeyId: key.id, month: reservation.month, profile: "balanced" },
      })
      .catch(async (error: unknown) => {
        // Nothing ran: the unit goes back before the error is answered.
        await releaseQuota(prisma, key.subscriberId, reservation.month).catch(() => undefined);
        if (dir) await rm(dir, { recursive: true, force: true });
        throw error;
      });
    let succeeded = false;
    let failure = "unknown";
    // The client going away cancels the work (and so the charge), as does the service shutting down.
    const abort = new AbortController();
    const cancel = deps.shutdown ? AbortSignal.any([abort.signal, deps.shutdown]) : abort.signal;
    const onClose = () => {
      if (!ctx.res.writableFinished) abort.abort();
    };
    ctx.res.once("close", onClose);
    try {
      let upload: Upload;
      if ("received" in source) upload = source.received;
      else {
        // Inside the try: a full disk is a failure like any other, and the unit goes back.
        await mkdir(tmpRoot, { recursive: true });
        dir = await mkdtemp(path.join(tmpRoot, "req-"));
        upload = await source.receive(dir);
      }
      const profile = parseProfile(upload.fields["profile"]);
      const outputPath = path.join(dir!, "output.pdf");
      let job: EngineJob;
      if (kind === "unlock") {
        const password = upload.fields["password"];
        if (password === undefined) {
          throw new HttpError(400, "missing_password", "Send the document's password in a field named password.");
        }
        job = { kind, inputPath: upload.path, outputPath, password, profile };
      } else {
        job = { kind, inputPath: upload.path, outputPath, profile };
      }
      const result = await runJob(job, cancel);
      const name = objectName();
      const meta = {
        contentType: "application/pdf",
        downloadName: downloadName(upload.filename, kind === "unlock" ? "unlocked" : "compressed"),
      };
      await storage.put(name, outputPath, meta);
      const url = await storage.signedUrl(
        name,
        meta,
        config.downloadUrlTtlSeconds,
        publicOrigin(ctx, config.publicApiBaseUrl),
      );
      await prisma.compression.update({
        where: { id: record.id },
        data: {
          status: "succeeded",
          profile,
          originalSize: upload.size,
          compressedSize: result.outputSize,
          objectName: name,
          finishedAt: new Date(),
        },
      });
      succeeded = true;
      ctx.set(quotaHeaders(reservation.limit, reservation.limit - reservation.used, reset));
      ctx.set("Cache-Control", "no-store");
      return {
        success: true,
        original_size: upload.size,
        compressed_size: result.outputSize,
        savings_percentage: Math.round((1 - result.outputSize / upload.size) * 10_000) / 100,
        url,
        expires_in: config.downloadUrlTtlSeconds,
      };
    } catch (caught) {
      const error = deps.shutdown?.aborted && !abort.signal.aborted ? shuttingDown() : caught;
      failure =
        error instanceof HttpError ? error.code : error instanceof UploadAborted ? "client_aborted" : "internal_error";
      if (error instanceof UploadAborted || abort.signal.aborted) {
        logger.info({ requestId: ctx.state["requestId"] as string }, "client went away during compression");
      } else if (failure === "shutting_down") {
        logger.warn({ requestId: ctx.state["requestId"] as string }, "compression cut off by the shutdown");
      }
      throw error;
    } finally {
      ctx.res.off("close", onClose);
      if (dir) await rm(dir, { recursive: true, force: true });
      if (!succeeded) await refund(record.id, key.subscriberId, reservation, failure);
    }
  }

  async function runJob(job: EngineJob, signal: AbortSignal): Promise<{ outputSize: number; pages: number }> {
    let result: EngineResult;
    try {
      result = await runner.run(job, { signal });
    } catch (error) {
      if (error instanceof RunnerBusy) {
        throw new HttpError(503, "busy", "Every compression slot is taken; retry shortly.", {
          "Retry-After": String(Math.max(1, Math.ceil(error.retryAfterSeconds))),
        });
      }
      throw error;
    }
    if (result.ok) return result;
    throw new HttpError(422, result.code, RUNNER_MESSAGES[result.code] ?? result.message);
  }

  async function refund(recordId: string, subscriberId: string, reservation: Reservation, errorCode: string) {
    try {
      await failAndRelease(prisma, { id: recordId, subscriberId, month: reservation.month }, errorCode);
    } catch (error) {
      logger.error({ err: error, recordId }, "could not release a quota reservation");
    }
  }

  return { perKey, authenticate, compressFor };
}

export function createCompressRouter(
  deps: CompressDeps,
  service: CompressService = createCompressService(deps),
): Router {
  const { config, prisma, storage } = deps;
  const { perKey, authenticate } = service;
  const router = new Router();

  const handle = (kind: EngineJob["kind"]) => async (ctx: Context) => {
    const key = ctx.state["apiKey"] as AuthenticatedKey;
    const declared = Number(ctx.get("Content-Length"));
    if (declared > config.compress.maxUploadBytes + MULTIPART_OVERHEAD) throw tooLarge(config.compress.maxUploadBytes);
    ctx.body = await service.compressFor(ctx, kind, key, {
      receive: (dir) => {
        if (expectsContinue(ctx.req)) ctx.res.writeContinue();
        return receiveUpload(ctx.req, {
          dir,
          maxBytes: config.compress.maxUploadBytes,
          idleTimeoutMs: config.compress.uploadIdleTimeoutMs,
          fields: kind === "unlock" ? ["profile", "password"] : ["profile"],
          signal: deps.shutdown ?? undefined,
        });
      },
    });
  };

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

  if (storage.kind === "local") {
    const local = storage as LocalStorage;
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
      ctx.body = createReadStream(verdict.file);
    });
  }
  return router;
}

const keyOf = (ctx: Context) => (ctx.state["apiKey"] as AuthenticatedKey | undefined)?.id;

function quotaHeaders(limit: number, remaining: number, reset: Date): Record<string, string> {
  return {
    "X-Quota-Limit": String(limit),
    "X-Quota-Remaining": String(Math.max(0, remaining)),
    "X-Quota-Reset": reset.toISOString(),
  };
}
