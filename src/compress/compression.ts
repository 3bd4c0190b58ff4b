// The lifecycle of one compression, in one place and one vocabulary, whoever drives it (a request
// to /v1/compress or /v1/unlock, the dashboard's Try it, an asynchronous job, the housekeeping):
//
//   reserve  one quota unit (a conditional UPDATE: 402 when the month's quota is used up) and
//            record the compression (`compressions`, status running), in one transaction: never
//            a unit without its record
//   run      the engine in an isolated process (busy: 503; a refused or failed file: 422)
//   store    the result under a random name, and sign its download URL
//   succeed  the record says succeeded, with sizes and the object: the unit stays used
//   | fail   the record says failed, with the error code, and the unit is released: once, by
//            whichever caller's conditional update claims the running record (the request itself,
//            a job's last attempt, or the housekeeping after a crash), never twice
//
// A unit is charged only while a live process holds its reservation (holds.ts: the boot id and
// the hold recorded with it); succeed and fail are retried through a short database blip, and a
// release the database refused even then is retried in the background (failOrRetryLater).
import type { PrismaClient } from "../generated/prisma/client.ts";
import { nextMonth, reserveQuota } from "../auth/quota.ts";
import { HttpError, retryAfter } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { CompressionProfile } from "../pdf/index.ts";
import type { EngineJob, JobProgress } from "./isolation/protocol.ts";
import type { CompressionReportBody } from "./report.ts";
import { RunnerBusy, type Runner } from "./isolation/runner.ts";
import { newObjectName, type ObjectStorage } from "./storage/storage.ts";
import { BOOT_ID, hold, holdUntil, letGo } from "./holds.ts";

/** Who a compression is charged to: an API key of a subscriber with a monthly quota. */
export interface Chargeable {
  /** The API key's id. */
  id: string;
  subscriberId: string;
  monthlyQuota: number;
}

/** A compression reserved and recorded: its unit is used until it succeeds or is failed. */
export interface Reserved {
  /** The `compressions` record. */
  id: string;
  subscriberId: string;
  /** The month the unit was taken from. */
  month: Date;
  /** Units used this month, this one included, and the month's quota. */
  used: number;
  limit: number;
}

/** What the runner answers the engine's work with. */
export type EngineRunner = Pick<Runner, "run">;

/** The quota headers of the compression API (successes and 402s). */
export function quotaHeaders(limit: number, remaining: number, reset: Date): Record<string, string> {
  return {
    "X-Quota-Limit": String(limit),
    "X-Quota-Remaining": String(Math.max(0, remaining)),
    "X-Quota-Reset": reset.toISOString(),
  };
}

export function quotaExceeded(monthlyQuota: number, reset = nextMonth()): HttpError {
  return new HttpError(
    402,
    "quota_exceeded",
    `The monthly quota of ${monthlyQuota} compressions is used up; it renews at ${reset.toISOString()}.`,
    {
      ...retryAfter((reset.getTime() - Date.now()) / 1000),
      ...quotaHeaders(monthlyQuota, 0, reset),
    },
  );
}

/** Reserves a unit for `key` and records the compression (402 `quota_exceeded` when used up). */
export async function reserve(prisma: PrismaClient, key: Chargeable): Promise<Reserved> {
  // One transaction: the unit and the record that accounts for it exist together or not at all,
  // even when the process dies between the two statements (a failure later gives the unit back
  // through the record: fail below, or the housekeeping for a record left running).
  const reserved = await prisma.$transaction(async (tx) => {
    const reservation = await reserveQuota(tx, key.subscriberId, key.monthlyQuota);
    if (!reservation) throw quotaExceeded(key.monthlyQuota);
    const { month, used, limit } = reservation;
    const record = await tx.compression.create({
      data: {
        subscriberId: key.subscriberId,
        apiKeyId: key.id,
        month,
        profile: "balanced",
        bootId: BOOT_ID,
        heldUntil: holdUntil(),
      },
      select: { id: true },
    });
    return { id: record.id, subscriberId: key.subscriberId, month, used, limit };
  });
  hold(reserved.id);
  return reserved;
}

/** The waits between attempts of a settle call (succeed, fail) through a database blip: ~3.5 s in all. */
export const SETTLE_RETRY_DELAYS_MS = [250, 750, 2_500];

