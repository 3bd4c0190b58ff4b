// Totals of paged lists, counted off the request path and served stale while they are recounted.
// Counting every public job matching a filter can cost more than loading a page of them (up to
// a scan of the table for a common search word at a million jobs), and a total a few seconds old
// is as good to a client paging through results. So, per list and filter (the key):
//   - a total younger than ttl is answered as it is;
//   - an older one is answered as it is too, and recounted in the background (one count per key,
//     however many requests ask); a recount that fails or times out keeps the last value;
//   - a total never counted yet is counted at once, ahead of background recounts (concurrent
//     requests share the count). A list that can bound its count (jobs: a million rows) gives the
//     request a capped count beside it, on the `bounding` client: fewer rows than the cap is the
//     exact total. Requests wait for the exact count (or a capped count under the cap) until
//     FIRST_COUNT_BOUNDED_WAIT_MS after that count started, then answer a lower bound (exact:
//     false): the cap if a capped count reached it (remembered), else 0, which the page raises to
//     the rows up to it (paging.ts). The count goes on, so a later request gets the exact total; a
//     failed one starts again after a pause (doubled after each failure in a row, at most 10
//     minutes), its requests answering the bound meanwhile. A request is never refused for its
//     total, nor held longer than the wait by it. A list that cannot bound its count (the short ones)
//     waits for it at most FIRST_COUNT_WAIT_MS, then answers 503 with Retry-After (TotalNotReady).
// Counts run on their own client (`counting`: on a server, a small pool with a longer statement
// limit than requests have), at most MAX_CONCURRENT_COUNTS at a time, so recounts never take the
// connections requests need; capped counts at most MAX_CONCURRENT_BOUNDS at a time (a request that
// finds them all busy goes without one), on the `bounding` client (a short statement limit), and
// samples as many, on the `sampling` client (a limit under the long wait). What waits for a slot is
// bounded too (MAX_QUEUED a queue): a flood of new filters (a scraper's, or a bot trying words) would
// otherwise queue counts for minutes of database time after their requests had been answered. A
// first count that finds its queue full is not started (CountsQueueFull): its requests answer what
// they would answer for a count that failed, a lower bound or a sample, or a 503 with Retry-After at
// once; a recount that finds it full is left for a later request. The app makes one cache
// (listTotals) and gives it to the contexts it creates (./context.ts); a context without one counts
// every time.
import type { PrismaClient } from "../generated/prisma/client.ts";

/** Counts a total with the client it is given (the cache's counting client). */
export type CountTotal = (prisma: PrismaClient) => Promise<number>;

/** Counts at most `cap` rows of the list with the client it is given (the cache's bounding client). */
export type CountAtMost = (prisma: PrismaClient, cap: number) => Promise<number>;

/** A list's total: exact, or a lower bound while the first count of its filter is still running. */
export interface Total {
  value: number;
  exact: boolean;
}

export interface TotalsCache {
  /** `atMost`: the list can bound its count (null or absent: it cannot, or need not). */
  count(key: string, load: CountTotal, atMost?: CountAtMost | null): Promise<Total>;
  /**
   * Any other counted value (a list's facet counts), with the same care: remembered per key,
   * answered stale while one recount runs, counted on the counting client. A first count is waited
   * for as a bounded total's is when `sample` is given: past the short wait, the sample's answer
   * (of at most the cap's matching rows, on the bounding client) is answered as not exact, and
   * remembered until the count is done. Without a sample, or when the sample fails, the first count
   * is waited for at most as a short list's total is (then TotalNotReady, a 503, while it goes on).
   */
  remember<T>(key: string, load: (prisma: PrismaClient) => Promise<T>, sample?: Sample<T>): Promise<Counted<T>>;
}

/**
 * The value of `load` over at most `cap` matching rows (any cap of them); exact when the sample read
 * every matching row (fewer than the cap).
 */
export type Sample<T> = (prisma: PrismaClient, cap: number) => Promise<Counted<T>>;

/** A remembered value: exact, or a sample's while the first count of its key is still running. */
export interface Counted<T> {
  value: T;
  exact: boolean;
}

