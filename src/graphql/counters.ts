// Relation counts of the read model (openJobCount, companyCount, talentCount, agentCount) and
// the whole catalog's public job count, read from the counters the database keeps (see the
// migration catalog_counters and docs/ARCHITECTURE.md, "Counts"). Counting the rows behind a
// count at request time scanned the jobs table once per sector or skill on the page.
//
// A page asks for the counts of many rows: every count asked for during one operation is
// loaded by one statement (batched until the operation's resolvers have all run), so a list of
// 100 skills with three counts each costs one statement, not 300.
import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import type { GraphQLContext } from "./context.ts";
import { isPublicJobWhere } from "./gates.ts";
import { prismaSql, type SqlQuery } from "./sql.ts";

/** The counter row of the whole catalog. */
export const CATALOG_SCOPE = "00000000-0000-0000-0000-000000000000";

export interface Counts {
  /** Public open jobs at the operation's instant. */
  openJobs: number;
  /** Public companies (sectors). */
  companies: number;
  /** Public talents (sectors and skills). */
  talents: number;
  /** Listed agents (skills). */
  agents: number;
}

const NONE: Counts = { openJobs: 0, companies: 0, talents: 0, agents: 0 };

interface CounterRow extends Counts {
  id: string;
  /** Pending job events summed into openJobs: when some exist, folding them in pays off. */
  due: number;
}

/**
 * The counts of these scopes (sector, skill or company ids, or CATALOG_SCOPE) at instant `at`.
 * Exact for any instant after the settled one (at most a few minutes ago): the open-job count is
 * the settled counter plus the job events between the settled instant and `at`.
 */
export async function readCounts(prisma: PrismaClient, ids: readonly string[], at: Date): Promise<Map<string, Counts>> {
  const rows = await prisma.$queryRaw<CounterRow[]>`
    SELECT c.scope_id::text AS id, (c.open_jobs + COALESCE(p.delta, 0))::int AS "openJobs",
           COALESCE(p.rows, 0)::int AS due, c.companies, c.talents, c.agents
      FROM catalog_counters c
      LEFT JOIN LATERAL (
        SELECT sum(e.delta) AS delta, count(*) AS rows FROM job_count_events e
         WHERE e.scope_id = c.scope_id AND e.at <= ${at}
      ) p ON true
     WHERE c.scope_id = ANY(${ids}::uuid[])`;
  if (rows.some((row) => row.due > 0)) settleSoon(prisma);
  return new Map(
    rows.map(({ id, openJobs, companies, talents, agents }) => [id, { openJobs, companies, talents, agents }]),
  );
}

// One pending batch per operation: ids asked for before it runs join it.
const batches = new WeakMap<GraphQLContext, { ids: Set<string>; loaded: Promise<Map<string, Counts>> }>();

/** The counts of one sector, skill or company, loaded with every other count of the operation. */
export async function countsOf(ctx: GraphQLContext, id: string): Promise<Counts> {
  let batch = batches.get(ctx);
  if (!batch) {
    const ids = new Set<string>();
    // setImmediate runs once the resolvers already started have settled their promises, so a
    // list's rows (and their nested rows) all join the same statement.
    const loaded = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      batches.delete(ctx);
      return readCounts(ctx.prisma, [...ids], ctx.now);
    });
    batch = { ids, loaded };
    batches.set(ctx, batch);
  }
  batch.ids.add(id);
  return (await batch.loaded).get(id) ?? NONE;
}

// Folding passed events into the counters keeps every read's range of pending events short.
// It runs off the request path, at most every SETTLE_EVERY_MS per client, when a read met
// pending events; the database function takes an advisory lock, so instances never collide.
const SETTLE_EVERY_MS = 30_000;
const lastSettle = new WeakMap<PrismaClient, number>();

function settleSoon(prisma: PrismaClient): void {
  const now = Date.now();
  if (now - (lastSettle.get(prisma) ?? 0) < SETTLE_EVERY_MS) return;
  lastSettle.set(prisma, now);
  // A failure (timeout, shutdown) leaves the events pending: reads stay exact, the next try folds them.
  settleJobCounts(prisma).catch(() => undefined);
}

/** Folds the job events that have passed into the counters; returns the scopes changed (-1: another instance is at it). */
export async function settleJobCounts(prisma: PrismaClient): Promise<number> {
  const [row] = await prisma.$queryRaw<{ folded: number }[]>`SELECT catalog_job_counts_settle() AS folded`;
  return row?.folded ?? 0;
}

/**
 * The scope whose counter is exactly this job filter, when there is one: no filter (the whole
 * catalog), or only a sector, a skill or a public company. Recognises the shapes jobFilterConditions
 * builds behind the public gate; anything else (null) is counted with the filter.
 */
