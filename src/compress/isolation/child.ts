// A child process that runs one engine job and exits. The runner's pool (pool.ts) forks it ahead
// of demand; once its modules are loaded (the static imports below: the engine, pdf-lib, sharp and
// libvips) it says so (CHILD_READY) and waits, idle, for one job over IPC, replies once and exits,
// so no job ever runs in a process that ran another. The process's own limits (heap size, a kill
// on timeout or for resident memory) are the runner's business.
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import sharp from "sharp";
import { compressPdf, PdfRejected, unlockPdf } from "../engine/index.ts";
import type { EngineOutput } from "../engine/index.ts";
import { CHILD_READY, isEngineJob } from "./protocol.ts";
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

async function run(job: EngineJob): Promise<EngineResult> {
  const input = await readFile(job.inputPath);
  const started = performance.now();
  let result: EngineOutput;
  const options = job.signatures ? { signatures: job.signatures } : {};
  if (job.kind === "compress") {
    result = await compressPdf(input, job.profile, undefined, options);
  } else {
    // Signatures are handled (refused or removed) by the unlock: the compression finds none left.
    result = await unlockPdf(input, job.password, options);
    if (job.profile) result = await compressPdf(result.output, job.profile);
  }
  const engineMs = performance.now() - started;
  await writeFile(job.outputPath, result.output);
  const usage = { engineMs, maxRssKb: peakRssKb() };
  return { ok: true, outputSize: result.output.length, pages: result.pages, usage };
}

async function handle(message: unknown): Promise<EngineResult> {
  if (!isEngineJob(message)) return { ok: false, code: "processing_failed", message: "The job was not understood." };
  try {
    return await run(message);
  } catch (error) {
    if (error instanceof PdfRejected) return { ok: false, code: error.code, message: error.message };
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
  void handle(message).then((reply) => {
    process.send!(reply, () => process.exit(0));
  });
});
process.send(CHILD_READY);
