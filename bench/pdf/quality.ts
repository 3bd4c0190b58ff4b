// What the compression benchmark measures on a PDF, each through an independent tool (Poppler,
// qpdf) rather than the pdf-lib our engine is built on, so that a bug shared with the engine
// cannot hide itself: rendering a page to gray pixels, SSIM, `qpdf --check`, page count, text
// extraction, and counts of the structure a compressor must keep (form fields, links,
// bookmarks, attachments). Every function throws MissingBinary (with the Debian package to
// install) when its program is absent, so tests can skip on that.
import { ssim } from "./ssim.ts";
import type { GrayImage } from "./ssim.ts";
import { describeExit, requireBinary, run } from "./tools.ts";

export { ssim };
export type { GrayImage };

const DEFAULT_TIMEOUT_MS = 120_000;

export interface ToolTimeout {
  timeoutMs?: number;
}

/** Parses a binary PGM (P5, maxval 255), the format pdftoppm -gray writes. */
export function parsePgm(bytes: Uint8Array): GrayImage {
  let offset = 0;
  const token = (): string => {
    // Whitespace and '#' comments separate header fields.
    for (;;) {
      while (offset < bytes.length && /\s/.test(String.fromCharCode(bytes[offset]!))) offset++;
      if (bytes[offset] !== 0x23) break;
      while (offset < bytes.length && bytes[offset] !== 0x0a) offset++;
    }
    const start = offset;
    while (offset < bytes.length && !/\s/.test(String.fromCharCode(bytes[offset]!))) offset++;
    return String.fromCharCode(...bytes.subarray(start, offset));
  };
  const magic = token();
  const width = Number(token());
  const height = Number(token());
  const maxval = Number(token());
  offset++; // the single whitespace byte before the samples
  if (magic !== "P5" || !(width > 0) || !(height > 0) || maxval !== 255) {
    throw new Error(`not an 8-bit binary PGM (header ${magic} ${width} ${height} ${maxval})`);
  }
  const data = bytes.subarray(offset, offset + width * height);
  if (data.length !== width * height) throw new Error(`truncated PGM: ${data.length} of ${width * height} samples`);
  return { width, height, data };
}

/** Renders one page (1-based) in gray with pdftoppm, at 100 dpi unless told otherwise. */
export async function renderPage(
  pdf: string,
  page: number,
  options: ToolTimeout & { dpi?: number } = {},
): Promise<GrayImage> {
  const pdftoppm = requireBinary("pdftoppm", "to render pages for SSIM");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dpi = String(options.dpi ?? 100);
  // No output root: pdftoppm writes the single page to stdout.
  const result = await run(pdftoppm, ["-r", dpi, "-f", String(page), "-l", String(page), "-gray", pdf], {
    timeoutMs,
  });
  if (result.exitCode !== 0 || result.stdout.length === 0) {
    throw new Error(`pdftoppm could not render page ${page}: ${describeExit(result, timeoutMs)}`);
  }
  return parsePgm(result.stdout);
}

/** The pages the benchmark compares: the first, the middle and the last (1-based, distinct). */
export function measuredPages(pageCount: number): number[] {
  if (pageCount < 1) return [];
  return [...new Set([1, Math.ceil(pageCount / 2), pageCount])];
}

export type CheckStatus = "ok" | "warnings" | "errors";

export interface CheckResult {
  status: CheckStatus;
  exitCode: number | null;
  /** The end of qpdf's report when it was not clean. */
  message?: string;
}

/** `qpdf --check`: exit 0 is clean, 3 is warnings (still valid), anything else is errors. */
export async function qpdfCheck(pdf: string, options: ToolTimeout = {}): Promise<CheckResult> {
  const qpdf = requireBinary("qpdf", "to check PDF validity (qpdf --check)");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = await run(qpdf, ["--check", pdf], { timeoutMs, maxStdoutBytes: 64 * 1024 * 1024 });
  const status: CheckStatus = result.exitCode === 0 ? "ok" : result.exitCode === 3 ? "warnings" : "errors";
  if (status === "ok") return { status, exitCode: 0 };
  const report = `${result.stdout.toString("utf8")}\n${result.stderr}`.trim().split("\n");
  const problems = report.filter((line) => /warning|error/i.test(line));
  return {
    status,
    exitCode: result.exitCode,
    message:
      (problems.length ? problems : report).slice(0, 3).join(" | ").slice(0, 400) || describeExit(result, timeoutMs),
  };
}

/** Number of pages, from `qpdf --show-npages`. */
export async function pageCount(pdf: string, options: ToolTimeout = {}): Promise<number> {
  const qpdf = requireBinary("qpdf", "to count pages");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = await run(qpdf, ["--show-npages", pdf], { timeoutMs });
  const pages = Number(result.stdout.toString("utf8").trim());
  if ((result.exitCode !== 0 && result.exitCode !== 3) || !Number.isInteger(pages)) {
    throw new Error(`qpdf could not count the pages: ${describeExit(result, timeoutMs)}`);
  }
  return pages;
}

