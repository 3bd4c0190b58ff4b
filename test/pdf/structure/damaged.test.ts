// Damaged PDFs (issue 31): copies damaged by code (bench/pdf/damage.ts) of generated fixtures and
// of corpus files are compressed as readers rebuild them, or refused when the file ends before
// its pages do. Against qpdf's repair of the same copy: where qpdf rewrites it into a file
// Poppler renders, the engine must compress it with qpdf's page count, into a file qpdf --check
// finds clean, whose first page renders like qpdf's repair. The corpus's damaged_* files give 200;
// hostile structures are answered (200 or 422) without a crash. The qpdf/Poppler comparisons are
// skipped, with a message, when those programs are missing; the corpus part when the corpus is.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFArray, PDFDocument, PDFName, PDFRef } from "@cantoo/pdf-lib";
import { compressPdf, PdfRejected } from "../../../src/pdf/index.ts";
import type { CompressionReport } from "../../../src/pdf/index.ts";
import {
  damagedCopies,
  randomSource,
  removeTrailer,
  removeXref,
  shiftOffsets,
  wrongLength,
} from "../../../bench/pdf/damage.ts";
import type { Damaged } from "../../../bench/pdf/damage.ts";
import { pageCount, qpdfCheck, renderPage, ssim } from "../../../bench/pdf/quality.ts";
import { findBinary, run } from "../../../bench/pdf/tools.ts";
import { corpusDir } from "../fixtures.ts";
import { photoPdf, textPdf } from "../fixtures.ts";

const TOOLS = findBinary("qpdf") !== undefined && findBinary("pdftoppm") !== undefined;
if (!TOOLS) console.warn("engine-damaged: qpdf or pdftoppm missing, the comparisons with qpdf's repair are skipped");
const CORPUS = corpusDir();
/** Page 1 at 50 dpi against qpdf's repair of the same copy (balanced recodes images). */
const SSIM_FLOOR = 0.9;
const TOOL_MS = 60_000;

type Outcome =
  { ok: true; output: Uint8Array; pages: number; report: CompressionReport } | { ok: false; error: PdfRejected };

