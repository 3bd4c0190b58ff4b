// The compressions repository: what the API reads and writes of a subscriber's results (the
// `compressions` rows, each with its job when it was one), so the routes above make no database
// call of their own. A compression is found by its id or by its job's (GET /v1/jobs/{id} and
// GET /v1/compressions/{id} name the same result); only its subscriber's keys find it.
import type { CompressionJob, Prisma, PrismaClient } from "../../generated/prisma/client.ts";
import { isCompressionProfile } from "../../pdf/index.ts";
import { askedOptions } from "./options.ts";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a compression is read with: its job, for the status of one that waits or runs as a job. */
export const RECORD_SELECT = {
  id: true,
  kind: true,
  status: true,
  profile: true,
  errorCode: true,
  originalSize: true,
  compressedSize: true,
  objectName: true,
  filename: true,
  report: true,
  retentionSeconds: true,
  expiresAt: true,
  deletedAt: true,
  deletedBy: true,
  createdAt: true,
  finishedAt: true,
  job: {
    select: {
      id: true,
      status: true,
      filename: true,
      originalSize: true,
      errorCode: true,
      errorMessage: true,
      inputObject: true,
      apiOrigin: true,
      pagesDone: true,
      pagesTotal: true,
    },
  },
} as const satisfies Prisma.CompressionSelect;

export type CompressionRecord = Prisma.CompressionGetPayload<{ select: typeof RECORD_SELECT }>;

/**
 * How far a job is: pages done of the document's pages, as the engine reported them while it ran
 * (async-jobs/progress.ts); pages_total is null until the engine has counted them. A succeeded job has done
 * them all.
 */
export interface JobProgressBody {
  pages_done: number;
  pages_total: number | null;
}

export function progressBody(job: Pick<CompressionJob, "status" | "pagesDone" | "pagesTotal">): JobProgressBody {
  const total = job.pagesTotal;
  const done = job.status === "succeeded" && total !== null ? total : job.pagesDone;
  return { pages_done: done, pages_total: total };
}

/** The statuses a list is filtered by: a job's while it has one (queued, running), else the record's. */
export type ListStatus = "queued" | "running" | "succeeded" | "failed";

