// The printed report: one table per contender with a row per file, the aggregate comparison,
// the best-of-tools lines, the TARGETS section and the files where the engine trails gs.
import type { Aggregate, BestOf, FileResult, TargetCheck, Trailing } from "./aggregate.ts";
import { countedFiles, meetsThreshold, memoryBudgetBytes } from "./aggregate.ts";
import type { Contender } from "./contenders.ts";
import { STRUCTURE_KEYS, STRUCTURE_LABELS } from "./quality.ts";
import type { StructureCounts } from "./quality.ts";

const MIB = 1024 * 1024;

/** Left-aligned text columns, right-aligned numbers (a column is numeric if `right` says so). */
export function table(headers: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const kib = (bytes: number) => Math.round(bytes / 1024).toLocaleString("en");
const mib = (bytes: number) => (bytes / MIB).toFixed(1);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const ssimText = (x: number | null | undefined) => (x === null || x === undefined ? "n/a" : x.toFixed(4));
const secs = (ms: number) => (ms / 1000).toFixed(2);

function structureSummary(counts: StructureCounts): string {
  const parts = STRUCTURE_KEYS.filter((key) => counts[key] > 0).map((key) => `${STRUCTURE_LABELS[key]} ${counts[key]}`);
  return parts.join(", ");
}

/** The table of one contender, and the notes that explain its flagged rows. */
export function contenderTable(contender: Contender, files: readonly FileResult[]): string {
  const counted = new Set(countedFiles(files));
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const file of files) {
    const result = file.results.find((r) => r.id === contender.id);
    if (!result) continue;
    const { run, output } = result;
    const peak = run.peakRssKb === undefined ? "n/a" : mib(run.peakRssKb * 1024);
    const overBudget = run.peakRssKb !== undefined && run.peakRssKb * 1024 > memoryBudgetBytes(file.size);
    const base = [file.name + (counted.has(file) ? "" : " (not counted)"), file.category, kib(file.size)];
    if (run.status !== "ok" || !output) {
      const what =
        run.status === "refused"
          ? `REFUSED ${run.code ?? ""}`
          : run.status === "ok"
            ? "NOT MEASURED"
            : run.status.toUpperCase();
      rows.push([...base, what, "", secs(run.wallMs), peak, "", "", "", ""]);
      notes.push(`${file.name}: ${run.message ?? result.evaluationError ?? run.status}`);
      continue;
    }
    const saving = 1 - output.size / file.size;
    const below = output.minSsim !== null && !meetsThreshold(output.minSsim, contender.ssimThreshold);
    const valid = output.valid ? (output.check.status === "warnings" ? "ok (warn)" : "ok") : "INVALID";
    const text = output.textIdentical ? "same" : output.textExtractable ? output.textSimilarity.toFixed(3) : "NONE";
    const hasStructure = file.input !== undefined && structureSummary(file.input.structure) !== "";
    const structure = output.structureLosses.length
      ? `LOST ${output.structureLosses.join(", ")}`
      : hasStructure
        ? "kept"
        : "-";
    rows.push([
      ...base,
      kib(output.size) + (output.identicalToInput ? " =" : ""),
      pct(saving) + (output.size > file.size ? " LARGER" : ""),
      secs(run.wallMs),
      peak + (overBudget ? " OVER" : ""),
      ssimText(output.minSsim) + (below ? " <" : ""),
      valid,
      text,
      structure,
    ]);
    for (const problem of output.problems) notes.push(`${file.name}: ${problem}`);
    for (const q of output.pageQuality) if (q.note) notes.push(`${file.name} p${q.page}: ${q.note}`);
  }
  const headers = [
    "file",
    "category",
    "in KiB",
    "out KiB",
    "saving",
    "time s",
    "peak MiB",
    "min SSIM",
    "valid",
    "text",
    "structure",
  ];
  const title = `== ${contender.label} (SSIM threshold ${contender.ssimThreshold >= 1 ? "1.000" : contender.ssimThreshold.toFixed(2)}) ==`;
  const legend =
    '"=": the input came back unchanged; "<": a page under the threshold; text: "same" or the share of words kept';
  return [title, table(headers, rows, new Set([2, 3, 4, 5, 6, 7])), legend, ...notes.map((n) => `  note: ${n}`)].join(
    "\n",
  );
}

