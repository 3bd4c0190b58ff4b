// Benchmark of the PDF compression engine against Ghostscript and qpdf (issue 5), run by hand:
//   npm run bench:compress -- <dir> [--profiles lossless,balanced,extreme] [--tools engine,gs,qpdf]
//     [--no-peers] [--only substr[,substr]] [--jobs N] [--keep DIR] [--json FILE]
//     [--timeout S (per peer run, 300)] [--heap-mb MB (engine child heap, 1536)] [--live-engine]
//     [--cold] [--record FILE] [--against FILE]
// <dir> is a folder of PDFs, or the shared corpus layout (files/ + MANIFEST.tsv, of which only
// the files the API should accept without a password are used). --only keeps the files whose name
// contains one of the strings (--only cv_ runs the CVs). The report has aggregates for all files
// and per manifest category (cv, signed, scanned...), and holds the cv files to gs file by file.
//
// The engine runs as the service runs it: through the runner, with the service's default
// settings (src/config/env.ts: warm processes, one job per process, the time limit for the file's
// size, the RSS cap), so its wall time is what a request waits for the compression. --cold starts
// a fresh engine process per file instead (through GNU time), as the service did before its warm
// pool. Every peer runs once per file in a process of its own, through GNU time (wall time, peak RSS).
// Each output is then checked with tools independent of the engine's pdf-lib: qpdf --check,
// page count, pdftotext, counts of form fields / links / bookmarks / attachments (qpdf --json),
// and SSIM of page 1, the middle and the last page rendered at 100 dpi by pdftoppm.
// --jobs defaults to 1 so that timings are not skewed by the runs competing for the 2 cores.
// The engine runs from a copy of src/pdf taken at the start (bench/pdf/snapshot.ts),
// so that edits made during a run do not reach half of its files; --live-engine runs the
// working tree instead.
// --record FILE keeps this run's figures per file (bytes, time, peak memory, worst SSIM) as a
// baseline; --against FILE prints what got larger, slower (past the noise this run measures:
// how far gs's own times moved), hungrier or worse-looking than that baseline (bench/pdf/against.ts).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PDFDocument } from "@cantoo/pdf-lib";
import { COMPRESSION_PROFILES, isCompressionProfile } from "../src/pdf/index.ts";
import type { CompressionProfile } from "../src/pdf/index.ts";
import {
  aggregate,
  aggregateByCategory,
  bestOf,
  checkTargets,
  countedFiles,
  noFileSlowerThanGs,
  PER_FILE_CATEGORIES,
  perFileTargets,
  trailing,
} from "./pdf/aggregate.ts";
import type { ContenderResult, FileResult } from "./pdf/aggregate.ts";
import { cpuLines } from "./pdf/cpu.ts";
import { loadConfig } from "../src/config/env.ts";
import { createRunner, serviceRunnerOptions } from "../src/compress/isolation/runner.ts";
import type { Runner } from "../src/compress/isolation/runner.ts";
import { engineContender, peerContenders, runnerEngineContender } from "./pdf/contenders.ts";
import type { Contender, ContenderId } from "./pdf/contenders.ts";
import { listCorpus } from "./pdf/corpus.ts";
import { snapshotEngine } from "./pdf/snapshot.ts";
import type { BenchFile } from "./pdf/corpus.ts";
import { evaluateOutput, inspectInput } from "./pdf/evaluate.ts";
import type { InputFacts } from "./pdf/evaluate.ts";
import { hasText } from "./pdf/quality.ts";
import {
  aggregateTable,
  bestOfLines,
  categoryTable,
  contenderTable,
  inputStructureLines,
  scanSummary,
  targetsSection,
  trailingTable,
} from "./pdf/report.ts";
import { findBinary, killRunning, MissingBinary, requireBinary } from "./pdf/tools.ts";
import { againstSection, compareWithBaseline, readBaseline, recordBaseline } from "./pdf/against.ts";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    profiles: { type: "string", default: COMPRESSION_PROFILES.join(",") },
    tools: { type: "string", default: "engine,gs,qpdf" },
    "no-peers": { type: "boolean", default: false },
    only: { type: "string" },
    jobs: { type: "string", default: "1" },
    keep: { type: "string" },
    json: { type: "string" },
    timeout: { type: "string", default: "300" },
    "heap-mb": { type: "string", default: "1536" },
    "live-engine": { type: "boolean", default: false },
    cold: { type: "boolean", default: false },
    record: { type: "string" },
    against: { type: "string" },
  },
});