export interface ListFilter {
  status?: ListStatus;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** A page's position: the last row's creation instant and id (newest first, ties by id). */
export interface Position {
  createdAt: Date;
  id: string;
}

function statusWhere(status: ListStatus | undefined): Prisma.CompressionWhereInput {
  switch (status) {
    case undefined:
      return {};
    case "queued":
      return { job: { is: { status: "queued" } } };
    case "running":
      return { status: "running", OR: [{ job: { is: null } }, { job: { is: { status: "running" } } }] };
    default:
      return { status };
  }
}

/** One page of a subscriber's compressions, newest first, after `after` when given; `limit` + 1 rows are read. */
export function listCompressions(
  prisma: PrismaClient,
  subscriberId: string,
  filter: ListFilter,
  page: { limit: number; after?: Position },
): Promise<CompressionRecord[]> {
  const { after } = page;
  return prisma.compression.findMany({
    where: {
      subscriberId,
      ...statusWhere(filter.status),
      createdAt: {
        ...(filter.createdAfter ? { gte: filter.createdAfter } : {}),
        ...(filter.createdBefore ? { lt: filter.createdBefore } : {}),
      },
      ...(after
        ? {
            AND: [
              { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] },
            ],
          }
        : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.limit + 1,
    select: RECORD_SELECT,
  });
}

/** The subscriber's compression of this id, or of the job of this id; null for anyone else's or none. */
export function findCompression(
  prisma: PrismaClient,
  subscriberId: string,
  id: string,
): Promise<CompressionRecord | null> {
  if (!UUID.test(id)) return Promise.resolve(null);
  return prisma.compression.findFirst({
    where: { subscriberId, OR: [{ id }, { job: { is: { id } } }] },
    select: RECORD_SELECT,
  });
}

/** A result whose object is to be deleted by the sweep or its first download. */
export interface StoredResult {
  id: string;
  objectName: string;
}

/** Results past their expiry and not yet deleted, oldest expiry first, at most `limit`. */
export function expiredResults(prisma: PrismaClient, now: Date, limit: number): Promise<StoredResult[]> {
  return prisma.compression.findMany({
    where: { expiresAt: { lte: now }, deletedAt: null, objectName: { not: null } },
    orderBy: { expiresAt: "asc" },
    take: limit,
    select: { id: true, objectName: true },
  }) as Promise<StoredResult[]>;
}

/** The result stored under this object name, still there, kept until its first download (retention 0). */
export function onceResult(
  prisma: PrismaClient,
  objectName: string,
): Promise<{ id: string; filename: string | null; kind: "compress" | "unlock"; jobFilename: string | null } | null> {
  return prisma.compression
    .findFirst({
      where: { objectName, deletedAt: null, retentionSeconds: 0, status: "succeeded" },
      select: { id: true, filename: true, kind: true, job: { select: { filename: true } } },
    })
    .then(
      (row) => row && { id: row.id, filename: row.filename, kind: row.kind, jobFilename: row.job?.filename ?? null },
    );
}

/**
 * Marks a compression's result deleted (once: the first caller's update claims it) and forgets every
 * name the client gave its file: the record's, its job's, its direct upload's (the upload's row goes).
 * Its kept Idempotency-Key answers, which carry the result's URL, become a 410 saying it was deleted.
 * True when this call marked it.
 */
export async function markDeleted(
  prisma: PrismaClient,
  id: string,
  by: "request" | "retention" | "download",
  now = new Date(),
): Promise<boolean> {
  const [claimed] = await prisma.$transaction([
    prisma.compression.updateMany({
      where: { id, deletedAt: null },
      data: { deletedAt: now, deletedBy: by, filename: null },
    }),
    prisma.compressionJob.updateMany({ where: { compressionId: id }, data: { filename: "" } }),
    prisma.directUpload.deleteMany({ where: { compressionId: id } }),
    prisma.$executeRaw`
      UPDATE idempotency_keys k SET status = 410, headers = '{}'::jsonb,
             body = jsonb_build_object('error', jsonb_build_object(
               'code', 'result_deleted', 'message', 'The result of this request has been deleted.'))
       WHERE k.status IS NOT NULL AND k.body ->> 'id' IN (
             SELECT c.id::text FROM compressions c WHERE c.id = ${id}::uuid
             UNION ALL SELECT j.id::text FROM compression_jobs j WHERE j.compression_id = ${id}::uuid)`,
  ]);
  return claimed.count === 1;
}

/** The direct uploads a compression took (their objects to delete with it). */
export async function uploadsOf(prisma: PrismaClient, compressionId: string): Promise<string[]> {
  const rows = await prisma.directUpload.findMany({ where: { compressionId }, select: { objectName: true } });
  return rows.map((row) => row.objectName);
}

/** Records the retention a compression was asked for (seconds; 0: until the first complete download). */
export async function recordRetention(prisma: PrismaClient, id: string, retentionSeconds: number): Promise<void> {
  await prisma.compression.update({ where: { id }, data: { retentionSeconds } });
}

/** What a call asked for, as its record keeps it: History's profile, options and file name. */
export interface Asked {
  /** Its option fields, as sent (askedOptions). */
  fields: Readonly<Partial<Record<string, string>>>;
  filename: string;
  kind?: "compress" | "unlock";
}

/**
 * Records what a compression was asked for, as its file begins (and again when fields follow the
 * file): the operation, the profile when it is one (an unknown one stays in the options), the
 * option fields as sent and the file's name, so a call refused or failed from then on is listed
 * with what it asked, not the defaults.
 */
export async function recordAsked(prisma: PrismaClient, id: string, asked: Asked): Promise<void> {
  const profile = asked.fields["profile"];
  await prisma.compression.update({
    where: { id },
    data: {
      options: askedOptions(asked.fields),
      filename: asked.filename || null,
      ...(profile !== undefined && isCompressionProfile(profile) ? { profile } : {}),
      ...(asked.kind ? { kind: asked.kind } : {}),
    },
  });
}

/**
 * Forgets the file names of calls that failed before `before` (docs/data.md: a failed call's name is
 * kept as long as a result would have been at most): the record's, and an asynchronous job's on its
 * own row ("" there, as when a result is deleted: the column is required). Returns how many names.
 */
export async function forgetFailedNames(prisma: PrismaClient, before: Date): Promise<number> {
  const [records, jobs] = await prisma.$transaction([
    prisma.compression.updateMany({
      where: { status: "failed", filename: { not: null }, createdAt: { lt: before } },
      data: { filename: null },
    }),
    prisma.compressionJob.updateMany({
      where: {
        filename: { not: "" },
        OR: [
          { status: "failed", createdAt: { lt: before } },
          { compression: { status: "failed", createdAt: { lt: before } } },
        ],
      },
      data: { filename: "" },
    }),
  ]);
  return records.count + jobs.count;
}

/** A queued job of this compression ends failed ("deleted") before it runs; true when it was queued. */
export async function cancelQueuedJob(prisma: PrismaClient, compressionId: string): Promise<boolean> {
  const cancelled = await prisma.compressionJob.updateMany({
    where: { compressionId, status: "queued" },
    data: {
      status: "failed",
      errorCode: "deleted",
      errorMessage: "The compression was deleted before it ran; it was not charged.",
      finishedAt: new Date(),
    },
  });
  return cancelled.count === 1;
}

/** The account's default retention (seconds; 0: until the first complete download), or null: the maximum. */
export async function accountRetention(prisma: PrismaClient, subscriberId: string): Promise<number | null> {
  const row = await prisma.subscriber.findUnique({ where: { id: subscriberId }, select: { retentionSeconds: true } });
  return row?.retentionSeconds ?? null;
}

/** Sets the account's default retention (null: the maximum). */
export async function setAccountRetention(
  prisma: PrismaClient,
  subscriberId: string,
  retentionSeconds: number | null,
): Promise<void> {
  await prisma.subscriber.update({ where: { id: subscriberId }, data: { retentionSeconds } });
}

/** What a job row is read with for its resource: its compression's report, retention and deletion. */
export const WITH_REPORT = {
  compression: { select: { report: true, retentionSeconds: true, deletedAt: true } },
} as const;

/** The subscriber's job of this id, read for its resource (WITH_REPORT); null for anyone else's or none. */
export function findJob(prisma: PrismaClient, subscriberId: string, id: string) {
  if (!UUID.test(id)) return Promise.resolve(null);
  return prisma.compressionJob.findFirst({ where: { id, subscriberId }, include: WITH_REPORT });
}

/** A stored result's record by its object's name (a file_url that names it): whose it is, its kind and name. */
export function resultOfObject(prisma: PrismaClient, objectName: string) {
  return prisma.compression.findFirst({
    where: { objectName },
    select: { subscriberId: true, deletedAt: true, kind: true, filename: true, job: { select: { filename: true } } },
  });
}
