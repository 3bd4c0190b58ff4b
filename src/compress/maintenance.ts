// Housekeeping that keeps the compression API's promises after the unexpected: results are
// deleted at the end of their retention (each its own, checked every minute: workflow/results.ts),
// any object older than the longest retention is deleted whatever its record says, temporary uploads left by a crashed process are removed,
// and a compression a crashed process never finished gives its quota unit back as soon as its
// hold lapses (holds.ts; checked every minute). A restart does the same at once for its dead
// predecessor on the machine (boot.ts).
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Logger } from "../logger.ts";
import { fail } from "./compression.ts";
import { RENEW_EVERY_MS, startHoldRenewal } from "./holds.ts";
import { expireIdempotencyKeys, renewIdempotencyClaims } from "./idempotency.ts";
import type { ObjectStorage } from "./storage/storage.ts";
import { forgetFailedNames } from "./workflow/compressions.ts";
import { sweepExpiredResults } from "./workflow/results.ts";
import { sweepWorkspaces } from "./workflow/workspace.ts";
import { guarded } from "../callbacks.ts";

/**
 * Compressions still "running" whose hold has lapsed (their process died, or lost its database
 * for longer than the hold) are marked failed and their quota unit released (compression.ts
 * `fail`: the conditional update that claims the row releases the unit, so two instances
 * reconciling at once release it once). A record from before holds existed has none: it counts as
 * lapsed once created before `unheldBefore`. `where` narrows the records further (boot.ts).
 */
export async function reconcileInterrupted(
  prisma: PrismaClient,
  unheldBefore: Date,
  where: { bootId?: { in: string[] } } = {},
  now = new Date(),
): Promise<number> {
  const lapsed = where.bootId
    ? {}
    : { OR: [{ heldUntil: { lt: now } }, { heldUntil: null, createdAt: { lt: unheldBefore } }] };
  const stale = await prisma.compression.findMany({
    where: {
      status: "running",
      ...where,
      AND: [
        lapsed,
        // A compression of an asynchronous job is the queue's to end (async-jobs/worker.ts): it may wait.
        { OR: [{ job: { is: null } }, { job: { status: { in: ["succeeded", "failed"] } } }] },
      ],
    },
    select: { id: true },
  });
  let released = 0;
  for (const row of stale) {
    if (await fail(prisma, row, "interrupted")) released++;
  }
  return released;
}

/**
 * Direct uploads older than the retention period, used or not: their files and rows are deleted,
 * except the file of a job still queued or running (it deletes it when it ends). A used upload's
 * file is normally gone already; this removes whatever was written to its address after all.
 * Returns how many.
 */
export async function expireDirectUploads(prisma: PrismaClient, storage: ObjectStorage, before: Date): Promise<number> {
  const stale = await prisma.directUpload.findMany({
    where: { createdAt: { lt: before } },
    select: { id: true, objectName: true },
  });
  const busy = await prisma.compressionJob.findMany({
    where: { inputObject: { in: stale.map((upload) => upload.objectName) }, status: { in: ["queued", "running"] } },
    select: { inputObject: true },
  });
  const inUse = new Set(busy.map((job) => job.inputObject));
  let expired = 0;
  for (const upload of stale) {
    if (inUse.has(upload.objectName)) continue;
    await storage.deleteInput(upload.objectName);
    await prisma.directUpload.deleteMany({ where: { id: upload.id } });
    expired++;
  }
  return expired;
}

export function startHousekeeping(options: {
  prisma: PrismaClient;
  storage: ObjectStorage;
  tmpRoot: string;
  retentionHours: number;
  /** Longer than any compression can take: temporary directories and records without a hold older than that. */
  interruptedAfterMs: number;
  logger: Logger;
  everyMs?: number;
  /** How often lapsed holds and expired results are looked for (default every minute). */
  reconcileEveryMs?: number;
}): { stop(): void } {
  const run = async () => {
    try {
      const now = Date.now();
      const deleted = await options.storage.deleteOlderThan(new Date(now - options.retentionHours * 3_600_000));
      const swept = await sweepWorkspaces(options.tmpRoot, options.interruptedAfterMs, now);
      const cutoff = new Date(now - options.retentionHours * 3_600_000);
      const uploads = await expireDirectUploads(options.prisma, options.storage, cutoff);
      const idempotencyKeys = await expireIdempotencyKeys(options.prisma, new Date(now));
      const names = await forgetFailedNames(options.prisma, cutoff);
      if (deleted || swept || uploads || idempotencyKeys || names) {
        options.logger.info(
          { deleted, swept, uploads, idempotencyKeys, names },
          "housekeeping: expired results, stale uploads, direct uploads, idempotency keys, names of failed calls",
        );
      }
    } catch (error) {
      options.logger.warn({ err: error }, "housekeeping failed; retrying at the next run");
    }
  };
  const reconcile = async () => {
    try {
      const unheldBefore = new Date(Date.now() - options.interruptedAfterMs);
      const released = await reconcileInterrupted(options.prisma, unheldBefore);
      if (released) options.logger.info({ released }, "housekeeping: quota units of interrupted compressions released");
      const results = await sweepExpiredResults(options, options.logger);
      if (results.deleted || results.failed)
        options.logger.info(results, "housekeeping: results at the end of their retention");
    } catch (error) {
      options.logger.warn({ err: error }, "could not look for interrupted compressions; retrying at the next run");
    }
  };
  guarded("housekeeping", run)();
  guarded("housekeeping", reconcile)();
  const timers = [
    setInterval(guarded("housekeeping", run), options.everyMs ?? 15 * 60_000),
    setInterval(guarded("housekeeping", reconcile), options.reconcileEveryMs ?? 60_000),
  ];
  for (const timer of timers) timer.unref();
  const holds = startHoldRenewal(options.prisma, options.logger, RENEW_EVERY_MS, [renewIdempotencyClaims]);
  return {
    stop: () => {
      for (const timer of timers) clearInterval(timer);
      holds.stop();
    },
  };
}
