// From per-file results to the numbers issue 5 sets targets on: aggregate savings
// (1 - sum of outputs / sum of inputs), SSIM over every measured page, failures, validity,
// structure kept, total time and peak memory against the budget, and the targets themselves.
import type { Contender, ContenderId, ToolRun } from "./contenders.ts";
import type { OutputEvaluation } from "./evaluate.ts";
import type { CheckResult, StructureCounts } from "./quality.ts";

export interface ContenderResult {
  id: ContenderId;
  run: ToolRun;
  output?: OutputEvaluation;
  /** Measuring the output failed (not the tool). */
  evaluationError?: string;
}

export interface InputSummary {
  pages: number;
  measuredPages: number[];
  check: CheckResult;
  hasText: boolean;
  structure: StructureCounts;
}

export interface FileResult {
  name: string;
  category: string;
  size: number;
  input?: InputSummary;
  /** The input could not be measured, so the file is not counted. */
  inputError?: string;
  results: ContenderResult[];
}

const MIB = 1024 * 1024;

/** Issue 5: peak memory under 3x the input plus 200 MB. */
export const memoryBudgetBytes = (inputSize: number) => 3 * inputSize + 200 * MIB;

/** A threshold of 1 means "prints as 1.000" (the issue's wording); others are plain >=. */
export const meetsThreshold = (value: number, threshold: number) =>
  threshold >= 1 ? value >= 0.9995 : value >= threshold;

/** Files that count: the input was measured and the engine accepted it (refusals are reported apart). */
export function countedFiles(files: readonly FileResult[]): FileResult[] {
  return files.filter(
    (file) => file.input && !file.results.some((r) => r.id.startsWith("engine:") && r.run.status === "refused"),
  );
}

/** The size a contender's work counts for: what it wrote, or the input when it failed. */
export function countedOutputSize(file: FileResult, result: ContenderResult | undefined): number {
  return result?.run.status === "ok" && result.output ? result.output.size : file.size;
}

