import type { PrismaClient } from "../generated/prisma/client.ts";
import type { SqlRunner } from "./sql.ts";
import type { TotalsCache } from "./totals.ts";

export interface GraphQLContext {
  prisma: PrismaClient;
  /**
   * The same database's plain SQL, for the reads that run their own statement (./sql.ts); null
   * sends them through Prisma too.
   */
  sql: SqlRunner | null;
  /** One instant per operation, so every gate in a request agrees on what "expired" means. */
  now: Date;
  /** Recent totals of paged lists, when the app keeps them. */
  totals: TotalsCache | null;
}

/** What a context is made of: the database's clients, and the app's cache of list totals (./totals.ts). */
export interface ContextSources {
  prisma: PrismaClient;
  sql?: SqlRunner | null;
  /** null counts every time. */
  totals?: TotalsCache | null;
}

export function createContext(sources: ContextSources, now = new Date()): GraphQLContext {
  return { prisma: sources.prisma, sql: sources.sql ?? null, now, totals: sources.totals ?? null };
}

/**
 * A fresh context per operation: what the REST layer is given to run operations with, so it
 * never holds the database client itself.
 */
export type ContextFactory = () => GraphQLContext;

export const contextFactory =
  (sources: ContextSources): ContextFactory =>
  () =>
    createContext(sources);
