import { describe, expect, it } from "vitest";
import { forEachBounded } from "../../../src/pdf/shared/bounded-jobs.ts";

/** A job that resolves when the test says so, recording what was in flight when it started. */
function harness(weights: number[]) {
  const started: number[] = [];
  const releases = new Map<number, () => void>();
  let inFlight = 0;
  let held = 0;
  const peaks = { inFlight: 0, held: 0 };
  const run = (item: number) =>
    new Promise<void>((resolve) => {
      started.push(item);
      inFlight++;
      held += weights[item]!;
      peaks.inFlight = Math.max(peaks.inFlight, inFlight);
      peaks.held = Math.max(peaks.held, held);
      releases.set(item, () => {
        inFlight--;
        held -= weights[item]!;
        resolve();
      });
    });
  /** Lets the event loop run the pool's bookkeeping. */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { started, releases, peaks, run, settle };
}

describe("forEachBounded", () => {
  it("keeps at most `concurrency` jobs in flight and starts them in order", async () => {
    const items = [0, 1, 2, 3, 4];
    const h = harness(items.map(() => 1));
    const done = forEachBounded(items, () => 1, h.run, { concurrency: 2, memoryBudget: 100 });
    await h.settle();
    expect(h.started).toEqual([0, 1]);
    h.releases.get(1)!();
    await h.settle();
    expect(h.started).toEqual([0, 1, 2]);
    const released = new Set<number>([1]);
    while (released.size < items.length) {
      for (const item of h.started.filter((i) => !released.has(i))) {
        released.add(item);
        h.releases.get(item)!();
      }
      await h.settle();
    }
    await done;
    expect(h.started).toEqual(items);
    expect(h.peaks.inFlight).toBe(2);
  });

  it("starts a job only while the declared memory stays within the budget; a larger one runs alone", async () => {
    const weights = [40, 40, 30, 150, 10];
    const h = harness(weights);
    const done = forEachBounded([0, 1, 2, 3, 4], (i) => weights[i]!, h.run, {
      concurrency: 4,
      memoryBudget: 100,
    });
    await h.settle();
    expect(h.started).toEqual([0, 1]); // 40 + 40 + 30 > 100
    h.releases.get(0)!();
    await h.settle();
    expect(h.started).toEqual([0, 1, 2]);
    h.releases.get(1)!();
    h.releases.get(2)!();
    await h.settle();
    expect(h.started).toEqual([0, 1, 2, 3]); // 150 > 100, but alone
    h.releases.get(3)!();
    await h.settle();
    h.releases.get(4)!();
    await done;
    expect(h.started).toEqual([0, 1, 2, 3, 4]);
    expect(h.peaks.held).toBe(150);
  });

  it("rejects with the first error after the jobs in flight have settled, and starts no more", async () => {
    const h = harness([1, 1, 1, 1]);
    let settledBeforeRejection = false;
    const done = forEachBounded(
      [0, 1, 2, 3],
      () => 1,
      async (item) => {
        if (item === 0) throw new Error("job 0 failed");
        await h.run(item);
        settledBeforeRejection = true;
      },
      { concurrency: 2, memoryBudget: 10 },
    );
    await h.settle();
    expect(h.started).toEqual([1]);
    h.releases.get(1)!();
    await expect(done).rejects.toThrow("job 0 failed");
    expect(settledBeforeRejection).toBe(true);
    expect(h.started).toEqual([1]);
  });

  it("resolves at once with no items", async () => {
    await expect(
      forEachBounded(
        [],
        () => 1,
        () => Promise.resolve(),
        { concurrency: 2, memoryBudget: 1 },
      ),
    ).resolves.toBe(undefined);
  });
});
