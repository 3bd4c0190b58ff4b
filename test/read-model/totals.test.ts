// List totals: stale-while-revalidate, one count per key, a failed recount keeps the last value,
// counts on the counting client and at most two at a time. No database: the counts are stubs
// and the clock is the test's. On a server, the counting client's own statement limit.
import { describe, expect, it } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import {
  CountsQueueFull,
  createTotalsCache,
  TotalNotReady,
  type CountTotal,
  type TotalsOptions,
} from "../../src/graphql/totals.ts";
import { loadConfig } from "../../src/config/env.ts";
import { openDatabase } from "../../src/db/database.ts";
import { isDatabaseUnavailable } from "../../src/db/errors.ts";
import { testDatabaseKind } from "../helpers/database.ts";

const counting = { name: "counting client" } as unknown as PrismaClient;

/** A count the test resolves or rejects by hand, recording the client it was given. */
function deferredCounts() {
  const calls: { client: PrismaClient; resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
  const load: CountTotal = (client) =>
    new Promise<number>((resolve, reject) => {
      calls.push({ client, resolve, reject });
    });
  return { calls, load };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function setup(
  options: Pick<
    TotalsOptions,
    "maxEntries" | "firstCountWaitMs" | "firstCountBoundedWaitMs" | "countCap" | "bounding" | "sampling" | "maxQueued"
  > = {},
) {
  let now = 1_000_000;
  const totals = createTotalsCache({
    ttlSeconds: 30,
    counting,
    now: () => now,
    retryAfterFailureMs: 5_000,
    ...options,
  });
  // Most cases are about exact counts: `cache` answers the number; `totals` the whole Total.
  const cache = { count: async (key: string, load: CountTotal) => (await totals.count(key, load)).value };
  return { cache, totals, advance: (ms: number) => (now += ms) };
}

describe("list totals", () => {
  it("wait for the first count of a key, shared by concurrent requests, run on the counting client", async () => {
    const { cache } = setup();
    const { calls, load } = deferredCounts();
    const first = cache.count("jobs:q=rust", load);
    const second = cache.count("jobs:q=rust", load);
    await tick();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.client).toBe(counting);
    calls[0]!.resolve(42);
    expect(await Promise.all([first, second])).toEqual([42, 42]);
  });

  it("answer a fresh total without counting, and a stale one at once while one recount runs", async () => {
    const { cache, advance } = setup();
    const { calls, load } = deferredCounts();
    const first = cache.count("k", load);
    await tick();
    calls[0]!.resolve(10);
    await first;
    advance(29_000);
    expect(await cache.count("k", load)).toBe(10);
    expect(calls).toHaveLength(1);
    advance(2_000);
    // Stale: three requests get the last value immediately; one recount starts.
    expect(await Promise.all([cache.count("k", load), cache.count("k", load), cache.count("k", load)])).toEqual([
      10, 10, 10,
    ]);
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(11);
    await tick();
    expect(await cache.count("k", load)).toBe(11);
    expect(calls).toHaveLength(2);
  });

  it("keep the last value when a recount fails, and retry only after a pause", async () => {
    const { cache, advance } = setup();
    const { calls, load } = deferredCounts();
    const first = cache.count("k", load);
    await tick();
    calls[0]!.resolve(7);
    await first;
    advance(31_000);
    expect(await cache.count("k", load)).toBe(7);
    await tick();
    calls[1]!.reject(new Error("canceling statement due to statement timeout"));
    await tick();
    expect(await cache.count("k", load)).toBe(7);
    advance(4_000);
    expect(await cache.count("k", load)).toBe(7);
    expect(calls).toHaveLength(2);
    advance(2_000);
    expect(await cache.count("k", load)).toBe(7);
    await tick();
    expect(calls).toHaveLength(3);
  });

  it("pass a failed first count to its requests and count again on the next one", async () => {
    const { cache } = setup();
    const { calls, load } = deferredCounts();
    const first = cache.count("k", load);
    await tick();
    calls[0]!.reject(new Error("canceling statement due to statement timeout"));
    await expect(first).rejects.toThrow("statement timeout");
    const again = cache.count("k", load);
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(3);
    expect(await again).toBe(3);
  });

  it("run at most two counts at a time; the others wait their turn", async () => {
    const { cache } = setup();
    const { calls, load } = deferredCounts();
    const totals = ["a", "b", "c", "d"].map((key) => cache.count(key, load));
    await tick();
    expect(calls).toHaveLength(2);
    calls[0]!.resolve(1);
    await tick();
    expect(calls).toHaveLength(3);
    calls[1]!.resolve(2);
    calls[2]!.resolve(3);
    await tick();
    expect(calls).toHaveLength(4);
    calls[3]!.resolve(4);
    expect(await Promise.all(totals)).toEqual([1, 2, 3, 4]);
  });

  it("answer a 503-class error when a first count outlasts the wait, and the total to the retry", async () => {
    const { cache } = setup({ firstCountWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const first = cache.count("jobs:q=engineer", load);
    await expect(first).rejects.toBeInstanceOf(TotalNotReady);
    await expect(first).rejects.toSatisfy(isDatabaseUnavailable);
    // The count went on: it answers the retry, and no second count started.
    calls[0]!.resolve(512_650);
    await tick();
    expect(await cache.count("jobs:q=engineer", load)).toBe(512_650);
    expect(calls).toHaveLength(1);
  });

  it("run a first count, which a request waits for, before queued background recounts", async () => {
    const { cache, advance } = setup();
    const started: string[] = [];
    const pending = new Map<string, (n: number) => void>();
    const loadOf =
      (key: string): CountTotal =>
      () =>
        new Promise<number>((resolve) => {
          started.push(key);
          pending.set(key, resolve);
        });
    for (const key of ["a", "b", "c"]) {
      const counted = cache.count(key, loadOf(key));
      await tick();
      pending.get(key)!(1);
      await counted;
    }
    advance(31_000);
    started.length = 0;
    for (const key of ["a", "b", "c"]) await cache.count(key, loadOf(key));
    const first = cache.count("d", loadOf("d"));
    await tick();
    expect(started).toEqual(["a", "b"]);
    pending.get("a")!(2);
    await tick();
    expect(started).toEqual(["a", "b", "d"]);
    pending.get("d")!(4);
    expect(await first).toBe(4);
    pending.get("b")!(2);
    await tick();
    expect(started).toEqual(["a", "b", "d", "c"]);
    pending.get("c")!(2);
  });

  it("answer a capped count under the cap as the exact first total, without waiting for the full count", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    const bounds: number[] = [];
    const atMost = (_client: PrismaClient, cap: number) => (bounds.push(cap), Promise.resolve(37));
    expect(await totals.count("jobs:q=kutch", load, atMost)).toEqual({ value: 37, exact: true });
    expect(bounds).toEqual([100]);
    // Remembered: the next request neither waits nor counts again, while the full count finishes.
    expect(await totals.count("jobs:q=kutch", load, atMost)).toEqual({ value: 37, exact: true });
    expect(bounds).toHaveLength(1);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(37);
  });

  it("answer the cap as a lower bound when the first count outlasts a short wait, the exact total next", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const atMost = (_client: PrismaClient, cap: number) => Promise.resolve(cap);
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 100, exact: false });
    // The count went on; once done it answers, and no second full count started.
    calls[0]!.resolve(512_650);
    await tick();
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 512_650, exact: true });
    expect(calls).toHaveLength(1);
  });

  it("count the wait from the start of the count: later requests answer the bound at once while it goes on", async () => {
    const { totals, advance } = setup({ countCap: 100, firstCountBoundedWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    const bounds: number[] = [];
    const atMost = (_client: PrismaClient, cap: number) => (bounds.push(cap), Promise.resolve(cap));
    const first = totals.count("jobs:q=engineer", load, atMost);
    await tick();
    advance(60_000);
    // Past the first request's wait: the next ones neither wait nor bound again, nor start a count.
    const started = performance.now();
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 100, exact: false });
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 100, exact: false });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(bounds).toEqual([100]);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(512_650);
    expect(await first).toEqual({ value: 512_650, exact: true });
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 512_650, exact: true });
  });

  it("answer the bound after a failed first count, and count again only after a pause that doubles", async () => {
    const { totals, advance } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const atMost = (_client: PrismaClient, cap: number) => Promise.resolve(cap);
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 100, exact: false });
    calls[0]!.reject(new Error("canceling statement due to statement timeout"));
    await tick();
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 100, exact: false });
    expect(calls).toHaveLength(1);
    advance(5_000);
    const again = totals.count("jobs:q=engineer", load, atMost);
    await tick();
    expect(calls).toHaveLength(2);
    // Failing again, it waits twice as long before the third try.
    calls[1]!.reject(new Error("canceling statement due to statement timeout"));
    expect(await again).toEqual({ value: 100, exact: false });
    advance(5_000);
    await totals.count("jobs:q=engineer", load, atMost);
    expect(calls).toHaveLength(2);
    advance(5_000);
    const third = totals.count("jobs:q=engineer", load, atMost);
    await tick();
    expect(calls).toHaveLength(3);
    calls[2]!.resolve(512_650);
    expect(await third).toEqual({ value: 512_650, exact: true });
  });

  it("answer the full count when it is done within the wait, even with the capped count at its cap", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    const answer = totals.count("jobs:work_model=remote", load, (_client, cap) => Promise.resolve(cap));
    await tick();
    calls[0]!.resolve(250_000);
    expect(await answer).toEqual({ value: 250_000, exact: true });
  });

  it("never refuse a request for its total: a failed capped count and a slow full count give a bound of 0", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const atMost = () => Promise.reject(new Error("canceling statement due to statement timeout"));
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 0, exact: false });
    calls[0]!.resolve(9);
    await tick();
    expect(await totals.count("jobs:q=engineer", load, atMost)).toEqual({ value: 9, exact: true });
  });

  it("hold no request past the wait: a capped count still running gives a bound of 0, the exact total next", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const never = () => new Promise<number>(() => {});
    const started = performance.now();
    expect(await totals.count("jobs:q=magni", load, never)).toEqual({ value: 0, exact: false });
    expect(performance.now() - started).toBeLessThan(5_000);
    calls[0]!.resolve(22_331);
    await tick();
    expect(await totals.count("jobs:q=magni", load, never)).toEqual({ value: 22_331, exact: true });
  });

  it("run capped counts on the bounding client, two at a time: a third first total goes without one", async () => {
    const bounding = { name: "bounding client" } as unknown as PrismaClient;
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20, bounding });
    const { load } = deferredCounts();
    const clients: PrismaClient[] = [];
    const atMost = (client: PrismaClient) => (clients.push(client), new Promise<number>(() => {}));
    const answers = await Promise.all(["a", "b", "c"].map((word) => totals.count(`jobs:q=${word}`, load, atMost)));
    expect(answers).toEqual(Array(3).fill({ value: 0, exact: false }));
    expect(clients).toEqual([bounding, bounding]);
  });

  it("wait for the full count when the list has nothing to bound (a kept counter answers it)", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const answer = totals.count("jobs:sector=retail", load, null);
    await new Promise((resolve) => setTimeout(resolve, 40));
    calls[0]!.resolve(41_000);
    expect(await answer).toEqual({ value: 41_000, exact: true });
  });

  it("queue at most maxQueued first counts: the next is refused at once and never runs, its key counted later", async () => {
    const { cache, advance } = setup({ maxQueued: 2, firstCountWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    // Two run, two wait; the fifth is not started: a 503-class error at once, not after the wait.
    const waiting = ["a", "b", "c", "d"].map((key) => cache.count(key, load));
    const started = performance.now();
    const refused = await cache.count("e", load).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(refused).toBeInstanceOf(CountsQueueFull);
    expect(refused).toSatisfy(isDatabaseUnavailable);
    for (let i = 0; i < 4; i++) {
      await tick();
      calls[i]!.resolve(i + 1);
    }
    expect(await Promise.all(waiting)).toEqual([1, 2, 3, 4]);
    expect(calls).toHaveLength(4);
    // Forgotten, not paused: once the queue has room, the key's next request counts it.
    advance(1);
    const later = cache.count("e", load);
    await tick();
    calls[4]!.resolve(5);
    expect(await later).toBe(5);
  });

  it("answer a bounded total's lower bound when its first count finds the queue full, counting it after a pause", async () => {
    const { totals, advance } = setup({ maxQueued: 1, countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const atMost = (_client: PrismaClient, cap: number) => Promise.resolve(cap);
    const answers = await Promise.all(["a", "b", "c", "d"].map((w) => totals.count(`jobs:q=${w}`, load, atMost)));
    // Lower bounds (the cap, or 0 where both capped counts were busy): no request waits for a queue.
    expect(answers.map((a) => a.exact)).toEqual([false, false, false, false]);
    expect(calls).toHaveLength(2);
    calls[0]!.resolve(700);
    await tick();
    calls[1]!.resolve(800);
    await tick();
    expect(calls).toHaveLength(3); // "c" waited its turn; "d" was not started
    calls[2]!.resolve(900);
    await tick();
    expect(await totals.count("jobs:q=d", load, atMost)).toEqual({ value: 100, exact: false });
    expect(calls).toHaveLength(3);
    advance(5_000); // the shortest pause: one not started is no failure of its count
    const again = totals.count("jobs:q=d", load, atMost);
    await tick();
    calls[3]!.resolve(1_000);
    expect(await again).toEqual({ value: 1_000, exact: true });
  });

  it("leave stale keys' recounts beyond the queue to later requests, answering their last value", async () => {
    const { cache, advance } = setup({ maxQueued: 1 });
    let counted = 0;
    const held: (() => void)[] = [];
    const load: CountTotal = () => new Promise<number>((resolve) => held.push(() => resolve(++counted)));
    for (const key of ["a", "b", "c", "d"]) {
      const first = cache.count(key, load);
      await tick();
      held.shift()!();
      await first;
    }
    advance(31_000);
    // Four stale keys: each answers its last value; two recounts run, one waits, one is not started.
    expect(await Promise.all(["a", "b", "c", "d"].map((key) => cache.count(key, load)))).toEqual([1, 2, 3, 4]);
    await tick();
    expect(held).toHaveLength(2);
    held.shift()!();
    held.shift()!();
    await tick();
    expect(held).toHaveLength(1);
    held.shift()!();
    await tick();
    expect(held).toHaveLength(0);
    // "d" is still stale: its next request recounts it.
    expect(await cache.count("d", load)).toBe(4);
    await tick();
    expect(held).toHaveLength(1);
    held.shift()!();
  });

  it("forget the least recently asked keys beyond maxEntries", async () => {
    const { cache } = setup({ maxEntries: 2 });
    let counted = 0;
    const load: CountTotal = () => Promise.resolve(++counted);
    await cache.count("a", load);
    await cache.count("b", load);
    await cache.count("a", load);
    await cache.count("c", load);
    expect(counted).toBe(3);
    // "a" was asked after "b": "b" went, "a" stayed.
    expect(await cache.count("a", load)).toBe(1);
    expect(await cache.count("b", load)).toBe(4);
  });
});

// Facet counts (remember with a sample): a common word's five facets at a million jobs take seconds.
describe("sampled values", () => {
  const facets = (n: number) => ({ remote: n });
  const sampleOf =
    (value: unknown, caps: number[] = [], exact = false) =>
    (_client: PrismaClient, cap: number) => {
      caps.push(cap);
      return Promise.resolve({ value: value as { remote: number }, exact });
    };

  it("answer the exact count when it comes within the short wait", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    const answer = totals.remember("facets:q=kutch", async (c) => facets(await load(c)), sampleOf(facets(3)));
    await tick();
    calls[0]!.resolve(7);
    expect(await answer).toEqual({ value: facets(7), exact: true });
  });

  it("answer a sample of every matching row as the exact value, remembered, without waiting for the count", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    const caps: number[] = [];
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const sample = sampleOf(facets(3), caps, true);
    expect(await totals.remember("facets:q=kutch", loadFacets, sample)).toEqual({ value: facets(3), exact: true });
    expect(await totals.remember("facets:q=kutch", loadFacets, sample)).toEqual({ value: facets(3), exact: true });
    expect(caps).toEqual([100]);
    calls[0]!.resolve(3);
  });

  it("answer the sample past the short wait, at once to later requests, the exact value once counted", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const caps: number[] = [];
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const sample = sampleOf(facets(40), caps);
    expect(await totals.remember("facets:q=engineer", loadFacets, sample)).toEqual({ value: facets(40), exact: false });
    expect(await totals.remember("facets:q=engineer", loadFacets, sample)).toEqual({ value: facets(40), exact: false });
    expect(caps).toEqual([100]);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(212_000);
    await tick();
    expect(await totals.remember("facets:q=engineer", loadFacets, sample)).toEqual({
      value: facets(212_000),
      exact: true,
    });
  });

  it("answer the sample while a failed first count pauses, and count again after the pause", async () => {
    const { totals, advance } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const sample = sampleOf(facets(40));
    await totals.remember("facets:q=engineer", loadFacets, sample);
    calls[0]!.reject(new Error("canceling statement due to statement timeout"));
    await tick();
    expect(await totals.remember("facets:q=engineer", loadFacets, sample)).toEqual({ value: facets(40), exact: false });
    expect(calls).toHaveLength(1);
    advance(5_000);
    const again = totals.remember("facets:q=engineer", loadFacets, sample);
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(212_000);
    expect(await again).toEqual({ value: facets(212_000), exact: true });
  });

  it("answer a 503-class error when neither the sample nor the count comes within the long wait", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20, firstCountWaitMs: 60 });
    const { calls, load } = deferredCounts();
    const never = () => new Promise<{ value: { remote: number }; exact: boolean }>(() => {});
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const error = await totals.remember("facets:q=magni", loadFacets, never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TotalNotReady);
    expect(isDatabaseUnavailable(error)).toBe(true);
    // The count went on: once done, it answers.
    calls[0]!.resolve(5);
    await tick();
    expect(await totals.remember("facets:q=magni", loadFacets, never)).toEqual({ value: facets(5), exact: true });
  });

  it("sample on the sampling client, two at a time: a third waits its turn", async () => {
    const bounding = { name: "bounding client" } as unknown as PrismaClient;
    const sampling = { name: "sampling client" } as unknown as PrismaClient;
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20, bounding, sampling });
    const { load } = deferredCounts();
    const clients: PrismaClient[] = [];
    const finish: (() => void)[] = [];
    const slow = (client: PrismaClient) => {
      clients.push(client);
      return new Promise<{ value: { remote: number }; exact: boolean }>((resolve) =>
        finish.push(() => resolve({ value: facets(clients.length), exact: false })),
      );
    };
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const answers = ["a", "b", "c"].map((w) => totals.remember(`f:${w}`, loadFacets, slow));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(clients).toEqual([sampling, sampling]);
    finish[0]!();
    expect(await answers[0]).toMatchObject({ exact: false });
    await tick();
    expect(clients).toEqual([sampling, sampling, sampling]);
    finish[1]!();
    finish[2]!();
    expect((await Promise.all(answers)).map((a) => a.exact)).toEqual([false, false, false]);
  });

  /** Samples of `value` held until the test finishes each (in the order they started). */
  function heldSamples(value: { remote: number }) {
    const finish: (() => void)[] = [];
    const slow = () =>
      new Promise<{ value: { remote: number }; exact: boolean }>((resolve) =>
        finish.push(() => resolve({ value, exact: false })),
      );
    return { finish, slow, sampled: () => finish.length };
  }

  it("sample a key once however many requests ask, and refuse at once when neither count nor sample can queue", async () => {
    const { totals } = setup({ maxQueued: 1, countCap: 100, firstCountBoundedWaitMs: 20, firstCountWaitMs: 60_000 });
    const { load } = deferredCounts();
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const { finish, slow, sampled } = heldSamples(facets(9));
    // "a" twice: one sample. Two samples run ("a", "b"), one waits ("c"); "d" has no room for either.
    const answers = ["a", "a", "b", "c"].map((w) => totals.remember(`f:${w}`, loadFacets, slow));
    await tick();
    expect(sampled()).toBe(2);
    const started = performance.now();
    const refused = await totals.remember("f:d", loadFacets, slow).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(refused).toBeInstanceOf(CountsQueueFull);
    expect(refused).toSatisfy(isDatabaseUnavailable);
    finish[0]!();
    finish[1]!();
    await new Promise((resolve) => setTimeout(resolve, 40));
    finish[2]!();
    expect((await Promise.all(answers)).map((a) => a.exact)).toEqual([false, false, false, false]);
    expect(sampled()).toBe(3);
  });

  it("skip a sample whose turn comes after its key's count is in: the count answers", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20 });
    const { calls, load } = deferredCounts();
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const { finish, slow, sampled } = heldSamples(facets(1));
    const busy = ["a", "b"].map((w) => totals.remember(`f:${w}`, loadFacets, slow));
    const answer = totals.remember("f:c", loadFacets, slow);
    await tick();
    // "c"'s count ran first (slots: counts a, b; "c"'s waits); let its count finish before its sample's turn.
    calls[0]!.resolve(1);
    await tick();
    calls[2]!.resolve(33);
    expect(await answer).toEqual({ value: facets(33), exact: true });
    finish[0]!();
    finish[1]!();
    await Promise.all(busy);
    await tick();
    expect(sampled()).toBe(2);
    calls[1]!.resolve(2);
  });

  it("refuse at once, with a 503-class error, when nothing can answer: a failed count's pause and no sample", async () => {
    const { totals } = setup({ countCap: 100, firstCountBoundedWaitMs: 20, firstCountWaitMs: 60_000 });
    const { calls, load } = deferredCounts();
    const failing = () => Promise.reject(new Error("canceling statement due to statement timeout"));
    const loadFacets = async (c: PrismaClient) => facets(await load(c));
    const first = totals.remember("facets:q=x", loadFacets, failing).catch((e: unknown) => e);
    await tick();
    calls[0]!.reject(new Error("canceling statement due to statement timeout"));
    expect(await first).toMatchObject({ message: "canceling statement due to statement timeout" });
    const started = performance.now();
    expect(await totals.remember("facets:q=x", loadFacets, failing).catch((e: unknown) => e)).toBeInstanceOf(
      TotalNotReady,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe.skipIf(testDatabaseKind() !== "postgres")("the clients on a PostgreSQL server", () => {
  it("have statement limits of their own: longer than the requests' one, and shorter", async () => {
    const config = loadConfig().database;
    const timeouts = { queryMs: 300, countMs: 5_000, boundMs: 100, sampleMs: 1_000 };
    const db = await openDatabase(config, { timeouts });
    try {
      await expect(db.prisma.$queryRaw`SELECT pg_sleep(0.5)`).rejects.toSatisfy(isDatabaseUnavailable);
      // The read model's own statements (src/graphql/sql.ts) share the requests' pool and limit.
      await expect(db.sql.query("SELECT pg_sleep(0.5)")).rejects.toSatisfy(isDatabaseUnavailable);
      await expect(db.counting.$queryRaw`SELECT pg_sleep(0.5)::text AS slept`).resolves.toEqual([{ slept: "" }]);
      await expect(db.prisma.$queryRaw`SELECT pg_sleep(0.2)::text AS slept`).resolves.toEqual([{ slept: "" }]);
      await expect(db.bounding.$queryRaw`SELECT pg_sleep(0.2)`).rejects.toSatisfy(isDatabaseUnavailable);
      // A sample may take longer than a capped count, and no longer than a request waits for it.
      await expect(db.sampling.$queryRaw`SELECT pg_sleep(0.5)::text AS slept`).resolves.toEqual([{ slept: "" }]);
      await expect(db.sampling.$queryRaw`SELECT pg_sleep(1.5)`).rejects.toSatisfy(isDatabaseUnavailable);
    } finally {
      await db.close();
    }
  });

  it("run without parallel workers, requests and counts alike, beside the URL's own session options", async () => {
    const config = loadConfig().database;
    if (config.kind !== "postgres") throw new Error("a PostgreSQL server");
    const url = new URL(config.url);
    url.searchParams.set("options", "-c application_name=totals-test");
    const db = await openDatabase({ ...config, url: url.href }, { timeouts: { queryMs: 1_000 } });
    const setting = async (client: typeof db.prisma, name: string) =>
      (await client.$queryRawUnsafe<{ n: string }[]>(`SELECT current_setting('${name}') AS n`))[0]?.n;
    try {
      for (const client of [db.prisma, db.counting, db.bounding, db.sampling]) {
        expect(await setting(client, "max_parallel_workers_per_gather")).toBe("0");
        expect(await setting(client, "application_name")).toBe("totals-test");
      }
      const [own] = await db.sql.query<{ n: string }>("SELECT current_setting('max_parallel_workers_per_gather') AS n");
      expect(own?.n).toBe("0");
      // A statement of a count that the planner would split still answers, on one process.
      const [row] = await db.counting.$queryRaw<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM generate_series(1, 100000)`;
      expect(row?.n).toBe(100_000);
    } finally {
      await db.close();
    }
  });
});
