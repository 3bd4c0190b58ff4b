// What the dashboard reads of a subscriber's activity, from the records the compression API keeps:
// the history (the `compressions` rows, each with its job when it was one), the recent webhook
// deliveries (`webhook_deliveries` of the subscriber's jobs) and this month's use per key. One
// statement each, bounded; nothing here writes.
import type { CompressionJobStatus, PrismaClient, WebhookDeliveryStatus } from "../generated/prisma/client.ts";
import { currentMonth } from "../auth/quota.ts";

/** Rows on the history page, and deliveries on the webhooks page. */
export const HISTORY_ROWS = 50;
export const DELIVERY_ROWS = 20;

export interface HistoryRow {
  id: string;
  createdAt: Date;
  finishedAt: Date | null;
  /** The name the client gave the file; null once forgotten (docs/data.md) or for records made before it was kept. */
  filename: string | null;
  originalSize: number | null;
  compressedSize: number | null;
  /** The profile asked for (as sent, when it was not one), else the default the call ran with. */
  profile: string;
  /** The other option fields asked for, as sent (target_size, grayscale, …); empty when none or not kept. */
  options: Record<string, string>;
  /** A job's status (queued, running, …) or a synchronous compression's (running, succeeded, failed). */
  status: CompressionJobStatus;
  errorCode: string | null;
  key: { name: string; prefix: string };
  /** The job's id when it was an asynchronous job. */
  jobId: string | null;
  /** The stored result, while a succeeded row has one. */
  objectName: string | null;
  /** When its result was deleted (on request, at its expiry, after its first download), or null. */
  deletedAt: Date | null;
  /** When its result is deleted at the latest, and its retention (0: until the first complete download). */
  expiresAt: Date | null;
  retentionSeconds: number | null;
  kind: "compress" | "unlock";
}

/** The subscriber's most recent compressions and jobs, newest first. */
export async function history(prisma: PrismaClient, subscriberId: string): Promise<HistoryRow[]> {
  const rows = await prisma.compression.findMany({
    where: { subscriberId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: HISTORY_ROWS,
    select: {
      id: true,
      createdAt: true,
      finishedAt: true,
      filename: true,
      originalSize: true,
      compressedSize: true,
      profile: true,
      options: true,
      status: true,
      errorCode: true,
      objectName: true,
      deletedAt: true,
      expiresAt: true,
      retentionSeconds: true,
      kind: true,
      apiKey: { select: { name: true, prefix: true } },
      job: { select: { id: true, status: true, filename: true, originalSize: true, errorCode: true } },
    },
  });
  return rows.map((row) => {
    const { job } = row;
    const size = (n: bigint | null | undefined) => (n === null || n === undefined ? null : Number(n));
    return {
      id: row.id,
      createdAt: row.createdAt,
      finishedAt: row.finishedAt,
      filename: job?.filename || row.filename,
      originalSize: size(row.originalSize ?? job?.originalSize),
      compressedSize: size(row.compressedSize),
      ...askedOf(row.profile, row.options),
      status: job?.status ?? row.status,
      errorCode: job?.errorCode ?? row.errorCode,
      key: row.apiKey,
      jobId: job?.id ?? null,
      objectName: row.status === "succeeded" && !row.deletedAt ? row.objectName : null,
      deletedAt: row.deletedAt,
      expiresAt: row.expiresAt,
      retentionSeconds: row.retentionSeconds,
      kind: row.kind,
    };
  });
}

/** The profile and the other options a record says were asked for (its `options`: field → value as sent). */
function askedOf(profile: string, options: unknown): Pick<HistoryRow, "profile" | "options"> {
  const asked =
    options && typeof options === "object" && !Array.isArray(options)
      ? Object.fromEntries(
          Object.entries(options).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
        )
      : {};
  const { profile: askedProfile, ...rest } = asked;
  return { profile: askedProfile ?? profile, options: rest };
}

/**
 * Until when a row's result can be downloaded, or null when it cannot (any more). A synchronous
 * compression's link is the one its answer carried: valid `ttlSeconds` from when it finished. A
 * job's result is signed afresh at each read of the job (GET /v1/jobs/{id}), so it can be fetched
 * while it is kept (`retentionHours`), each link valid `ttlSeconds` at most.
 */
export function resultValidUntil(
  row: Pick<HistoryRow, "objectName" | "finishedAt" | "jobId"> & Partial<Pick<HistoryRow, "expiresAt">>,
  limits: { ttlSeconds: number; retentionHours: number },
  now = new Date(),
): Date | null {
  if (!row.objectName || !row.finishedAt) return null;
  const finished = row.finishedAt.getTime();
  const kept = row.expiresAt?.getTime() ?? finished + limits.retentionHours * 3_600_000;
  const end = row.jobId
    ? Math.min(kept, now.getTime() + limits.ttlSeconds * 1000)
    : Math.min(kept, finished + limits.ttlSeconds * 1000);
  return end > now.getTime() + 1000 ? new Date(end) : null;
}

export interface DeliveryRow {
  id: string;
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  job: { id: string; filename: string };
  /** The event the call posts: `compression_job.succeeded` or `.failed` (webhooks.ts, webhookBody). */
  event: string;
}

/** The subscriber's most recent webhook deliveries, newest first. */
export async function recentDeliveries(prisma: PrismaClient, subscriberId: string): Promise<DeliveryRow[]> {
  const rows = await prisma.webhookDelivery.findMany({
    where: { job: { subscriberId } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: DELIVERY_ROWS,
    select: {
      id: true,
      createdAt: true,
      deliveredAt: true,
      nextAttemptAt: true,
      url: true,
      status: true,
      attempts: true,
      lastStatus: true,
      lastError: true,
      job: { select: { id: true, filename: true, status: true } },
    },
  });
  return rows.map(({ job, ...row }) => ({
    ...row,
    job: { id: job.id, filename: job.filename },
    event: `compression_job.${job.status}`,
  }));
}

export interface KeyUsage {
  id: string;
  name: string;
  prefix: string;
  revokedAt: Date | null;
  /** This month's compressions with the key: succeeded (charged), and refused or failed after the checks. */
  succeeded: number;
  failed: number;
}

/** This month's compressions per key: every active key, and revoked ones used this month; newest key first. */
export function usagePerKey(prisma: PrismaClient, subscriberId: string, now = new Date()): Promise<KeyUsage[]> {
  const month = currentMonth(now).toISOString().slice(0, 10);
  return prisma.$queryRaw<KeyUsage[]>`
    SELECT k.id, k.name, k.prefix, k.revoked_at AS "revokedAt",
           coalesce(c.succeeded, 0)::int AS succeeded, coalesce(c.failed, 0)::int AS failed
    FROM api_keys k
    LEFT JOIN (
      SELECT api_key_id,
             count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
             count(*) FILTER (WHERE status = 'failed') AS failed
      FROM compressions
      WHERE subscriber_id = ${subscriberId}::uuid AND month = ${month}::date
      GROUP BY api_key_id
    ) c ON c.api_key_id = k.id
    WHERE k.subscriber_id = ${subscriberId}::uuid AND (k.revoked_at IS NULL OR c.api_key_id IS NOT NULL)
    ORDER BY k.created_at DESC, k.id DESC`;
}
