// The queue of asynchronous compressions: rows of `compression_jobs` in the service's own
// database, so a job outlives the instance that accepted it, and any instance's worker may run it.
//
// Why not a queue library (docs/async-jobs.md): graphile-worker needs a `pg` pool and a LISTEN
// connection the embedded PGlite cannot give; pg-boss does run over PGlite through its executeSql
// adapter, but keeps its own schema and migrations outside prisma/migrations, and a job's state
// would live apart from the compression record its writes must be fenced with. The queue needs three
// statements, written here once for both databases:
//   claim    one UPDATE whose subquery takes the oldest due job FOR UPDATE SKIP LOCKED: two
//            workers never take one row, and neither waits for the other's lock
//   lease    a claimed job carries locked_by and locked_until; its worker renews the lease while
//            it runs, so only a worker that died (or lost its database) lets it pass, and the
//            next claim takes the job over with attempts + 1; a worker that finds its lease gone
//            stops. Past max_attempts the job fails (interrupted) and its unit is released.
//   finish   every write after the claim is fenced by (locked_by, attempts): a worker whose job
//            was taken over cannot finish it.
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { CompressionProfile } from "../../pdf/index.ts";
import type { Reserved } from "../compression.ts";
import { jobColumns, optionsOfJob, type CompressionOptions } from "../workflow/options.ts";

/** What a job is accepted with. */
export interface NewJob {
  apiKeyId: string;
  /** Kept in the job's columns (options.ts jobColumns). */
  options: CompressionOptions;
  inputObject: string;
  filename: string;
  originalSize: number;
  callbackUrl: string | null;
  apiOrigin: string;
  maxAttempts: number;
}

/** A job as its worker holds it. */
export interface ClaimedJob extends Omit<NewJob, "apiKeyId"> {
  id: string;
  compressionId: string;
  subscriberId: string;
  /** The month of its compression's quota unit. */
  month: Date;
  compressionStatus: "running" | "succeeded" | "failed";
  attempts: number;
  lockedBy: string;
}

/** Queues the job of a reserved compression. */
export async function enqueue(prisma: PrismaClient, reserved: Reserved, job: NewJob): Promise<{ id: string }> {
  const { options, ...columns } = job;
  return prisma.compressionJob.create({
    data: { ...columns, ...jobColumns(options), subscriberId: reserved.subscriberId, compressionId: reserved.id },
    select: { id: true },
  });
}

interface ClaimRow {
  id: string;
  compression_id: string;
  subscriber_id: string;
  month: Date;
  compression_status: ClaimedJob["compressionStatus"];
  profile: CompressionProfile;
  input_object: string;
  filename: string;
  original_size: bigint | number;
  callback_url: string | null;
  signatures: string | null;
  grayscale: boolean;
  max_image_ppi: number | null;
  remove_metadata: boolean;
  target_size: bigint | number | null;
  linearize: boolean;
  ocr: boolean;
  ocr_languages: string | null;
  api_origin: string;
  attempts: number;
  max_attempts: number;
  locked_by: string;
}

