// Asynchronous compression and direct upload over HTTP:
//   POST /v1/compress with `Prefer: respond-async` (RFC 7240): 202 Accepted, `Location: /v1/jobs/{id}`
//     and the job resource, as soon as the upload is stored; the quota unit is reserved then
//   POST /v1/compress with a JSON body {"upload_id", "profile", "callback_url"}: the same from a
//     direct upload, synchronous without the preference
//   GET  /v1/jobs/{id}: the job, to the subscriber who made it only (anyone else: 404)
//   POST /v1/uploads: a direct upload's short-lived signed PUT URL
//   PUT  /v1/uploads/content/{name}: the embedded default's signed upload path (Cloud Storage
//     takes the PUT itself in production)
//   GET  /v1/webhook-secret, POST /v1/webhook-secret (rotate): the key webhooks are signed with
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Context } from "koa";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { AuthenticatedKey } from "../../auth/authenticate.ts";
import { usedThisMonth } from "../../auth/quota.ts";
import { HttpError } from "../../errors.ts";
import { publicOrigin } from "../../http/origin.ts";
import * as compression from "../compression.ts";
import type { Reserved } from "../compression.ts";
import * as queue from "../async-jobs/queue.ts";
import { jobResource, WITH_REPORT } from "../async-jobs/resource.ts";
import { checkCallbackUrl } from "../async-jobs/webhooks.ts";
import type { LocalStorage } from "../storage/local.ts";
import {
  OPTION_FIELDS,
  parseProfile,
  parseSignatures,
  requestDirectory,
  type CompressDeps,
  type CompressService,
} from "./service.ts";
import { tooLarge, UploadAborted, type Upload } from "./upload.ts";

export interface JobDeps extends CompressDeps {
  /** Called when a job was queued here: the instance's worker looks for it at once. */
  onJobQueued?: () => void;
}

/** What a job takes besides its file (multipart) or upload_id (JSON). */
export const JOB_FIELDS = [...OPTION_FIELDS, "callback_url"] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// The %PDF- header may follow a little junk (ISO 32000: within the first 1024 bytes).
const SNIFF_BYTES = 1024;
const JSON_BODY_MAX = 16 * 1024;

/** True when the client asked for `Prefer: respond-async` (RFC 7240, any of its preferences). */
export function prefersAsync(ctx: Context): boolean {
  return ctx
    .get("Prefer")
    .split(",")
    .some((preference) => /^\s*respond-async\s*(;|=|$)/i.test(preference));
}

/** A path parameter of the router's match (Koa's own Context does not type them). */
const routeParam = (ctx: Context, name: string): string =>
  (ctx as Context & { params?: Record<string, string | undefined> }).params?.[name] ?? "";

const notFound = () => new HttpError(404, "not_found", "No job with this id belongs to this API key's subscriber.");

export async function getJob(deps: JobDeps, ctx: Context, key: AuthenticatedKey): Promise<void> {
  const id = routeParam(ctx, "id");
  const job = UUID.test(id)
    ? await deps.prisma.compressionJob.findFirst({
        where: { id, subscriberId: key.subscriberId },
        include: WITH_REPORT,
      })
    : null;
  if (!job) throw notFound();
  const origin = publicOrigin(ctx, deps.config.publicApiBaseUrl);
  ctx.set("Cache-Control", "no-store");
  if (job.status === "queued" || job.status === "running") ctx.set("Retry-After", "2");
  ctx.body = await jobResource(job, deps.storage, { ttlSeconds: deps.config.downloadUrlTtlSeconds, origin });
}

/**
 * Queues the job of a reserved compression whose input is stored, and answers the 202: Location,
 * Preference-Applied and the queued resource.
 */
async function enqueueAndAnswer(
  deps: JobDeps,
  ctx: Context,
  key: AuthenticatedKey,
  reserved: Reserved,
  input: { objectName: string; filename: string; size: number },
  options: ReturnType<typeof jobOptions>,
): Promise<void> {
  const { id } = await queue.enqueue(deps.prisma, reserved, {
    ...options,
    apiKeyId: key.id,
    inputObject: input.objectName,
    filename: input.filename,
    originalSize: input.size,
    apiOrigin: publicOrigin(ctx, deps.config.publicApiBaseUrl),
    maxAttempts: deps.config.jobs.maxAttempts,
  });
  const job = await deps.prisma.compressionJob.findUniqueOrThrow({ where: { id } });
  deps.onJobQueued?.();
  ctx.status = 202;
  ctx.set("Location", `/v1/jobs/${job.id}`);
  ctx.set("Preference-Applied", "respond-async");
  ctx.set("Cache-Control", "no-store");
  ctx.body = await jobResource(job, deps.storage, { ttlSeconds: deps.config.downloadUrlTtlSeconds });
}

/**
 * Accepts a multipart upload as a job: the unit reserved before the body is read (402 first, as
 * for the synchronous call), the file received and stored, the job queued; on any failure the
 * compression fails and its unit is released once.
 */
