// Asynchronous compression and direct upload over HTTP:
//   POST /v1/compress with `Prefer: respond-async` (RFC 7240): 202 Accepted, `Location: /v1/jobs/{id}`
//     and the job resource, as soon as the upload is stored; the quota unit is reserved then
//   POST /v1/compress with a JSON body {"upload_id", "profile", "callback_url", …options}: the same from a
//     direct upload, synchronous without the preference
//   GET  /v1/jobs/{id}: the job, to the subscriber who made it only (anyone else: 404)
//   POST /v1/uploads: a direct upload's short-lived signed PUT URL
//   PUT  /v1/uploads/content/{name}: the embedded default's signed upload path (Cloud Storage
//     takes the PUT itself in production)
//   GET  /v1/webhook-secret, POST /v1/webhook-secret (rotate): the key webhooks are signed with
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ParameterizedContext } from "koa";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { AuthenticatedKey } from "../../auth/authenticate.ts";
import { usedThisMonth } from "../../auth/quota.ts";
import { HttpError, isStorageUnavailable, storageUnavailable } from "../../errors.ts";
import { expectsContinue } from "../../http/continue.ts";
import { publicOrigin } from "../../http/origin.ts";
import { withRequestInfo } from "../../http/request-info.ts";
import { setHeaders } from "../../http/rate-limit.ts";
import type { AppState } from "../../http/state.ts";
import { quotaExceeded } from "../compression.ts";
import { jobResource, WITH_REPORT, type JobResource } from "../async-jobs/resource.ts";
import type { LocalStorage } from "../storage/local.ts";
import { newObjectName } from "../storage/storage.ts";
import { recordBodyDigest } from "../workflow/body-digest.ts";
import { UploadAborted } from "../workflow/failure.ts";
import { OPTION_FIELDS } from "../workflow/options.ts";
import { parseJobOptions, type Answer, type CompressDeps, type CompressService } from "../workflow/service.ts";
import { tooLarge } from "../workflow/upload.ts";
import { isBodyOf, readBody } from "../../http/read-body.ts";

/** ctx.state of the routes behind the key's authentication, which only go on with a key. */
export interface KeyedState extends AppState {
  apiKey: AuthenticatedKey;
}
export type KeyedContext = ParameterizedContext<KeyedState>;

/** What a job takes besides its file (multipart) or upload_id (JSON). */
export const JOB_FIELDS = [...OPTION_FIELDS, "callback_url"] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// The %PDF- header may follow a little junk (ISO 32000: within the first 1024 bytes).
const SNIFF_BYTES = 1024;
const JSON_BODY_MAX = 16 * 1024;

/** True when the client asked for `Prefer: respond-async` (RFC 7240, any of its preferences). */
export function prefersAsync(ctx: KeyedContext): boolean {
  return ctx
    .get("Prefer")
    .split(",")
    .some((preference) => /^\s*respond-async\s*(;|=|$)/i.test(preference));
}

/** Answers the service's answer: its body, with its headers. */
export function answer<T>(ctx: KeyedContext, answered: Answer<T>): void {
  setHeaders(ctx, answered.headers);
  ctx.body = answered.body;
}

/** Answers a queued job: 202 with its Location and Preference-Applied. */
export function answerJob(ctx: KeyedContext, queued: Answer<JobResource>): void {
  ctx.status = 202;
  ctx.set("Location", `/v1/jobs/${queued.body.id}`);
  ctx.set("Preference-Applied", "respond-async");
  answer(ctx, queued);
}

const notFound = () => new HttpError(404, "not_found", "No job with this id belongs to this API key's subscriber.");

/** GET /v1/jobs/{id}: the job, to its subscriber only. */
export async function getJob(deps: CompressDeps, ctx: KeyedContext, id: string): Promise<void> {
  const job = UUID.test(id)
    ? await deps.prisma.compressionJob.findFirst({
        where: { id, subscriberId: ctx.state.apiKey.subscriberId },
        include: WITH_REPORT,
      })
    : null;
  if (!job) throw notFound();
  const origin = publicOrigin(ctx, deps.config.publicApiBaseUrl);
  ctx.set("Cache-Control", "no-store");
  if (job.status === "queued" || job.status === "running") ctx.set("Retry-After", "2");
  ctx.body = await jobResource(job, deps.storage, { ttlSeconds: deps.config.downloadUrlTtlSeconds, origin });
}

/** Reads a small JSON object body (400 invalid_json when it is not one). */
export async function readJsonObject(ctx: KeyedContext): Promise<Record<string, unknown>> {
  const body = await readBody(ctx.req, JSON_BODY_MAX, jsonTooLarge);
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    throw new HttpError(400, "invalid_json", "The body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "invalid_json", "The body must be a JSON object.");
  }
  recordBodyDigest(ctx.req, { fields: value as Record<string, unknown> });
  return value as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string") throw new HttpError(400, `invalid_${name}`, `${name} must be a string.`);
  return value;
}

