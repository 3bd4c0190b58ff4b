// Warm engine processes: forked ahead of demand, so that a job does not wait for Node to start
// and load the engine (about half a second per process, most of a small file's time). Each
// process is still used for one job only: take() hands it over and removes it from the pool, the
// runner kills it once that job is answered (or it exits), and the pool forks a fresh one in its
// place (when that job's process is gone, if another process is still ready; as soon as the job has
// gone out to its process, if none is). A warm
// process holds nothing of any job (no input, no environment but the engine's own), so keeping it
// ready weakens no boundary; the heap limit is set when it is forked, the time and resident-memory
// limits are applied by the runner from the moment it takes the process.
//
// Two kinds of warm process (issue 42): "lean" ones, forked with the engine's memory-saving flags,
// and optionally "quick" ones, forked with flags for speed, for the jobs the runner judges small
// enough (runner.ts, processKindFor). A quick job takes a ready quick process, else a ready lean
// one (never slower than before, only not faster); a lean job never takes a quick one. Each kind
// is refilled to its own count.
import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { compileChild } from "./stripped-copy.ts";
import { isChildReady } from "./protocol.ts";
import { guarded } from "../../callbacks.ts";

const CHILD_MODULE = fileURLToPath(new URL("./child.ts", import.meta.url));

/**
 * How long after a job's process is gone its replacement is forked, while another process waits
 * ready. The runner ends a process at its job's answer, and the caller then stores the result,
 * records it and answers (10-40 ms here, up to 90 on a loaded machine): forking blocks the
 * service's event loop for 10-60 ms (it copies the page tables of a process of some 650 MB), which
 * would land in that answer.
 */
export const REFILL_AFTER_JOB_MS = 100;

/** Restart delays after processes that died idle (a broken install must not become a fork loop). */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 30_000;

/**
 * What a process was forked with: the pool's lean flags, its quick ones, or flags of a job's own
 * (take's `execArgv`: a large input's).
 */
export type ProcessKind = "lean" | "quick" | "own";

export interface EngineProcess {
  readonly child: ChildProcess;
  readonly kind: ProcessKind;
  readonly pid: number | undefined;
  /** Forked ahead of demand (true), or for a job that found no process in the pool (false). */
  readonly warm: boolean;
  /**
   * Whether it has loaded the engine and waits for its job: false once it has exited, even before
   * its "close" (a process that died idle must not be handed a job, which would fail for nothing).
   */
  isReady(): boolean;
  /** Resolves true once ready, false when the process ended first. */
  readonly ready: Promise<boolean>;
  /** Resolves when the process has exited and its stdio and IPC channel are closed. */
  readonly closed: Promise<void>;
}

/** What happens to the pool's processes, for logs and for tests that check the one-job rule. */
export type PoolEvent =
  | { type: "spawned"; pid: number | undefined; warm: boolean; kind: ProcessKind }
  | { type: "ready"; pid: number | undefined; startupMs: number }
  | { type: "exited"; pid: number | undefined; idle: boolean; code: number | null; signal: NodeJS.Signals | null };

export interface PoolOptions {
  /** Lean processes kept ready. 0: none (every lean job forks its process, as before the pool). */
  size: number;
  /** The lean processes' flags. */
  execArgv: string[];
  /** Quick processes kept ready, and their flags. Unset or size 0: quick jobs take lean processes. */
  quick?: { size: number; execArgv: string[] } | undefined;
  env: Record<string, string>;
  /** The child script; default child.ts beside this file (the benchmarks run a frozen copy). */
  childModule?: string | undefined;
  onStderr?: ((text: string) => void) | undefined;
  onEvent?: ((event: PoolEvent) => void) | undefined;
}