/** The text of the whole document, as `pdftotext -enc UTF-8` extracts it. */
export async function extractText(pdf: string, options: ToolTimeout = {}): Promise<string> {
  const pdftotext = requireBinary("pdftotext", "to extract text");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = await run(pdftotext, ["-q", "-enc", "UTF-8", pdf, "-"], { timeoutMs });
  if (result.exitCode !== 0) throw new Error(`pdftotext failed: ${describeExit(result, timeoutMs)}`);
  return result.stdout.toString("utf8");
}

function wordCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.split(/\s+/)) if (word) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/**
 * How much of the words two texts share, order aside: the size of the multiset intersection
 * over the larger word count. 1 for the same words, 0 for nothing in common; 1 when both are
 * empty.
 */
export function textSimilarity(a: string, b: string): number {
  const wa = wordCounts(a);
  const wb = wordCounts(b);
  let na = 0;
  let nb = 0;
  let common = 0;
  for (const n of wa.values()) na += n;
  for (const [word, n] of wb) {
    nb += n;
    common += Math.min(n, wa.get(word) ?? 0);
  }
  const larger = Math.max(na, nb);
  return larger === 0 ? 1 : common / larger;
}

/** Whether extracted text holds anything but whitespace and form feeds. */
export const hasText = (text: string): boolean => /\S/.test(text.replace(/\f/g, ""));

export interface StructureCounts {
  /** Terminal AcroForm fields (distinct full names). */
  formFields: number;
  /** Annotations with /Subtype /Link. */
  links: number;
  /** Outline items, at every level. */
  bookmarks: number;
  /** Entries of the /EmbeddedFiles name tree. */
  embeddedFiles: number;
  /** Annotations with /Subtype /FileAttachment. */
  fileAttachmentAnnotations: number;
}

export const STRUCTURE_KEYS = [
  "formFields",
  "links",
  "bookmarks",
  "embeddedFiles",
  "fileAttachmentAnnotations",
] as const satisfies readonly (keyof StructureCounts)[];

/** Short labels for reports. */
export const STRUCTURE_LABELS: Record<keyof StructureCounts, string> = {
  formFields: "fields",
  links: "links",
  bookmarks: "bookmarks",
  embeddedFiles: "attachments",
  fileAttachmentAnnotations: "file-annots",
};

interface QpdfObject {
  value?: unknown;
  stream?: { dict?: unknown };
}

interface QpdfJson {
  acroform?: { fields?: { fullname?: string; object?: string }[] };
  outlines?: QpdfOutline[];
  attachments?: Record<string, unknown>;
  pages?: { object?: string }[];
  qpdf?: [unknown, Record<string, QpdfObject>];
}

interface QpdfOutline {
  kids?: QpdfOutline[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Counts what a compressor must not lose, from `qpdf --json` (qpdf 11+). In qpdf's JSON an
 * indirect reference is a string "12 0 R" (strings are prefixed "u:" or "b:"), so references
 * can be told from values.
 */
export async function structureCounts(pdf: string, options: ToolTimeout = {}): Promise<StructureCounts> {
  const qpdf = requireBinary("qpdf", "to count form fields, links, bookmarks and attachments (qpdf --json)");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const keys = ["acroform", "outlines", "attachments", "pages", "qpdf"].map((key) => `--json-key=${key}`);
  const result = await run(qpdf, ["--json=2", ...keys, pdf], { timeoutMs });
  if (result.exitCode !== 0 && result.exitCode !== 3) {
    throw new Error(`qpdf --json failed: ${describeExit(result, timeoutMs)}`);
  }
  const json = JSON.parse(result.stdout.toString("utf8")) as QpdfJson;
  const objects = json.qpdf?.[1] ?? {};
  const resolve = (value: unknown, depth = 0): unknown => {
    if (typeof value === "string" && / \d+ R$/.test(value) && depth < 32) {
      const object = objects[`obj:${value}`];
      return resolve(object?.value ?? object?.stream?.dict, depth + 1);
    }
    return value;
  };

  let links = 0;
  let fileAttachmentAnnotations = 0;
  for (const page of json.pages ?? []) {
    const dict = resolve(page.object);
    const annots = isRecord(dict) ? resolve(dict["/Annots"]) : undefined;
    if (!Array.isArray(annots)) continue;
    for (const annot of annots) {
      const subtype = (a: unknown) => (isRecord(a) ? resolve(a["/Subtype"]) : undefined);
      const kind = subtype(resolve(annot));
      if (kind === "/Link") links++;
      else if (kind === "/FileAttachment") fileAttachmentAnnotations++;
    }
  }

  const countOutlines = (items: QpdfOutline[] | undefined): number =>
    (items ?? []).reduce((sum, item) => sum + 1 + countOutlines(item.kids), 0);
  const fields = new Set((json.acroform?.fields ?? []).map((field) => field.fullname ?? field.object));

  return {
    formFields: fields.size,
    links,
    bookmarks: countOutlines(json.outlines),
    embeddedFiles: Object.keys(json.attachments ?? {}).length,
    fileAttachmentAnnotations,
  };
}

/** What got fewer between two counts, e.g. ["fields 12→0"]; empty when everything was kept. */
export function structureLosses(before: StructureCounts, after: StructureCounts): string[] {
  return STRUCTURE_KEYS.filter((key) => after[key] < before[key]).map(
    (key) => `${STRUCTURE_LABELS[key]} ${before[key]}→${after[key]}`,
  );
}
