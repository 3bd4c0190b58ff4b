// Idempotency keys of the compression API (Stripe's semantics; docs/compression-api.md): a POST sent
// with `Idempotency-Key` claims the key for its API key while it runs, then leaves its answer there
// for 24 hours. A retry of the same request (same fingerprint) gets that answer again without running
// or charging again; another request under the key is refused. Kept in the database, so every
// instance sees the same keys; the housekeeping deletes expired ones (maintenance.ts).
//
// A claim follows the truth, as a reserved quota unit does (holds.ts): it carries this process's
// boot id and is held for HOLD_MS, renewed while its request runs (maintenance.ts). A process that
// died lets it go when its hold lapses, or at once when it restarts (boot.ts). A release that fails
// (the database away for a moment) is retried until it lands; meanwhile this process knows the claim
// is not running and takes it over itself. So "still running" (409) means a request that runs.
// (Issue 39: a claim stayed an hour after a 503 or a kill, and every retry got 409.)
import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import { guarded } from "../callbacks.ts";
import { BOOT_ID, holdUntil } from "./holds.ts";

/** How long a key keeps its answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** The claims of this process's requests in flight, renewed with the holds. */
const running = new Set<string>();
/** Claims whose request ended here but whose release has not reached the database yet. */
const releasing = new Set<string>();

export interface StoredAnswer {
  fingerprint: string;
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type Claim = { kind: "claimed"; id: string } | { kind: "in_flight" } | ({ kind: "answered" } & StoredAnswer);

/** Claims `key` for the API key, or says who has it: a request still running, or a stored answer. */
export async function claimIdempotencyKey(
  prisma: PrismaClient,
  apiKeyId: string,
  key: string,
  now = new Date(),
): Promise<Claim> {
  // An expired answer, the claim of a request whose process died (its hold lapsed), or one of this
  // process's whose release is still on its way, no longer holds the key.
  const stale = [...releasing];
  await prisma.idempotencyKey.deleteMany({
    where: {
      apiKeyId,
      key,
      OR: [
        { expiresAt: { lt: now } },
        { status: null, lockedUntil: { lt: now } },
        ...(stale.length ? [{ status: null, id: { in: stale } }] : []),
      ],
    },
  });
  const lockedUntil = holdUntil(now.getTime());
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
  const inserted = await prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO idempotency_keys (id, api_key_id, key, locked_until, boot_id, expires_at)
    VALUES (gen_random_uuid(), ${apiKeyId}::uuid, ${key}, ${lockedUntil}, ${BOOT_ID}::uuid, ${expiresAt})
    ON CONFLICT (api_key_id, key) DO NOTHING
    RETURNING id`;
  if (inserted[0]) {
    running.add(inserted[0].id);
    return { kind: "claimed", id: inserted[0].id };
  }
  const row = await prisma.idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId, key } } });
  if (!row || row.status === null || row.fingerprint === null) return { kind: "in_flight" };
  return {
    kind: "answered",
    fingerprint: row.fingerprint,
    status: row.status,
    body: row.body,
    headers: (row.headers ?? {}) as Record<string, string>,
  };
}

/**
 * Keeps the answer of the request that claimed the key, for 24 hours from now. If the database
 * cannot take it, the key is let go instead (the client has its answer; a retry runs again).
 */
export async function storeIdempotentAnswer(
  prisma: PrismaClient,
  id: string,
  answer: StoredAnswer,
  now = new Date(),
): Promise<void> {
  running.delete(id);
  try {
    await storeAnswer(prisma, id, answer, now);
  } catch {
    await releaseIdempotencyKey(prisma, id);
  }
}

async function storeAnswer(prisma: PrismaClient, id: string, answer: StoredAnswer, now: Date): Promise<void> {
  await prisma.idempotencyKey.update({
    where: { id },
    data: {
      fingerprint: answer.fingerprint,
      status: answer.status,
      body: (answer.body ?? null) as Prisma.InputJsonValue,
      headers: answer.headers,
      lockedUntil: null,
      bootId: null,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    },
  });
}

// A failed release is tried again after 1 s, then 2, 4, … at most every 30 s, until it lands.
const RELEASE_RETRY_FIRST_MS = 1_000;
const RELEASE_RETRY_MAX_MS = 30_000;

/**
 * Lets the key go without an answer (the request failed on our side, or before its body was read).
 * Never throws: a release the database cannot take now is retried in the background.
 */
export async function releaseIdempotencyKey(
  prisma: PrismaClient,
  id: string,
  delayMs = RELEASE_RETRY_FIRST_MS,
): Promise<void> {
  running.delete(id);
  releasing.add(id);
  try {
    await prisma.idempotencyKey.deleteMany({ where: { id, status: null } });
    releasing.delete(id);
  } catch {
    const retry = setTimeout(
      guarded("holds", () => releaseIdempotencyKey(prisma, id, Math.min(delayMs * 2, RELEASE_RETRY_MAX_MS))),
      delayMs,
    );
    retry.unref();
  }
}

/** Extends the hold of every claim of this process's requests in flight; one statement. */
export async function renewIdempotencyClaims(prisma: PrismaClient): Promise<number> {
  if (running.size === 0) return 0;
  const { count } = await prisma.idempotencyKey.updateMany({
    where: { id: { in: [...running] }, status: null },
    data: { lockedUntil: holdUntil() },
  });
  return count;
}

/** Lets go of the claims of processes that died (boot.ts, at a restart); returns how many. */
export async function releaseClaimsOf(prisma: PrismaClient, bootIds: string[]): Promise<number> {
  const { count } = await prisma.idempotencyKey.deleteMany({ where: { status: null, bootId: { in: bootIds } } });
  return count;
}

/** Deletes the keys whose answers have expired; returns how many. */
export async function expireIdempotencyKeys(prisma: PrismaClient, now = new Date()): Promise<number> {
  const { count } = await prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lt: now } } });
  return count;
}