export interface ProcessPool {
  /**
   * A process for one job: a ready one if there is one, else one still starting, else a new one.
   * It leaves the pool at once and a replacement is forked; the caller owns it from here. For a
   * quick job, a ready quick process, else a ready lean one, else a quick one starting or new. With
   * `execArgv`, a new process forked with those flags instead (the pool's stay for other jobs),
   * and `env` instead of the pool's environment when given.
   */
  take(request?: { kind?: "lean" | "quick"; execArgv?: string[]; env?: Record<string, string> }): EngineProcess;
  /** Ready processes waiting in the pool (of one kind, when given). */
  readyCount(kind?: ProcessKind): number;
  /** Processes in the pool, ready or starting. */
  size(): number;
  /** Kills the pool's idle processes, forks no more, and resolves when they are gone. */
  close(): Promise<void>;
}

const isAlive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function forkEngine(
  options: PoolOptions,
  childModule: string,
  warm: boolean,
  kind: ProcessKind,
  execArgv: string[],
): EngineProcess {
  const spawnedAt = performance.now();
  const child = fork(childModule, [], {
    execArgv,
    stdio: ["ignore", "ignore", options.onStderr ? "pipe" : "ignore", "ipc"],
    env: options.env,
    serialization: "json",
  });
  const pid = child.pid;
  if (options.onStderr && child.stderr) {
    const onStderr = options.onStderr;
    child.stderr.setEncoding("utf8");
    child.stderr.on(
      "data",
      guarded("engine-pool", (text: string) => onStderr(text)),
    );
  }
  let isReady = false;
  let markReady!: (ready: boolean) => void;
  const ready = new Promise<boolean>((resolve) => (markReady = resolve));
  const onMessage = guarded("engine-pool", (message: unknown) => {
    if (!isChildReady(message)) return;
    isReady = true;
    child.off("message", onMessage);
    options.onEvent?.({ type: "ready", pid, startupMs: performance.now() - spawnedAt });
    markReady(true);
  });
  child.on("message", onMessage);
  // "close", not "exit": it comes after the IPC channel closed, so a reply sent just before the
  // process exited has been received by whoever listens for it.
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const onClose = () => {
    child.off("message", onMessage);
    markReady(false);
    markClosed();
  };
  child.once("close", guarded("engine-pool", onClose));
  child.once(
    "error",
    guarded("engine-pool", () => {
      // Spawning failed (no pid: "close" will not follow), or the process could not be signalled.
      if (pid === undefined) onClose();
      else if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }),
  );
  options.onEvent?.({ type: "spawned", pid, warm, kind });
  return {
    child,
    kind,
    pid,
    warm,
    isReady: () => isReady && isAlive(child),
    ready,
    closed,
  };
}

/**
 * A ready process of the kinds asked, in their order (a quick job: quick, then lean); else one of
 * the first kind still starting; never one that already exited (its "close", which takes it out of
 * the pool, may not have come yet); else a fresh fork. Then the pool is refilled.
 */
function takeProcess(
  idle: EngineProcess[],
  kinds: readonly ProcessKind[],
  fork: () => EngineProcess,
  refill: () => void,
  refillLater: () => void,
): EngineProcess {
  let at = -1;
  for (const kind of kinds) {
    at = idle.findIndex((engine) => engine.kind === kind && engine.isReady());
    if (at >= 0) break;
  }
  if (at < 0) at = idle.findIndex((engine) => engine.kind === kinds[0] && isAlive(engine.child));
  const [engine] = at >= 0 ? idle.splice(at, 1) : [];
  const taken = engine ?? fork();
  // Loading Node and the engine takes a core for a second or more, which the job would lose on
  // a small machine: while another process is ready for the next job of this kind, the
  // replacement is forked once this one is gone, and its answer sent (REFILL_AFTER_JOB_MS).
  if (idle.some((other) => kinds.includes(other.kind) && other.isReady())) void taken.closed.then(refillLater);
  // Forking blocks the event loop (10-60 ms from the service's process, whose page tables it
  // copies): after the job has gone out to its process, not before.
  else setImmediate(guarded("engine-pool", refill));
  return taken;
}

const execArgvOf = (options: PoolOptions, kind: "lean" | "quick") =>
  kind === "quick" && options.quick ? options.quick.execArgv : options.execArgv;

