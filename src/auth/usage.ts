// A subscriber's usage of the month, from the records the service keeps: the quota counter
// (quota_usage, what is charged) and the compressions table (every attempt that passed the key,
// rate limit and quota checks, with its outcome). One reader for GET /v1/usage and the dashboard.
import type { Plan, PrismaClient } from "../generated/prisma/client.ts";
import { currentMonth, nextMonth, usedThisMonth } from "./quota.ts";

export interface UsageSummary {
  plan: Plan;
  monthlyQuota: number;
  used: number;
  remaining: number;
  /** 00:00 UTC on the first day of this month. */
  periodStart: Date;
  /** When the quota renews: 00:00 UTC on the first day of next month. */
  resetsAt: Date;
}

export async function usageSummary(
  prisma: PrismaClient,
  subscriber: { id: string; plan: Plan; monthlyQuota: number },
  now = new Date(),
): Promise<UsageSummary> {
  const used = await usedThisMonth(prisma, subscriber.id, now);
  return {
    plan: subscriber.plan,
    monthlyQuota: subscriber.monthlyQuota,
    used,
    remaining: Math.max(0, subscriber.monthlyQuota - used),
    periodStart: currentMonth(now),
    resetsAt: nextMonth(now),
  };
}

/** The answer of GET /v1/usage (snake_case, instants RFC 3339 UTC, as every /v1 answer). */
export function usageBody(summary: UsageSummary) {
  return {
    plan: summary.plan,
    monthly_quota: summary.monthlyQuota,
    used: summary.used,
    remaining: summary.remaining,
    period_start: summary.periodStart.toISOString(),
    resets_at: summary.resetsAt.toISOString(),
  };
}

export interface DayCount {
  /** YYYY-MM-DD, UTC. */
  day: string;
  succeeded: number;
  /** Attempts refused for their file or failed (not charged): 4xx after the upload, 5xx, client gone. */
  failed: number;
}

/**
 * Compressions per UTC day of this month, every day from the 1st to today (days without any
 * are zeros). Attempts still running are not counted yet.
 */
export async function dailyCompressions(
  prisma: PrismaClient,
  subscriberId: string,
  now = new Date(),
): Promise<DayCount[]> {
  const month = currentMonth(now);
  const rows = await prisma.$queryRaw<{ day: string; succeeded: number; failed: number }[]>`
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
           count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE status = 'failed')::int AS failed
    FROM compressions
    WHERE subscriber_id = ${subscriberId}::uuid AND month = ${month.toISOString().slice(0, 10)}::date
    GROUP BY 1`;
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const days: DayCount[] = [];
  for (let d = 1; d <= now.getUTCDate(); d++) {
    const day = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), d)).toISOString().slice(0, 10);
    const row = byDay.get(day);
    days.push({ day, succeeded: row?.succeeded ?? 0, failed: row?.failed ?? 0 });
  }
  return days;
}
