// Runs engine jobs in child processes, outside the caller's event loop, with hard limits: a
// fixed number of jobs at once, a bounded queue, a wall-clock timeout that grows with the input
// (SIGKILL), a V8 heap limit and optionally a resident-memory limit. A process handles one job and
// ends, so nothing one upload did (a leak, a native crash, a hang) can reach the next. The
// processes come from a pool of warm ones (pool.ts), forked ahead so that a job does not wait for
// Node and the engine's modules to load. A job is answered at its reply, once checked (the output
// file has the size the reply says), not when its process is gone; the runner then kills the
// process (KillReason "done") rather than wait for Node's own exit, which waits for V8's background
// compilations (150-290 ms of a core after a small CV, over a second on a loaded machine). The
// process keeps its slot, its limits and its place in close() until it is gone. Warm processes
// come in two kinds (process-kind.ts): quick ones (quickExecArgv) for small inputs without large
// images, lean ones (engineExecArgv) for the rest; a job's kind is judged from its input when it
// first gets a process.
import { statSync } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import type { Config } from "../../config/env.ts";
import { createProcessPool } from "./pool.ts";
import type { EngineProcess, PoolEvent, ProcessKind, ProcessPool } from "./pool.ts";
import { jobKindOf, QUICK_RULE } from "./process-kind.ts";
import type { JobKind, QuickRule } from "./process-kind.ts";
import { isChildReady, isEngineResult, isJobProgress, isJobReceived } from "./protocol.ts";
import type { EngineJob, EngineResult, JobProgress } from "./protocol.ts";

const RSS_POLL_MS = 200;
/** The megabyte of the time limit's rate: 2^20 bytes, the unit of the 300 MB upload limit. */
const MB = 1024 * 1024;

export interface RunnerOptions {
  /** Children running at once. */
  concurrency: number;
  /** Jobs waiting for a child; beyond that, run() rejects with RunnerBusy. */
  queueLimit: number;
  /**
   * Wall-clock limit of one job, from the moment it gets its process; past it the process is
   * killed. With timeoutMsPerMb, the base of the limit: timeoutMs + timeoutMsPerMb x input MB.
   */
  timeoutMs: number;
  /** How much the time limit grows per MB (2^20 bytes) of input. Default 0: a flat limit. */
  timeoutMsPerMb?: number;
  /** Lean warm processes kept ready (pool.ts). Default: concurrency. 0: each lean job forks its own. */
  warmProcesses?: number;
  /**
   * Quick warm processes kept ready (quickExecArgv: V8's flags for speed), for the inputs
   * `quickRule` admits; each job of that kind takes a ready quick one, else a ready lean one.
   * Default 0: every job runs in a lean process.
   */
  quickWarmProcesses?: number;
  /** Which inputs are quick (process-kind.ts). Default QUICK_RULE. */
  quickRule?: QuickRule;
  /** The child's V8 heap limit (--max-old-space-size). */
  memoryMb: number;
  /**
   * Inputs of at least this many bytes get a process forked for them with largeInputExecArgv's
   * flags instead of a warm one. Default LARGE_INPUT_BYTES.
   */
  largeInputBytes?: number;
  /**
   * Kill a child whose resident memory (heap, buffers, native image work) exceeds this (Linux;
   * polled). Unset: only the heap limit applies.
   */
  maxRssMb?: number;
  /** What the children write to stderr (library warnings, unexpected errors). Unset: dropped. */
  onChildStderr?: (text: string) => void;
  /** The children's environment. Default: empty (they handle untrusted files and need nothing). */
  env?: Record<string, string>;
  /** The child script; default child.ts. The benchmarks pass a frozen copy of it and the engine. */
  childModule?: string;
  /** The life of every process and job, for logs and tests (which process ran which job). */
  onEvent?: (event: RunnerEvent) => void;
}

export type RunnerEvent =
  | PoolEvent
  /**
   * A job got its process; `ready`: it had already loaded the engine (a warm start). `kind`: the
   * job's (quick or lean, by its input); `process`: what the process was forked with (a quick job
   * may get a lean one; "own": a large input's).
   */
  | {
      type: "job";
      pid: number | undefined;
      warm: boolean;
      ready: boolean;
      timeoutMs: number;
      kind: JobKind;
      process: ProcessKind;
    }
  /** A job's process ended (always after one job); `killed`: why the runner killed it. */
  | { type: "job-exited"; pid: number | undefined; killed: KillReason | null };

