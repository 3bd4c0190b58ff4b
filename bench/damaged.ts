// Damaged copies of corpus files through the engine, against qpdf's repair (issue 31), run by hand:
//   node bench/damaged.ts [corpus dir] [--files N (12)] [--fuzzed K (0)] [--profile balanced] [--seed S (1)]
// The corpus dir defaults to PDF_CORPUS_DIR or ../shared/corpus/pdf. From the text, photo, form,
// CV and scan files the API accepts (N of them, the smallest of each category in turn), it makes
// the ordinary damaged copies of bench/pdf/damage.ts (offsets shifted, a /Length wrong, the xref
// or the trailer removed, truncated) and K fuzzed ones each, runs every copy through the runner
// (the service's time and memory limits), and has qpdf repair the same copy: a copy is "qpdf
// repairable" when qpdf rewrites it into a file whose first page pdftoppm renders. It prints, per
// kind of damage: copies, engine compressed / refused / failed (timeout, memory, crash),
// repairable by qpdf, and of those compressed by the engine with qpdf's page count; then the
// corpus's damaged_* files. Needs qpdf and poppler-utils.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { isCompressionProfile } from "../src/pdf/index.ts";
import { createRunner } from "../src/compress/isolation/runner.ts";
import type { EngineResult } from "../src/compress/isolation/protocol.ts";
import { damagedCopies } from "./pdf/damage.ts";
import type { Damaged } from "./pdf/damage.ts";
import { pageCount, renderPage } from "./pdf/quality.ts";
import { requireBinary, run } from "./pdf/tools.ts";

const CATEGORIES = ["text", "photo", "form", "cv", "scanned"];
const TIMEOUT_MS = 60_000;
const MEMORY_MB = 1024;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    files: { type: "string", default: "12" },
    fuzzed: { type: "string", default: "0" },
    profile: { type: "string", default: "balanced" },
    seed: { type: "string", default: "1" },
  },
});
const corpus = positionals[0] ?? process.env["PDF_CORPUS_DIR"] ?? path.resolve("../shared/corpus/pdf");
const profile = values.profile;
if (!isCompressionProfile(profile)) throw new Error(`unknown profile ${profile}`);
const qpdf = requireBinary("qpdf", "to repair the damaged copies");

interface Row {
  file: string;
  category: string;
  size: number;
}

function chooseFiles(count: number): Row[] {
  const [head, ...lines] = readFileSync(path.join(corpus, "MANIFEST.tsv"), "utf8").trim().split("\n");
  const columns = head!.split("\t");
  const rows = lines
    .map((line) => {
      const fields = line.split("\t");
      const value = (column: string) => fields[columns.indexOf(column)] ?? "";
      return {
        file: value("file"),
        category: value("category"),
        size: Number(value("size_bytes")),
        ok: value("expected_api") === "200" && !value("password"),
      };
    })
    .filter((row) => row.ok && CATEGORIES.includes(row.category))
    .sort((a, b) => a.size - b.size);
  const chosen: Row[] = [];
  for (let round = 0; chosen.length < count && round < rows.length; round++) {
    for (const category of CATEGORIES) {
      const row = rows.filter((r) => r.category === category)[round];
      if (row && chosen.length < count) chosen.push(row);
    }
  }
  return chosen;
}

/** qpdf's repair: its page count when it writes a file whose first page pdftoppm renders. */
async function qpdfRepair(damaged: string, repaired: string): Promise<number | undefined> {
  const result = await run(qpdf, [damaged, repaired], { timeoutMs: TIMEOUT_MS });
  if (result.exitCode !== 0 && result.exitCode !== 3) return undefined;
  try {
    const pages = await pageCount(repaired, { timeoutMs: TIMEOUT_MS });
    if (pages < 1) return undefined;
    await renderPage(repaired, 1, { dpi: 20, timeoutMs: TIMEOUT_MS });
    return pages;
  } catch {
    return undefined;
  }
}

interface Outcome {
  kind: string;
  label: string;
  result: EngineResult | undefined;
  failure?: string;
  qpdfPages: number | undefined;
}

