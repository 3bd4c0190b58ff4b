// Runs engine jobs in child processes, outside the caller's event loop, with hard limits: a
// fixed number of children at once, a bounded queue, a wall-clock timeout (SIGKILL), a V8 heap
// limit and optionally a resident-memory limit. A child handles one job and exits, so nothing
// one upload did (a leak, a native crash, a hang) can reach the next.
import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFile, rm, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { isEngineResult } from "./protocol.ts";
import type { EngineJob, EngineResult } from "./protocol.ts";

const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url));
const RSS_POLL_MS = 200;

export interface RunnerOptions {
  /** Children running at once. */
  concurrency: number;
  /** Jobs waiting for a child; beyond that, run() rejects with RunnerBusy. */
  queueLimit: number;
  /** Wall-clock limit of one job from the child's start; past it the child is killed. */
  timeoutMs: number;
  /** The child's V8 heap limit (--max-old-space-size). */
  memoryMb: number;
  /**
   * Kill a child whose resident memory (heap, buffers, native image work) exceeds this (Linux;
   * polled). Unset: only the heap limit applies.
   */
  maxRssMb?: number;
  /** What the children write to stderr (library warnings, unexpected errors). Unset: dropped. */
  onChildStderr?: (text: string) => void;
  /** The children's environment. Default: empty (they handle untrusted files and need nothing). */
  env?: Record<string, string>;
}

export interface RunnerStats {
  running: number;
  queued: number;
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
  run(job: EngineJob, options?: { signal?: AbortSignal }): Promise<EngineResult>;
  stats(): RunnerStats;
  /** Rejects queued jobs, kills running children and resolves when they are gone. */
  close(): Promise<void>;
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
  resolve: (result: EngineResult) => void;
  reject: (error: unknown) => void;
  /** Removes the queue's abort listener. */
  detach?: () => void;
}

interface Active {
  child: ChildProcess;
  kill: (reason: KillReason) => void;
  exited: Promise<void>;
}

type KillReason = "timeout" | "abort" | "memory" | "closed";

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
 * Node flags of an engine process: the heap cap, and a small young generation (the engine's
 * objects live for the whole job; a large semi-space only holds garbage longer).
 */
export const engineExecArgv = (memoryMb: number) => [
  `--max-old-space-size=${memoryMb}`,
  "--max-semi-space-size=2",
  "--disable-warning=ExperimentalWarning",
];

/**
 * The environment of an engine process. glibc gives every thread that frees memory an arena of its
 * own and keeps what libvips freed there: one arena keeps the process's peak RSS 50-170 MB lower.
 */
export const ENGINE_CHILD_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" };