async function compress(bytes: Uint8Array): Promise<Outcome> {
  let report: CompressionReport | undefined;
  try {
    const { output, pages } = await compressPdf(bytes, "balanced", (r) => (report = r));
    return { ok: true, output, pages, report: report! };
  } catch (error) {
    if (error instanceof PdfRejected) return { ok: false, error };
    throw error;
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "engine-damaged-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
async function saved(bytes: Uint8Array): Promise<string> {
  const file = path.join(dir, `${files++}.pdf`);
  await writeFile(file, bytes);
  return file;
}

/** qpdf's repair of a copy, when qpdf rewrites it into a file whose first page Poppler renders. */
async function qpdfRepair(bytes: Uint8Array): Promise<{ file: string; pages: number } | undefined> {
  const input = await saved(bytes);
  const file = `${input}.qpdf.pdf`;
  const result = await run(findBinary("qpdf")!, [input, file], { timeoutMs: TOOL_MS });
  if (result.exitCode !== 0 && result.exitCode !== 3) return undefined;
  try {
    const pages = await pageCount(file, { timeoutMs: TOOL_MS });
    await renderPage(file, 1, { dpi: 20, timeoutMs: TOOL_MS });
    return pages > 0 ? { file, pages } : undefined;
  } catch {
    return undefined;
  }
}

/** The engine's output against qpdf's repair: same page count, clean, page 1 alike. */
async function expectLikeQpdf(outcome: Outcome, repair: { file: string; pages: number }, label: string) {
  expect(outcome.ok, `${label}: ${outcome.ok ? "" : outcome.error.message}`).toBe(true);
  if (!outcome.ok) return;
  expect(outcome.pages, label).toBe(repair.pages);
  const output = await saved(outcome.output);
  expect(await pageCount(output, { timeoutMs: TOOL_MS }), label).toBe(repair.pages);
  expect((await qpdfCheck(output, { timeoutMs: TOOL_MS })).status, label).toBe("ok");
  const [ours, theirs] = await Promise.all([
    renderPage(output, 1, { dpi: 50, timeoutMs: TOOL_MS }),
    renderPage(repair.file, 1, { dpi: 50, timeoutMs: TOOL_MS }),
  ]);
  expect(ssim(ours, theirs), label).toBeGreaterThanOrEqual(SSIM_FLOOR);
}

/** The byte offset of object `ref`'s header in a file written without object streams. */
function offsetOf(bytes: Uint8Array, ref: PDFRef): number {
  const at = Buffer.from(bytes).indexOf(`\n${ref.objectNumber} ${ref.generationNumber} obj`);
  if (at < 0) throw new Error(`no header for ${ref.toString()}`);
  return at + 1;
}

describe("generated fixtures, damaged", () => {
  const fixtures: Record<string, Uint8Array> = {};
  beforeAll(async () => {
    fixtures["classic xref"] = await textPdf(3);
    // An xref stream, and every object but the streams inside object streams.
    fixtures["object streams"] = (await photoPdf({ objectStreams: true })).bytes;
  }, 60_000);

  const kinds: [string, (bytes: Uint8Array) => Damaged | undefined, string][] = [
    ["offsets shifted", (bytes) => shiftOffsets(bytes, randomSource(7)), "cross_reference"],
    ["/Length wrong", (bytes) => wrongLength(bytes, randomSource(3)), "stream_length"],
    ["xref removed", removeXref, "cross_reference"],
    ["trailer removed", removeTrailer, "trailer"],
  ];
  for (const fixture of ["classic xref", "object streams"]) {
    it.each(kinds)(`${fixture}: %s is compressed, and the report names the repair`, async (_, damage, repair) => {
      const intact = fixtures[fixture]!;
      const damaged = damage(intact)!;
      expect(damaged, "the damage applies to this fixture").toBeDefined();
      const outcome = await compress(damaged.bytes);
      expect(outcome.ok, outcome.ok ? "" : outcome.error.message).toBe(true);
      if (!outcome.ok) return;
      expect(outcome.pages).toBe((await PDFDocument.load(intact)).getPageCount());
      expect(outcome.report.repaired).toContain(repair);
      // Never handed back damaged: the output reads back with an intact cross-reference.
      expect(outcome.output).not.toBe(damaged.bytes);
      if (!TOOLS) return;
      const repaired = await qpdfRepair(damaged.bytes);
      if (repaired) await expectLikeQpdf(outcome, repaired, `${fixture} ${damaged.detail}`);
      else expect((await qpdfCheck(await saved(outcome.output), { timeoutMs: TOOL_MS })).status).toBe("ok");
    });
  }

  it("a file cut off after its last object is compressed, every page whole", async () => {
    const intact = fixtures["classic xref"]!;
    const cut = intact.slice(0, Buffer.from(intact).lastIndexOf("\nxref"));
    const outcome = await compress(cut);
    expect(outcome.ok).toBe(true);
    if (outcome.ok)
      expect(outcome.report.repaired).toEqual(expect.arrayContaining(["cross_reference", "trailer", "truncated"]));
  });

  it("a file cut off inside a page's content is refused with the page it ends at", async () => {
    const intact = fixtures["classic xref"]!;
    const doc = await PDFDocument.load(intact);
    for (const [index, page] of doc.getPages().entries()) {
      const listed = page.node.get(PDFName.of("Contents"));
      const contents = listed instanceof PDFArray ? listed.get(0) : listed;
      if (!(contents instanceof PDFRef)) throw new Error("the fixture's pages have content streams of their own");
      const cut = intact.slice(0, offsetOf(intact, contents) + 40);
      const outcome = await compress(cut);
      expect(outcome.ok, `cut in page ${index + 1}'s content`).toBe(false);
      if (outcome.ok) continue;
      expect(outcome.error.code).toBe("corrupted_pdf");
      expect(outcome.error.message).toBe(`The PDF is damaged: the file ends early, at page ${index + 1}.`);
    }
  });

  it("a file cut off before its page tree is refused as ending before its first page", async () => {
    const intact = fixtures["object streams"]!;
    for (const fraction of [0.01, 0.3]) {
      const outcome = await compress(intact.slice(0, Math.floor(intact.length * fraction)));
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error.message).toMatch(/the file ends early/);
    }
  });
});

describe.skipIf(!CORPUS)("corpus files, damaged", () => {
  const rows = CORPUS ? manifestRows(CORPUS) : [];
  /** The smallest accepted file of each category the issue names. */
  const chosen = ["text", "photo", "form", "cv", "scanned"]
    .map((category) => rows.filter((row) => row.category === category && row.expected === "200" && !row.password))
    .map((of) => of.sort((a, b) => a.size - b.size)[0])
    .filter((row) => row !== undefined);

  it.each(chosen.map((row, i) => [row.file, i] as const))(
    "%s: each damaged copy is compressed with qpdf's page count where qpdf repairs it, else refused cleanly",
    async (file, seed) => {
      const bytes = new Uint8Array(readFileSync(path.join(CORPUS!, "files", file)));
      for (const damaged of damagedCopies(bytes, 100 + seed)) {
        const label = `${file} ${damaged.kind} ${damaged.detail}`;
        const outcome = await compress(damaged.bytes);
        if (!outcome.ok) {
          expect(outcome.error.code, label).toBe("corrupted_pdf");
          if (damaged.kind === "truncated" || damaged.kind === "trailer_removed") {
            expect(outcome.error.message, label).toMatch(/ends early/);
          }
        }
        if (!TOOLS) continue;
        const repaired = await qpdfRepair(damaged.bytes);
        if (repaired) await expectLikeQpdf(outcome, repaired, label);
      }
    },
    240_000,
  );

  it.each(rows.filter((row) => row.category === "damaged").map((row) => [row.file, row.pages] as const))(
    "%s (a reader's test file with a broken xref) is compressed",
    async (file, pages) => {
      const outcome = await compress(new Uint8Array(readFileSync(path.join(CORPUS!, "files", file))));
      expect(outcome.ok, outcome.ok ? "" : outcome.error.message).toBe(true);
      if (!outcome.ok) return;
      expect(outcome.pages).toBe(pages);
      expect(outcome.report.repaired).toContain("cross_reference");
      if (TOOLS) expect((await qpdfCheck(await saved(outcome.output), { timeoutMs: TOOL_MS })).status).toBe("ok");
    },
  );
});

describe("hostile structures in damaged files", () => {
  const latin1 = (text: string) => new Uint8Array(Buffer.from(text, "latin1"));
  const answered = async (bytes: Uint8Array) => {
    const outcome = await compress(bytes);
    if (!outcome.ok) expect(outcome.error.code).toBe("corrupted_pdf");
    return outcome;
  };

  it("many object headers with dictionaries that never close", async () => {
    const body = Array.from({ length: 50_000 }, (_, i) => `${i + 1} 0 obj\n<< /Type /Page /Contents (`).join("\n");
    expect((await answered(latin1(`%PDF-1.7\n${body}\n`))).ok).toBe(false);
  });

  it("many streams with a wrong /Length and no endstream, and one far away", async () => {
    const streams = Array.from({ length: 20_000 }, (_, i) => `${i + 2} 0 obj\n<< /Length 999999 >>\nstream\nxx\n`);
    const text = `%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n${streams.join("")}endstream\n`;
    expect((await answered(latin1(text))).ok).toBe(false);
  });

  it("a file of nothing but object headers is refused before they fill the memory", async () => {
    const outcome = await answered(latin1(`%PDF-1.7\n${"1 0 obj\n".repeat(2_100_000)}`));
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.message).toMatch(/too many objects/);
  });

  it("object numbers beyond the PDF limit, an object stream claiming a billion objects, a page-tree cycle", async () => {
    const text = [
      "%PDF-1.7",
      "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
      "2 0 obj << /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >> endobj",
      "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >> endobj",
      "99999999999 0 obj << /Type /Catalog >> endobj",
      "4 0 obj << /Type /ObjStm /N 1000000000 /First 4 /Length 8 >> stream\n5 0 6 0 \nendstream endobj",
      "trailer << /Root 1 0 R >>",
    ].join("\n");
    const outcome = await answered(latin1(text));
    // Answered either way; if compressed, with the one page the cycle leads to.
    if (outcome.ok) expect(outcome.pages).toBe(1);
  });
});

interface ManifestRow {
  file: string;
  category: string;
  expected: string;
  password: string;
  size: number;
  pages: number;
}

function manifestRows(corpus: string): ManifestRow[] {
  const [head, ...lines] = readFileSync(path.join(corpus, "MANIFEST.tsv"), "utf8").trim().split("\n");
  const columns = head!.split("\t");
  return lines.map((line) => {
    const fields = line.split("\t");
    const value = (column: string) => fields[columns.indexOf(column)] ?? "";
    return {
      file: value("file"),
      category: value("category"),
      expected: value("expected_api"),
      password: value("password"),
      size: Number(value("size_bytes")),
      pages: Number(value("pages")),
    };
  });
}
