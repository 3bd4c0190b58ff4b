// Totals of paged lists, remembered for a few seconds. Counting every public job of a million
// costs more than loading a page of them (an index-only scan of the whole list, ~140 ms on the
// server), and a total a few seconds old is as good to a client paging through results. Keyed
// by the list and its filter; concurrent requests for the same total share one count. One cache
// per database client, configured once by the app (configureTotals) and found by the context.
import type { PrismaClient } from "../generated/prisma/client.ts";

export interface TotalsCache {
  count(key: string, load: () => Promise<number>): Promise<number>;
}

const MAX_ENTRIES = 10_000;

export function createTotalsCache(ttlSeconds: number): TotalsCache {
  const entries = new Map<string, { expires: number; value: Promise<number> }>();
  return {
    count(key, load) {
      const now = Date.now();
      const hit = entries.get(key);
      if (hit && hit.expires > now) return hit.value;
      if (entries.size >= MAX_ENTRIES) {
        for (const [k, e] of entries) if (e.expires <= now) entries.delete(k);
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      }
      const value = load();
      entries.set(key, { expires: now + ttlSeconds * 1000, value });
      // A failed count is not remembered.
      value.catch(() => entries.delete(key));
      return value;
    },
  };
}

const caches = new WeakMap<PrismaClient, TotalsCache>();

/** Remember totals for ttlSeconds for this client's lists; 0 counts every time. */
export function configureTotals(prisma: PrismaClient, ttlSeconds: number): void {
  if (ttlSeconds > 0) caches.set(prisma, createTotalsCache(ttlSeconds));
  else caches.delete(prisma);
}

export function totalsFor(prisma: PrismaClient): TotalsCache | null {
  return caches.get(prisma) ?? null;
}