export interface RunnerStats {
  /** Jobs not answered yet. */
  running: number;
  /** Processes of answered jobs still exiting: they hold their slots until they are gone. */
  exiting: number;
  queued: number;
  /** Warm processes ready for a job (of either kind), and those still starting. */
  warm: number;
  /** Of `warm`, the quick ones. */
  warmQuick: number;
  warming: number;
  concurrency: number;
  queueLimit: number;
  /** Jobs finished since the runner started, by outcome. */
  succeeded: number;
  refused: number;
  failed: number;
  timedOut: number;
  aborted: number;
  /** run() calls turned away because the queue was full. */
  busy: number;
}

export interface Runner {
  /**
   * Runs a job in a child process. Resolves with the child's result, or with processing_timeout /
   * processing_failed (the output file is then removed). Rejects with RunnerBusy when the queue
   * is full, RunnerClosed after close(), or the signal's reason when `signal` aborts (the child is
   * killed and the output removed).
   */
  run(job: EngineJob, options?: RunOptions): Promise<EngineResult>;
  /**
   * The RunnerBusy that run() would reject a job with now, or null when it would take one: lets a
   * caller refuse before it receives the job's input (an upload) rather than after.
   */
  busy(): RunnerBusy | null;
  stats(): RunnerStats;
  /** The time limit of a job on an input of this many bytes (`runs`: engineRuns of the job). */
  timeoutFor(inputBytes: number, runs?: number): number;
  /** Rejects queued jobs, kills running children and warm processes, resolves when they are gone. */
  close(): Promise<void>;
}

/** What a run is given beside its job. */
export interface RunOptions {
  /** Aborted: the job's process is killed and its output removed. */
  signal?: AbortSignal;
  /** Told how far the engine is while the job runs (the child's progress messages, checked). */
  onProgress?: (progress: JobProgress) => void;
}

/** Every child is busy and the queue is full: try again later (HTTP: 503 with Retry-After). */
export class RunnerBusy extends Error {
  /** A guess at when a slot will be free, from recent job durations. */
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super("Every compression slot is taken and the queue is full.");
    this.name = "RunnerBusy";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class RunnerClosed extends Error {
  constructor() {
    super("The runner has been closed.");
    this.name = "RunnerClosed";
  }
}

interface Pending {
  job: EngineJob;
  signal: AbortSignal | undefined;
  onProgress: RunOptions["onProgress"];
  resolve: (result: EngineResult) => void;
  reject: (error: unknown) => void;
  /** Removes the queue's abort listener. */
  detach?: () => void;
  /** Processes that ended before the job reached them (it was run again on another). */
  undelivered?: number;
  /** The job's kind, judged from its input when it first got a process. */
  kind?: JobKind;
}

/**
 * How many times a job is given another process when the one it was given ended before the job
 * reached it (a warm process killed or crashed while idle, just before it was taken: the pool
 * had not heard of its end yet). Such a process never saw the file, so the job is not the file's
 * fault and is not charged to it; a job that reached its process is never run again.
 */
const UNDELIVERED_RETRIES = 2;

interface Active {
  kill: (reason: KillReason) => void;
  exited: Promise<void>;
  /** The job has its answer; its process may still be exiting. */
  answered: boolean;
}

/**
 * Why the runner killed a job's process: its time limit, its caller gone, its memory cap, close(),
 * or "done": its reply was checked and the job answered, and the process is ended rather than
 * left to exit by itself (issue 42: Node's exit waits for V8's background compilations of the job's
 * code: 150-290 ms of a core after a small CV's reply at load 5 here, 0.4-1.6 s at load 11, while
 * the process held its slot and the next job waited for it).
 */
export type KillReason = "timeout" | "abort" | "memory" | "closed" | "done";

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
}

