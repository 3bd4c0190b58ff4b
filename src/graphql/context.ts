import type { PrismaClient } from "../generated/prisma/client.ts";
import type { TotalsCache } from "./totals.ts";

export interface GraphQLContext {
  prisma: PrismaClient;
  /** One instant per operation, so every gate in a request agrees on what "expired" means. */
  now: Date;
  /** Recent totals of paged lists, when the app keeps them. */
  totals: TotalsCache | null;
}

/** `totals`: the app's cache of list totals (./totals.ts listTotals); null counts every time. */
export function createContext(
  prisma: PrismaClient,
  now = new Date(),
  totals: TotalsCache | null = null,
): GraphQLContext {
  return { prisma, now, totals };
}

/**
 * A fresh context per operation: what the REST layer is given to run operations with, so it
 * never holds the database client itself.
 */
export type ContextFactory = () => GraphQLContext;

export const contextFactory =
  (prisma: PrismaClient, totals: TotalsCache | null = null): ContextFactory =>
  () =>
    createContext(prisma, new Date(), totals);
