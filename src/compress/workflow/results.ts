// A subscriber's results under their control: each compression is a resource with an id (listed,
// read, deleted), kept no longer than asked. Retention is chosen per request (`retention`, seconds;
// 0: until the first complete download), else by the account's default, and capped by the maximum
// (RESULT_RETENTION_HOURS). When a result goes, by DELETE, by the sweep at its expiry or after its
// first complete download, its objects go from storage first (the result, a job's input, a direct
// upload), then the record says so and forgets the file's name; the record itself stays, as it is
// what was charged.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Readable } from "node:stream";
import type { Config } from "../../config/env.ts";
import { HttpError, retryAfter } from "../../errors.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { Logger } from "../../logger.ts";
import * as compression from "../compression.ts";
import { downloadName } from "../compression.ts";
import { isReportBody } from "../report.ts";
import type { ObjectStorage } from "../storage/storage.ts";
import {
  cancelQueuedJob,
  expiredResults,
  findCompression,
  markDeleted,
  onceResult,
  progressBody,
  uploadsOf,
  type JobProgressBody,
  type CompressionRecord,
} from "./compressions.ts";

export interface ResultDeps {
  prisma: PrismaClient;
  storage: ObjectStorage;
  config: Pick<Config, "resultRetentionHours" | "downloadUrlTtlSeconds" | "apiKeyPepper" | "storage">;
}

/** The longest a result is kept, in seconds: the service's RESULT_RETENTION_HOURS. */
export const maxRetentionSeconds = (config: Pick<Config, "resultRetentionHours">) =>
  Math.round(config.resultRetentionHours * 3600);

/**
 * The retention of a request: its `retention` field (whole seconds; 0: until the first complete
 * download), else the account's default, else the maximum; never more than the maximum.
 */
export function parseRetention(value: string | undefined, accountDefault: number | null | undefined, max: number) {
  if (value === undefined || value === "") return Math.min(accountDefault ?? max, max);
  if (!/^[0-9]{1,12}$/.test(value)) {
    throw new HttpError(
      400,
      "invalid_retention",
      `retention must be a whole number of seconds (0: until the first complete download; at most ${max} are kept); got "${value.slice(0, 40)}"`,
    );
  }
  return Math.min(Number(value), max);
}

// ---- Downloads kept until their first complete read (retention 0) ----

/** Where a result kept until its first download is read: through this service, which sees it end. */
export const ONCE_DOWNLOAD_PREFIX = "/v1/results/";

let processKey: Buffer | undefined;

/**
 * The key of these download addresses: DOWNLOAD_SIGNING_SECRET, else one derived from API_KEY_PEPPER
 * (both shared by every instance), else a key of this process (development: its addresses end with it).
 */
function onceKey(config: ResultDeps["config"]): Buffer {
  const local = config.storage.kind === "local" ? config.storage.signingSecret : null;
  if (local) return Buffer.from(local);
  if (config.apiKeyPepper) return createHmac("sha256", config.apiKeyPepper).update("download-once").digest();
  processKey ??= randomBytes(32);
  return processKey;
}

const onceSignature = (key: Buffer, name: string, expires: string) =>
  createHmac("sha256", key).update(`once\n${name}\n${expires}`).digest("base64url");

/** The address of a result kept until its first complete download, valid ttlSeconds. */
export function onceUrl(deps: Pick<ResultDeps, "config">, objectName: string, ttlSeconds: number, origin: string) {
  const expires = String(Math.floor(Date.now() / 1000) + ttlSeconds);
  const query = new URLSearchParams({ expires, signature: onceSignature(onceKey(deps.config), objectName, expires) });
  return `${origin}${ONCE_DOWNLOAD_PREFIX}${objectName}?${query.toString()}`;
}

/** A stored result's download address: signed by the storage, or this service's own for retention 0. */
export function resultUrl(
  deps: Pick<ResultDeps, "config" | "storage">,
  stored: { objectName: string; uploadedName: string; kind: "compress" | "unlock"; retentionSeconds: number | null },
  url: { ttlSeconds: number; origin: string },
): Promise<string> {
  if (stored.retentionSeconds === 0)
    return Promise.resolve(onceUrl(deps, stored.objectName, url.ttlSeconds, url.origin));
  return compression.signUrl(deps.storage, stored, url);
}

/** A download of a result kept until its first complete read: what to send, and what to do once it is sent. */
export interface OnceDownload {
  size: number;
  stream: Readable;
  downloadName: string;
  /** Called when every byte was written to the client: the result is deleted. */
  completed: () => Promise<void>;
}