/** Runs a database write, again after each of `delays` while it throws; the last error if none succeeds. */
export async function withRetries<T>(write: () => Promise<T>, delays = SETTLE_RETRY_DELAYS_MS): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const delay = delays[attempt];
      if (delay === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

// Every failure the engine or its process reports is about the file: a 422 with its code, not
// charged. A processing_timeout keeps the runner's message, which states the limit for the file's
// size (a valid large file may meet it on a slow instance: it is not called hostile); a
// processing_failed gets one message whatever the process died of.
const RUNNER_MESSAGES: Partial<Record<string, string>> = {
  processing_failed: "Processing the file exceeded the memory limit or failed; it is too complex or damaged.",
};

/** The 503 of a runner with every slot and queue place taken. */
export const busyRefusal = (busy: RunnerBusy): HttpError =>
  new HttpError(503, "busy", "Every compression slot is taken; retry shortly.", retryAfter(busy.retryAfterSeconds));

/**
 * The engine found more scanned pages than a synchronous call reads with ocr (the job's
 * ocrPageLimit): not the file's fault, and not an answer; the caller queues the file as a job.
 */
export class OcrPastSyncLimit extends Error {
  /** The scanned pages OCR would read. */
  readonly pages: number;
  constructor(pages: number, message: string) {
    super(message);
    this.name = "OcrPastSyncLimit";
    this.pages = pages;
  }
}

/**
 * Runs the engine on a job: its output's size, or the HttpError to answer (503 busy, 422);
 * OcrPastSyncLimit for a job with ocrPageLimit whose document has more scanned pages.
 */
export async function run(
  runner: EngineRunner,
  job: EngineJob,
  signal: AbortSignal,
  onProgress?: (progress: JobProgress) => void,
): Promise<{ outputSize: number; pages: number; report?: CompressionReportBody }> {
  let result;
  try {
    result = await runner.run(job, { signal, ...(onProgress ? { onProgress } : {}) });
  } catch (error) {
    throw error instanceof RunnerBusy ? busyRefusal(error) : error;
  }
  if (result.ok) return result;
  if (result.code === "ocr_page_limit") throw new OcrPastSyncLimit(result.pages ?? 0, result.message);
  throw new HttpError(422, result.code, RUNNER_MESSAGES[result.code] ?? result.message);
}

// eslint-disable-next-line no-control-regex -- control characters are what is being removed
const CONTROL_OR_SLASH = /[\u0000-\u001f\u007f/\\]/g;

/** `report.pdf` → `report-compressed.pdf` (or `-unlocked`), safe as a download name. */
export function downloadName(uploaded: string, kind: EngineJob["kind"]): string {
  const stem =
    uploaded
      .replace(/\.pdf$/i, "")
      .replace(CONTROL_OR_SLASH, "_")
      .slice(0, 150) || "document";
  return `${stem}-${kind === "unlock" ? "unlocked" : "compressed"}.pdf`;
}

/** Stores the engine's output under a random 144-bit name; answers the name. */
export async function store(
  storage: ObjectStorage,
  output: { path: string; uploadedName: string; kind: EngineJob["kind"] },
): Promise<string> {
  const objectName = newObjectName();
  await storage.put(objectName, output.path, resultMeta(output.uploadedName, output.kind));
  return objectName;
}

/** A stored result's download URL, valid ttlSeconds (origin: the API's, for the local storage). */
export function signUrl(
  storage: ObjectStorage,
  stored: { objectName: string; uploadedName: string; kind: EngineJob["kind"] },
  url: { ttlSeconds: number; origin: string },
): Promise<string> {
  const meta = resultMeta(stored.uploadedName, stored.kind);
  return storage.signedUrl(stored.objectName, meta, url.ttlSeconds, url.origin);
}

const resultMeta = (uploadedName: string, kind: EngineJob["kind"]) => ({
  contentType: "application/pdf",
  downloadName: downloadName(uploadedName, kind),
});

export interface Outcome {
  profile: CompressionProfile;
  originalSize: number;
  compressedSize: number;
  objectName: string;
  /** The name the client gave the file (a synchronous compression's: a job's is on its row), for the history. */
  filename?: string;
  /** What the engine changed: kept with the record for the job resource. */
  report?: CompressionReportBody;
  /** What was done: compress (the default) or unlock. */
  kind?: EngineJob["kind"];
  /** Seconds the result is kept (0: until its first complete download); a job's was recorded at acceptance. */
  retentionSeconds?: number;
}

/**
 * How long results are kept at most (RESULT_RETENTION_HOURS, in seconds): the expiry of a result kept
 * until its first download that never comes, and of one recorded before retention existed.
 */
export interface Keeping {
  maxSeconds: number;
}

/**
 * Marks the compression succeeded: its unit stays used. Only a running record is claimed (or one
 * this call already marked, when a retry follows a write whose answer was lost). A request's
 * record the housekeeping released as interrupted while its process was cut off from the database
 * is taken back and charged again: the file was delivered. Otherwise (a job's record, or one
 * failed for another reason) this throws.
 */
export async function succeed(
  prisma: PrismaClient,
  compression: Pick<Reserved, "id">,
  outcome: Outcome,
  keeping: Keeping,
): Promise<{ expiresAt: Date | null }> {
  const mark = () =>
    prisma.compression.updateMany({
      where: {
        id: compression.id,
        OR: [{ status: "running" }, { status: "succeeded", objectName: outcome.objectName }],
      },
      data: { status: "succeeded", ...outcome, finishedAt: new Date() },
    });
  let claimed = await withRetries(mark);
  if (claimed.count !== 1 && (await withRetries(() => takeBackInterrupted(prisma, compression.id)))) {
    claimed = await withRetries(mark);
  }
  letGo(compression.id);
  if (claimed.count !== 1) throw new Error(`compression ${compression.id} was no longer running when it succeeded`);
  return { expiresAt: await withRetries(() => setExpiry(prisma, compression.id, keeping)) };
}

/** The result's expiry, from its retention (0, or none recorded: the maximum) and when it finished. */
async function setExpiry(prisma: PrismaClient, id: string, keeping: Keeping): Promise<Date | null> {
  const [row] = await prisma.$queryRaw<{ expires_at: Date | null }[]>`
    UPDATE compressions
       SET expires_at = finished_at + make_interval(secs => CASE WHEN coalesce(retention_seconds, 0) = 0
                                                                 THEN ${keeping.maxSeconds}::int
                                                                 ELSE least(retention_seconds, ${keeping.maxSeconds}::int) END)
     WHERE id = ${id}::uuid AND expires_at IS NULL
     RETURNING expires_at`;
  return row?.expires_at ?? null;
}

/** A job-less record released as interrupted: running again, its unit charged again. True if taken. */
async function takeBackInterrupted(prisma: PrismaClient, id: string): Promise<boolean> {
  const [row] = await prisma.$queryRaw<{ taken: number }[]>`
    WITH taken AS (
      UPDATE compressions c SET status = 'running', error_code = NULL, finished_at = NULL
       WHERE c.id = ${id}::uuid AND c.status = 'failed' AND c.error_code = 'interrupted'
         AND NOT EXISTS (SELECT 1 FROM compression_jobs j WHERE j.compression_id = c.id)
       RETURNING c.subscriber_id, c.month
    ), charged AS (
      UPDATE quota_usage q SET used = q.used + 1
        FROM taken t
       WHERE q.subscriber_id = t.subscriber_id AND q.month = t.month
       RETURNING 1
    )
    SELECT count(*)::int AS taken FROM taken`;
  return row?.taken === 1;
}

/**
 * Marks a running compression failed with `errorCode` and releases its unit, once: only the caller
 * whose update claimed the record releases it. One statement, so a process that dies in between
 * cannot leave the record failed and the unit still used. False when it was not running (already
 * settled).
 */
export async function fail(
  prisma: PrismaClient,
  compression: Pick<Reserved, "id">,
  errorCode: string,
): Promise<boolean> {
  const claimed = await withRetries(() => failOnce(prisma, compression.id, errorCode));
  letGo(compression.id);
  return claimed;
}

async function failOnce(prisma: PrismaClient, id: string, errorCode: string): Promise<boolean> {
  const [row] = await prisma.$queryRaw<{ claimed: number }[]>`
    WITH claimed AS (
      UPDATE compressions SET status = 'failed', error_code = ${errorCode}, finished_at = now()
       WHERE id = ${id}::uuid AND status = 'running'
       RETURNING subscriber_id, month
    ), released AS (
      UPDATE quota_usage q SET used = q.used - 1
        FROM claimed c
       WHERE q.subscriber_id = c.subscriber_id AND q.month = c.month AND q.used > 0
       RETURNING 1
    )
    SELECT count(*)::int AS claimed FROM claimed`;
  return row?.claimed === 1;
}

/** The waits of a release retried in the background (about 4 minutes in all, longer than a hold). */
const BACKGROUND_RETRY_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000];

