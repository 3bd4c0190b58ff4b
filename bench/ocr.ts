// The OCR benchmark (issue 43; by hand, not in CI): scans made from the corpus's text documents
// (each page rendered by pdftoppm at 300 dpi in gray, coded as a JPEG at quality 85 as a scanner
// writes it, one image per page of an image PDF), read by our engine (compressPdf balanced with
// ocr, in this process) and by OCRmyPDF (`ocrmypdf -l eng --output-type pdf`, when installed: on
// Debian `apt-get install -y ocrmypdf`) on the same scans, side by side in one run. Prints, per
// document and in all: word recall against the original's own text (pdftotext; words lowercased,
// letters and digits only, counted as a multiset), output bytes and wall time per page.
//
//   npm run bench:ocr -- [--pages N] [--docs a.pdf,b.pdf]     (PDF_CORPUS_DIR, else ../shared/corpus/pdf)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PDFDocument } from "@cantoo/pdf-lib";
import sharp from "sharp";
import { compressPdf } from "../src/pdf/index.ts";
import type { CompressionReport } from "../src/pdf/index.ts";
import { findBinary, requireBinary } from "./pdf/tools.ts";

const { values } = parseArgs({
  options: { pages: { type: "string", default: "2" }, docs: { type: "string" } },
});
const PAGES = Number(values.pages);
const corpus = process.env["PDF_CORPUS_DIR"] ?? path.resolve(import.meta.dirname, "../../shared/corpus/pdf");
/** Text documents of Latin script (the CJK and Type 3 ones aside: no eng text to recall). */
const DEFAULT_DOCS = [
  "text_tracemonkey_14p_type1.pdf",
  "text_multicolumn_type1.pdf",
  "text_redbook_18p_cff.pdf",
  "text_federal_register_15p.pdf",
  "text_us_constitution_19p.pdf",
  "text_mixedfonts_truetype.pdf",
  "text_excel_warn_16p.pdf",
];
const docs = values.docs ? values.docs.split(",") : DEFAULT_DOCS;

requireBinary("pdftoppm", "to render the pages as scans");
requireBinary("pdftotext", "to read the words back");
const ocrmypdf = findBinary("ocrmypdf");
const scratch = mkdtempSync(path.join(tmpdir(), "bench-ocr-"));

const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .split(/\s+/)
    .map((word) => word.replace(/[^\p{L}\p{N}]/gu, ""))
    .filter((word) => word.length > 0);