async function residentMb(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Node flags of an engine process: the heap cap, a small young generation (the engine's objects
 * live for the whole job; a large semi-space only holds garbage longer), and an old generation
 * that may grow by 30 % over what survived the last full collection before the next one (V8
 * lets it grow up to fourfold): a document of 85,000 objects (optimised_linearized_objstm_206p,
 * 3.8 MiB) peaked at 256-259 MiB RSS with V8's default and at 220-231 MiB with this, for some
 * 6 % more CPU time; documents with few objects do not change. V8's memory-saving mode
 * (--optimize-for-size: compacting collections, pages given back) takes that file's peak to
 * 190-192 MiB (its budget, 3 x input + 200 MB, is 211.5 MiB) and the 290 MB scan's by some 80 MiB,
 * at no measurable cost in time: the engine's hot loops are native (libvips) or small.
 */
const leanExecArgv = (memoryMb: number) => [
  `--max-old-space-size=${memoryMb}`,
  "--max-semi-space-size=2",
  "--heap-growing-percent=30",
  "--optimize-for-size",
  "--disable-warning=ExperimentalWarning",
];

/**
 * WebAssembly kept in V8's baseline tier (Liftoff) unless a function runs a great deal (issue 42):
 * V8 recompiles a function with TurboFan, on background threads, once it has run some 13 MB of
 * code (its default budget); a job subsetting fonts ran enough of hb-subset's large module for
 * those compilations to cost more CPU than the faster code won back. With a budget of 10^9,
 * through the runner as bench:compress runs it (main and this alternated, 3 rounds, medians, load
 * 15-19): job CPU cv_xelatex_chinese_photo 1,645 -> 981 ms, cv_scribus_wholefonts_photo 1,804 ->
 * 1,215, form_f1040_prefilled 1,095 -> 1,015, cv_pdflatex_cjk_chinese_moderncv 689 -> 636, their
 * peaks 8-65 MiB lower, the same output bytes; the scans, whose codecs' and quality check's
 * kernels are few and hot, within their runs' spread (10,291 -> 10,381 ms for the five). A budget
 * of 10^8 saved nothing. A large input's process keeps the default (not measured on large scans).
 */
export const WASM_TIERING = "--wasm-tiering-budget=1000000000";

/** Node flags of a lean engine process: leanExecArgv's and WASM_TIERING. */
export const engineExecArgv = (memoryMb: number) => [...leanExecArgv(memoryMb), WASM_TIERING];

/**
 * JavaScript optimised by TurboFan later than V8's default (--invocation-count-for-turbofan 30,000
 * against 3,000; issue 42). A quick process runs one small job after warmUp, and TurboFan's
 * compilations of the code that job reaches (on background threads, counted in its CPU) cost more
 * than the faster code won back: the Type 1 conversion of a pdfTeX CV (234 glyphs in 49 programs)
 * and the content walks of a small document run each function too few times. Long loops still go
 * to TurboFan by on-stack replacement, a separate count. Measured in fresh processes with the quick
 * kind's flags and ENGINE_CHILD_ENV, warmUp then compressPdf balanced, process.cpuUsage over the
 * job, 3,000 / 10,000 / 30,000 alternated, 3 rounds, medians, load 7-10:
 * cv_pdflatex_cjk_chinese_moderncv 467 / 361 / 274 ms, cv_pdflatex_moderncv_2p 295 / 237 / 187,
 * cv_gdocs_coverletter 223 / 213 / 169, cv_word_tagged_1p 128 / 124 / 86, text_excel_warn_16p
 * 1,530 / 1,374 / 1,432. Not on lean processes: the scans' codecs (JBIG2, CCITT), whose kernels
 * are called by the thousand, took 10-15 % more with it (scan_cardinal_4p_jbig2 211 -> 241 ms,
 * scan_hl1396_18p_ccitt 786 -> 902).
 */
export const JS_TIERING = "--invocation-count-for-turbofan=30000";

/**
 * Node flags of a quick engine process (issue 42), for inputs that QUICK_RULE judges small and
 * not made of large images: V8's defaults for speed (no --optimize-for-size) and a 16 MB young
 * generation, where the engine's short-lived objects (content tokens, parsed objects) die young.
 * Measured one compressPdf after warmUp, fresh processes, alternated (docs/engine.md): small and
 * text documents take 15-29 % less CPU (cv_gdocs_coverletter 296 -> 238 ms, text_excel_warn_16p
 * 1,695 -> 1,206), for 30-45 MiB more at the peak of a text document, and more on large documents
 * and scans, which the rule keeps lean.
 */
export const quickExecArgv = (memoryMb: number) => [
  `--max-old-space-size=${memoryMb}`,
  "--max-semi-space-size=16",
  "--heap-growing-percent=30",
  "--disable-warning=ExperimentalWarning",
  WASM_TIERING,
  JS_TIERING,
];

/**
 * Inputs from this size get a process of their own, forked for the job with a larger initial heap
 * (largeInputExecArgv) rather than a warm one. Their time goes to page images (a long scan's
 * hundreds): with engineExecArgv's small heap V8 collected in full about twice a page (46 full
 * collections on the 26-page scan-like file; 5 with a 128 MB initial heap), a quarter of the CPU
 * time of the 100 MB scan-like file (35.9 against 27.6 s, one run each, load 4-5) for 72 MiB more
 * at its peak (554 against 482 MiB). That file's budget (3 x the input + 200 MB: 488 MiB) has no
 * room for it; from some 160 MiB of input on (the peak grows by about twice the input, the budget
 * by three times) it has. The fork's second is nothing beside such a job.
 */
export const LARGE_INPUT_BYTES = 192 * 1024 * 1024;

/** The lean flags without WASM_TIERING, with a heap that starts at 128 MB (at most half the limit). */
export const largeInputExecArgv = (memoryMb: number) => [
  ...leanExecArgv(memoryMb),
  `--initial-heap-size=${Math.min(128, Math.floor(memoryMb / 2))}`,
];

/**
 * The environment of an engine process. glibc gives every thread that frees memory an arena of its
 * own and keeps what libvips freed there: one arena keeps the process's peak RSS 50-170 MB lower.
 * Blocks from 16 MiB (a large page image, a zlib output chunk of a large stream) get a mapping of
 * their own, given back when freed, and the arena keeps at most 64 MiB freed at its top. Until
 * 2026-12-06 blocks up to 64 MiB came from the arena and 128 MiB stayed at its top, for a quarter of
 * the system time on the 100 MB scan (1.6 -> 1.2 s): but blocks of every size between the document's
 * objects left holes that later passes did not fill, and the peak climbed pass by pass
 * (derived_large_concat_544p: 242-250 MiB through the runner, over its 236 MiB budget). 4 and 16 MiB
 * (1bffd84) brought it to 230-232, and so do 16 and 64 MiB, which give fewer page images fresh pages:
 * scan_epson_6p_jpeg 2.48-2.57 s against 2.73-3.01 with 4 and 16 (alternated; docs/engine.md, "Memory").
 */
export const ENGINE_CHILD_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: "1",
  MALLOC_MMAP_THRESHOLD_: String(16 * 1024 * 1024),
  MALLOC_TRIM_THRESHOLD_: String(64 * 1024 * 1024),
};

