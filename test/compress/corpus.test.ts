// Every file of the shared corpus of real PDFs, through the runner (so the process limits apply),
// with every profile where the manifest expects a 200, and the right refusal where it expects a
// 422. Prints the savings per category and profile. Skipped when the corpus is not there.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFDocument } from "@cantoo/pdf-lib";
import type { CompressionProfile } from "../../src/compress/engine/index.ts";
import { findCrossReferenceProblem } from "../../src/compress/engine/xref.ts";
import type { EngineJob, EngineResult } from "../../src/compress/isolation/protocol.ts";
import { createRunner } from "../../src/compress/isolation/runner.ts";
import type { Runner } from "../../src/compress/isolation/runner.ts";
import { corpusDir } from "./fixtures.ts";

const CORPUS = corpusDir();
const PROFILES: CompressionProfile[] = ["lossless", "balanced", "extreme"];
const TIMEOUT_MS = 60_000;

interface Row {
  file: string;
  category: string;
  pages: number | undefined;
  expected: string;
  password: string;
  size: number;
}

interface Run {
  row: Row;
  job: EngineJob;
  label: string;
  result?: EngineResult;
  error?: unknown;
  ms: number;
}

function manifest(dir: string): Row[] {
  const [head, ...lines] = readFileSync(path.join(dir, "MANIFEST.tsv"), "utf8").trimEnd().split("\n");
  const columns = head!.split("\t");
  const at = (name: string) => columns.indexOf(name);
  return lines.map((line) => {
    const cells = line.split("\t");
    const pages = Number(cells[at("pages")]);
    return {
      file: cells[at("file")]!,
      category: cells[at("category")]!,
      pages: Number.isInteger(pages) ? pages : undefined,
      expected: cells[at("expected_api")]!,
      password: cells[at("password")] ?? "",
      size: Number(cells[at("size_bytes")]),
    };
  });
}

if (!CORPUS) {
  console.log(
    "corpus.test.ts: skipped, the PDF corpus is not there (set PDF_CORPUS_DIR or put it at ../shared/corpus/pdf).",
  );
}

describe.skipIf(!CORPUS)("the shared PDF corpus through the runner", () => {
  const rows = CORPUS ? manifest(CORPUS) : [];
  const runs: Run[] = [];
  let runner: Runner;
  let out: string;
  let wallMs = 0;

  beforeAll(async () => {
    out = await mkdtemp(path.join(tmpdir(), "corpus-test-"));
    runner = createRunner({ concurrency: 2, queueLimit: 1000, timeoutMs: TIMEOUT_MS, memoryMb: 1024 });
    for (const row of rows) {
      const inputPath = path.join(CORPUS!, "files", row.file);
      const outputPath = (label: string) => path.join(out, `${row.file}.${label}.pdf`);
      if (row.expected === "200") {
        // The 12.7 MB concatenation is there for throughput: one profile is enough.
        for (const profile of row.category === "derived-large" ? (["balanced"] as const) : PROFILES) {
          runs.push({
            row,
            label: profile,
            ms: 0,
            job: { kind: "compress", inputPath, outputPath: outputPath(profile), profile },
          });
        }
      } else {
        const job: EngineJob = { kind: "compress", inputPath, outputPath: outputPath("balanced"), profile: "balanced" };
        runs.push({ row, label: "balanced", ms: 0, job });
      }
      if (row.category.startsWith("encrypted")) {
        const password = row.password;
        runs.push({
          row,
          label: "unlock",
          ms: 0,
          job: { kind: "unlock", inputPath, outputPath: outputPath("unlock"), password },
        });
      }
    }
    const started = Date.now();
    await Promise.all(
      runs.map(async (run) => {
        try {
          run.result = await runner.run(run.job);
        } catch (error) {
          run.error = error;
        }
        run.ms = Date.now() - started;
      }),
    );
    wallMs = Date.now() - started;
  }, 400_000);

  afterAll(async () => {
    await runner?.close();
    if (out) await rm(out, { recursive: true, force: true });
    printSummary(runs, wallMs);
  });

  it("ran every job without a timeout or a runner error", () => {
    expect(runs.filter((run) => run.error !== undefined).map((run) => run.row.file)).toEqual([]);
    const timedOut = runs.filter((run) => run.result && !run.result.ok && run.result.code === "processing_timeout");
    expect(timedOut.map((run) => `${run.row.file} ${run.label}`)).toEqual([]);
    expect(runner.stats()).toMatchObject({ running: 0, queued: 0, timedOut: 0 });
  });

  for (const row of rows) {
    it(`${row.file} (${row.category}, expected ${row.expected})`, async () => {
      const input = readFileSync(path.join(CORPUS!, "files", row.file));
      for (const run of runs.filter((r) => r.row === row)) {
        const result = run.result!;
        const context = `${row.file} ${run.label}: ${JSON.stringify(result)}`;
        if (run.label === "unlock") {
          if (row.password) {
            expect(result.ok, context).toBe(true);
            await expectValid(run, input.length, row.pages, false);
          } else {
            expect(result, context).toMatchObject({ ok: false, code: "password_required" });
          }
        } else if (row.expected === "200") {
          expect(result.ok, context).toBe(true);
          await expectValid(run, input.length, row.pages, true);
        } else if (row.category.startsWith("encrypted")) {
          expect(result, context).toMatchObject({ ok: false, code: "encrypted_pdf" });
        } else if (row.category === "not-pdf") {
          expect(result, context).toMatchObject({ ok: false, code: "not_a_pdf" });
        } else if (result.ok && row.expected.includes("or repair")) {
          await expectValid(run, input.length, undefined, true);
        } else {
          expect(result.ok, context).toBe(false);
          expect(["corrupted_pdf", "not_a_pdf"], context).toContain(!result.ok && result.code);
        }
      }
    });
  }
});