/**
 * A JSON member as the form field of its name: a string as it is, a boolean or a number (grayscale:
 * true, target_size: 600000) as its text, which the same parsers as a form's then check; null is absent.
 */
function formValue(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  throw new HttpError(400, `invalid_${name}`, `${name} must be a string, a number or true or false.`);
}

/** The JSON body of a compression from a direct upload: its upload_id and the job's fields. */
async function readDirectUploadRequest(ctx: KeyedContext) {
  const body = await readJsonObject(ctx);
  const unknown = Object.keys(body).filter((name) => !["upload_id", ...JOB_FIELDS].includes(name));
  if (unknown.length > 0) {
    throw new HttpError(
      400,
      "unexpected_field",
      `Unexpected field "${unknown[0]}"; send upload_id, ${JOB_FIELDS.join(", ")}.`,
    );
  }
  const uploadId = stringField(body, "upload_id", true)!;
  const fields = Object.fromEntries(JOB_FIELDS.map((name) => [name, formValue(body, name)]));
  return { uploadId, fields };
}

/**
 * POST /v1/compress with {"upload_id", "profile"?, "callback_url"?, …options}: the direct upload checked
 * (its owner, 300 MB, %PDF-) and taken, then a job (Prefer: respond-async) or a synchronous
 * compression, both through the service as for a multipart upload.
 */
export async function compressDirectUpload(
  deps: CompressDeps,
  service: CompressService,
  ctx: KeyedContext,
): Promise<void> {
  const key = ctx.state.apiKey;
  const { uploadId, fields } = await readDirectUploadRequest(ctx);
  const { callbackUrl, ...options } = parseJobOptions(deps.config, fields);
  const upload = await takeDirectUpload(deps, key, uploadId);
  const stored = { objectName: upload.objectName, filename: upload.filename, size: upload.size, options };
  const async = prefersAsync(ctx);
  try {
    await withRequestInfo(ctx, deps.config.publicApiBaseUrl, async (request) => {
      if (async) answerJob(ctx, await service.enqueue(request, key, { stored: { ...stored, callbackUrl } }));
      else answer(ctx, await service.compress(request, key, "compress", { stored }));
    });
  } catch (error) {
    // Not taken after all: the client may use the upload again (a job keeps it).
    await deps.prisma.directUpload.update({ where: { id: upload.id }, data: { usedAt: null } });
    throw error;
  }
  if (!async) await deps.storage.deleteInput(upload.objectName).catch(() => undefined);
}

interface TakenUpload {
  id: string;
  objectName: string;
  filename: string;
  size: number;
}

const uploadUsed = () => new HttpError(409, "upload_used", "This upload was already compressed.");

const uploadNotFound = () =>
  new HttpError(404, "upload_not_found", "No direct upload with this id belongs to this API key's subscriber.");

/** POST /v1/uploads' body: a JSON object, or nothing (an empty body is `{}`). */
const jsonTooLarge = () => new HttpError(413, "body_too_large", "A JSON body may carry at most 16 KiB.");

export async function readOptionalJson(ctx: KeyedContext): Promise<Record<string, unknown>> {
  // A body announced by its length, by chunks (HTTP/1.1), or by a JSON type (HTTP/2 frames it).
  const length = ctx.get("Content-Length");
  const announced = length
    ? Number(length) > 0
    : Boolean(ctx.get("Transfer-Encoding")) || isBodyOf(ctx.req, "application/json");
  if (announced) return readJsonObject(ctx);
  recordBodyDigest(ctx.req, { fields: {} });
  return {};
}

/** Checks a direct upload and marks it taken (once: a second request for it gets 409). */
async function takeDirectUpload(deps: CompressDeps, key: AuthenticatedKey, uploadId: string): Promise<TakenUpload> {
  const row = UUID.test(uploadId)
    ? await deps.prisma.directUpload.findFirst({ where: { id: uploadId, subscriberId: key.subscriberId } })
    : null;
  if (!row) throw uploadNotFound();
  // Before the file: a used upload's file is gone (or its job's), which is not "incomplete".
  if (row.usedAt) throw uploadUsed();
  const info = await deps.storage.inputInfo(row.objectName, SNIFF_BYTES);
  if (!info) throw new HttpError(409, "upload_incomplete", "Nothing has been uploaded to this upload's URL yet.");
  if (info.size > deps.config.compress.maxUploadBytes) throw tooLarge(deps.config.compress.maxUploadBytes);
  if (info.size === 0) throw new HttpError(422, "not_a_pdf", "The file is empty.");
  if (info.head.indexOf("%PDF-") < 0) {
    throw new HttpError(422, "not_a_pdf", "The file is not a PDF: it does not start with a %PDF- header.");
  }
  const taken = await deps.prisma.directUpload.updateMany({
    where: { id: row.id, usedAt: null },
    data: { usedAt: new Date() },
  });
  if (taken.count !== 1) throw uploadUsed();
  return { id: row.id, objectName: row.objectName, filename: row.filename, size: info.size };
}