/**
 * A large input's process keeps the arena's thresholds of before 2026-12-06 (64 and 128 MiB): its
 * hundreds of page images (26 MB each at 300 dpi) then reuse the arena's blocks instead of a fresh
 * mapping each, page-faulted in and given back, which had made the 290 MB scan 21-23 s -> 26-31 s
 * (bench:compress:scale, alternated, 2026-12-06) for the same peak (651-678 MiB against 657-667, of
 * a 1,032 MiB budget). Its budget grows with its input; derived_large_concat_544p's, which the
 * lower thresholds keep, is that of 12 MB.
 */
export const LARGE_INPUT_ENV: Readonly<Record<string, string>> = {
  ...ENGINE_CHILD_ENV,
  MALLOC_MMAP_THRESHOLD_: String(64 * 1024 * 1024),
  MALLOC_TRIM_THRESHOLD_: String(128 * 1024 * 1024),
};

/** The service's runner settings (src/config/env.ts), shared by main.ts and the benchmarks. */
export function serviceRunnerOptions(
  compress: Pick<
    Config["compress"],
    | "concurrency"
    | "queueLimit"
    | "timeoutMs"
    | "timeoutMsPerMb"
    | "memoryMb"
    | "maxRssMb"
    | "warmProcesses"
    | "quickWarmProcesses"
  >,
): RunnerOptions {
  return {
    concurrency: compress.concurrency,
    queueLimit: compress.queueLimit,
    timeoutMs: compress.timeoutMs,
    timeoutMsPerMb: compress.timeoutMsPerMb,
    memoryMb: compress.memoryMb,
    // Native memory (libvips) is outside the heap limit: the whole process is capped too.
    maxRssMb: compress.maxRssMb,
    // The warm processes are shared between the two kinds: the quick ones are part of the count.
    warmProcesses: compress.warmProcesses - compress.quickWarmProcesses,
    quickWarmProcesses: compress.quickWarmProcesses,
  };
}

/** The time limit of one job: a base, plus a rate per MB of input (see RunnerOptions). */
export function jobTimeoutMs(limits: { timeoutMs: number; timeoutMsPerMb?: number }, inputBytes: number): number {
  return Math.ceil(limits.timeoutMs + (limits.timeoutMsPerMb ?? 0) * (Math.max(0, inputBytes) / MB));
}