export function jobCounterScope(
  where: Prisma.JobWhereInput,
  now: Date,
): { kind: "catalog" | "sector" | "skill" | "company"; slug: string } | null {
  if (!Array.isArray(where.AND) || !isPublicJobWhere(where.AND[0], now)) return null;
  const parts = where.AND.slice(1);
  if (parts.length === 0) return { kind: "catalog", slug: "" };
  if (parts.length !== 1) return null;
  const [part] = parts as [Prisma.JobWhereInput];
  const keys = Object.keys(part);
  if (keys.length !== 1) return null;
  const slugOf = (value: unknown): string | null =>
    typeof value === "object" && value !== null && typeof (value as { slug?: unknown }).slug === "string"
      ? (value as { slug: string }).slug
      : null;
  if (keys[0] === "sector") {
    const slug = slugOf(part.sector);
    return slug !== null && Object.keys(part.sector!).length === 1 ? { kind: "sector", slug } : null;
  }
  if (keys[0] === "skills") {
    const some = (part.skills as { some?: unknown }).some;
    const slug = slugOf(some);
    return slug !== null && Object.keys(part.skills!).length === 1 && Object.keys(some!).length === 1
      ? { kind: "skill", slug }
      : null;
  }
  if (keys[0] === "company") {
    const company = part.company as { slug?: unknown; hasPublicPage?: unknown };
    const slug = slugOf(company);
    return slug !== null && company.hasPublicPage === true && Object.keys(company).length === 2
      ? { kind: "company", slug }
      : null;
  }
  return null;
}

/** A scope's open jobs at $1 (the instant): its settled counter plus its pending events up to then. */
const OPEN_JOBS_AT = `(c.open_jobs + COALESCE((SELECT sum(e.delta) FROM job_count_events e
    WHERE e.scope_id = c.scope_id AND e.at <= $1::timestamptz), 0))::int`;

/**
 * The number of public jobs matching `where` at the operation's instant: from the counters when
 * the filter is one of their scopes (one short statement at any size), else counted.
 */
export async function countJobs(ctx: GraphQLContext, where: Prisma.JobWhereInput): Promise<number> {
  const scope = jobCounterScope(where, ctx.now);
  if (!scope) return ctx.prisma.job.count({ where });
  // On the plain SQL runner when there is one: every list page without a filter reads this, and
  // through Prisma's raw query it cost more CPU than the statement (as scopeCounts says).
  const sql = ctx.sql ?? prismaSql(ctx.prisma);
  // The scope's id by its slug; a company without a public page names no jobs, as in the filter.
  const [row] = await sql.query<{ open_jobs: number }>(
    `SELECT ${OPEN_JOBS_AT} AS open_jobs FROM catalog_counters c
      WHERE c.scope_id = CASE $2::text
              WHEN 'catalog' THEN $3::uuid
              WHEN 'sector' THEN (SELECT id FROM sectors WHERE slug = $4::text)
              WHEN 'skill' THEN (SELECT id FROM skills WHERE slug = $4::text)
              ELSE (SELECT id FROM companies WHERE slug = $4::text AND has_public_page)
            END`,
    [ctx.now, scope.kind, CATALOG_SCOPE, scope.slug],
  );
  return row?.open_jobs ?? 0;
}

/** One value of a facet counted from the counters: a sector's or skill's slug and name, its open jobs. */
export interface CountedValue {
  value: string;
  name: string | null;
  count: number;
}

/**
 * The open jobs of every sector or skill at instant `at`, from their counters: the most first (then
 * by slug), at most `limit`, none without open jobs. The same numbers as grouping the public jobs by
 * sector or skill (./types/job/facets.ts), in one short statement at any size. On the plain SQL
 * runner when there is one (./sql.ts): Prisma's raw queries cost more CPU than the statement.
 */
export async function scopeCounts(
  sql: SqlQuery,
  scopes: "sectors" | "skills",
  at: Date,
  limit: number,
): Promise<CountedValue[]> {
  // The table name is one of two literals, never input.
  return sql.query<CountedValue>(
    `SELECT f.value, f.name, f.count FROM (
       SELECT x.slug AS value, x.name, ${OPEN_JOBS_AT} AS count
         FROM ${scopes} x JOIN catalog_counters c ON c.scope_id = x.id) f
      WHERE f.count > 0 ORDER BY f.count DESC, f.value LIMIT $2::int`,
    [at, limit],
  );
}

/** The public jobs of the whole catalog at instant `at`, from its counter. */
export async function catalogOpenJobs(sql: SqlQuery, at: Date): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT ${OPEN_JOBS_AT} AS n FROM catalog_counters c WHERE c.scope_id = $2::uuid`,
    [at, CATALOG_SCOPE],
  );
  return row?.n ?? 0;
}