/** Takes the oldest due job (queued, or running under a lease that has passed), or null. */
export async function claim(prisma: PrismaClient, workerId: string, leaseMs: number): Promise<ClaimedJob | null> {
  const rows = await prisma.$queryRaw<ClaimRow[]>`
    UPDATE compression_jobs AS j
    SET status = 'running', attempts = j.attempts + 1, locked_by = ${workerId},
        -- A new attempt starts its progress again: the engine counts the pages once it opens the file.
        pages_done = 0, pages_total = NULL,
        locked_until = now() + make_interval(secs => ${leaseMs / 1000}::float8),
        started_at = coalesce(j.started_at, now())
    FROM compressions AS c
    WHERE c.id = j.compression_id AND j.id = (
      SELECT id FROM compression_jobs
      WHERE (status = 'queued' AND run_after <= now()) OR (status = 'running' AND locked_until < now())
      ORDER BY run_after, id
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
    RETURNING j.id, j.compression_id, j.subscriber_id, c.month, c.status::text AS compression_status,
      j.profile::text AS profile, j.input_object, j.filename, j.original_size, j.callback_url, j.signatures, j.api_origin,
      j.grayscale, j.max_image_ppi, j.remove_metadata, j.target_size, j.linearize, j.ocr, j.ocr_languages, j.attempts, j.max_attempts, j.locked_by`;
  const [row] = rows;
  if (!row) return null;
  return {
    id: row.id,
    compressionId: row.compression_id,
    subscriberId: row.subscriber_id,
    month: new Date(row.month),
    compressionStatus: row.compression_status,
    options: optionsOfJob({
      ...row,
      maxImagePpi: row.max_image_ppi,
      removeMetadata: row.remove_metadata,
      targetSize: row.target_size,
      ocrLanguages: row.ocr_languages,
    }),
    inputObject: row.input_object,
    filename: row.filename,
    originalSize: Number(row.original_size),
    callbackUrl: row.callback_url,
    apiOrigin: row.api_origin,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    lockedBy: row.locked_by,
  };
}

/** The fence of every write after the claim: still this worker's, in this attempt. */
const held = (job: ClaimedJob) => ({
  id: job.id,
  status: "running" as const,
  lockedBy: job.lockedBy,
  attempts: job.attempts,
});

/** Extends the job's lease; false when it is no longer this worker's (taken over, or ended). */
export async function renewLease(prisma: PrismaClient, job: ClaimedJob, leaseMs: number): Promise<boolean> {
  const renewed = await prisma.compressionJob.updateMany({
    where: held(job),
    data: { lockedUntil: new Date(Date.now() + leaseMs) },
  });
  return renewed.count === 1;
}

/** Records how far the running job is (pages done of pages); false when it is no longer this worker's. */
export async function recordProgress(
  prisma: PrismaClient,
  job: ClaimedJob,
  progress: { pagesDone: number; pagesTotal: number },
): Promise<boolean> {
  const written = await prisma.compressionJob.updateMany({ where: held(job), data: progress });
  return written.count === 1;
}

/** Ends the job succeeded with its result (every page done); false when it was no longer this worker's. */
export function finishSucceeded(
  prisma: PrismaClient,
  job: ClaimedJob,
  result: { compressedSize: number; objectName: string; pages?: number },
): Promise<boolean> {
  const { pages, ...stored } = result;
  if (pages === undefined) return finish(prisma, job, { status: "succeeded", ...stored });
  return finish(prisma, job, { status: "succeeded", ...stored, pagesDone: pages, pagesTotal: pages });
}

/** Ends the job failed with the error it answers; false when it was no longer this worker's. */
export function finishFailed(
  prisma: PrismaClient,
  job: ClaimedJob,
  error: { code: string; message: string },
): Promise<boolean> {
  return finish(prisma, job, { status: "failed", errorCode: error.code, errorMessage: error.message });
}

async function finish(
  prisma: PrismaClient,
  job: ClaimedJob,
  outcome: { status: "succeeded" | "failed" } & Record<string, string | number>,
): Promise<boolean> {
  const done = await prisma.compressionJob.updateMany({
    where: held(job),
    data: { ...outcome, lockedBy: null, lockedUntil: null, finishedAt: new Date() },
  });
  return done.count === 1;
}

/**
 * Puts the job back in the queue, due after delayMs. `countAttempt: false` when the attempt never
 * started work (every engine slot of this instance was taken).
 */
export async function retryLater(
  prisma: PrismaClient,
  job: ClaimedJob,
  delayMs: number,
  countAttempt: boolean,
): Promise<boolean> {
  const back = await prisma.compressionJob.updateMany({
    where: held(job),
    data: {
      status: "queued",
      runAfter: new Date(Date.now() + delayMs),
      lockedBy: null,
      lockedUntil: null,
      ...(countAttempt ? {} : { attempts: job.attempts - 1 }),
    },
  });
  return back.count === 1;
}