export function aggregateTable(aggregates: readonly Aggregate[]): string {
  const headers = [
    "tool",
    "files",
    "in MiB",
    "out MiB",
    "saving",
    "median SSIM",
    "worst SSIM",
    "files<thr",
    "larger",
    "invalid",
    "struct lost",
    "failed",
    "time s",
    "in-engine s",
    "max peak MiB",
    "peak/budget",
  ];
  const rows = aggregates.map((a) => [
    a.label,
    String(a.files),
    mib(a.inputBytes),
    mib(a.outputBytes),
    pct(a.saving),
    ssimText(a.medianSsim),
    ssimText(a.worstSsim),
    `${a.filesBelow} (<${a.threshold >= 1 ? "1.000" : a.threshold.toFixed(2)})`,
    String(a.largerThanInput),
    String(a.invalid),
    String(a.structureLosses),
    String(a.failures),
    secs(a.totalWallMs),
    a.engineMs === null ? "" : secs(a.engineMs),
    a.maxPeakRssBytes === null ? "n/a" : mib(a.maxPeakRssBytes),
    a.maxBudgetRatio === null
      ? "n/a"
      : `${(a.maxBudgetRatio * 100).toFixed(0)} %${a.overBudget ? ` (${a.overBudget} over)` : ""}`,
  ]);
  return table(headers, rows, new Set([1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15]));
}

/**
 * One line per category (the manifest's) and one for all files: each contender's aggregate saving
 * and worst page, beside the files and bytes the category has.
 */
export function categoryTable(
  byCategory: ReadonlyMap<string, readonly Aggregate[]>,
  all: readonly Aggregate[],
): string {
  const first = [...byCategory.values()][0] ?? all;
  const headers = ["category", "files", "in KiB", ...first.map((a) => a.label)];
  const line = (category: string, aggregates: readonly Aggregate[]) => [
    category,
    String(aggregates[0]?.files ?? 0),
    kib(aggregates[0]?.inputBytes ?? 0),
    ...aggregates.map(
      (a) =>
        `${pct(a.saving)}  ${ssimText(a.worstSsim)}` +
        (a.filesBelow ? ` (${a.filesBelow} <)` : "") +
        (a.failures ? ` (${a.failures} failed)` : "") +
        (a.overBudget ? ` (${a.overBudget} over memory)` : ""),
    ),
  ];
  const rows = [...byCategory].map(([category, aggregates]) => line(category, aggregates));
  rows.push(line("all", all));
  return table(headers, rows, new Set(headers.map((_, i) => i).filter((i) => i > 0)));
}

export function bestOfLines(best: readonly BestOf[]): string {
  return best
    .map((b) => {
      const wins = Object.entries(b.wins)
        .sort((x, y) => y[1] - x[1])
        .map(([id, n]) => `${id} ${n}`)
        .join(", ");
      return `${b.label}: ${pct(b.saving)}  (files won: ${wins})`;
    })
    .join("\n");
}

export function targetsSection(checks: readonly TargetCheck[]): string {
  const rows = checks.map((c) => [c.pass === null ? "SKIP" : c.pass ? "PASS" : "FAIL", c.profile, c.target, c.detail]);
  const failed = checks.filter((c) => c.pass === false).length;
  const skipped = checks.filter((c) => c.pass === null).length;
  const summary = `${checks.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped`;
  return `${table(["", "profile", "target", "measured"], rows)}\n${summary}`;
}

export function trailingTable(rows: readonly Trailing[]): string {
  if (rows.length === 0) return "(none)";
  return table(
    ["file", "engine", "vs", "engine saving", "gs saving", "engine SSIM", "gs SSIM", "why", "gs lost"],
    rows.map((r) => [
      r.file,
      r.engine.slice("engine:".length),
      r.peer,
      pct(r.engineSaving),
      pct(r.peerSaving),
      ssimText(r.engineSsim),
      ssimText(r.peerSsim),
      r.why,
      r.peerLosses.join(", "),
    ]),
    new Set([3, 4, 5, 6]),
  );
}

/** The inputs' structure, for the files that have any (what "kept" refers to). */
export function inputStructureLines(files: readonly FileResult[]): string {
  const lines = files
    .filter((f) => f.input && structureSummary(f.input.structure))
    .map((f) => `  ${f.name}: ${structureSummary(f.input!.structure)}`);
  return lines.length ? lines.join("\n") : "  (no file has form fields, links, bookmarks or attachments)";
}

/** What the engine's report says it did with scans (issue 28): page images as layers, 1-bit images re-coded. */
export function scanSummary(report: unknown): string {
  const r = report as
    | {
        images?: { recoded?: number; layered?: number };
        bitonal?: { recoded?: number; bytesBefore?: number; bytesAfter?: number };
      }
    | undefined;
  if (!r?.images && !r?.bitonal) return "";
  const images = r.images
    ? ` images recoded ${r.images.recoded ?? 0}, as layers (text mask + background) ${r.images.layered ?? 0}`
    : "";
  const bitonal = r.bitonal
    ? `; 1-bit images re-coded ${r.bitonal.recoded ?? 0} (${Math.round((r.bitonal.bytesBefore ?? 0) / 1024)} -> ${Math.round((r.bitonal.bytesAfter ?? 0) / 1024)} KiB)`
    : "";
  return ` [${images}${bitonal} ]`;
}