/**
 * The most runs of the engine's passes a job may take: a targetSize runs them up to 5 times (the
 * profile, the ladder's floor and up to three steps between, src/pdf/target.ts), so its time limit
 * is that many times a single run's.
 */
export const TARGET_MAX_RUNS = 5;

/**
 * OCR is the slowest thing the engine does (Tesseract in WebAssembly: 3 to 10 s a page on one core
 * here), so a job with ocr has this many runs' time; its OCR pass gets OCR_SHARE of the limit
 * (ocrTimeBudgetMs), and the pages it has not begun by then are left unread (report.ocr says how
 * many), so the job ends within its limit with the rest of its passes done.
 */
export const OCR_RUNS = 6;
export const OCR_SHARE = 0.7;

export const engineRuns = (job: EngineJob): number =>
  job.targetSize !== undefined ? TARGET_MAX_RUNS : job.ocr === true ? OCR_RUNS : 1;

function inputBytesOf(job: EngineJob): number {
  try {
    return statSync(job.inputPath).size;
  } catch {
    return 0; // the child will say the file cannot be read
  }
}

function timeoutMessage(limitMs: number, inputBytes: number): string {
  const seconds = limitMs < 10_000 ? (limitMs / 1000).toFixed(1) : String(Math.round(limitMs / 1000));
  const size = inputBytes >= MB ? `${(inputBytes / MB).toFixed(1)} MB` : `${Math.ceil(inputBytes / 1024)} KB`;
  return `Processing took longer than the limit for a file of this size (${seconds} s for ${size}).`;
}

interface JobHooks {
  maxRssMb: number | undefined;
  counts: Record<"succeeded" | "refused" | "failed" | "timedOut" | "aborted", number>;
  onEvent: ((event: RunnerEvent) => void) | undefined;
}

type Outcome = { result: EngineResult } | { error: unknown };

/** Polls the process's resident memory; calls `exceeded` past the cap. Undefined without a cap. */
function watchMemory(pid: number | undefined, maxRssMb: number | undefined, exceeded: () => void) {
  if (maxRssMb === undefined || pid === undefined) return undefined;
  return setInterval(() => {
    void residentMb(pid).then((mb) => {
      if (mb !== undefined && mb > maxRssMb) exceeded();
    });
  }, RSS_POLL_MS);
}

/** How a job's process ended: what it replied, and why the runner killed it, if it did. */
interface Ending {
  job: EngineJob;
  signal: AbortSignal | undefined;
  reply: unknown;
  killedFor: KillReason | undefined;
  limitMs: number;
  inputBytes: number;
}

/**
 * The outcome a reply gives its job, once checked: a refusal (its output removed), or a success
 * whose output file has the size the reply says; counted. Undefined when the reply is not one, or
 * when `cancelled()` (the caller went away, or the runner closes) by the time it is checked: the
 * process's exit then decides.
 */
async function concludeReply(
  job: EngineJob,
  reply: unknown,
  counts: JobHooks["counts"],
  cancelled: () => boolean,
): Promise<Outcome | undefined> {
  if (!isEngineResult(reply)) return undefined;
  if (!reply.ok) {
    await rm(job.outputPath, { force: true });
    if (cancelled()) return undefined;
    if (reply.code === "processing_failed") counts.failed++;
    else counts.refused++;
    return { result: reply };
  }
  const size = await stat(job.outputPath).then(
    (s) => s.size,
    () => -1,
  );
  if (size !== reply.outputSize || cancelled()) return undefined;
  counts.succeeded++;
  return { result: reply };
}

/** The outcome of a job whose process is gone; counts it, and removes an output not to be kept. */
async function concludeJob(ending: Ending, counts: JobHooks["counts"]): Promise<Outcome> {
  const { job, signal, reply, killedFor } = ending;
  const removeOutput = () => rm(job.outputPath, { force: true });
  if (killedFor === "abort" || killedFor === "closed") {
    await removeOutput();
    if (killedFor === "abort") counts.aborted++;
    return { error: killedFor === "abort" && signal ? abortError(signal) : new RunnerClosed() };
  }
  // A process that replied has done its work, even if it was slow to exit.
  const replied = await concludeReply(job, reply, counts, () => false);
  if (replied) return replied;
  await removeOutput();
  if (killedFor === "timeout") {
    counts.timedOut++;
    return {
      result: { ok: false, code: "processing_timeout", message: timeoutMessage(ending.limitMs, ending.inputBytes) },
    };
  }
  counts.failed++;
  return {
    result: {
      ok: false,
      code: "processing_failed",
      message:
        killedFor === "memory"
          ? "Processing the file exceeded the memory limit."
          : "Processing the file failed (the worker process ended unexpectedly).",
    },
  };
}

