// A running job's progress, pages done of the document's pages, written to its row as the engine's
// isolated process reports it (child.ts sends it over IPC, the runner checks it and calls the
// run's onProgress). One write at a time, fenced like every write after the claim (queue.ts
// recordProgress): a report that comes while one is written waits, and only the latest of those is
// written next (a page of OCR takes seconds, so nearly every report is written). A failed write is
// logged and the job goes on: progress is a hint, the job's end is what counts.
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { JobProgress } from "../isolation/protocol.ts";
import * as queue from "./queue.ts";
import type { ClaimedJob } from "./queue.ts";

export interface ProgressWriter {
  /** The engine's latest report: written now, or after the write under way. */
  report(progress: JobProgress): void;
  /** Resolves once nothing is being written (the writes already begun are done). */
  settled(): Promise<void>;
}

export function progressWriter(
  prisma: PrismaClient,
  job: ClaimedJob,
  onError: (error: unknown) => void,
): ProgressWriter {
  let latest: JobProgress | undefined;
  let writing: Promise<void> | undefined;
  const drain = async () => {
    while (latest) {
      const next = latest;
      latest = undefined;
      await queue.recordProgress(prisma, job, next).catch(onError);
    }
    writing = undefined;
  };
  return {
    report(progress) {
      latest = progress;
      writing ??= drain();
    },
    settled: () => writing ?? Promise.resolve(),
  };
}