/**
 * fail, for a caller that must answer now (a request, whose answer should not wait out a database
 * outage): tried once, and when the database refuses it, retried in the background while the caller
 * answers, the reservation held meanwhile. If the database stays away longer than that, the hold
 * lapses and the housekeeping releases the unit.
 */
export async function failOrRetryLater(
  prisma: PrismaClient,
  compression: Pick<Reserved, "id">,
  errorCode: string,
  logger: Logger,
): Promise<void> {
  try {
    await failOnce(prisma, compression.id, errorCode);
    letGo(compression.id);
  } catch (error) {
    hold(compression.id);
    logger.warn({ err: error, recordId: compression.id }, "could not release a quota reservation; retrying");
    void withRetries(() => failOnce(prisma, compression.id, errorCode), BACKGROUND_RETRY_DELAYS_MS).then(
      () => letGo(compression.id),
      (failure: unknown) => {
        letGo(compression.id);
        logger.error({ err: failure, recordId: compression.id }, "could not release a quota reservation");
      },
    );
  }
}

/** The compression result of the API: sizes in bytes, savings in percent (two decimals). */
export interface CompressionResultBody {
  /** The compression's id: GET or DELETE /v1/compressions/{id}. */
  id?: string;
  success: true;
  original_size: number;
  compressed_size: number;
  savings_percentage: number;
  url: string;
  expires_in: number;
  /** What the engine changed (report.ts; docs/compression-report.md); absent for results made before it. */
  report?: CompressionReportBody;
  /** Seconds the result is kept (0: until its first complete download). */
  retention?: number;
  /** When the result is deleted at the latest. */
  expires_at?: string;
}

export function resultBody(
  originalSize: number,
  compressedSize: number,
  url: string,
  expiresIn: number,
  report?: CompressionReportBody,
) {
  return {
    success: true,
    original_size: originalSize,
    compressed_size: compressedSize,
    savings_percentage: Math.round((1 - compressedSize / originalSize) * 10_000) / 100,
    url,
    expires_in: expiresIn,
    ...(report ? { report } : {}),
  } satisfies CompressionResultBody;
}