/** What runInProcess tells its caller: the job's outcome, then (or before it) that the process is gone. */
interface JobEnd {
  answer: (outcome: Outcome) => void;
  gone: () => void;
  /** The process ended before the job reached it: run the job on another (undefined: no more tries). */
  again: (() => void) | undefined;
}

/** The "job" event of a job that got its process. */
const jobEvent = (engine: EngineProcess, pending: Pending, limitMs: number): RunnerEvent => ({
  type: "job",
  pid: engine.pid,
  warm: engine.warm,
  ready: engine.isReady(),
  timeoutMs: limitMs,
  kind: pending.kind ?? "lean",
  process: engine.kind,
});

/**
 * Runs one job in the process taken for it. The process is never given back: it is killed once its
 * reply is checked ("done"), or for a limit, or exits by itself. The job is answered at its reply
 * once checked (concludeReply), else when the process is gone (concludeJob); `gone` comes when it
 * is, before the answer when that waited
 * for it (so that a caller's next run() finds the slot free). Once answered, nothing changes the
 * outcome: a kill (the time limit, close()) only ends the process, and the output stays.
 */
function runInProcess(
  engine: EngineProcess,
  pending: Pending,
  limitMs: number,
  inputBytes: number,
  hooks: JobHooks,
  end: JobEnd,
): { kill: (reason: KillReason) => void } {
  const { job, signal } = pending;
  const { child, pid } = engine;
  let reply: unknown;
  let killedFor: KillReason | undefined;
  let answered = false;
  const kill = (reason: KillReason) => {
    killedFor ??= reason;
    child.kill("SIGKILL");
  };
  hooks.onEvent?.(jobEvent(engine, pending, limitMs));
  // The time limit and the memory cap stay on the process until it is gone, answered or not.
  const timer = setTimeout(() => kill("timeout"), limitMs);
  const onAbort = () => kill("abort");
  signal?.addEventListener("abort", onAbort, { once: true });
  const watchdog = watchMemory(pid, hooks.maxRssMb, () => kill("memory"));
  const answer = (outcome: Outcome) => {
    if (answered) return;
    answered = true;
    // The caller has its answer: going away now does not concern this job.
    signal?.removeEventListener("abort", onAbort);
    end.answer(outcome);
  };

  // Whether the process said it received the job (JOB_RECEIVED, or anything after it); until then it
  // never saw the file.
  let delivered = false;
  /** The reply, checked (undefined: not an answer, the exit decides). */
  let checked: Promise<Outcome | undefined> = Promise.resolve(undefined);
  const cancelled = () => killedFor === "abort" || killedFor === "closed";
  const onMessage = (message: unknown) => {
    if (isChildReady(message)) return;
    delivered = true;
    if (isJobReceived(message)) return;
    if (isJobProgress(message)) {
      if (reply === undefined && !answered) pending.onProgress?.(message.progress);
      return;
    }
    if (reply !== undefined) return;
    reply = message;
    checked = concludeReply(job, reply, hooks.counts, cancelled).catch(() => undefined);
    void checked.then((outcome) => {
      if (!outcome) return;
      answer(outcome);
      // Its one job is answered: nothing of the process is needed any more (the output is written
      // and checked), and its own exit would keep a core and the slot for a while.
      kill("done");
    });
  };
  child.on("message", onMessage);
  // The job goes out once the process listens for it (at once when it was ready).
  void engine.ready.then((ready) => {
    if (!ready || killedFor) return; // it ended first: its exit decides (end.again)
    child.send(job, (error) => {
      // The process could not take the job (it died first): its exit decides (end.again).
      if (error) child.kill("SIGKILL");
    });
  });

  void engine.closed.then(async () => {
    clearTimeout(timer);
    if (watchdog) clearInterval(watchdog);
    child.off("message", onMessage);
    hooks.onEvent?.({ type: "job-exited", pid, killed: killedFor ?? null });
    // Its reply, if it sent one, may still be being checked: that answer stands.
    const early = await checked;
    if (!early && !delivered && reply === undefined && killedFor === undefined && end.again) {
      signal?.removeEventListener("abort", onAbort);
      end.again();
      return;
    }
    end.gone();
    if (early) return;
    signal?.removeEventListener("abort", onAbort);
    try {
      answer(await concludeJob({ job, signal, reply, killedFor, limitMs, inputBytes }, hooks.counts));
    } catch (error) {
      answer({ error }); // the output file could not be examined or removed
    }
  });
  return { kill };
}

