// Runs image jobs a few at a time. Most of an image's work is native (libvips decodes, resamples
// and encodes on libuv's thread pool), so jobs in flight together use the machine's cores while
// the JavaScript parts (the quality check) take turns on the main thread. Each job declares what
// it will hold in memory at its peak; jobs start only while the sum stays within a budget, so
// many large images never sit decoded at once. A job larger than the budget runs alone.
import { availableParallelism } from "node:os";

export interface JobBounds {
  /** Jobs in flight at most. */
  concurrency: number;
  /** Bytes the jobs in flight may declare together. */
  memoryBudget: number;
  /**
   * Worker threads a pass may start to run jobs off the main thread (images/recode-workers.ts),
   * which runs jobs too while they are busy: one per core beside it. Undefined: none.
   */
  workerThreads?: number;
}

/**
 * Jobs the engine runs at once by default: one per core the process may use, and one more, whose
 * native work keeps the cores busy while another job's quality check runs on the main thread (more
 * would hold more images decoded without more cores to run them).
 */
export const defaultConcurrency = () => availableParallelism() + 1;

/**
 * Runs `run` on every item, at most `options.concurrency` at once and within the memory budget
 * (`weight` of each item, in bytes), in the items' order. Resolves when all are done; the first
 * error rejects once the jobs already started have settled (none is left running behind).
 */
export async function forEachBounded<T>(
  items: readonly T[],
  weight: (item: T) => number,
  run: (item: T) => Promise<void>,
  options: JobBounds,
): Promise<void> {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  let next = 0;
  let inFlight = 0;
  let held = 0;
  let failure: { error: unknown } | undefined;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (!failure && next < items.length && inFlight < concurrency) {
        const item = items[next]!;
        const bytes = Math.max(0, weight(item));
        // The budget may be exceeded only by a job that starts alone.
        if (inFlight > 0 && held + bytes > options.memoryBudget) break;
        next++;
        inFlight++;
        held += bytes;
        run(item)
          .catch((error: unknown) => {
            failure ??= { error };
          })
          .finally(() => {
            inFlight--;
            held -= bytes;
            pump();
          });
      }
      if (inFlight === 0 && (failure || next >= items.length)) resolve();
    };
    pump();
  });
  if (failure) throw failure.error;
}