/** Why a download-once address is refused (its signature, in constant time; its expiry), or null. */
function onceRefusal(config: ResultDeps["config"], name: string, query: URLSearchParams): "invalid" | "expired" | null {
  const expires = query.get("expires") ?? "";
  const given = Buffer.from(query.get("signature") ?? "");
  const wanted = Buffer.from(onceSignature(onceKey(config), name, expires));
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return "invalid";
  return Number(expires) * 1000 <= Date.now() ? "expired" : null;
}

/**
 * A download-once address of the API's origin (a file_url the service reads itself): the result it
 * names, "invalid" or "expired", or null when the address is not one. Reading it so is not its
 * download: the result stays until the client's own complete download, or its maximum retention.
 */
export function onceObject(
  deps: Pick<ResultDeps, "config">,
  url: URL,
  origin: string,
): { kind: "result"; name: string } | "invalid" | "expired" | null {
  if (url.origin !== new URL(origin).origin || !url.pathname.startsWith(ONCE_DOWNLOAD_PREFIX)) return null;
  const name = url.pathname.slice(ONCE_DOWNLOAD_PREFIX.length);
  return onceRefusal(deps.config, name, url.searchParams) ?? { kind: "result", name };
}

/** Checks a download-once address and opens its result (403 altered or expired, 410 gone). */
export async function openOnce(deps: ResultDeps, name: string, query: URLSearchParams): Promise<OnceDownload> {
  const refused = onceRefusal(deps.config, name, query);
  if (refused === "invalid") throw new HttpError(403, "invalid_signature", "This download address is not valid.");
  if (refused === "expired") {
    throw new HttpError(403, "url_expired", "This download address has expired; read the compression again.");
  }
  const record = await onceResult(deps.prisma, name);
  const opened = record ? await deps.storage.openResult(name) : null;
  if (!record || !opened) throw resultDeleted();
  return {
    ...opened,
    downloadName: downloadName(record.filename ?? record.jobFilename ?? "document.pdf", record.kind),
    completed: async () => {
      await deleteResultNow(deps, { id: record.id, objectName: name }, "download");
    },
  };
}

export const resultDeleted = () =>
  new HttpError(
    410,
    "result_deleted",
    "This result has been deleted (on request, at the end of its retention, or after its first complete download).",
  );

// ---- Deletion ----

/** Deletes a stored result's object, then marks its record; true when this call marked it. */
async function deleteResultNow(
  deps: Pick<ResultDeps, "prisma" | "storage">,
  result: { id: string; objectName: string },
  by: "retention" | "download",
): Promise<boolean> {
  await deps.storage.deleteResult(result.objectName);
  return markDeleted(deps.prisma, result.id, by);
}

/**
 * 404 not_found for an id none of the subscriber's compressions or jobs has (another subscriber's
 * too), naming what the route serves: a job on /v1/jobs/{id}, a compression elsewhere.
 */
export const notFound = (what: "compression" | "job") =>
  new HttpError(404, "not_found", `No ${what} with this id belongs to this API key's subscriber.`);

/**
 * DELETE /v1/compressions/{id} (and /v1/jobs/{id}): the result, a job's input and a direct upload
 * gone from storage, then the record marked and its file name forgotten. A queued job is cancelled
 * (not charged); a running compression is refused (409 compression_running) until it ends. A
 * second delete finds the record marked and answers as the first did; another subscriber's id is 404
 * (its message naming `what`: a job on /v1/jobs/{id}).
 */
export async function deleteCompression(
  deps: ResultDeps,
  subscriberId: string,
  id: string,
  what: "compression" | "job" = "compression",
): Promise<void> {
  const record = await findCompression(deps.prisma, subscriberId, id);
  if (!record) throw notFound(what);
  if (record.deletedAt) return;
  if (record.job?.status === "queued" && (await cancelQueuedJob(deps.prisma, record.id))) {
    await compression.fail(deps.prisma, record, "deleted");
  } else if (record.status === "running" || record.job?.status === "running" || record.job?.status === "queued") {
    throw new HttpError(
      409,
      "compression_running",
      "This compression is running; delete it once it has ended.",
      retryAfter(2),
    );
  }
  await deleteObjects(deps, record);
  await markDeleted(deps.prisma, record.id, "request");
}