export async function acceptUploadAsJob(
  deps: JobDeps,
  ctx: Context,
  key: AuthenticatedKey,
  receive: (dir: string) => Promise<Upload>,
): Promise<void> {
  const reserved = await compression.reserve(deps.prisma, key);
  let dir: string | undefined;
  let inputObject: string | undefined;
  try {
    dir = await requestDirectory(deps.config);
    const upload = await receive(dir);
    const options = jobOptions(deps, upload.fields);
    inputObject = newInputName();
    await deps.storage.putInput(inputObject, upload.path);
    const input = { objectName: inputObject, filename: upload.filename, size: upload.size };
    await enqueueAndAnswer(deps, ctx, key, reserved, input, options);
  } catch (error) {
    if (inputObject) await deps.storage.deleteInput(inputObject).catch(() => undefined);
    await failAcceptance(deps, reserved, error);
    throw error;
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

async function failAcceptance(deps: JobDeps, reserved: Reserved, error: unknown) {
  const code =
    error instanceof HttpError ? error.code : error instanceof UploadAborted ? "client_aborted" : "internal_error";
  await compression.failOrRetryLater(deps.prisma, reserved, code, deps.logger);
}

/** A job's options from its form fields or JSON body: profile, signatures, callback_url. */
function jobOptions(deps: JobDeps, fields: Partial<Record<string, string>>) {
  const callbackUrl = fields["callback_url"];
  return {
    profile: parseProfile(fields["profile"]),
    signatures: parseSignatures(fields["signatures"]) === "remove" ? ("remove" as const) : null,
    callbackUrl:
      callbackUrl === undefined || callbackUrl === ""
        ? null
        : checkCallbackUrl(callbackUrl, deps.config.webhookAllowPrivate),
  };
}

const newInputName = () => `${randomBytes(18).toString("base64url")}.pdf`;

/** Reads a small JSON object body (400 invalid_json when it is not one). */
async function readJsonObject(ctx: Context): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > JSON_BODY_MAX) throw new HttpError(413, "body_too_large", "A JSON body may carry at most 16 KiB.");
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new HttpError(400, "invalid_json", "The body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "invalid_json", "The body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string") throw new HttpError(400, `invalid_${name}`, `${name} must be a string.`);
  return value;
}

/**
 * POST /v1/compress with {"upload_id", "profile"?, "callback_url"?}: the direct upload checked
 * (its owner, 300 MB, %PDF-) and taken, then a job (Prefer: respond-async) or a synchronous
 * compression through the same service as a multipart upload.
 */
export async function compressDirectUpload(
  deps: JobDeps,
  service: CompressService,
  ctx: Context,
  key: AuthenticatedKey,
): Promise<void> {
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
  const fields = Object.fromEntries(JOB_FIELDS.map((name) => [name, stringField(body, name, false)]));
  const options = jobOptions(deps, fields);
  const upload = await takeDirectUpload(deps, key, uploadId);
  const async = prefersAsync(ctx);
  try {
    if (async) await acceptDirectUploadAsJob(deps, ctx, key, upload, options);
    else await compressDirectUploadNow(deps, service, ctx, key, upload, options);
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

/** Checks a direct upload and marks it taken (once: a second request for it gets 409). */
async function takeDirectUpload(deps: JobDeps, key: AuthenticatedKey, uploadId: string): Promise<TakenUpload> {
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

async function acceptDirectUploadAsJob(
  deps: JobDeps,
  ctx: Context,
  key: AuthenticatedKey,
  upload: TakenUpload,
  options: ReturnType<typeof jobOptions>,
): Promise<void> {
  const reserved = await compression.reserve(deps.prisma, key);
  try {
    await enqueueAndAnswer(deps, ctx, key, reserved, upload, options);
  } catch (error) {
    await failAcceptance(deps, reserved, error);
    throw error;
  }
}

async function compressDirectUploadNow(
  deps: JobDeps,
  service: CompressService,
  ctx: Context,
  key: AuthenticatedKey,
  upload: TakenUpload,
  options: ReturnType<typeof jobOptions>,
): Promise<void> {
  const dir = await requestDirectory(deps.config);
  try {
    const file = path.join(dir, "upload.pdf");
    await deps.storage.fetchInput(upload.objectName, file);
    const fields = { profile: options.profile, ...(options.signatures ? { signatures: options.signatures } : {}) };
    const received = { path: file, size: upload.size, filename: upload.filename, fields };
    ctx.body = await service.compressFor(ctx, "compress", key, { received, dir });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * POST /v1/uploads: a direct upload and its signed PUT URL, valid UPLOAD_URL_TTL_SECONDS. Refused
 * (402) when the month's quota is used up: the upload could not be compressed.
 */
export async function createDirectUpload(deps: JobDeps, ctx: Context, key: AuthenticatedKey): Promise<void> {
  if ((await usedThisMonth(deps.prisma, key.subscriberId)) >= key.monthlyQuota) {
    throw compression.quotaExceeded(key.monthlyQuota);
  }
  const body = ctx.get("Content-Length") && Number(ctx.get("Content-Length")) > 0 ? await readJsonObject(ctx) : {};
  const filename = stringField(body, "filename", false) ?? "document.pdf";
  if (filename.length > 255) throw new HttpError(400, "invalid_filename", "filename is too long.");
  const { maxUploadBytes } = deps.config.compress;
  const ttl = deps.config.jobs.uploadUrlTtlSeconds;
  const objectName = newInputName();
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
  ctx: Context,
  sendContinue: () => void,
): Promise<void> {
  const name = routeParam(ctx, "name");
  const verdict = local.verifyUpload(name, new URLSearchParams(ctx.querystring));
  if (!verdict.ok) {
    throw verdict.reason === "expired"
      ? uploadUrlExpired()
      : new HttpError(403, "invalid_signature", "This upload address is not valid.");
  }
  if (Number(ctx.get("Content-Length")) > verdict.maxBytes) throw tooLarge(verdict.maxBytes);
  await checkUploadOpen(prisma, name);
  sendContinue();
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
    throw error instanceof HttpError ? error : new UploadAborted();
  }
  ctx.status = 200;
  ctx.set("Cache-Control", "no-store");
  ctx.body = { size };
}

const notPdf = () => new HttpError(422, "not_a_pdf", "The file is not a PDF: it does not start with a %PDF- header.");