export function createRunner(options: RunnerOptions): Runner {
  const { concurrency, queueLimit, timeoutMs, memoryMb } = options;
  if (!(concurrency >= 1 && queueLimit >= 0 && timeoutMs > 0 && memoryMb >= 16)) {
    throw new RangeError("createRunner: concurrency >= 1, queueLimit >= 0, timeoutMs > 0, memoryMb >= 16");
  }
  const queue: Pending[] = [];
  const active = new Set<Active>();
  const durations: number[] = [];
  const counts = { succeeded: 0, refused: 0, failed: 0, timedOut: 0, aborted: 0, busy: 0 };
  let closed = false;

  function retryAfterSeconds(): number {
    const average = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : 5000;
    const waves = (queue.length + active.size) / concurrency;
    return Math.min(60, Math.max(1, Math.ceil((average * waves) / 1000)));
  }

  function startNext(): void {
    while (!closed && active.size < concurrency && queue.length > 0) launch(queue.shift()!);
  }

  /** start(), with a synchronous failure to fork turned into a rejection of that job. */
  function launch(pending: Pending): void {
    try {
      start(pending);
    } catch (error) {
      pending.detach?.();
      pending.reject(error);
    }
  }

  function start(pending: Pending): void {
    pending.detach?.();
    const { job, signal } = pending;
    const began = Date.now();
    const child = fork(CHILD, [], {
      execArgv: engineExecArgv(memoryMb),
      stdio: ["ignore", "ignore", options.onChildStderr ? "pipe" : "ignore", "ipc"],
      env: { ...ENGINE_CHILD_ENV, ...options.env },
      serialization: "json",
    });
    if (options.onChildStderr && child.stderr) {
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (text: string) => options.onChildStderr?.(text));
    }

    let reply: unknown;
    let killedFor: KillReason | undefined;
    const kill = (reason: KillReason) => {
      killedFor ??= reason;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => kill("timeout"), timeoutMs);
    const onAbort = () => kill("abort");
    signal?.addEventListener("abort", onAbort, { once: true });
    const watchdog =
      options.maxRssMb === undefined || child.pid === undefined
        ? undefined
        : setInterval(() => {
            void residentMb(child.pid!).then((mb) => {
              if (mb !== undefined && mb > options.maxRssMb!) kill("memory");
            });
          }, RSS_POLL_MS);

    let settle!: () => void;
    const exited = new Promise<void>((resolve) => (settle = resolve));
    const entry: Active = { child, kill, exited };
    active.add(entry);

    let finished = false;
    const finish = async (): Promise<void> => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (watchdog) clearInterval(watchdog);
      signal?.removeEventListener("abort", onAbort);
      try {
        const outcome = await conclude();
        if ("error" in outcome) pending.reject(outcome.error);
        else pending.resolve(outcome.result);
      } catch (error) {
        pending.reject(error); // the output file could not be examined or removed
      } finally {
        durations.push(Date.now() - began);
        if (durations.length > 20) durations.shift();
        active.delete(entry);
        settle();
        startNext();
      }
    };

    const conclude = async (): Promise<{ result: EngineResult } | { error: unknown }> => {
      const removeOutput = () => rm(job.outputPath, { force: true });
      if (killedFor === "abort" || killedFor === "closed") {
        await removeOutput();
        if (killedFor === "abort") counts.aborted++;
        return { error: killedFor === "abort" && signal ? abortError(signal) : new RunnerClosed() };
      }
      // A child that replied has done its work, even if it was slow to exit.
      if (isEngineResult(reply)) {
        if (!reply.ok) {
          await removeOutput();
          if (reply.code === "processing_failed") counts.failed++;
          else counts.refused++;
          return { result: reply };
        }
        const size = await stat(job.outputPath).then(
          (s) => s.size,
          () => -1,
        );
        if (size === reply.outputSize) {
          counts.succeeded++;
          return { result: reply };
        }
      }
      await removeOutput();
      if (killedFor === "timeout") {
        counts.timedOut++;
        return {
          result: {
            ok: false,
            code: "processing_timeout",
            message: `Processing took longer than the limit of ${timeoutMs / 1000} s.`,
          },
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
    };

    child.on("message", (message: unknown) => {
      reply ??= message;
    });
    // "close", not "exit": it comes after the IPC channel closed, so a reply sent just before the
    // child exited has been received.
    child.once("close", () => void finish());
    child.once("error", () => {
      // Spawning failed or the child could not be signalled; "exit" may not follow.
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) child.kill("SIGKILL");
      else void finish();
    });
    child.send(job, (error) => {
      // The child could not take the job (it died first): its exit reports processing_failed.
      if (error) child.kill("SIGKILL");
    });
  }

  return {
    run(job, { signal } = {}) {
      if (closed) return Promise.reject(new RunnerClosed());
      if (signal?.aborted) return Promise.reject(abortError(signal));
      if (active.size >= concurrency && queue.length >= queueLimit) {
        counts.busy++;
        return Promise.reject(new RunnerBusy(retryAfterSeconds()));
      }
      return new Promise<EngineResult>((resolve, reject) => {
        const pending: Pending = { job, signal, resolve, reject };
        if (active.size < concurrency) {
          launch(pending);
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
    },
    stats() {
      return { running: active.size, queued: queue.length, concurrency, queueLimit, ...counts };
    },
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) {
        pending.detach?.();
        pending.reject(new RunnerClosed());
      }
      const exits = [...active].map((entry) => {
        entry.kill("closed");
        return entry.exited;
      });
      await Promise.all(exits);
    },
  };
}
