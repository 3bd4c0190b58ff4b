// The programs the benchmark compares: our engine with each profile, and, when installed,
// Ghostscript (/ebook, /screen) and qpdf (lossless rewrite). The engine runs as the service runs
// it: through the runner (src/compress/isolation/runner.ts), one job per warm process; wall time
// is from run() to its result, peak memory what the process measured of itself (getrusage, the
// whole process). The peers run as processes of their own through GNU time. engineContender
// instead starts a fresh engine process per file (what the service did before its warm pool).
import { fileURLToPath } from "node:url";
import type { CompressionProfile } from "../../src/pdf/index.ts";
import type { EngineChildReply } from "./engine-child.ts";
import { ENGINE_CHILD_ENV, engineExecArgv } from "../../src/compress/isolation/runner.ts";
import type { Runner } from "../../src/compress/isolation/runner.ts";
import { describeExit, findBinary, runMeasured } from "./tools.ts";

export type ContenderId = `engine:${CompressionProfile}` | "gs:ebook" | "gs:screen" | "qpdf";

export interface Contender {
  id: ContenderId;
  /** The tool family, for --tools. */
  tool: "engine" | "gs" | "qpdf";
  /** Printed as the table title. */
  label: string;
  /** Every measured page must reach this SSIM (1 means it must print as 1.000). */
  ssimThreshold: number;
  /** The text must come out identical (lossless tools), not only still extractable. */
  identicalText: boolean;
  run(input: string, output: string, timeoutMs: number): Promise<ToolRun>;
}

export type ToolStatus = "ok" | "refused" | "failed" | "timeout";

export interface ToolRun {
  status: ToolStatus;
  /** The engine's refusal code (PdfRejected), or why the tool failed. */
  code?: string;
  message?: string;
  wallMs: number;
  peakRssKb?: number;
  /**
   * CPU time (user + system, every thread): through the runner, the engine's process while
   * compressPdf ran; a process of its own (a peer, the engine with --cold), the whole process.
   */
  cpuMs?: number;
  /** Engine only: time inside compressPdf, and its report. */
  /** measureMs: of engineMs, the report's page SSIM beyond the quality check's own work. */
  engine?: { engineMs: number; measureMs?: number; report?: unknown };
}

const ENGINE_CHILD = fileURLToPath(new URL("./engine-child.ts", import.meta.url));

/** Thresholds from issue 5's targets; the peers are held to the profile they compete with. */
const THRESHOLDS: Record<CompressionProfile, number> = { lossless: 1, balanced: 0.95, extreme: 0.9 };

export interface EngineOptions {
  /** The child's V8 heap limit, as the service sets it (COMPRESS_MEMORY_MB, default 1536). */
  heapMb: number;
  /** The child script to run (a snapshot's copy); default bench/pdf/engine-child.ts. */
  childPath?: string;
}

/** What every engine contender of a profile is, however it runs the engine. */
const engineIdentity = (profile: CompressionProfile): Omit<Contender, "run"> => ({
  id: `engine:${profile}`,
  tool: "engine",
  label: `engine ${profile}`,
  ssimThreshold: THRESHOLDS[profile],
  identicalText: profile === "lossless",
});

export function engineContender(profile: CompressionProfile, options: EngineOptions): Contender {
  return {
    ...engineIdentity(profile),
    async run(input, output, timeoutMs) {
      const args = [...engineExecArgv(options.heapMb), options.childPath ?? ENGINE_CHILD, input, output, profile];
      // The flags and environment the service gives its children.
      const result = await runMeasured(process.execPath, args, { timeoutMs, env: { ...ENGINE_CHILD_ENV } });
      const base = {
        wallMs: result.wallMs,
        ...(result.peakRssKb ? { peakRssKb: result.peakRssKb } : {}),
        ...(result.cpuMs === undefined ? {} : { cpuMs: result.cpuMs }),
      };
      if (result.timedOut) return { ...base, status: "timeout", message: describeExit(result, timeoutMs) };
      const line = result.stdout.toString("utf8").trim().split("\n").pop() ?? "";
      let reply: EngineChildReply | undefined;
      try {
        reply = JSON.parse(line) as EngineChildReply;
      } catch {
        reply = undefined;
      }
      if (reply?.ok) {
        const measureMs = reply.report?.images?.quality.measureMs;
        return { ...base, status: "ok", engine: { engineMs: reply.engineMs, measureMs, report: reply.report } };
      }
      if (reply && reply.refused) return { ...base, status: "refused", code: reply.code, message: reply.message };
      return {
        ...base,
        status: "failed",
        message: reply ? `${reply.message} (${describeExit(result, timeoutMs)})` : describeExit(result, timeoutMs),
      };
    },
  };
}

