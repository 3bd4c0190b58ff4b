// run → store: the engine's work on a workspace's input, and its result stored under a new name. Shared
// by every compression, whoever drives it: the service for a request (its file uploaded, or a direct
// upload's in storage), and the worker of asynchronous jobs. What follows (succeed, or fail and
// release once) is the caller's: a request answers at once, a job decides whether to retry.
import type { Config } from "../../config/env.ts";
import * as compression from "../compression.ts";
import type { EngineRunner } from "../compression.ts";
import type { JobProgress } from "../isolation/protocol.ts";
import type { CompressionReportBody } from "../report.ts";
import type { ObjectStorage } from "../storage/storage.ts";
import { engineJob, type CompressionOptions, type Operation } from "./options.ts";
import { withWorkspace, type Workspace } from "./workspace.ts";

export interface ProduceDeps {
  config: Pick<Config, "compress">;
  storage: ObjectStorage;
  runner: EngineRunner;
}

/** What to make: the operation with its options, and the name the client gave the file (for the download's). */
export interface Work {
  operation: Operation;
  options: CompressionOptions;
  uploadedName: string;
  /** A synchronous call's limit of scanned pages to read with ocr (more: OcrPastSyncLimit, for a job). */
  ocrPageLimit?: number;
}

/** A stored result, not yet recorded. */
export interface Produced {
  objectName: string;
  compressedSize: number;
  /** The document's pages. */
  pages: number;
  report?: CompressionReportBody;
}

/**
 * Runs the engine on the workspace's input and stores its output; a cancelled signal stops it;
 * `onProgress` is told how far the engine is (a job's progress).
 */
export async function produce(
  deps: ProduceDeps,
  workspace: Workspace,
  work: Work,
  signal: AbortSignal,
  onProgress?: (progress: JobProgress) => void,
): Promise<Produced> {
  const paths = { inputPath: workspace.input, outputPath: workspace.output };
  const limit = work.ocrPageLimit;
  const job = {
    ...engineJob(work.operation, work.options, paths),
    ...(limit !== undefined ? { ocrPageLimit: limit } : {}),
  };
  const { outputSize, pages, report } = await compression.run(deps.runner, job, signal, onProgress);
  if (signal.aborted) throw signal.reason;
  const objectName = await compression.store(deps.storage, {
    path: workspace.output,
    uploadedName: work.uploadedName,
    kind: work.operation.kind,
  });
  return { objectName, compressedSize: outputSize, pages, ...(report ? { report } : {}) };
}

/** The same for an input in storage (a direct upload's, a job's): fetched into a workspace of its own first. */
export function produceFromStorage(
  deps: ProduceDeps,
  inputObject: string,
  work: Work,
  signal: AbortSignal,
  onProgress?: (progress: JobProgress) => void,
): Promise<Produced> {
  return withWorkspace(deps.config, async (workspace) => {
    await deps.storage.fetchInput(inputObject, workspace.input);
    return produce(deps, workspace, work, signal, onProgress);
  });
}
