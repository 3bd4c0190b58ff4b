// Plain SQL for the read model's hottest reads (a page of jobs, a job), where Prisma's query
// planning and result mapping cost more CPU than the statement itself (issue 11's profile: about
// a third of a job request). Conditions are written once beside their Prisma form (./gates.ts,
// ./types/job/conditions.ts), so both paths select the same rows; test/read-model/job-sql.test.ts checks it.
import type { SqlRunner } from "../db/database.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";

export type { SqlRunner };

/** The parameters of one statement: each value added is named $1, $2, … in the order added. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** The placeholder of `value`, cast to `type` when given (e.g. "timestamptz", "text[]"). */
  add(value: unknown, type?: string): string {
    this.values.push(value);
    return type ? `$${this.values.length}::${type}` : `$${this.values.length}`;
  }
}

/** A condition on the jobs table (aliased j), adding its values to the statement's parameters. */
export type SqlCondition = (params: SqlParams) => string;

/** All of the conditions. */
export const allOf =
  (conditions: readonly SqlCondition[]): SqlCondition =>
  (params) =>
    conditions.map((condition) => `(${condition(params)})`).join(" AND ") || "true";

/** A stored enum value compared as the enum: the text parameter cast, so an index on the column applies. */
export const enumValue = (params: SqlParams, value: string, enumType: string) =>
  `CAST(${params.add(value, "text")} AS "${enumType}")`;

/** What a read needs of a runner: a statement and its rows. */
export type SqlQuery = Pick<SqlRunner, "query">;

const runners = new WeakMap<PrismaClient, SqlQuery>();

/**
 * Plain SQL through a Prisma client (its pool and statement limit: a count on the counting client).
 * One runner per client: what is kept per runner (the words the planner knows, ../search/known-words.ts)
 * is then kept per client, not read again on every request.
 */
export const prismaSql = (prisma: PrismaClient): SqlQuery => {
  let runner = runners.get(prisma);
  if (!runner) {
    runner = { query: <Row>(text: string, params: unknown[] = []) => prisma.$queryRawUnsafe<Row[]>(text, ...params) };
    runners.set(prisma, runner);
  }
  return runner;
};
