// The compression API's work for one request, shared by POST /v1/compress and /v1/unlock and the
// dashboard's "Try it" page: the per-key rate limit, then the lifecycle of one compression
// (compression.ts: reserve → record → run → store → succeed | fail and release once) around the
// upload, with the request's own temporary directory, removed whatever happens.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Context, Middleware } from "koa";
import type { Redis } from "ioredis";
import { authenticateApiKey, type AuthenticatedKey } from "../../auth/authenticate.ts";
import { nextMonth } from "../../auth/quota.ts";
import type { Config } from "../../config/env.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { HttpError } from "../../errors.ts";
import { shuttingDown } from "../../errors.ts";
import { publicOrigin } from "../../http/origin.ts";
import { createRateLimiter, type RateLimiter } from "../../http/rate-limit.ts";
import type { Logger } from "../../logger.ts";
import * as compression from "../compression.ts";
import type { CompressionResultBody, EngineRunner, Reserved } from "../compression.ts";
import { BOOT_ID } from "../holds.ts";
import {
  COMPRESSION_PROFILES,
  isCompressionProfile,
  type CompressionProfile,
  type SignaturePolicy,
} from "../../pdf/index.ts";
import type { EngineJob } from "../isolation/protocol.ts";
import type { Runner } from "../isolation/runner.ts";
import type { ObjectStorage } from "../storage/storage.ts";
import { UploadAborted, type Upload } from "./upload.ts";

export type { CompressionResultBody, EngineRunner } from "../compression.ts";

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

/** Where requests write their uploads, one directory each. */
export const temporaryRoot = (config: Config) => config.compress.tmpDir ?? path.join(tmpdir(), "marketplace-compress");

/** The prefix of this process's request directories: a restart removes a dead process's by it (boot.ts). */
export const requestDirectoryPrefix = (bootId: string) => `req-${bootId}-`;

/** A new directory of this request's own under the temporary root. */
export async function requestDirectory(config: Config): Promise<string> {
  const root = temporaryRoot(config);
  await mkdir(root, { recursive: true });
  return mkdtemp(path.join(root, requestDirectoryPrefix(BOOT_ID)));
}

export function parseProfile(value: string | undefined): CompressionProfile {
  if (value === undefined) return "balanced";
  if (isCompressionProfile(value)) return value;
  throw new HttpError(
    400,
    "invalid_profile",
    `profile must be one of ${COMPRESSION_PROFILES.join(", ")}; got "${value.slice(0, 40)}"`,
  );
}

/**
 * The `signatures` field: absent or `refuse`, a signed document is refused (422 signed_document, not charged);
 * `remove`, it is compressed and its signatures, which would no longer verify, are removed.
 */
export function parseSignatures(value: string | undefined): SignaturePolicy {
  if (value === undefined || value === "refuse") return "refuse";
  if (value === "remove") return "remove";
  throw new HttpError(
    400,
    "invalid_signatures",
    `signatures must be refuse (the default: signed documents are refused) or remove; got "${value.slice(0, 40)}"`,
  );
}

/** The multipart fields every compression takes besides the file (unlock adds password). */
export const OPTION_FIELDS = ["profile", "signatures"] as const;

/** Where a compression's upload comes from: read from the request into the request's directory, or already read. */
export type UploadSource =
  | { receive: (dir: string) => Promise<Upload> }
  | { received: Upload; /** Removed with the request's files. */ dir: string };

export interface CompressService {
  /** The per-key limit of 120 requests a minute (every surface a key is used from counts). */
  readonly perKey: RateLimiter;
  readonly authenticate: Middleware;
  /** Throws 503 busy when the engine would refuse a job now: checked before an upload is read. */
  assertRoom(): void;
  /** Reserves a unit for key (402 when used up), compresses the upload, answers the result's body. */
  compressFor(
    ctx: Context,
    kind: EngineJob["kind"],
    key: AuthenticatedKey,
    source: UploadSource,
  ): Promise<CompressionResultBody>;
}

export function createCompressService(deps: CompressDeps): CompressService {
  const perKey = createRateLimiter({
    name: "api-key",
    points: deps.config.compress.ratePerMinute,
    windowSeconds: 60,
    redis: deps.redis,
    logger: deps.logger,
  });
  const authenticate = authenticateApiKey({
    prisma: deps.prisma,
    pepper: deps.config.apiKeyPepper,
    onBackgroundError: (error) => deps.logger.warn({ err: error }, "could not record an API key's last use"),
  });
  // Runners made for tests may only run; the service's own also says when it is full.
  const { runner } = deps as { runner: EngineRunner & Partial<Pick<Runner, "busy">> };
  return {
    perKey,
    authenticate,
    assertRoom() {
      const busy = runner.busy?.();
      if (busy) throw compression.busyRefusal(busy);
    },
    compressFor: (ctx, kind, key, source) => compressForRequest(deps, ctx, kind, key, source),
  };
}

