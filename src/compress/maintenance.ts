// Housekeeping that keeps the compression API's promises after the unexpected: results are
// deleted after the retention period, temporary uploads left by a crashed process are removed,
// and a compression a crashed process never finished gives its quota unit back.
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Logger } from "../logger.ts";
import { fail } from "./compression.ts";
import type { ObjectStorage } from "./storage/storage.ts";

/** Removes request directories under root older than maxAgeMs; returns how many. */
export async function sweepTemporaryUploads(root: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(root).catch(() => [] as string[])) {
    if (!entry.startsWith("req-")) continue;
    const dir = path.join(root, entry);
    const info = await stat(dir).catch(() => null);
    if (info && now - info.mtimeMs > maxAgeMs) {
      await rm(dir, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

/**
 * Compressions still "running" long after any could (their process died) are marked failed and
 * their quota unit released (compression.ts `fail`: the conditional update that claims the row
 * releases the unit, so two instances reconciling at once release it once).
 */
export async function reconcileInterrupted(prisma: PrismaClient, olderThan: Date): Promise<number> {
  const stale = await prisma.compression.findMany({
    // A compression of an asynchronous job is the queue's to end (jobs/worker.ts): it may wait.
    where: {
      status: "running",
      createdAt: { lt: olderThan },
      OR: [{ job: { is: null } }, { job: { status: { in: ["succeeded", "failed"] } } }],
    },
    select: { id: true, subscriberId: true, month: true },
  });
  let released = 0;
  for (const row of stale) {
    if (await fail(prisma, row, "interrupted")) released++;
  }
  return released;
}

/**
 * Direct uploads never compressed within the retention period: their files and rows are deleted
 * (a used one's file belongs to its job, which deletes it when it ends). Returns how many.
 */
export async function expireDirectUploads(prisma: PrismaClient, storage: ObjectStorage, before: Date): Promise<number> {
  const stale = await prisma.directUpload.findMany({
    where: { usedAt: null, createdAt: { lt: before } },
    select: { id: true, objectName: true },
  });
  for (const upload of stale) {
    await storage.deleteInput(upload.objectName);
    await prisma.directUpload.deleteMany({ where: { id: upload.id, usedAt: null } });
  }
  return stale.length;
}

export function startHousekeeping(options: {
  prisma: PrismaClient;
  storage: ObjectStorage;
  tmpRoot: string;
  retentionHours: number;
  /** Longer than any compression can take. */
  interruptedAfterMs: number;
  logger: Logger;
  everyMs?: number;
}): { stop(): void } {
  const run = async () => {
    try {
      const now = Date.now();
      const deleted = await options.storage.deleteOlderThan(new Date(now - options.retentionHours * 3_600_000));
      const swept = await sweepTemporaryUploads(options.tmpRoot, options.interruptedAfterMs, now);
      const released = await reconcileInterrupted(options.prisma, new Date(now - options.interruptedAfterMs));
      const cutoff = new Date(now - options.retentionHours * 3_600_000);
      const uploads = await expireDirectUploads(options.prisma, options.storage, cutoff);
      if (deleted || swept || released || uploads) {
        options.logger.info(
          { deleted, swept, released, uploads },
          "housekeeping: expired results, stale uploads, interrupted work, unused direct uploads",
        );
      }
    } catch (error) {
      options.logger.warn({ err: error }, "housekeeping failed; retrying at the next run");
    }
  };
  void run();
  const timer = setInterval(() => void run(), options.everyMs ?? 15 * 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