function fail(message: string): never {
  console.error(`bench:compress: ${message}`);
  process.exit(2);
}

const dir = positionals[0];
if (!dir || positionals.length > 1) fail("usage: npm run bench:compress -- <dir> [options] (see bench/compress.ts)");
const positive = (name: string, value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) fail(`--${name} must be a positive number; got ${value}`);
  return n;
};
const jobs = Math.floor(positive("jobs", flags.jobs));
const toolTimeoutMs = positive("timeout", flags.timeout) * 1000;
const heapMb = Math.floor(positive("heap-mb", flags["heap-mb"]));
/** Limit of each measuring call (qpdf, pdftotext, one pdftoppm page). */
const EVALUATION_TIMEOUT_MS = 120_000;

const profiles = flags.profiles.split(",").map((p) => p.trim());
const unknownProfile = profiles.find((p) => !isCompressionProfile(p));
if (unknownProfile) fail(`unknown profile ${unknownProfile} (${COMPRESSION_PROFILES.join(", ")})`);
const tools = new Set(flags["no-peers"] ? ["engine"] : flags.tools.split(",").map((t) => t.trim()));
for (const t of tools) if (!["engine", "gs", "qpdf"].includes(t)) fail(`unknown tool ${t} (engine, gs, qpdf)`);

// What every run needs: the measuring tools. Peers that are missing are only left out.
try {
  requireBinary("/usr/bin/time", "to measure wall time and peak memory (GNU time)");
  requireBinary("qpdf", "to check outputs (qpdf --check, page count, structure)");
  requireBinary("pdftoppm", "to render pages for SSIM");
  requireBinary("pdftotext", "to check that text is still extractable");
} catch (error) {
  if (error instanceof MissingBinary) fail(error.message);
  throw error;
}

const corpus = listCorpus(dir);
const filters = flags.only?.split(",").filter(Boolean);
const files = filters ? corpus.files.filter((f) => filters.some((s) => f.name.includes(s))) : corpus.files;
if (files.length === 0) fail(`no file to run on (${corpus.description}${filters ? `, --only ${flags.only}` : ""})`);