/**
 * How many idle processes of each kind the pool keeps, in the order they are forked: quick first,
 * the small jobs they are for being the commonest, and the ones a fork's wait hurts most.
 */
const kindSizes = (options: PoolOptions) =>
  [
    ["quick", options.quick?.size ?? 0],
    ["lean", options.size],
  ] as const;

/** The event of a process that ended idle, in the pool. */
const idleExit = (engine: EngineProcess): PoolEvent => ({
  type: "exited",
  pid: engine.pid,
  idle: true,
  code: engine.child.exitCode,
  signal: engine.child.signalCode,
});

export function createProcessPool(options: PoolOptions): ProcessPool {
  const source = options.childModule ?? CHILD_MODULE;
  // Plain JavaScript for the processes (stripped-copy.ts), else the sources as they are.
  const compiled = compileChild(source);
  const childModule = compiled?.module ?? source;
  const idle: EngineProcess[] = [];
  let closed = false;
  let failures = 0;
  let backoff: NodeJS.Timeout | undefined;
  let later: NodeJS.Timeout | undefined;

  function spawnIdle(kind: "lean" | "quick"): void {
    const engine = forkEngine(options, childModule, true, kind, execArgvOf(options, kind));
    idle.push(engine);
    void engine.ready.then((ready) => {
      if (ready) failures = 0;
    });
    void engine.closed.then(() => {
      const index = idle.indexOf(engine);
      if (index < 0) return; // taken for a job: the runner reports on it
      idle.splice(index, 1);
      options.onEvent?.(idleExit(engine));
      if (closed) return;
      // Killed from outside, crashed, or failed to start: replace it, later each time in a row.
      failures += 1;
      scheduleRefill(Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (failures - 1)));
    });
  }

  function scheduleRefill(delayMs: number): void {
    if (backoff) return;
    backoff = setTimeout(
      guarded("engine-pool", () => {
        backoff = undefined;
        refill();
      }),
      delayMs,
    );
    // An idle pool waiting to be refilled must not keep a finished script alive.
    backoff.unref();
  }

  function refill(): void {
    if (closed || backoff) return;
    for (const [kind, size] of kindSizes(options))
      while (idle.filter((e) => e.kind === kind).length < size) spawnIdle(kind);
  }

  /** refill() after REFILL_AFTER_JOB_MS, one wait at a time (a take() finding none ready meanwhile forks at once). */
  function refillLater(): void {
    if (closed || later) return;
    later = setTimeout(
      guarded("engine-pool", () => {
        later = undefined;
        refill();
      }),
      REFILL_AFTER_JOB_MS,
    );
    later.unref(); // as the backoff's: a pool waiting to be refilled keeps no finished script alive
  }

  refill();

  return {
    take({ kind = "lean", execArgv, env } = {}) {
      if (closed) throw new Error("the process pool is closed");
      if (execArgv) return forkEngine(env ? { ...options, env } : options, childModule, false, "own", execArgv);
      // Without quick processes a quick job is a lean one.
      const kinds = kind === "quick" && options.quick?.size ? (["quick", "lean"] as const) : (["lean"] as const);
      const forkOne = () => forkEngine(options, childModule, false, kinds[0], execArgvOf(options, kinds[0]));
      return takeProcess(idle, kinds, forkOne, refill, refillLater);
    },
    readyCount: (kind) =>
      idle.filter((engine) => engine.isReady() && (kind === undefined || engine.kind === kind)).length,
    size: () => idle.length,
    async close() {
      closed = true;
      if (backoff) clearTimeout(backoff);
      backoff = undefined;
      if (later) clearTimeout(later);
      const gone = idle.splice(0).map((engine) => {
        engine.child.kill("SIGKILL");
        return engine.closed;
      });
      await Promise.all(gone);
      // Processes taken for jobs loaded every module when they started: the copy can go.
      compiled?.remove();
    },
  };
}
