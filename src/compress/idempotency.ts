// Idempotency keys of the compression API (Stripe's semantics; docs/compression-api.md): a POST sent
// with `Idempotency-Key` claims the key for its API key while it runs, then leaves its answer there
// for 24 hours. A retry of the same request (same fingerprint) gets that answer again without running
// or charging again; another request under the key is refused. Kept in the database, so every
// instance sees the same keys; the housekeeping deletes expired ones (maintenance.ts).
import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";

/** How long a key keeps its answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** How long a request in flight holds its key: a process that died lets it go after this. */
export const IDEMPOTENCY_LOCK_MS = 3_600_000;

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
  // An expired answer, or the claim of a request whose process died, no longer holds the key.
  await prisma.idempotencyKey.deleteMany({
    where: { apiKeyId, key, OR: [{ expiresAt: { lt: now } }, { status: null, lockedUntil: { lt: now } }] },
  });
  const lockedUntil = new Date(now.getTime() + IDEMPOTENCY_LOCK_MS);
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
  const inserted = await prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO idempotency_keys (id, api_key_id, key, locked_until, expires_at)
    VALUES (gen_random_uuid(), ${apiKeyId}::uuid, ${key}, ${lockedUntil}, ${expiresAt})
    ON CONFLICT (api_key_id, key) DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { kind: "claimed", id: inserted[0].id };
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

/** Keeps the answer of the request that claimed the key, for 24 hours from now. */
export async function storeIdempotentAnswer(
  prisma: PrismaClient,
  id: string,
  answer: StoredAnswer,
  now = new Date(),
): Promise<void> {
  await prisma.idempotencyKey.update({
    where: { id },
    data: {
      fingerprint: answer.fingerprint,
      status: answer.status,
      body: (answer.body ?? null) as Prisma.InputJsonValue,
      headers: answer.headers,
      lockedUntil: null,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    },
  });
}

/** Lets the key go without an answer (the request failed on our side, or before its body was read). */
export async function releaseIdempotencyKey(prisma: PrismaClient, id: string): Promise<void> {
  await prisma.idempotencyKey.deleteMany({ where: { id, status: null } });
}

/** Deletes the keys whose answers have expired; returns how many. */
export async function expireIdempotencyKeys(prisma: PrismaClient, now = new Date()): Promise<number> {
  const { count } = await prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lt: now } } });
  return count;
}