const dir = await mkdtemp(path.join(tmpdir(), "bench-damaged-"));
const runner = createRunner({ concurrency: 1, queueLimit: 10_000, timeoutMs: TIMEOUT_MS, memoryMb: MEMORY_MB });
const outcomes: Outcome[] = [];

async function measure(label: string, kind: string, bytes: Uint8Array): Promise<void> {
  const name = label.replace(/[^\w.-]+/g, "_");
  const inputPath = path.join(dir, `${name}.pdf`);
  const outputPath = path.join(dir, `${name}.out.pdf`);
  await writeFile(inputPath, bytes);
  const qpdfPages = await qpdfRepair(inputPath, path.join(dir, `${name}.qpdf.pdf`));
  let result: EngineResult | undefined;
  let failure: string | undefined;
  try {
    result = await runner.run({ kind: "compress", inputPath, outputPath, profile: profile as "balanced" });
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  outcomes.push({ kind, label, result, qpdfPages, ...(failure ? { failure } : {}) });
  const said = result
    ? result.ok
      ? `ok ${result.pages} p`
      : `${result.code}: ${result.message}`
    : `FAILED ${failure}`;
  console.log(`${label.padEnd(60)} qpdf ${qpdfPages === undefined ? "-" : `${qpdfPages} p`}  engine ${said}`);
}

try {
  const files = chooseFiles(Number(values.files));
  for (const [i, row] of files.entries()) {
    const bytes = new Uint8Array(await readFile(path.join(corpus, "files", row.file)));
    const copies: Damaged[] = damagedCopies(bytes, Number(values.seed) * 1000 + i, Number(values.fuzzed));
    for (const [k, copy] of copies.entries())
      await measure(`${row.file} ${copy.kind} ${k} ${copy.detail}`, copy.kind, copy.bytes);
  }
  const copies = outcomes.length;
  for (const file of readFileSync(path.join(corpus, "MANIFEST.tsv"), "utf8").match(/^damaged_\S+\.pdf/gm) ?? []) {
    await measure(file, "corpus damaged_*", new Uint8Array(await readFile(path.join(corpus, "files", file))));
  }
  printSummary(outcomes.slice(0, copies), outcomes.slice(copies));
} finally {
  await runner.close();
  await rm(dir, { recursive: true, force: true });
}

function printSummary(copies: Outcome[], corpusDamaged: Outcome[]): void {
  const kinds = [...new Set(copies.map((o) => o.kind)), "all"];
  console.log(
    `\n${profile}: kind, copies, engine compressed / refused / failed, qpdf repairable, of those compressed with qpdf's page count`,
  );
  for (const kind of kinds) {
    const of = copies.filter((o) => kind === "all" || o.kind === kind);
    const compressed = of.filter((o) => o.result?.ok).length;
    const refused = of.filter((o) => o.result && !o.result.ok && !o.result.code.startsWith("processing_")).length;
    const failed = of.length - compressed - refused;
    const repairable = of.filter((o) => o.qpdfPages !== undefined);
    const same = repairable.filter((o) => o.result?.ok && o.result.pages === o.qpdfPages).length;
    const share = repairable.length ? ((100 * same) / repairable.length).toFixed(1) : "-";
    console.log(
      `${kind.padEnd(16)} ${String(of.length).padStart(4)}  ${compressed} / ${refused} / ${failed}  ${repairable.length}  ${same} (${share} %)`,
    );
  }
  const missed = copies.filter((o) => o.qpdfPages !== undefined && !(o.result?.ok && o.result.pages === o.qpdfPages));
  if (missed.length)
    console.log(
      `\nqpdf repairable, not compressed with its page count:\n${missed.map((o) => `  ${o.label}`).join("\n")}`,
    );
  console.log("\ncorpus damaged_* files:");
  for (const o of corpusDamaged)
    console.log(`  ${o.label}: ${o.result?.ok ? `200, ${o.result.pages} p` : JSON.stringify(o.result ?? o.failure)}`);
}