/** The engine through a runner (the caller creates it with the service's options and closes it). */
export function runnerEngineContender(profile: CompressionProfile, runner: Runner): Contender {
  return {
    ...engineIdentity(profile),
    async run(input, output) {
      // The runner's own time limit applies (the service's, for the input's size).
      const started = performance.now();
      const result = await runner.run({ kind: "compress", inputPath: input, outputPath: output, profile });
      const wallMs = performance.now() - started;
      if (result.ok) {
        const usage = result.usage;
        return {
          status: "ok",
          wallMs,
          ...(usage
            ? {
                peakRssKb: usage.maxRssKb,
                ...(usage.cpuMs === undefined ? {} : { cpuMs: usage.cpuMs }),
                engine: { engineMs: usage.engineMs, measureMs: usage.measureMs },
              }
            : {}),
        };
      }
      if (result.code === "processing_timeout") return { status: "timeout", wallMs, message: result.message };
      if (result.code === "processing_failed") return { status: "failed", wallMs, message: result.message };
      return { status: "refused", wallMs, code: result.code, message: result.message };
    },
  };
}

function externalContender(
  id: ContenderId,
  tool: "gs" | "qpdf",
  label: string,
  ssimThreshold: number,
  identicalText: boolean,
  binary: string,
  args: (input: string, output: string) => string[],
  okExitCodes: readonly number[],
): Contender {
  return {
    id,
    tool,
    label,
    ssimThreshold,
    identicalText,
    async run(input, output, timeoutMs) {
      const result = await runMeasured(binary, args(input, output), { timeoutMs });
      const base = {
        wallMs: result.wallMs,
        ...(result.peakRssKb ? { peakRssKb: result.peakRssKb } : {}),
        ...(result.cpuMs === undefined ? {} : { cpuMs: result.cpuMs }),
      };
      if (result.timedOut) return { ...base, status: "timeout", message: describeExit(result, timeoutMs) };
      if (result.exitCode === null || !okExitCodes.includes(result.exitCode)) {
        return { ...base, status: "failed", message: describeExit(result, timeoutMs) };
      }
      return { ...base, status: "ok", ...(result.exitCode !== 0 ? { code: `exit ${result.exitCode}` } : {}) };
    },
  };
}

const gsArgs = (setting: string) => (input: string, output: string) => [
  "-q",
  "-dNOPAUSE",
  "-dBATCH",
  "-dSAFER",
  "-sDEVICE=pdfwrite",
  `-dPDFSETTINGS=/${setting}`,
  `-sOutputFile=${output}`,
  input,
];

/** The peers that are installed, among those asked for, and a note for each one missing. */
export function peerContenders(tools: ReadonlySet<string>): { contenders: Contender[]; missing: string[] } {
  const contenders: Contender[] = [];
  const missing: string[] = [];
  if (tools.has("gs")) {
    const gs = findBinary("gs");
    if (gs) {
      contenders.push(externalContender("gs:ebook", "gs", "gs /ebook", 0.95, false, gs, gsArgs("ebook"), [0]));
      contenders.push(externalContender("gs:screen", "gs", "gs /screen", 0.9, false, gs, gsArgs("screen"), [0]));
    } else missing.push("gs (Ghostscript) is not installed: its columns are left out (apt-get install -y ghostscript)");
  }
  if (tools.has("qpdf")) {
    const qpdf = findBinary("qpdf");
    const args = (input: string, output: string) => [
      "--object-streams=generate",
      "--recompress-flate",
      "--compression-level=9",
      input,
      output,
    ];
    // qpdf exits 3 when it wrote the file but had warnings.
    if (qpdf) contenders.push(externalContender("qpdf", "qpdf", "qpdf", 1, true, qpdf, args, [0, 3]));
    else missing.push("qpdf is not installed: its columns are left out (apt-get install -y qpdf)");
  }
  return { contenders, missing };
}