export interface TotalsOptions {
  ttlSeconds: number;
  /** The client counts run on; by default the request's own. */
  counting: PrismaClient;
  /** The client capped first counts run on; by default `counting`. */
  bounding?: PrismaClient;
  /** The client samples run on; by default `bounding`. */
  sampling?: PrismaClient;
  maxEntries?: number;
  /** Counts (and samples) that may wait for a slot, in each queue; more are not started. */
  maxQueued?: number;
  /** How long after a failed recount the next one may start. */
  retryAfterFailureMs?: number;
  maxConcurrentCounts?: number;
  /** How long a request waits for the first count of its total. */
  firstCountWaitMs?: number;
  /** How long a request of a list that can bound its count waits for an exact first total. */
  firstCountBoundedWaitMs?: number;
  /** The most rows a bounded count reads; a total at least this large is answered as a lower bound. */
  countCap?: number;
  /** The clock, for tests. */
  now?: () => number;
}

interface Entry {
  value?: unknown;
  /** When value was counted (ms). */
  countedAt: number;
  /** The count under way, shared by every request that waits for it. */
  counting?: Promise<unknown>;
  /** A total that can be bounded: when its first count started (ms); its requests wait until then + the wait. */
  firstCountAt?: number;
  /** A capped count reached the cap: the lower bound answered until the exact count is done. */
  atLeast?: number;
  /** A sample's value (remember): answered, as not exact, until the first count is done. */
  sampled?: unknown;
  /** The sample under way (or waiting for a slot), shared by the key's requests. */
  sampling?: Promise<Counted<unknown>>;
  /** A first count that failed: no other starts before this (ms); requests answer the lower bound. */
  retryAt?: number;
  /** First counts of this key that failed in a row: each doubles the pause before the next. */
  failures?: number;
}

const MAX_ENTRIES = 10_000;
const MAX_CONCURRENT_COUNTS = 2;
const MAX_CONCURRENT_BOUNDS = 2;
// Counts take 0.1-10 s at a million jobs, two at a time: 32 waiting is already longer than a request
// waits for any of them. Samples take 10-400 ms: 16 waiting fit in the long wait.
const MAX_QUEUED_COUNTS = 32;
const MAX_QUEUED_SAMPLES = 16;
const RETRY_AFTER_FAILURE_MS = 5_000;
const MAX_FIRST_COUNT_PAUSE_MS = 10 * 60_000;
// Below the counting client's statement limit (10 s), so a count that is merely queued behind
// others is not mistaken for one that cannot finish.
const FIRST_COUNT_WAIT_MS = 5_000;
// A request of a list that can bound its count waits no longer than this for its total, whatever
// its filter costs to count.
export const FIRST_COUNT_BOUNDED_WAIT_MS = 400;
// Enough to say "1,000+" of a broad filter. Reading up to the cap checks rows against the filter
// until it has found that many: at a million jobs 10-300 ms on a quiet server.
export const COUNT_CAP = 1_000;

/** A total's first count took longer than a request waits for it; the count goes on. */
export class TotalNotReady extends Error {
  override name = "TotalNotReady";
  // Prisma's "timed out fetching a connection from the pool": the same kind of wait, and a code
  // src/db/errors.ts maps to 503 database_unavailable with Retry-After.
  readonly code = "P2024";
  constructor(waitedMs: number) {
    super(`the total of this list was not counted within ${waitedMs} ms; it is still being counted`);
  }
}

/**
 * A count or sample not started: as many wait for a slot as may (the queue is bounded). A kind of
 * TotalNotReady: the same 503 with Retry-After where nothing else can answer.
 */
export class CountsQueueFull extends TotalNotReady {
  override name = "CountsQueueFull";
  constructor(waiting: number) {
    super(0);
    this.message = `${waiting} counts are waiting for the database already; this one was not started`;
  }
}