/** A runner's state: its settings, its queue, the jobs running, its counts and its pool. */
interface RunnerState {
  readonly concurrency: number;
  readonly queueLimit: number;
  readonly queue: Pending[];
  readonly active: Set<Active>;
  /** The last 20 jobs' durations, for Retry-After. */
  readonly durations: number[];
  readonly counts: JobHooks["counts"] & { busy: number };
  readonly hooks: JobHooks;
  readonly pool: ProcessPool;
  readonly timeoutFor: (inputBytes: number, runs?: number) => number;
  /** From what size an input gets a process of its own, and that process's flags. */
  readonly largeInput: { bytes: number; execArgv: string[]; env: Record<string, string> };
  /** Which inputs run in quick processes; undefined: none (no quick process is kept). */
  readonly quickRule: QuickRule | undefined;
  closed: boolean;
}

export function createRunner(options: RunnerOptions): Runner {
  const state = runnerState(options);
  return {
    run: (job, { signal, onProgress } = {}) => submit(state, job, signal, onProgress),
    busy: () => (isFull(state) ? new RunnerBusy(retryAfterSeconds(state)) : null),
    stats: () => runnerStats(state),
    timeoutFor: state.timeoutFor,
    close: () => closeRunner(state),
  };
}

function runnerState(options: RunnerOptions): RunnerState {
  const { concurrency, queueLimit, timeoutMs, memoryMb } = options;
  const timeoutMsPerMb = options.timeoutMsPerMb ?? 0;
  const warmProcesses = options.warmProcesses ?? concurrency;
  const quickWarmProcesses = options.quickWarmProcesses ?? 0;
  if (!(
    concurrency >= 1 &&
    queueLimit >= 0 &&
    timeoutMs > 0 &&
    timeoutMsPerMb >= 0 &&
    memoryMb >= 16 &&
    warmProcesses >= 0 &&
    quickWarmProcesses >= 0
  )) {
    throw new RangeError(
      "createRunner: concurrency >= 1, queueLimit >= 0, timeoutMs > 0, timeoutMsPerMb >= 0, memoryMb >= 16, warmProcesses >= 0, quickWarmProcesses >= 0",
    );
  }
  const counts = { succeeded: 0, refused: 0, failed: 0, timedOut: 0, aborted: 0, busy: 0 };
  return {
    concurrency,
    queueLimit,
    queue: [],
    active: new Set(),
    durations: [],
    counts,
    hooks: { maxRssMb: options.maxRssMb, counts, onEvent: options.onEvent },
    pool: createProcessPool({
      size: warmProcesses,
      execArgv: engineExecArgv(memoryMb),
      quick: { size: quickWarmProcesses, execArgv: quickExecArgv(memoryMb) },
      env: { ...ENGINE_CHILD_ENV, ...options.env },
      onStderr: options.onChildStderr,
      onEvent: options.onEvent,
      childModule: options.childModule,
    }),
    timeoutFor: (inputBytes, runs = 1) => runs * jobTimeoutMs({ timeoutMs, timeoutMsPerMb }, inputBytes),
    largeInput: {
      bytes: options.largeInputBytes ?? LARGE_INPUT_BYTES,
      execArgv: largeInputExecArgv(memoryMb),
      env: { ...LARGE_INPUT_ENV, ...options.env },
    },
    quickRule: quickWarmProcesses > 0 ? (options.quickRule ?? QUICK_RULE) : undefined,
    closed: false,
  };
}