export interface Aggregate {
  id: ContenderId;
  label: string;
  threshold: number;
  files: number;
  inputBytes: number;
  outputBytes: number;
  saving: number;
  pagesMeasured: number;
  medianSsim: number | null;
  worstSsim: number | null;
  /** Measured pages below the threshold, and the files they are in. */
  pagesBelow: number;
  filesBelow: number;
  /** Files none of whose pages could be measured or whose output could not be evaluated. */
  unmeasured: number;
  pixelIdenticalPages: number;
  largerThanInput: number;
  invalid: number;
  textIdentical: number;
  structureLosses: number;
  /** Failed or timed out (their output counts as the input). */
  failures: number;
  totalWallMs: number;
  /** Engine only: the time spent inside compressPdf (the rest is starting Node and reading the file). */
  engineMs: number | null;
  /** Of engineMs: the report's page SSIM (min_ssim) beyond the quality check's own work. */
  measureMs: number | null;
  maxPeakRssBytes: number | null;
  /** The largest peak / budget over the files, and how many went over. */
  maxBudgetRatio: number | null;
  overBudget: number;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function aggregate(contender: Contender, files: readonly FileResult[]): Aggregate {
  const a: Aggregate = {
    id: contender.id,
    label: contender.label,
    threshold: contender.ssimThreshold,
    files: 0,
    inputBytes: 0,
    outputBytes: 0,
    saving: 0,
    pagesMeasured: 0,
    medianSsim: null,
    worstSsim: null,
    pagesBelow: 0,
    filesBelow: 0,
    unmeasured: 0,
    pixelIdenticalPages: 0,
    largerThanInput: 0,
    invalid: 0,
    textIdentical: 0,
    structureLosses: 0,
    failures: 0,
    totalWallMs: 0,
    engineMs: null,
    measureMs: null,
    maxPeakRssBytes: null,
    maxBudgetRatio: null,
    overBudget: 0,
  };
  const ssims: number[] = [];
  for (const file of countedFiles(files)) {
    const result = file.results.find((r) => r.id === contender.id);
    if (!result) continue;
    a.files++;
    a.inputBytes += file.size;
    a.outputBytes += countedOutputSize(file, result);
    a.totalWallMs += result.run.wallMs;
    if (result.run.engine) a.engineMs = (a.engineMs ?? 0) + result.run.engine.engineMs;
    if (result.run.engine?.measureMs !== undefined) a.measureMs = (a.measureMs ?? 0) + result.run.engine.measureMs;
    if (result.run.peakRssKb !== undefined) {
      const peak = result.run.peakRssKb * 1024;
      const ratio = peak / memoryBudgetBytes(file.size);
      a.maxPeakRssBytes = Math.max(a.maxPeakRssBytes ?? 0, peak);
      a.maxBudgetRatio = Math.max(a.maxBudgetRatio ?? 0, ratio);
      if (ratio > 1) a.overBudget++;
    }
    if (result.run.status !== "ok") {
      a.failures++;
      continue;
    }
    const output = result.output;
    if (!output) {
      a.unmeasured++;
      continue;
    }
    if (output.size > file.size) a.largerThanInput++;
    if (!output.valid) a.invalid++;
    if (output.textIdentical) a.textIdentical++;
    if (output.structureLosses.length) a.structureLosses++;
    const measured = output.pageQuality.filter((q) => q.ssim !== null);
    if (measured.length === 0) a.unmeasured++;
    let below = false;
    for (const { ssim } of measured) {
      ssims.push(ssim!);
      if (ssim === 1) a.pixelIdenticalPages++;
      if (!meetsThreshold(ssim!, contender.ssimThreshold)) {
        a.pagesBelow++;
        below = true;
      }
    }
    if (below) a.filesBelow++;
  }
  a.saving = a.inputBytes ? 1 - a.outputBytes / a.inputBytes : 0;
  a.pagesMeasured = ssims.length;
  a.medianSsim = median(ssims);
  a.worstSsim = ssims.length ? Math.min(...ssims) : null;
  return a;
}

/** The files' categories (the manifest's; "-" without one), in the order they first appear. */
export function categoriesOf(files: readonly FileResult[]): string[] {
  return [...new Set(files.map((file) => file.category))];
}

/** Every contender's aggregate over one category's files, per category in `categoriesOf` order. */
export function aggregateByCategory(
  contenders: readonly Contender[],
  files: readonly FileResult[],
): Map<string, Aggregate[]> {
  const byCategory = new Map<string, Aggregate[]>();
  for (const category of categoriesOf(files)) {
    const inCategory = files.filter((file) => file.category === category);
    byCategory.set(
      category,
      contenders.map((contender) => aggregate(contender, inCategory)),
    );
  }
  return byCategory;
}

export interface BestOf {
  label: string;
  saving: number;
  /** How many files each contender won (the input itself counts as "none"). */
  wins: Record<string, number>;
}

/**
 * Per file, the smallest output among `ids` that is valid, has every measured page at SSIM >=
 * `minSsim` (and, if asked, kept the structure); the input itself when none qualifies.
 */
export function bestOf(
  label: string,
  files: readonly FileResult[],
  ids: readonly ContenderId[],
  minSsim: number,
  keepStructure: boolean,
): BestOf {
  let inputBytes = 0;
  let outputBytes = 0;
  const wins: Record<string, number> = {};
  for (const file of countedFiles(files)) {
    let best = file.size;
    let winner = "none";
    for (const result of file.results) {
      const output = result.output;
      if (!ids.includes(result.id) || result.run.status !== "ok" || !output || !output.valid) continue;
      if (output.minSsim === null || output.minSsim < minSsim) continue;
      if (keepStructure && output.structureLosses.length) continue;
      if (output.size < best) {
        best = output.size;
        winner = result.id;
      }
    }
    inputBytes += file.size;
    outputBytes += best;
    wins[winner] = (wins[winner] ?? 0) + 1;
  }
  return { label, saving: inputBytes ? 1 - outputBytes / inputBytes : 0, wins };
}

export interface TargetCheck {
  profile: string;
  target: string;
  /** null: could not be checked (a peer was not run). */
  pass: boolean | null;
  detail: string;
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Issue 5's targets, for every engine profile that ran. */
export function checkTargets(aggregates: readonly Aggregate[]): TargetCheck[] {
  const byId = new Map(aggregates.map((a) => [a.id, a]));
  const checks: TargetCheck[] = [];
  const beats = (profile: string, engine: Aggregate, peerId: ContenderId) => {
    const peer = byId.get(peerId);
    checks.push({
      profile,
      target: `aggregate saving above ${peer?.label ?? peerId}'s`,
      pass: peer ? engine.saving > peer.saving : null,
      detail: peer ? `${pct(engine.saving)} vs ${pct(peer.saving)}` : `${peerId} not run`,
    });
  };
  const pages = (profile: string, engine: Aggregate) => {
    const worst = engine.worstSsim === null ? "none measured" : `worst ${engine.worstSsim.toFixed(4)}`;
    checks.push({
      profile,
      target: `every measured page SSIM ${engine.threshold >= 1 ? "1.000" : `>= ${engine.threshold.toFixed(2)}`}`,
      pass: engine.pagesBelow === 0 && engine.unmeasured === 0 && engine.failures === 0 && engine.pagesMeasured > 0,
      detail:
        `${engine.pagesBelow} of ${engine.pagesMeasured} pages below (${engine.filesBelow} files), ${worst}` +
        (engine.unmeasured ? `, ${engine.unmeasured} files unmeasured` : "") +
        (engine.failures ? `, ${engine.failures} files failed` : ""),
    });
  };

  for (const engine of aggregates.filter((a) => a.id.startsWith("engine:"))) {
    const profile = engine.id.slice("engine:".length);
    if (profile === "lossless") {
      pages(profile, engine);
      checks.push({
        profile,
        target: "text identical on every file",
        pass: engine.files > 0 && engine.textIdentical === engine.files,
        detail: `${engine.textIdentical} of ${engine.files} identical`,
      });
      beats(profile, engine, "qpdf");
    } else if (profile === "balanced") {
      beats(profile, engine, "gs:ebook");
      pages(profile, engine);
    } else {
      beats(profile, engine, "gs:screen");
      pages(profile, engine);
    }
    checks.push({
      profile,
      target: "no output larger than its input",
      pass: engine.largerThanInput === 0,
      detail: `${engine.largerThanInput} larger`,
    });
    checks.push({
      profile,
      target: "every output valid (qpdf --check, pages, text), no failure",
      pass: engine.invalid === 0 && engine.failures === 0 && engine.unmeasured === 0,
      detail: `${engine.invalid} invalid, ${engine.failures} failed or timed out, ${engine.unmeasured} unmeasured`,
    });
    checks.push({
      profile,
      target: "form fields, links, bookmarks, attachments kept",
      pass: engine.structureLosses === 0,
      detail: `${engine.structureLosses} files lost some`,
    });
    const ebook = byId.get("gs:ebook");
    checks.push({
      profile,
      // Issue 42's bar (the quarter of issue 5 always failed, so its FAIL carried no news).
      target: "total wall time at most half of gs /ebook's",
      pass: ebook ? engine.totalWallMs <= ebook.totalWallMs / 2 : null,
      detail: ebook
        ? `${s(engine.totalWallMs)} vs ${s(ebook.totalWallMs)} / 2 = ${s(ebook.totalWallMs / 2)}`
        : "gs:ebook not run",
    });
    checks.push({
      profile,
      target: "peak memory under 3x input + 200 MB on every file",
      pass: engine.maxBudgetRatio !== null && engine.overBudget === 0,
      detail:
        engine.maxBudgetRatio === null
          ? "not measured"
          : `${engine.overBudget} over; highest ${(engine.maxBudgetRatio * 100).toFixed(0)} % of its budget`,
    });
  }
  return checks;
}

/**
 * Categories held to gs file by file, not only in aggregate (issue 26: the documents a job
 * marketplace carries most).
 */
export const PER_FILE_CATEGORIES = ["cv"];

/**
 * Per file of a category: the engine's output no larger than its gs counterpart's (balanced vs
 * /ebook, extreme vs /screen), and every measured page at the profile's threshold.
 */
/** Issue 42: no file slower through the engine's balanced profile than through gs /ebook. */
export function noFileSlowerThanGs(files: readonly FileResult[]): TargetCheck[] {
  const slower: string[] = [];
  let compared = 0;
  for (const file of countedFiles(files)) {
    const [engine, gs] = ["engine:balanced", "gs:ebook"].map((id) => file.results.find((r) => r.id === id));
    if (engine?.run.status !== "ok" || gs?.run.status !== "ok") continue;
    compared++;
    if (engine.run.wallMs > gs.run.wallMs)
      slower.push(`${file.name} ${(engine.run.wallMs / gs.run.wallMs).toFixed(2)}x`);
  }
  if (compared === 0) return [];
  return [
    {
      profile: "balanced",
      target: "no file slower than gs /ebook",
      pass: slower.length === 0,
      detail: slower.length === 0 ? `${compared} files` : `${slower.length} of ${compared}: ${slower.join(", ")}`,
    },
  ];
}

export function perFileTargets(
  contenders: readonly Contender[],
  files: readonly FileResult[],
  category: string,
): TargetCheck[] {
  const inCategory = countedFiles(files).filter((file) => file.category === category);
  const checks: TargetCheck[] = [];
  if (inCategory.length === 0) return checks;
  const pairs: [ContenderId, ContenderId][] = [
    ["engine:balanced", "gs:ebook"],
    ["engine:extreme", "gs:screen"],
  ];
  for (const [engineId, peerId] of pairs) {
    const engine = contenders.find((c) => c.id === engineId);
    if (!engine) continue;
    const profile = engineId.slice("engine:".length);
    const larger: string[] = [];
    const below: string[] = [];
    let compared = 0;
    for (const file of inCategory) {
      const ours = file.results.find((r) => r.id === engineId);
      const peer = file.results.find((r) => r.id === peerId);
      if (ours?.output?.minSsim !== undefined && ours.output.minSsim !== null) {
        if (!meetsThreshold(ours.output.minSsim, engine.ssimThreshold)) below.push(file.name);
      } else below.push(`${file.name} (not measured)`);
      if (!peer || peer.run.status !== "ok" || !peer.output) continue;
      compared++;
      const extra = countedOutputSize(file, ours) - peer.output.size;
      if (extra > 0) larger.push(`${file.name} (+${(extra / 1024).toFixed(1)} KiB)`);
    }
    checks.push({
      profile,
      target: `every ${category} file no larger than ${peerId}'s output`,
      pass: compared === 0 ? null : larger.length === 0,
      detail:
        compared === 0
          ? `${peerId} not run`
          : `${compared - larger.length} of ${compared}` + (larger.length ? `; larger: ${larger.join(", ")}` : ""),
    });
    checks.push({
      profile,
      target: `every measured page of every ${category} file at SSIM >= ${engine.ssimThreshold.toFixed(2)}`,
      pass: below.length === 0,
      detail: below.length ? `below or unmeasured: ${below.join(", ")}` : `${inCategory.length} files`,
    });
  }
  return checks;
}

export interface Trailing {
  file: string;
  engine: ContenderId;
  peer: ContenderId;
  engineSaving: number;
  peerSaving: number;
  engineSsim: number | null;
  peerSsim: number | null;
  /** What gs dropped to get there, if anything. */
  peerLosses: string[];
  why: string;
}

/**
 * Files where an engine profile does notably worse than its gs counterpart (balanced vs /ebook,
 * extreme vs /screen): 5 points less saving, or a worst page 0.02 lower in SSIM.
 */
export function trailing(files: readonly FileResult[]): Trailing[] {
  const pairs: [ContenderId, ContenderId][] = [
    ["engine:balanced", "gs:ebook"],
    ["engine:extreme", "gs:screen"],
  ];
  const rows: Trailing[] = [];
  for (const file of countedFiles(files)) {
    for (const [engineId, peerId] of pairs) {
      const engine = file.results.find((r) => r.id === engineId);
      const peer = file.results.find((r) => r.id === peerId);
      if (!engine || !peer) continue;
      const engineSaving = 1 - countedOutputSize(file, engine) / file.size;
      const peerSaving = 1 - countedOutputSize(file, peer) / file.size;
      const engineSsim = engine.output?.minSsim ?? null;
      const peerSsim = peer.output?.minSsim ?? null;
      const why: string[] = [];
      if (peerSaving - engineSaving >= 0.05) {
        why.push(`saving ${((peerSaving - engineSaving) * 100).toFixed(1)} points lower`);
      }
      if (engineSsim !== null && peerSsim !== null && peerSsim - engineSsim >= 0.02) {
        why.push(`SSIM ${(peerSsim - engineSsim).toFixed(3)} lower`);
      }
      if (engine.run.status !== "ok") why.push(`engine ${engine.run.status}`);
      if (why.length) {
        const peerLosses = peer.output?.structureLosses ?? [];
        rows.push({
          file: file.name,
          engine: engineId,
          peer: peerId,
          engineSaving,
          peerSaving,
          engineSsim,
          peerSsim,
          peerLosses,
          why: why.join(", "),
        });
      }
    }
  }
  return rows;
}