export function createTotalsCache(options: TotalsOptions): TotalsCache {
  const ttlMs = options.ttlSeconds * 1000;
  const retryMs = options.retryAfterFailureMs ?? RETRY_AFTER_FAILURE_MS;
  const firstWaitMs = options.firstCountWaitMs ?? FIRST_COUNT_WAIT_MS;
  const boundedWaitMs = options.firstCountBoundedWaitMs ?? FIRST_COUNT_BOUNDED_WAIT_MS;
  const [cap, clock] = [options.countCap ?? COUNT_CAP, options.now ?? Date.now];
  const { limit, bounds, samples } = slots(options);
  const bounding = options.bounding ?? options.counting;
  const samplingClient = options.sampling ?? bounding;
  const entries = recentEntries(options.maxEntries ?? MAX_ENTRIES);

  function recount<T>(
    key: string,
    entry: Entry,
    load: (prisma: PrismaClient) => Promise<T>,
    urgent: boolean,
  ): Promise<T> {
    const counting = limit(() => load(options.counting), urgent);
    entry.counting = counting;
    counting.then(
      (value) => {
        entry.counting = undefined;
        entry.value = value;
        entry.countedAt = clock();
        entry.sampled = undefined; // answered no more
      },
      (error: unknown) => {
        entry.counting = undefined;
        // A recount not started (its queue full) is left for a later request, as it would be once stale.
        if (error instanceof CountsQueueFull && entry.value !== undefined) return;
        // Keep the last value (if any) and try again after a pause, not on the next request.
        entry.countedAt = clock() - ttlMs + retryMs;
        // A bounded total's requests answer its lower bound meanwhile; any other's next request counts again.
        // A count that keeps failing (one that outlasts the counting limit) is tried less and less
        // often, up to once every MAX_FIRST_COUNT_PAUSE_MS, rather than rescanning every few seconds;
        // one that was not started pauses the shortest time.
        if (entry.value === undefined && entry.firstCountAt !== undefined) {
          if (!(error instanceof CountsQueueFull)) entry.failures = (entry.failures ?? 0) + 1;
          const pause = retryMs * 2 ** Math.max(0, (entry.failures ?? 0) - 1);
          entry.retryAt = clock() + Math.min(pause, MAX_FIRST_COUNT_PAUSE_MS);
        } else if (entry.value === undefined) entries.forget(key, entry);
      },
    );
    return counting;
  }

  /**
   * The first count of a key whose requests wait for it only a short while (a total that can be
   * bounded, a value that can be sampled). The wait runs from the start of the count, not from each
   * request: while a count that outlasted it goes on (a common word at a million jobs, seconds on a
   * loaded server), later requests answer the bound or the sample at once instead of each waiting in
   * turn. A failed count is started again only after the pause (null meanwhile).
   */
  function startFirstCount<T>(key: string, entry: Entry, load: (prisma: PrismaClient) => Promise<T>) {
    const now = clock();
    let counting = (entry.counting as Promise<T> | undefined) ?? null;
    if (!counting && (entry.retryAt === undefined || now >= entry.retryAt)) {
      entry.firstCountAt = now;
      counting = recount(key, entry, load, true);
    }
    return { counting, waitMs: counting ? Math.max(0, entry.firstCountAt! + boundedWaitMs - now) : 0 };
  }

  /** A value counted before, answered as it is; a stale one is recounted in the background. */
  function known<T>(key: string, entry: Entry, load: (prisma: PrismaClient) => Promise<T>): Counted<T> {
    // The recount's failure is handled in recount.
    if (!entry.counting && clock() - entry.countedAt >= ttlMs) recount(key, entry, load, false).catch(ignore);
    return { value: entry.value as T, exact: true };
  }

  /** A first count waited for at most firstWaitMs (then TotalNotReady, while it goes on). */
  async function waitFirst<T>(key: string, entry: Entry, load: (prisma: PrismaClient) => Promise<T>) {
    const counting = (entry.counting as Promise<T> | undefined) ?? recount(key, entry, load, true);
    return { value: await waitAtMost(counting, firstWaitMs), exact: true };
  }

  return {
    async count(key, load, atMost) {
      const entry = entries.touch(key);
      if (entry.value !== undefined) return known(key, entry, load);
      if (!atMost) return waitFirst(key, entry, load);
      const { counting, waitMs } = startFirstCount(key, entry, load);
      // A bound at the cap is remembered; one under it is the exact total (remembered as the value).
      const bound = entry.atLeast === undefined ? bounds.tryRun(() => atMost(bounding, cap)) : null;
      return firstTotal(entry, counting, bound, { waitMs, cap, clock });
    },
    async remember<T>(key: string, load: (prisma: PrismaClient) => Promise<T>, sample?: Sample<T>) {
      const entry = entries.touch(key);
      if (entry.value !== undefined) return known(key, entry, load);
      if (!sample) return waitFirst(key, entry, load);
      const { counting, waitMs } = startFirstCount(key, entry, load);
      // One whose turn comes after the key's count is in answers the count instead of reading the table.
      const run = () =>
        entry.value !== undefined
          ? Promise.resolve({ value: entry.value as T, exact: true })
          : sample(samplingClient, cap);
      const sampling = entry.sampled === undefined ? sampleOnce(entry, () => samples(run, true)) : null;
      return firstSampled(entry, counting, sampling, { waitMs, longWaitMs: firstWaitMs, clock });
    },
  };
}