/** Runner.run: at once when a slot is free, queued when the queue has room, else RunnerBusy. */
function submit(
  state: RunnerState,
  job: EngineJob,
  signal: AbortSignal | undefined,
  onProgress: RunOptions["onProgress"],
): Promise<EngineResult> {
  const { active, queue, counts } = state;
  if (state.closed) return Promise.reject(new RunnerClosed());
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (isFull(state)) {
    counts.busy++;
    return Promise.reject(new RunnerBusy(retryAfterSeconds(state)));
  }
  return new Promise<EngineResult>((resolve, reject) => {
    const pending: Pending = { job, signal, onProgress, resolve, reject };
    if (active.size < state.concurrency) {
      launch(state, pending);
      return;
    }
    if (signal) {
      const onAbort = () => {
        const index = queue.indexOf(pending);
        if (index >= 0) queue.splice(index, 1);
        counts.aborted++;
        reject(abortError(signal));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      pending.detach = () => signal.removeEventListener("abort", onAbort);
    }
    queue.push(pending);
  });
}

/**
 * Every slot taken and the queue full. A process of an answered job still holds its slot for a few
 * milliseconds: a job may wait for it beyond the queue's limit, as it would have found that slot
 * free before jobs were answered at their reply.
 */
const isFull = (state: RunnerState) =>
  state.active.size >= state.concurrency && state.queue.length >= state.queueLimit + exitingCount(state);

function retryAfterSeconds(state: RunnerState): number {
  const { durations } = state;
  const average = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : 5000;
  const waves = (state.queue.length + state.active.size) / state.concurrency;
  return Math.min(60, Math.max(1, Math.ceil((average * waves) / 1000)));
}

function startNext(state: RunnerState): void {
  while (!state.closed && state.active.size < state.concurrency && state.queue.length > 0) {
    launch(state, state.queue.shift()!);
  }
}

/** start(), with a synchronous failure to fork turned into a rejection of that job. */
function launch(state: RunnerState, pending: Pending): void {
  try {
    start(state, pending);
  } catch (error) {
    pending.detach?.();
    pending.reject(error);
  }
}

function start(state: RunnerState, pending: Pending): void {
  pending.detach?.();
  const began = Date.now();
  const inputBytes = inputBytesOf(pending.job);
  const limitMs = state.timeoutFor(inputBytes, engineRuns(pending.job));
  if (pending.job.ocr === true) pending.job = { ...pending.job, ocrTimeBudgetMs: Math.floor(limitMs * OCR_SHARE) };
  let markExited!: () => void;
  const exited = new Promise<void>((resolve) => (markExited = resolve));
  const end: JobEnd = {
    answer: (settled) => {
      entry.answered = true;
      state.durations.push(Date.now() - began);
      if (state.durations.length > 20) state.durations.shift();
      if ("error" in settled) pending.reject(settled.error);
      else pending.resolve(settled.result);
    },
    // The slot is taken until the process is gone (one process per slot), and free before the
    // caller hears an outcome that waited for that.
    gone: () => {
      state.active.delete(entry);
      markExited();
      startNext(state);
    },
    // The same slot, another process: the job never reached this one.
    again:
      (pending.undelivered ?? 0) < UNDELIVERED_RETRIES
        ? () => {
            state.active.delete(entry);
            markExited();
            pending.undelivered = (pending.undelivered ?? 0) + 1;
            if (state.closed) pending.reject(new RunnerClosed());
            else launch(state, pending);
          }
        : undefined,
  };
  pending.kind ??= state.quickRule ? jobKindOf(pending.job.inputPath, inputBytes, state.quickRule) : "lean";
  const engine = state.pool.take(
    inputBytes >= state.largeInput.bytes
      ? { execArgv: state.largeInput.execArgv, env: state.largeInput.env }
      : { kind: pending.kind },
  );
  const { kill } = runInProcess(engine, pending, limitMs, inputBytes, state.hooks, end);
  const entry: Active = { kill, exited, answered: false };
  state.active.add(entry);
}

/** Processes of answered jobs, still exiting. */
const exitingCount = (state: RunnerState) => [...state.active].filter((entry) => entry.answered).length;

function runnerStats(state: RunnerState): RunnerStats {
  const warm = state.pool.readyCount();
  const exiting = exitingCount(state);
  return {
    running: state.active.size - exiting,
    exiting,
    queued: state.queue.length,
    warm,
    warmQuick: state.pool.readyCount("quick"),
    warming: state.pool.size() - warm,
    concurrency: state.concurrency,
    queueLimit: state.queueLimit,
    ...state.counts,
  };
}

/** Rejects queued jobs, kills running children and warm processes; resolves when they are gone. */
async function closeRunner(state: RunnerState): Promise<void> {
  state.closed = true;
  for (const pending of state.queue.splice(0)) {
    pending.detach?.();
    pending.reject(new RunnerClosed());
  }
  const exits = [...state.active].map((entry) => {
    entry.kill("closed");
    return entry.exited;
  });
  await Promise.all([...exits, state.pool.close()]);
}