/**
 * POST /v1/uploads: a direct upload and its signed PUT URL, valid UPLOAD_URL_TTL_SECONDS. Refused
 * (402) when the month's quota is used up: the upload could not be compressed.
 */
export async function createDirectUpload(
  deps: Pick<CompressDeps, "prisma" | "config" | "storage">,
  ctx: KeyedContext,
): Promise<void> {
  const key = ctx.state.apiKey;
  if ((await usedThisMonth(deps.prisma, key.subscriberId)) >= key.monthlyQuota) {
    throw quotaExceeded(key.monthlyQuota);
  }
  const body = await readOptionalJson(ctx);
  const filename = stringField(body, "filename", false) ?? "document.pdf";
  if (filename.length > 255) throw new HttpError(400, "invalid_filename", "filename is too long.");
  const { maxUploadBytes } = deps.config.compress;
  const ttl = deps.config.jobs.uploadUrlTtlSeconds;
  const objectName = newObjectName();
  const expiresAt = new Date(Date.now() + ttl * 1000);
  const row = await deps.prisma.directUpload.create({
    data: {
      subscriberId: key.subscriberId,
      apiKeyId: key.id,
      objectName,
      filename: path.basename(filename),
      expiresAt,
    },
  });
  const signed = await deps.storage.signedUploadUrl(
    objectName,
    { maxBytes: maxUploadBytes, expiresInSeconds: ttl },
    publicOrigin(ctx, deps.config.publicApiBaseUrl),
  );
  ctx.status = 201;
  ctx.set("Cache-Control", "no-store");
  ctx.body = {
    upload_id: row.id,
    upload_url: signed.url,
    method: "PUT",
    headers: signed.headers,
    max_bytes: maxUploadBytes,
    expires_at: expiresAt.toISOString(),
  };
}

const uploadUrlExpired = () =>
  new HttpError(403, "url_expired", "This upload address has expired; ask POST /v1/uploads for another.");

/** A direct upload's address takes writes only while its upload is unused (and not yet swept). */
async function checkUploadOpen(prisma: PrismaClient, objectName: string): Promise<void> {
  const row = await prisma.directUpload.findUnique({ where: { objectName }, select: { usedAt: true } });
  if (!row) throw uploadUrlExpired();
  if (row.usedAt) throw uploadUsed();
}

/**
 * PUT to the local signed upload path: the body streamed to the inputs directory under the
 * signed size limit, refused (and removed) past it or without %PDF- in its first 1024 bytes, and
 * refused once the upload was used (409 upload_used) or swept (403 url_expired).
 */
export async function receiveDirectUpload(
  local: LocalStorage,
  prisma: PrismaClient,
  ctx: ParameterizedContext<AppState>,
  name: string,
): Promise<void> {
  const verdict = local.verifyUpload(name, new URLSearchParams(ctx.querystring));
  if (!verdict.ok) {
    throw verdict.reason === "expired"
      ? uploadUrlExpired()
      : new HttpError(403, "invalid_signature", "This upload address is not valid.");
  }
  if (Number(ctx.get("Content-Length")) > verdict.maxBytes) throw tooLarge(verdict.maxBytes);
  await checkUploadOpen(prisma, name);
  if (expectsContinue(ctx.req)) ctx.res.writeContinue();
  const part = verdict.partial;
  let size = 0;
  let head = Buffer.alloc(0);
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > verdict.maxBytes) return done(tooLarge(verdict.maxBytes));
      if (head.length < SNIFF_BYTES) {
        head = Buffer.concat([head, chunk]).subarray(0, SNIFF_BYTES);
        if (head.length >= SNIFF_BYTES && head.indexOf("%PDF-") < 0) return done(notPdf());
      }
      done(null, chunk);
    },
  });
  try {
    await pipeline(ctx.req, check, createWriteStream(part, { flags: "wx", mode: 0o600 }));
    if (size === 0 || head.indexOf("%PDF-") < 0) throw notPdf();
    await checkUploadOpen(prisma, name); // used while this body was on its way
    await rename(part, verdict.file);
  } catch (error) {
    await rm(part, { force: true });
    if (error instanceof HttpError) throw error;
    throw isStorageUnavailable(error) ? storageUnavailable() : new UploadAborted();
  }
  ctx.status = 200;
  ctx.set("Cache-Control", "no-store");
  ctx.body = { size };
}

const notPdf = () => new HttpError(422, "not_a_pdf", "The file is not a PDF: it does not start with a %PDF- header.");