function textOf(file: string, first: number, last: number): string {
  return execFileSync("pdftotext", ["-f", String(first), "-l", String(last), file, "-"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Share of the original's words found in the output (as a multiset). */
function recall(original: string[], found: string[]): { matched: number; total: number } {
  const left = new Map<string, number>();
  for (const word of found) left.set(word, (left.get(word) ?? 0) + 1);
  let matched = 0;
  for (const word of original) {
    const n = left.get(word) ?? 0;
    if (n > 0) {
      matched++;
      left.set(word, n - 1);
    }
  }
  return { matched, total: original.length };
}

/** The first `pages` pages of the document as a 300 dpi gray JPEG scan. */
async function scanOf(file: string, pages: number): Promise<Uint8Array> {
  const prefix = path.join(scratch, path.basename(file, ".pdf"));
  execFileSync("pdftoppm", ["-r", "300", "-gray", "-png", "-f", "1", "-l", String(pages), file, prefix]);
  const doc = await PDFDocument.create();
  const { PDFDocument: Source } = await import("@cantoo/pdf-lib");
  const source = await Source.load(readFileSync(file), { ignoreEncryption: true });
  for (let i = 1; i <= pages; i++) {
    const png = `${prefix}-${String(i).padStart(String(source.getPageCount()).length, "0")}.png`;
    const jpeg = await sharp(readFileSync(png)).jpeg({ quality: 85 }).toBuffer();
    const { width, height } = source.getPage(i - 1).getSize();
    const image = await doc.embedJpg(jpeg);
    doc.addPage([width, height]).drawImage(image, { x: 0, y: 0, width, height });
  }
  return doc.save();
}

interface Row {
  doc: string;
  pages: number;
  words: number;
  ours: { matched: number; bytes: number; ms: number };
  theirs?: { matched: number; bytes: number; ms: number };
}

const rows: Row[] = [];
for (const name of docs) {
  const inFiles = path.join(corpus, "files", name);
  const file = existsSync(inFiles) ? inFiles : path.join(corpus, name);
  const count = (await PDFDocument.load(readFileSync(file), { ignoreEncryption: true })).getPageCount();
  const pages = Math.min(PAGES, count);
  const original = wordsOf(textOf(file, 1, pages));
  const scan = await scanOf(file, pages);
  const scanFile = path.join(scratch, `${name}.scan.pdf`);
  writeFileSync(scanFile, scan);

  let report: CompressionReport | undefined;
  const began = performance.now();
  const { output } = await compressPdf(scan, "balanced", (r) => (report = r), { ocr: true });
  const ms = performance.now() - began;
  const oursFile = path.join(scratch, `${name}.ours.pdf`);
  writeFileSync(oursFile, output);
  const row: Row = {
    doc: name,
    pages,
    words: original.length,
    ours: { matched: recall(original, wordsOf(textOf(oursFile, 1, pages))).matched, bytes: output.length, ms },
  };
  if (report?.ocr?.pagesRead !== pages) console.error(`${name}: ours read ${report?.ocr?.pagesRead} of ${pages} pages`);
  if (ocrmypdf) {
    const theirsFile = path.join(scratch, `${name}.ocrmypdf.pdf`);
    const start = performance.now();
    execFileSync(ocrmypdf, ["-q", "-l", "eng", "--output-type", "pdf", scanFile, theirsFile]);
    const theirMs = performance.now() - start;
    const matched = recall(original, wordsOf(textOf(theirsFile, 1, pages))).matched;
    row.theirs = { matched, bytes: readFileSync(theirsFile).length, ms: theirMs };
  }
  rows.push(row);
  const pct = (m: number) => ((100 * m) / Math.max(1, row.words)).toFixed(1);
  console.log(
    [
      name.padEnd(34),
      `${pages}p`,
      `${row.words} words`,
      `| ours ${pct(row.ours.matched)}% ${row.ours.bytes} B ${(row.ours.ms / pages / 1000).toFixed(1)} s/p`,
      row.theirs
        ? `| ocrmypdf ${pct(row.theirs.matched)}% ${row.theirs.bytes} B ${(row.theirs.ms / pages / 1000).toFixed(1)} s/p`
        : "| ocrmypdf not installed",
      `| scan ${scan.length} B`,
    ].join("  "),
  );
}

const sum = (pick: (row: Row) => number) => rows.reduce((total, row) => total + pick(row), 0);
const words = sum((r) => r.words);
const pages = sum((r) => r.pages);
console.log(
  `\nall: ${pages} pages, ${words} words | ours recall ${((100 * sum((r) => r.ours.matched)) / words).toFixed(1)}%, ` +
    `${sum((r) => r.ours.bytes)} B, ${(sum((r) => r.ours.ms) / pages / 1000).toFixed(1)} s/page` +
    (ocrmypdf
      ? ` | ocrmypdf recall ${((100 * sum((r) => r.theirs?.matched ?? 0)) / words).toFixed(1)}%, ` +
        `${sum((r) => r.theirs?.bytes ?? 0)} B, ${(sum((r) => r.theirs?.ms ?? 0) / pages / 1000).toFixed(1)} s/page`
      : " | ocrmypdf not installed (apt-get install -y ocrmypdf)"),
);
console.log(
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")}`,
);
rmSync(scratch, { recursive: true, force: true });