/** The slots counts, capped counts and samples run in, and the queues that wait for them. */
function slots(options: TotalsOptions) {
  return {
    limit: createLimiter(options.maxConcurrentCounts ?? MAX_CONCURRENT_COUNTS, options.maxQueued ?? MAX_QUEUED_COUNTS),
    bounds: createSkippingLimiter(MAX_CONCURRENT_BOUNDS),
    // Samples wait their turn rather than go without: a value without one has no bound to answer
    // (a list's total has 0, which its page raises). Eight cold facets at once left six without a
    // sample, each waiting 5 s for its full count, then a 503.
    samples: createLimiter(MAX_CONCURRENT_BOUNDS, options.maxQueued ?? MAX_QUEUED_SAMPLES),
  };
}

/** The key's sample, started once however many requests ask while it runs or waits for a slot. */
function sampleOnce<T>(entry: Entry, start: () => Promise<Counted<T>>): Promise<Counted<T>> {
  if (entry.sampling) return entry.sampling as Promise<Counted<T>>;
  const sampling = start();
  entry.sampling = sampling;
  const done = () => {
    if (entry.sampling === sampling) entry.sampling = undefined;
  };
  sampling.then(done, done);
  return sampling;
}

/** The entries of the most recently asked keys, at most `max`. */
function recentEntries(max: number) {
  // Insertion order is recency order: a hit moves its key to the end, eviction takes the front.
  const entries = new Map<string, Entry>();
  return {
    /** The key's entry (a new one if none), now the most recent. */
    touch(key: string): Entry {
      const entry = entries.get(key) ?? { countedAt: 0 };
      entries.delete(key);
      entries.set(key, entry);
      while (entries.size > max) entries.delete(entries.keys().next().value!);
      return entry;
    },
    /** Drops the key's entry, if it is still this one. */
    forget(key: string, entry: Entry) {
      if (entries.get(key) === entry) entries.delete(key);
    },
  };
}

/**
 * The first total of a key whose list can bound its count: the exact count, or a capped count
 * under the cap (remembered: it is exact), whichever comes first within the wait; else a lower
 * bound, the cap if the capped count reached it by then.
 */
function firstTotal(
  entry: Entry,
  counting: Promise<number> | null,
  bound: Promise<number> | null,
  { waitMs, cap, clock }: { waitMs: number; cap: number; clock: () => number },
): Promise<Total> {
  return new Promise<Total>((resolve) => {
    const timer = setTimeout(() => resolve({ value: entry.atLeast ?? 0, exact: false }), waitMs);
    const settle = (total: Total) => {
      clearTimeout(timer);
      resolve(total);
    };
    // A failed count leaves the answer to the wait: the page itself says whether the database is there.
    counting?.then((value) => settle({ value, exact: true }), ignore);
    bound?.then((value) => {
      if (value >= cap) {
        entry.atLeast = value;
        return;
      }
      if (entry.value === undefined) Object.assign(entry, { value, countedAt: clock() });
      settle({ value, exact: true });
    }, ignore);
  });
}

/**
 * The first value of a sampled key: the exact count, or a sample of every matching row, whenever it
 * comes; past `waitMs`, the sample's value (remembered in the entry) as soon as there is one. With
 * neither: TotalNotReady after `longWaitMs` (the count goes on), or the count's error at once when it
 * failed and no sample can come. `sampling` is null only where a sample is remembered already.
 */
