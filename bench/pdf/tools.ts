// Running the external programs the compression benchmark relies on: finding them (with a clear
// message naming the Debian package when one is missing), running them with a time limit that
// kills the whole process group (gs and node start children of their own), and measuring wall
// time and peak resident memory through GNU time.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** Where each program comes from on Debian, for the error message. */
const PACKAGES: Record<string, string> = {
  pdftoppm: "poppler-utils",
  pdftotext: "poppler-utils",
  qpdf: "qpdf",
  gs: "ghostscript",
  time: "time",
};

export class MissingBinary extends Error {
  readonly binary: string;
  constructor(binary: string, purpose: string) {
    const pkg = PACKAGES[path.basename(binary)];
    super(
      `${binary} is not installed or not on PATH; it is needed ${purpose}.` +
        (pkg ? ` On Debian: apt-get install -y ${pkg}` : ""),
    );
    this.name = "MissingBinary";
    this.binary = binary;
  }
}

const found = new Map<string, string | undefined>();

/** The absolute path of an executable (a bare name is looked up on PATH), or undefined. */
export function findBinary(name: string): string | undefined {
  if (found.has(name)) return found.get(name);
  const candidates = name.includes("/")
    ? [name]
    : (process.env["PATH"] ?? "").split(path.delimiter).map((dir) => path.join(dir || ".", name));
  let result: string | undefined;
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      result = candidate;
      break;
    } catch {
      // not here
    }
  }
  found.set(name, result);
  return result;
}

/** Like findBinary, but throws MissingBinary saying what the program is needed for. */
export function requireBinary(name: string, purpose: string): string {
  const location = findBinary(name);
  if (!location) throw new MissingBinary(name, purpose);
  return location;
}

export interface RunOptions {
  timeoutMs: number;
  /** Kill the process when its stdout grows beyond this (a runaway render). Default 512 MiB. */
  maxStdoutBytes?: number;
  env?: NodeJS.ProcessEnv;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** stdout went past maxStdoutBytes and the process was killed. */
  overflow: boolean;
  stdout: Buffer;
  /** The last 8 KiB of stderr (enough for an error message). */
  stderr: string;
  wallMs: number;
}

/** Process groups still running, so that an interrupted benchmark leaves nothing behind. */
const running = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Kills every process group this module started and that is still running. */
export function killRunning(): void {
  for (const pid of running) killGroup(pid);
  running.clear();
}

/**
 * Runs a program to completion. It gets its own process group (detached), so a timeout kills
 * whatever it started too; the group is also killed by killRunning().
 */
export function run(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const maxStdout = options.maxStdoutBytes ?? 512 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.env ? { env: options.env } : {}),
    });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    const chunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let timedOut = false;
    let overflow = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) killGroup(pid);
    }, options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) {
        if (!overflow && pid !== undefined) killGroup(pid);
        overflow = true;
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      stderr = (stderr + text).slice(-8192);
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      if (pid !== undefined) running.delete(pid);
      reject(error);
    });
    child.once("close", (exitCode, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) running.delete(pid);
      resolve({
        exitCode,
        signal,
        timedOut,
        overflow,
        stdout: Buffer.concat(chunks),
        stderr,
        wallMs: performance.now() - started,
      });
    });
  });
}

export interface MeasuredRun extends RunResult {
  /** Peak resident set size of the program (GNU time's %M), in KiB; undefined when it was killed. */
  peakRssKb: number | undefined;
  /** User + system CPU time of the program and its waited-for children (%U + %S), in ms. */
  cpuMs?: number;
}

const GNU_TIME = "/usr/bin/time";

/**
 * run(), through GNU time, which reports the peak RSS of the program (the largest of it and its
 * waited-for children) and its CPU time. Wall time is measured here, with sub-millisecond resolution.
 */
export async function runMeasured(command: string, args: readonly string[], options: RunOptions): Promise<MeasuredRun> {
  requireBinary(GNU_TIME, "to measure peak memory (GNU time)");
  const dir = await mkdtemp(path.join(tmpdir(), "bench-time-"));
  const report = path.join(dir, "time.txt");
  try {
    const result = await run(GNU_TIME, ["-f", "%e %M %U %S", "-o", report, command, ...args], options);
    const text = await readFile(report, "utf8").catch(() => "");
    // GNU time writes "Command exited with non-zero status N" before the format line.
    const match = /^([\d.]+) (\d+) ([\d.]+) ([\d.]+)$/m.exec(text);
    if (!match) return { ...result, peakRssKb: undefined };
    return { ...result, peakRssKb: Number(match[2]), cpuMs: (Number(match[3]) + Number(match[4])) * 1000 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One line describing how a run ended, for reports ("exit 1: TypeError: ..."). */
export function describeExit(result: RunResult, limitMs: number): string {
  if (result.timedOut) return `timed out after ${Math.round(limitMs / 1000)} s`;
  if (result.overflow) return "produced too much output";
  // Node ends an uncaught error's report with a blank line and "Node.js v22...": the error
  // line itself ("TypeError: ...", "SyntaxError: ...") says more than the tail.
  const lines = result.stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^Node\.js v\d/.test(line));
  const error = lines.find((line) => /^(\w+Error|Error)\b/.test(line));
  const tail = (error ?? lines.slice(-2).join(" | ")).slice(0, 300);
  const how = result.signal ? `killed by ${result.signal}` : `exit ${String(result.exitCode)}`;
  return tail ? `${how}: ${tail}` : how;
}
