// A child process that runs one engine job and exits. The runner's pool (pool.ts) forks it ahead
// of demand; once its modules are loaded (the static imports below: the engine, pdf-lib, sharp and
// libvips) and the engine warmed up (warmUp: its WebAssembly compiled and its passes run once over a
// small document of its own, so that the job does not pay for compiling them: a third to two fifths
// of a small CV's CPU time, issue 42) it says so (CHILD_READY) and waits, idle, for one job over IPC, says it
// received it (JOB_RECEIVED), replies once and exits (the runner kills it once the reply is checked),
// so no job ever runs in a process that ran another. The process's own limits (heap size, a kill
// on timeout or for resident memory) are the runner's business.
import { readFileSync, writeFileSync } from "node:fs";
import sharp from "sharp";
import { compressPdf, OcrPageLimit, PdfRejected, TargetUnreachable, unlockPdf, warmUp } from "../../pdf/index.ts";
import type { CompressionReport, EngineOptions, EngineOutput } from "../../pdf/index.ts";
import { reportBody } from "../report.ts";
import { CHILD_READY, isEngineJob, JOB_RECEIVED } from "./protocol.ts";
import type { EngineJob, EngineResult } from "./protocol.ts";

// One job per process: no thread pool to share, nothing worth caching.
sharp.concurrency(1);
sharp.cache(false);

/**
 * The process's own peak resident memory, in KiB: Linux's VmHWM, the high-water mark of this
 * process's memory since its exec. Not getrusage's maxRSS, which also counts the parent's resident
 * memory at the fork before exec (the service's hundreds of MiB, reported as the engine's).
 */
function peakRssKb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "latin1"));
    if (match) return Number(match[1]);
  } catch {
    // Not Linux: getrusage below.
  }
  return process.resourceUsage().maxRSS;
}

/** The engine's report of a decryption alone (unlock without a profile): nothing else changed. */
const unlockedOnly = (signaturesRemoved: number): CompressionReport => ({
  fonts: { converted: 0, subset: 0, bytesBefore: 0, bytesAfter: 0 },
  streams: { streams: 0, recompressed: 0, bytesBefore: 0, bytesAfter: 0 },
  activeContent: { actions: 0, annotations: 0, xfaScripts: 0 },
  discardedEntries: 0,
  removedObjects: 0,
  mergedObjects: 0,
  signaturesRemoved,
});

/** The job's options that shape the output (those it has). */
function outputOptions(job: EngineJob): EngineOptions {
  const { grayscale, maxImagePpi, removeMetadata, targetSize, linearize } = job;
  const { ocr, ocrLanguages, ocrTimeBudgetMs, ocrPageLimit } = job;
  const options = {
    ...{ grayscale, maxImagePpi, removeMetadata, targetSize, linearize },
    ...{ ocr, ocrLanguages, ocrTimeBudgetMs, ocrPageLimit },
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

async function run(job: EngineJob): Promise<EngineResult> {
  // Read and written synchronously: the process has nothing else to do meanwhile, and libuv's
  // thread pool (where fs/promises goes) may still hold the engine's background deflates and
  // sharp's work, or wait for a core: a hop there took 2-50 ms a file on a loaded machine.
  const input = readFileSync(job.inputPath);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  let result: EngineOutput;
  let report: CompressionReport | undefined;
  const onReport = (engineReport: CompressionReport) => (report = engineReport);
  const signatures = job.signatures ? { signatures: job.signatures } : {};
  // How far the engine is, to the runner (its job's progress); a message lost with the parent is no matter.
  const onProgress = (pagesDone: number, pagesTotal: number) =>
    process.send?.({ progress: { pagesDone, pagesTotal } }, () => undefined);
  if (job.kind === "compress") {
    result = await compressPdf(input, job.profile, onReport, { ...signatures, ...outputOptions(job), onProgress });
  } else {
    // Signatures are handled (refused or removed) by the unlock: the compression finds none left.
    const unlocked = await unlockPdf(input, job.password, signatures);
    result = unlocked;
    if (job.profile) {
      result = await compressPdf(unlocked.output, job.profile, onReport, { ...outputOptions(job), onProgress });
    }
    // The output is the decrypted file even when the compression handed that back unchanged: the
    // report is then the unlock's alone, never "the original returned".
    const compressed: CompressionReport | undefined = report;
    report =
      compressed && !compressed.unchanged
        ? { ...compressed, signaturesRemoved: unlocked.signaturesRemoved }
        : {
            ...unlockedOnly(unlocked.signaturesRemoved),
            ...(compressed?.repaired && { repaired: compressed.repaired }),
          };
  }
  const engineMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  writeFileSync(job.outputPath, result.output);
  const measureMs = report?.images?.quality.measureMs;
  const usage = { engineMs, cpuMs, maxRssKb: peakRssKb(), ...(measureMs === undefined ? {} : { measureMs }) };
  const outputSize = result.output.length;
  const body = report && reportBody(report, { profile: job.profile, inputSize: input.length, outputSize });
  return { ok: true, outputSize, pages: result.pages, usage, ...(body ? { report: body } : {}) };
}

async function handle(message: unknown): Promise<EngineResult> {
  if (!isEngineJob(message)) return { ok: false, code: "processing_failed", message: "The job was not understood." };
  try {
    return await run(message);
  } catch (error) {
    if (error instanceof PdfRejected || error instanceof TargetUnreachable) {
      return { ok: false, code: error.code, message: error.message };
    }
    if (error instanceof OcrPageLimit)
      return { ok: false, code: error.code, message: error.message, pages: error.pages };
    console.error(error); // to the runner's stderr callback; the client gets a generic message
    return { ok: false, code: "processing_failed", message: "Processing the file failed." };
  }
}

if (!process.send) {
  console.error("child.ts runs engine jobs for runner.ts and must be started by it (with an IPC channel).");
  process.exit(2);
}
// The parent went away: nobody is waiting for the result.
process.on("disconnect", () => process.exit(1));
process.once("message", (message: unknown) => {
  // Before the file is read: a process that ends before this reaches the runner never saw the job.
  process.send!(JOB_RECEIVED);
  void handle(message).then((reply) => {
    process.send!(reply, () => process.exit(0));
  });
});
await warmUp();
process.send(CHILD_READY);
