import type { PrismaClient } from "../generated/prisma/client.ts";

export interface GraphQLContext {
  prisma: PrismaClient;
  /** One instant per operation, so every gate in a request agrees on what "expired" means. */
  now: Date;
}

export function createContext(prisma: PrismaClient, now = new Date()): GraphQLContext {
  return { prisma, now };
}
