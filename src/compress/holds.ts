// Who holds a reserved quota unit, so that a unit is charged only while a live process can still
// deliver its compression. Each process has a boot id (a new one at every start), recorded with
// every reservation it makes, and holds its reservations until an instant (`held_until`) that it
// renews while they are in flight. A record still running past its hold was left by a process that
// died or lost its database: any instance's housekeeping releases it within minutes (maintenance.ts
// `reconcileInterrupted`), and a restart releases its dead predecessor's at once (boot.ts). A
// reservation handed to the job queue is the queue's to end (its lease, async-jobs/queue.ts): it is
// dropped from the renewals.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Logger } from "../logger.ts";
import { guarded } from "../callbacks.ts";

/** This process's boot id: recorded with its reservations, its job leases and its temporary files. */
export const BOOT_ID = randomUUID();

/** How long a reservation stays held after its last renewal. */
export const HOLD_MS = 120_000;
/** How often the holds of the compressions in flight are renewed (a third of the hold, and then some). */
export const RENEW_EVERY_MS = 30_000;

/** The reservations of this process in flight: reserved, not yet settled nor handed to the queue. */
const inFlight = new Set<string>();

export const holdUntil = (now = Date.now()) => new Date(now + HOLD_MS);

export function hold(compressionId: string): void {
  inFlight.add(compressionId);
}

export function letGo(compressionId: string): void {
  inFlight.delete(compressionId);
}

/** The reservations in flight here (tests, logs). */
export const heldHere = (): ReadonlySet<string> => inFlight;

/**
 * Extends the hold of every reservation in flight; one statement. A record no longer running, or
 * now a job's, is not renewed and is dropped from the set.
 */
export async function renewHolds(prisma: PrismaClient): Promise<number> {
  if (inFlight.size === 0) return 0;
  const ids = [...inFlight];
  const renewed = await prisma.$queryRaw<{ id: string }[]>`
    UPDATE compressions c SET held_until = ${holdUntil()}
     WHERE c.id = ANY(${ids}::uuid[]) AND c.status = 'running'
       AND NOT EXISTS (SELECT 1 FROM compression_jobs j WHERE j.compression_id = c.id)
    RETURNING c.id`;
  const still = new Set(renewed.map((row) => row.id));
  for (const id of ids) if (!still.has(id)) inFlight.delete(id);
  return still.size;
}

/**
 * Renews the holds every RENEW_EVERY_MS until stopped, and whatever else is held the same way
 * (`alsoHeld`: the Idempotency-Key claims, ./idempotency.ts).
 */
export function startHoldRenewal(
  prisma: PrismaClient,
  logger: Logger,
  everyMs = RENEW_EVERY_MS,
  alsoHeld: ((prisma: PrismaClient) => Promise<unknown>)[] = [],
): { stop(): void } {
  const renew = guarded("holds", () =>
    Promise.all([renewHolds(prisma), ...alsoHeld.map((renewal) => renewal(prisma))]).catch((error: unknown) =>
      logger.warn({ err: error, inFlight: inFlight.size }, "could not renew the holds of compressions in flight"),
    ),
  );
  // Once at the start too (nothing is held yet: no statement), then every period.
  renew();
  const timer = setInterval(renew, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