function firstSampled<T>(
  entry: Entry,
  counting: Promise<T> | null,
  sampling: Promise<Counted<T>> | null,
  { waitMs, longWaitMs, clock }: { waitMs: number; longWaitMs: number; clock: () => number },
): Promise<Counted<T>> {
  return new Promise<Counted<T>>((resolve, reject) => {
    let waited = false;
    let countError: unknown = new TotalNotReady(0);
    let running = (counting ? 1 : 0) + (sampling ? 1 : 0);
    const shortTimer = setTimeout(() => {
      waited = true;
      answerSample();
    }, waitMs);
    const longTimer = setTimeout(() => refuse(new TotalNotReady(longWaitMs)), Math.max(waitMs, longWaitMs));
    function answerSample() {
      if (entry.sampled !== undefined) settle({ value: entry.sampled as T, exact: false });
    }
    function settle(counted: Counted<T>) {
      clearTimeout(shortTimer);
      clearTimeout(longTimer);
      resolve(counted);
    }
    function refuse(error: unknown) {
      clearTimeout(shortTimer);
      clearTimeout(longTimer);
      reject(error instanceof Error ? error : new Error(String(error)));
    }
    // Nothing left that could answer (the count failed or pauses, and the sample failed).
    function ended() {
      if (--running <= 0 && entry.sampled === undefined) refuse(countError);
    }
    counting?.then(
      (value) => settle({ value, exact: true }),
      (error: unknown) => {
        countError = error;
        answerSample();
        ended();
      },
    );
    sampling?.then(({ value, exact }) => {
      // A sample of every matching row is the exact value: remembered as the count's would be.
      if (exact) {
        if (entry.value === undefined) Object.assign(entry, { value, countedAt: clock() });
        settle({ value, exact });
        return;
      }
      if (entry.value === undefined) entry.sampled = value;
      if (waited) answerSample();
    }, ended);
  });
}

/** The count, or TotalNotReady after ms (the count goes on). */
function waitAtMost<T>(counting: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TotalNotReady(ms)), ms);
    counting.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Runs at most `max` tasks at once; the others wait their turn in order, urgent ones (a request
 * waits for them) before the rest, at most `maxQueued` in each queue: beyond that a task is not
 * run, and its promise rejects at once with CountsQueueFull.
 */
function createLimiter(max: number, maxQueued: number) {
  let running = 0;
  const urgentQueue: (() => void)[] = [];
  const queue: (() => void)[] = [];
  return async <T>(task: () => Promise<T>, urgent: boolean): Promise<T> => {
    // A finishing task hands its slot straight to the next in line, so `running` never overshoots.
    if (running >= max) {
      const line = urgent ? urgentQueue : queue;
      if (line.length >= maxQueued) throw new CountsQueueFull(line.length);
      await new Promise<void>((resolve) => line.push(resolve));
    } else running++;
    try {
      return await task();
    } finally {
      const next = urgentQueue.shift() ?? queue.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Runs at most `max` tasks at once; beyond that, runs nothing (null). */
function createSkippingLimiter(max: number) {
  let running = 0;
  return {
    tryRun<T>(task: () => Promise<T>): Promise<T> | null {
      if (running >= max) return null;
      running++;
      const done = task();
      done.then(release, release);
      return done;
    },
  };
  function release() {
    running--;
  }
}

function ignore() {}

/**
 * The cache of list totals for ttlSeconds, recounting stale ones in the background on `counting`,
 * bounding first counts on `more.bounding` (default: `counting`) and sampling on `more.sampling`
 * (default: the bounding client); null for 0 (every total is counted on its request).
 */
export function listTotals(
  ttlSeconds: number,
  counting: PrismaClient,
  /** The bounding and sampling clients, and the cap and waits for tests. */
  more: Pick<
    TotalsOptions,
    "bounding" | "sampling" | "countCap" | "firstCountBoundedWaitMs" | "firstCountWaitMs" | "maxQueued"
  > = {},
): TotalsCache | null {
  return ttlSeconds > 0 ? createTotalsCache({ ttlSeconds, counting, ...more }) : null;
}
