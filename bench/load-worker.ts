// Starts the load generator (./catalog-load.ts) in a worker thread, so that the servers under test
// keep the main thread and its CPU time is theirs alone; one load at a time.
import { Worker } from "node:worker_threads";
import type { LoadRequest, LoadResult } from "./catalog-load.ts";

export interface LoadWorker {
  /** Runs one closed-loop load and answers its result. */
  load: (request: LoadRequest) => Promise<LoadResult>;
  terminate: () => Promise<number>;
}

export function startLoadWorker(): LoadWorker {
  const worker = new Worker(new URL("./catalog-load.ts", import.meta.url));
  return {
    load: (request) =>
      new Promise<LoadResult>((resolve, reject) => {
        worker.once("error", reject);
        worker.once("message", (result: LoadResult) => {
          worker.off("error", reject);
          resolve(result);
        });
        worker.postMessage(request);
      }),
    terminate: () => worker.terminate(),
  };
}