/** The compression's objects gone from storage (a storage that cannot be reached: 503, nothing marked). */
async function deleteObjects(deps: ResultDeps, record: CompressionRecord): Promise<void> {
  const uploads = await uploadsOf(deps.prisma, record.id);
  try {
    if (record.objectName) await deps.storage.deleteResult(record.objectName);
    if (record.job) await deps.storage.deleteInput(record.job.inputObject);
    for (const upload of uploads) await deps.storage.deleteInput(upload);
  } catch (error) {
    throw Object.assign(
      new HttpError(
        503,
        "storage_unavailable",
        "The result's storage could not be reached to delete it; it is not marked deleted. Retry shortly.",
        retryAfter(5),
      ),
      { cause: error },
    );
  }
}

/**
 * The sweep: results past their expiry deleted from storage, then marked, `batch` at a time. One
 * that storage refuses to delete stays as it is and is tried at the next sweep; the others go on.
 */
export async function sweepExpiredResults(
  deps: Pick<ResultDeps, "prisma" | "storage">,
  logger: Pick<Logger, "warn">,
  now = new Date(),
  batch = 500,
): Promise<{ deleted: number; failed: number }> {
  let deleted = 0;
  let failed = 0;
  for (const result of await expiredResults(deps.prisma, now, batch)) {
    try {
      if (await deleteResultNow(deps, result, "retention")) deleted++;
    } catch (error) {
      failed++;
      logger.warn(
        { err: error, compressionId: result.id },
        "could not delete an expired result; retrying at the next sweep",
      );
    }
  }
  return { deleted, failed };
}

// ---- The resource ----

export interface CompressionResource {
  id: string;
  object: "compression";
  operation: "compress" | "unlock";
  status: "queued" | "running" | "succeeded" | "failed";
  profile: string;
  job_id: string | null;
  filename: string | null;
  original_size: number | null;
  compressed_size: number | null;
  created_at: string;
  finished_at: string | null;
  retention: number | null;
  expires_at: string | null;
  deleted_at: string | null;
  deleted_by: "request" | "retention" | "download" | null;
  savings_percentage?: number;
  url?: string;
  expires_in?: number;
  report?: unknown;
  error?: { code: string; message: string };
  /** A job's: how far it is (pages done of pages). */
  progress?: JobProgressBody;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;
const size = (value: bigint | null | undefined) => (value === null || value === undefined ? null : Number(value));

/** The compression resource; with `url`, a succeeded result still kept carries a download address signed now. */
export async function compressionResource(
  deps: Pick<ResultDeps, "config" | "storage">,
  record: CompressionRecord,
  url?: { origin: string },
): Promise<CompressionResource> {
  const { job } = record;
  const status = record.status === "running" && job ? job.status : record.status;
  const filename = record.deletedAt ? null : (record.filename ?? (job?.filename || null));
  const original = size(record.originalSize ?? job?.originalSize);
  const compressed = size(record.compressedSize);
  const base: CompressionResource = {
    id: record.id,
    object: "compression",
    operation: record.kind,
    status,
    profile: record.profile,
    job_id: job?.id ?? null,
    filename,
    original_size: original,
    compressed_size: compressed,
    created_at: record.createdAt.toISOString(),
    finished_at: iso(record.finishedAt),
    retention: record.retentionSeconds,
    expires_at: record.deletedAt ? null : iso(record.expiresAt),
    deleted_at: iso(record.deletedAt),
    deleted_by: record.deletedBy,
    ...(job ? { progress: progressBody({ ...job, status }) } : {}),
  };
  if (status === "failed") {
    const code = job?.errorCode ?? record.errorCode ?? "processing_failed";
    return { ...base, error: { code, message: job?.errorMessage ?? "" } };
  }
  if (status !== "succeeded" || original === null || compressed === null) return base;
  const report = isReportBody(record.report) ? { report: record.report } : {};
  const savings = compression.resultBody(original, compressed, "", 0).savings_percentage;
  if (!url || record.deletedAt || !record.objectName) return { ...base, savings_percentage: savings, ...report };
  const ttlSeconds = deps.config.downloadUrlTtlSeconds;
  const signed = await resultUrl(
    deps,
    {
      objectName: record.objectName,
      uploadedName: record.filename ?? job?.filename ?? "document.pdf",
      kind: record.kind,
      retentionSeconds: record.retentionSeconds,
    },
    { ttlSeconds, origin: job?.apiOrigin && !url.origin ? job.apiOrigin : url.origin },
  );
  return { ...base, savings_percentage: savings, url: signed, expires_in: ttlSeconds, ...report };
}

export { findCompression };
