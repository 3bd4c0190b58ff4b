// Monthly quota: compressions per calendar month in UTC, the month starting at 00:00 UTC on its
// first day. A request reserves one unit with a single conditional UPDATE (atomic under any
// concurrency: the row lock serialises reservations, and the WHERE refuses the one too many),
// and gives it back when it fails, so a failure is never charged.
import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";

export function currentMonth(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

export function nextMonth(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

// A calendar date, not an instant: the session's time zone must not move it.
const isoDate = (date: Date) => date.toISOString().slice(0, 10);

export interface Reservation {
  month: Date;
  /** Units used this month, this one included. */
  used: number;
  limit: number;
}

/** Reserves one unit, or returns null when the month's quota is used up. */
export async function reserveQuota(
  prisma: PrismaClient | Prisma.TransactionClient,
  subscriberId: string,
  limit: number,
  now = new Date(),
): Promise<Reservation | null> {
  const month = currentMonth(now);
  const day = isoDate(month);
  await prisma.quotaUsage.createMany({ data: [{ subscriberId, month, used: 0 }], skipDuplicates: true });
  const rows = await prisma.$queryRaw<{ used: number }[]>`
    UPDATE quota_usage SET used = used + 1
    WHERE subscriber_id = ${subscriberId}::uuid AND month = ${day}::date AND used < ${limit}
    RETURNING used`;
  const [row] = rows;
  return row ? { month, used: row.used, limit } : null;
}

export async function releaseQuota(prisma: PrismaClient, subscriberId: string, month: Date): Promise<void> {
  await prisma.$executeRaw`
    UPDATE quota_usage SET used = used - 1
    WHERE subscriber_id = ${subscriberId}::uuid AND month = ${isoDate(month)}::date AND used > 0`;
}

export async function usedThisMonth(prisma: PrismaClient, subscriberId: string, now = new Date()): Promise<number> {
  const row = await prisma.quotaUsage.findUnique({
    where: { subscriberId_month: { subscriberId, month: currentMonth(now) } },
  });
  return row?.used ?? 0;
}