/** A copy taken while someone was half-way through an edit fails at once: better to say so now. */
async function smokeTest(engine: Contender): Promise<string | undefined> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-smoke-"));
  try {
    const doc = await PDFDocument.create();
    doc.addPage([100, 100]).drawText("smoke test", { x: 10, y: 50, size: 10 });
    const input = path.join(dir, "in.pdf");
    await writeFile(input, await doc.save());
    const run = await engine.run(input, path.join(dir, "out.pdf"), toolTimeoutMs);
    return run.status === "ok" ? undefined : (run.message ?? run.status);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const snapshot = tools.has("engine") && !flags["live-engine"] ? await snapshotEngine() : undefined;
const contenders: Contender[] = [];
let runner: Runner | undefined;
if (tools.has("engine")) {
  if (flags.cold) {
    const options = { heapMb, ...(snapshot ? { childPath: snapshot.childPath } : {}) };
    for (const profile of profiles as CompressionProfile[]) contenders.push(engineContender(profile, options));
  } else {
    // The service's defaults; at least --jobs at once, so that jobs never queue in the runner.
    const service = serviceRunnerOptions(loadConfig({}).compress);
    const concurrency = Math.max(service.concurrency, jobs);
    runner = createRunner({
      ...service,
      concurrency,
      warmProcesses: Math.max(service.warmProcesses ?? concurrency, jobs),
      memoryMb: heapMb,
      ...(snapshot ? { childModule: snapshot.runnerChildPath } : {}),
    });
    for (const profile of profiles as CompressionProfile[]) contenders.push(runnerEngineContender(profile, runner));
  }
  const problem = await smokeTest(contenders[0]!);
  if (problem) {
    await runner?.close();
    await snapshot?.remove();
    fail(
      `the engine${snapshot ? ` (snapshot ${snapshot.hash})` : ""} fails on a one-page PDF: ${problem}. ` +
        "Is someone half-way through an edit of src/pdf? Try again in a moment.",
    );
  }
}
const peers = peerContenders(tools);
contenders.push(...peers.contenders);
for (const note of peers.missing) console.error(`bench:compress: ${note}`);
if (contenders.length === 0) fail("nothing to run");

const workDir = flags.keep ? path.resolve(flags.keep) : await mkdtemp(path.join(os.tmpdir(), "bench-compress-"));
const cleanUp = async () => {
  await runner?.close();
  await snapshot?.remove();
  if (!flags.keep) await rm(workDir, { recursive: true, force: true });
};
process.once("SIGINT", () => {
  killRunning();
  void cleanUp().finally(() => process.exit(130));
});

function version(command: string | undefined, args: string[]): string {
  if (!command) return "not installed";
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
      .split("\n")[0]!
      .trim();
  } catch {
    return "unknown";
  }
}

/** pdftoppm -v prints to stderr, and exits 0 or 99 depending on the Poppler version. */
function pdftoppmVersion(): string {
  const result = spawnSync(findBinary("pdftoppm")!, ["-v"], { encoding: "utf8" });
  return `${result.stderr}${result.stdout}`.split("\n")[0]?.trim() || "unknown";
}

const environment = {
  node: process.version,
  cpus: os.cpus().length,
  loadAverageAtStart: os.loadavg().map((x) => Number(x.toFixed(2))),
  gs: version(findBinary("gs"), ["--version"]),
  qpdf: version(findBinary("qpdf"), ["--version"]),
  pdftoppm: pdftoppmVersion(),
  commit: version(findBinary("git"), ["rev-parse", "--short", "HEAD"]),
  /** Hash of the engine sources measured (see bench/pdf/snapshot.ts); null with --live-engine. */
  engineSnapshot: snapshot ? snapshot.hash : null,
  /** Others may be editing the engine: say when the run measured uncommitted engine code. */
  uncommittedEngineFiles: (() => {
    try {
      const status = execFileSync("git", ["status", "--porcelain", "--", "src/pdf"], { encoding: "utf8" });
      return status.split("\n").filter(Boolean).length;
    } catch {
      return null;
    }
  })(),
};

// ---------------------------------------------------------------------------------------------

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
let done = 0;

function progress(file: BenchFile, result: ContenderResult): void {
  const { run, output } = result;
  const what =
    run.status === "ok" && output
      ? `${Math.round(file.size / 1024)}→${Math.round(output.size / 1024)} KiB ` +
        `(${((1 - output.size / file.size) * 100).toFixed(1)} %) SSIM ${output.minSsim?.toFixed(4) ?? "n/a"}` +
        (output.valid ? "" : " INVALID") +
        (output.structureLosses.length ? ` LOST ${output.structureLosses.join(", ")}` : "")
      : `${run.status}${run.code ? ` ${run.code}` : ""}` +
        (run.status === "failed" || run.status === "timeout" ? `: ${(run.message ?? "").slice(0, 200)}` : "") +
        (result.evaluationError ? `: ${result.evaluationError}` : "");
  const peak = run.peakRssKb ? ` ${Math.round(run.peakRssKb / 1024)} MiB` : "";
  console.error(
    `  ${result.id.padEnd(16)} ${what}  ${(run.wallMs / 1000).toFixed(2)} s${peak}${scanSummary(run.engine?.report)}`,
  );
}