/** The engine's job for an upload: the profile and signatures fields, and for unlock the password field. */
export function engineJob(
  kind: EngineJob["kind"],
  upload: Upload,
  outputPath: string,
): EngineJob & { profile: CompressionProfile } {
  const profile = parseProfile(upload.fields["profile"]);
  const signatures = parseSignatures(upload.fields["signatures"]);
  if (kind === "compress") return { kind, inputPath: upload.path, outputPath, profile, signatures };
  const password = upload.fields["password"];
  if (password === undefined) {
    throw new HttpError(400, "missing_password", "Send the document's password in a field named password.");
  }
  return { kind, inputPath: upload.path, outputPath, password, profile, signatures };
}

/**
 * run → store → succeed for a reserved compression whose upload is at hand; answers the result's
 * body. A failure is thrown for the caller to fail the compression with (so to release it once).
 */
export async function runReserved(
  deps: Pick<CompressDeps, "config" | "prisma" | "storage" | "runner">,
  reserved: Reserved,
  work: { kind: EngineJob["kind"]; upload: Upload; dir: string; origin: string; signal: AbortSignal },
): Promise<CompressionResultBody> {
  const { config } = deps;
  const job = engineJob(work.kind, work.upload, path.join(work.dir, "output.pdf"));
  const result = await compression.run(deps.runner, job, work.signal);
  const output = { path: job.outputPath, uploadedName: work.upload.filename, kind: work.kind };
  const objectName = await compression.store(deps.storage, output);
  const url = await compression.signUrl(
    deps.storage,
    { ...output, objectName },
    { ttlSeconds: config.downloadUrlTtlSeconds, origin: work.origin },
  );
  await compression.succeed(deps.prisma, reserved, {
    profile: job.profile,
    originalSize: work.upload.size,
    compressedSize: result.outputSize,
    objectName,
    ...(result.report ? { report: result.report } : {}),
  });
  const { size } = work.upload;
  return compression.resultBody(size, result.outputSize, url, config.downloadUrlTtlSeconds, result.report);
}

/** The client going away cancels the work (and so the charge), as does the service shutting down. */
function cancellation(ctx: Context, shutdown: AbortSignal | null | undefined) {
  const abort = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  ctx.res.once("close", onClose);
  return {
    clientGone: abort.signal,
    signal: shutdown ? AbortSignal.any([abort.signal, shutdown]) : abort.signal,
    dispose: () => ctx.res.off("close", onClose),
  };
}

async function compressForRequest(
  deps: CompressDeps,
  ctx: Context,
  kind: EngineJob["kind"],
  key: AuthenticatedKey,
  source: UploadSource,
): Promise<CompressionResultBody> {
  let dir = "received" in source ? source.dir : undefined;
  let reserved: Reserved;
  try {
    reserved = await compression.reserve(deps.prisma, key);
  } catch (error) {
    if (dir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const cancel = cancellation(ctx, deps.shutdown);
  try {
    let upload: Upload;
    if ("received" in source) upload = source.received;
    else {
      // Inside the try: a full disk is a failure like any other, and the unit goes back.
      dir = await requestDirectory(deps.config);
      upload = await source.receive(dir);
    }
    const origin = publicOrigin(ctx, deps.config.publicApiBaseUrl);
    const body = await runReserved(deps, reserved, { kind, upload, dir: dir!, origin, signal: cancel.signal });
    ctx.set(compression.quotaHeaders(reserved.limit, reserved.limit - reserved.used, nextMonth()));
    ctx.set("Cache-Control", "no-store");
    return body;
  } catch (caught) {
    const error = deps.shutdown?.aborted && !cancel.clientGone.aborted ? shuttingDown() : caught;
    await failRequest(deps, ctx, reserved, error, cancel.clientGone.aborted);
    throw error;
  } finally {
    cancel.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/** Fails the request's compression (its unit released once), logging why it ended. */
async function failRequest(deps: CompressDeps, ctx: Context, reserved: Reserved, error: unknown, clientGone: boolean) {
  const requestId = ctx.state["requestId"] as string;
  const code =
    error instanceof HttpError ? error.code : error instanceof UploadAborted ? "client_aborted" : "internal_error";
  if (error instanceof UploadAborted || clientGone) {
    deps.logger.info({ requestId }, "client went away during compression");
  } else if (code === "shutting_down") {
    deps.logger.warn({ requestId }, "compression cut off by the shutdown");
  }
  await compression.failOrRetryLater(deps.prisma, reserved, code, deps.logger);
}
