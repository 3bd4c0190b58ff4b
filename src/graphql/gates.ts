// The public access gates of the catalog, in one place. Every root field, relation and count
// of the read model takes its filter from here, so REST and GraphQL cannot disagree about what
// is public, and a nested path (a job's company, a skill's talents) cannot leak a hidden row.
import type { Prisma } from "../generated/prisma/client.ts";
import type { SqlCondition } from "./sql.ts";

/** A job is public while it is published, not filled, already live and not yet expired. */
export function publicJobWhere(now: Date): Prisma.JobWhereInput {
  const where: Prisma.JobWhereInput = {
    status: "published",
    filled: false,
    publishedAt: { lte: now },
    OR: [{ validThrough: null }, { validThrough: { gt: now } }],
  };
  gateInstants.set(where, now);
  return where;
}

// The instant of each filter publicJobWhere made, so a filter is known for the gate by identity
// (isPublicJobWhere) instead of compared field by field on every list request.
const gateInstants = new WeakMap<object, Date>();

/** Whether `where` is a filter publicJobWhere(now) made (nothing changes those filters after). */
export function isPublicJobWhere(where: unknown, now: Date): boolean {
  if (typeof where !== "object" || where === null) return false;
  return gateInstants.get(where)?.getTime() === now.getTime();
}

/** publicJobWhere in SQL, on jobs aliased j: the same four conditions (the hot reads' statements, ./sql.ts). */
export function publicJobSql(now: Date): SqlCondition {
  return (params) => {
    const at = params.add(now, "timestamptz");
    return `j.status = 'published' AND j.filled = false AND j.published_at <= ${at} AND (j.valid_through IS NULL OR j.valid_through > ${at})`;
  };
}

/** A company is public when it has a branded public page. */
export const publicCompanyWhere = { hasPublicPage: true } satisfies Prisma.CompanyWhereInput;

export function isPublicCompany<C extends { hasPublicPage: boolean }>(company: C | null | undefined): C | null {
  return company?.hasPublicPage ? company : null;
}

/** publicCompanyWhere in SQL, on companies aliased c. */
export const publicCompanySql = "c.has_public_page";

/** A talent is public when the profile is public and the account is active. */
export const publicTalentWhere = { visibility: "public", accountState: "active" } satisfies Prisma.TalentWhereInput;

/** publicTalentWhere in SQL, on talents aliased t. */
export const publicTalentSql = "t.visibility = 'public' AND t.account_state = 'active'";

/** Published agents are listed. */
export const listedAgentWhere = { status: "published" } satisfies Prisma.AgentWhereInput;

/** Unlisted agents are not listed anywhere but answer by slug, like an unlisted video. */
export const reachableAgentWhere = {
  status: { in: ["published", "unlisted"] },
} satisfies Prisma.AgentWhereInput;