async function runFile(file: BenchFile): Promise<FileResult> {
  const result: FileResult = { name: file.name, category: file.category, size: file.size, results: [] };
  let input: InputFacts;
  try {
    input = await inspectInput(file.path, { timeoutMs: EVALUATION_TIMEOUT_MS });
  } catch (error) {
    result.inputError = message(error);
    return result;
  }
  result.input = {
    pages: input.pages,
    measuredPages: input.measuredPages,
    check: input.check,
    hasText: hasText(input.text),
    structure: input.structure,
  };
  for (const contender of contenders) {
    // A file the engine refuses is not counted: the peers need not spend minutes on it.
    if (contender.tool !== "engine" && result.results.some((r) => r.run.status === "refused")) break;
    const outDir = path.join(workDir, contender.id.replace(":", "-"));
    await mkdir(outDir, { recursive: true });
    const output = path.join(outDir, file.name);
    const entry: ContenderResult = { id: contender.id, run: await contender.run(file.path, output, toolTimeoutMs) };
    if (entry.run.status === "ok") {
      try {
        entry.output = await evaluateOutput(input, output, contender.identicalText, {
          timeoutMs: EVALUATION_TIMEOUT_MS,
        });
      } catch (error) {
        entry.evaluationError = message(error);
      }
    }
    if (!flags.keep) await rm(output, { force: true });
    result.results.push(entry);
    progress(file, entry);
  }
  return result;
}

const started = new Date();
console.error(
  `bench:compress: ${files.length} files (${corpus.description}), ${contenders.map((c) => c.id).join(" ")}, ` +
    `--jobs ${jobs}, outputs in ${workDir}${flags.keep ? "" : " (removed)"}`,
);
const results: FileResult[] = new Array<FileResult>(files.length);
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(jobs, files.length) }, async () => {
    while (next < files.length) {
      const index = next++;
      const file = files[index]!;
      console.error(
        `[${index + 1}/${files.length}] ${file.name} (${file.category}, ${Math.round(file.size / 1024)} KiB)`,
      );
      results[index] = await runFile(file);
      done++;
      if (results[index].inputError) console.error(`  input not measurable: ${results[index].inputError}`);
    }
  }),
);
await cleanUp();

// ---------------------------------------------------------------------------------------------
// The report

const aggregates = contenders.map((c) => aggregate(c, results));
const ids = (predicate: (id: ContenderId) => boolean) => contenders.map((c) => c.id).filter(predicate);
const best = [
  bestOf(
    "best of all tools per file, every page SSIM >= 0.95, valid",
    results,
    ids(() => true),
    0.95,
    false,
  ),
  bestOf(
    "  same, structure kept too",
    results,
    ids(() => true),
    0.95,
    true,
  ),
  bestOf(
    "best engine profile per file, SSIM >= 0.95, valid, structure kept",
    results,
    ids((id) => id.startsWith("engine:")),
    0.95,
    true,
  ),
  bestOf(
    "best peer per file, SSIM >= 0.95, valid",
    results,
    ids((id) => !id.startsWith("engine:")),
    0.95,
    false,
  ),
];
const byCategory = aggregateByCategory(contenders, results);
const targets = [
  ...checkTargets(aggregates),
  ...PER_FILE_CATEGORIES.flatMap((category) => perFileTargets(contenders, results, category)),
  ...noFileSlowerThanGs(results),
];
const behind = trailing(results);
const counted = countedFiles(results);
const refusedOrSkipped = results.filter((r) => !counted.includes(r));