async function expectValid(run: Run, inputSize: number, pages: number | undefined, notLarger: boolean): Promise<void> {
  const result = run.result!;
  if (!result.ok) throw new Error(`${run.row.file} ${run.label}: ${result.code}`);
  const bytes = readFileSync(run.job.outputPath);
  expect(bytes.length).toBe(result.outputSize);
  if (notLarger) expect(bytes.length, `${run.row.file} ${run.label} grew`).toBeLessThanOrEqual(inputSize);
  // A plain load: it refuses encrypted files.
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  if (pages !== undefined) expect(doc.getPageCount(), `${run.row.file} ${run.label} pages`).toBe(pages);
  expect(result.pages).toBe(doc.getPageCount());
  expect(findCrossReferenceProblem(bytes, doc.context, 0), `${run.row.file} ${run.label} xref`).toBeUndefined();
}

function printSummary(runs: Run[], wallMs: number): void {
  const table = new Map<string, { files: number; input: number; output: number }>();
  for (const run of runs) {
    if (run.label === "unlock" || !run.result?.ok || run.row.expected !== "200") continue;
    // "all" leaves out the concatenation (run with one profile) so that its columns compare alike.
    const keys = [
      `${run.row.category}|${run.label}`,
      ...(run.row.category === "derived-large" ? [] : [`all|${run.label}`]),
    ];
    for (const key of keys) {
      const entry = table.get(key) ?? { files: 0, input: 0, output: 0 };
      entry.files++;
      entry.input += run.row.size;
      entry.output += run.result.outputSize;
      table.set(key, entry);
    }
  }
  const categories = [...new Set([...table.keys()].map((key) => key.split("|")[0]!))].filter((c) => c !== "all");
  categories.push("all");
  const lines = [`corpus: ${runs.length} jobs in ${(wallMs / 1000).toFixed(1)} s (2 children at a time)`];
  lines.push(
    `${"category".padEnd(14)} ${"files".padStart(5)} ${"input".padStart(11)}  ` +
      PROFILES.map((p) => `${p.padStart(11)} ${"saved".padStart(6)}`).join("  "),
  );
  for (const category of categories) {
    const cells = PROFILES.map((profile) => {
      const entry = table.get(`${category}|${profile}`);
      if (!entry) return `${"-".padStart(11)} ${"".padStart(6)}`;
      const saved = (100 * (1 - entry.output / entry.input)).toFixed(1) + "%";
      return `${String(entry.output).padStart(11)} ${saved.padStart(6)}`;
    });
    const any = table.get(`${category}|balanced`)!;
    lines.push(
      `${category.padEnd(14)} ${String(any.files).padStart(5)} ${String(any.input).padStart(11)}  ${cells.join("  ")}`,
    );
  }
  const slowest = [...runs].sort((a, b) => b.ms - a.ms).slice(0, 3);
  lines.push(
    `last to finish: ${slowest.map((run) => `${run.row.file} ${run.label} at ${(run.ms / 1000).toFixed(1)} s`).join(", ")}`,
  );
  console.log(lines.join("\n"));
}