const out: string[] = [];
out.push(`# bench:compress ${started.toISOString()}`);
out.push(
  `${corpus.description}; ${files.length} run, ${counted.length} counted. ` +
    `node ${environment.node}, ${environment.cpus} CPUs, load ${environment.loadAverageAtStart.join(" ")}; ` +
    `gs ${environment.gs}; ${environment.qpdf}; ${environment.pdftoppm}; commit ${environment.commit}` +
    (environment.uncommittedEngineFiles ? ` + ${environment.uncommittedEngineFiles} uncommitted engine files` : "") +
    (snapshot ? `; engine snapshot ${snapshot.hash}` : flags["live-engine"] ? "; live engine" : "") +
    `; --jobs ${jobs}; engine ${flags.cold ? "in a fresh process per file (--cold)" : "through the runner's warm processes, the service's defaults"}`,
);
out.push(
  "Sizes in KiB/MiB (1024-based). time: wall time of the tool's process; peak: its peak RSS (GNU time" +
    (flags.cold
      ? ""
      : "; engine: from the job's submission to the runner's result, peak RSS as its process measured it (VmHWM)") +
    "). " +
    "SSIM: grayscale renders at 100 dpi (pdftoppm) of page 1, the middle and the last page; min over those pages. " +
    "Aggregate saving = 1 - sum(out) / sum(in) over the counted files (a failed run counts as its input).",
);
for (const contender of contenders) out.push("", contenderTable(contender, results));
if (refusedOrSkipped.length) {
  out.push("", "== Not counted ==");
  for (const r of refusedOrSkipped) {
    const refusal = r.results.find((x) => x.run.status === "refused");
    out.push(
      `  ${r.name} (${r.category}): ${r.inputError ?? `refused by the engine: ${refusal?.run.code}: ${refusal?.run.message}`}`,
    );
  }
}
out.push("", "== Inputs with structure to keep ==", inputStructureLines(results));
out.push("", "== Aggregate ==", aggregateTable(aggregates));
out.push(
  "peak/budget: the highest ratio over the files of peak RSS to 3 x input + 200 MiB. " +
    (flags.cold
      ? "in-engine s: time inside compressPdf; the rest of the engine's time is starting Node and its modules " +
        "in a fresh process per file (--cold)."
      : "in-engine s: time inside compressPdf; the rest of the engine's time is the runner's: reading and " +
        "writing the files, IPC, the process's exit (a warm process per job, as the service runs it)."),
);
for (const a of aggregates) {
  if (a.measureMs === null) continue;
  out.push(
    `${a.label}: the report's min_ssim cost ${(a.measureMs / 1000).toFixed(3)} s of measuring beyond the quality ` +
      `check's own (of ${((a.engineMs ?? 0) / 1000).toFixed(1)} s in the engine): scans in layers measured again as ` +
      "written; every other change, the check's measurements.",
  );
}
out.push("", "== CPU ==", ...cpuLines(aggregates, results));
out.push("", "== Aggregate per category ==", categoryTable(byCategory, aggregates));
out.push(
  "Each cell: aggregate saving over the category's counted files, and its worst page SSIM " +
    '("<": files with a page under the threshold).',
);
out.push("", bestOfLines(best));
out.push("", "== TARGETS ==", targetsSection(targets));
out.push("", "== Files where the engine trails gs (5+ points less saving, or worst page SSIM 0.02+ lower) ==");
out.push(trailingTable(behind));
if (flags.against) {
  const baseline = await readBaseline(flags.against);
  out.push("", againstSection(flags.against, baseline, compareWithBaseline(baseline, results)));
}
console.log(out.join("\n"));
if (flags.record) {
  await recordBaseline(flags.record, results, environment);
  console.error(`bench:compress: figures recorded in ${flags.record}`);
}

if (flags.json) {
  const report = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    environment,
    options: {
      dir,
      profiles,
      tools: [...tools],
      only: flags.only ?? null,
      jobs,
      toolTimeoutMs,
      heapMb,
      cold: flags.cold,
    },
    corpus: corpus.description,
    contenders: contenders.map(({ id, label, ssimThreshold, identicalText }) => ({
      id,
      label,
      ssimThreshold,
      identicalText,
    })),
    files: results,
    aggregates,
    aggregatesByCategory: Object.fromEntries(byCategory),
    bestOf: best,
    targets,
    trailing: behind,
  };
  await writeFile(flags.json, `${JSON.stringify(report, null, 2)}\n`);
  console.error(`bench:compress: results written to ${flags.json}`);
}
console.error(`bench:compress: ${done} files in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
