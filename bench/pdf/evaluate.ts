// Measuring one input and the outputs the contenders made of it: validity, pages, text,
// structure and SSIM of the measured pages. The input's side is computed once per file and
// shared by every contender; an output byte-identical to its input (the engine hands back the
// input when it cannot make it smaller) reuses it instead of being measured again.
import { readFile } from "node:fs/promises";
import {
  extractText,
  hasText,
  measuredPages,
  pageCount,
  qpdfCheck,
  renderPage,
  ssim,
  structureCounts,
  structureLosses,
  textSimilarity,
} from "./quality.ts";
import type { CheckResult, GrayImage, StructureCounts } from "./quality.ts";

export interface EvaluateOptions {
  /** Limit for each qpdf / pdftotext / pdftoppm call. */
  timeoutMs: number;
  /** Runs each of those calls: a caller measuring several files at once caps the processes here. */
  limit?: <T>(task: () => Promise<T>) => Promise<T>;
}

const unlimited = <T>(task: () => Promise<T>) => task();

export interface InputFacts {
  bytes: Uint8Array;
  pages: number;
  measuredPages: number[];
  check: CheckResult;
  text: string;
  structure: StructureCounts;
  /** Renders of the measured pages, made when first asked for. */
  render(page: number): Promise<GrayImage>;
}

export async function inspectInput(pdf: string, options: EvaluateOptions): Promise<InputFacts> {
  const bytes = await readFile(pdf);
  const { timeoutMs, limit = unlimited } = options;
  const [pages, check, text, structure] = await Promise.all([
    limit(() => pageCount(pdf, { timeoutMs })),
    limit(() => qpdfCheck(pdf, { timeoutMs })),
    limit(() => extractText(pdf, { timeoutMs })),
    limit(() => structureCounts(pdf, { timeoutMs })),
  ]);
  const renders = new Map<number, Promise<GrayImage>>();
  return {
    bytes,
    pages,
    measuredPages: measuredPages(pages),
    check,
    text,
    structure,
    render(page) {
      let render = renders.get(page);
      if (!render) {
        render = limit(() => renderPage(pdf, page, { timeoutMs }));
        render.catch(() => undefined); // reported by whoever awaits it
        renders.set(page, render);
      }
      return render;
    },
  };
}

export interface PageQuality {
  page: number;
  /** null: the input page itself could not be rendered, so nothing was measured. */
  ssim: number | null;
  /** The renders are the same pixel for pixel. */
  identical: boolean;
  /** Why the page got 0 or null. */
  note?: string;
}

export interface OutputEvaluation {
  size: number;
  /** The output is the input, byte for byte. */
  identicalToInput: boolean;
  check: CheckResult;
  /** null when qpdf could not count them. */
  pages: number | null;
  textIdentical: boolean;
  textSimilarity: number;
  textExtractable: boolean;
  structure: StructureCounts | null;
  structureLosses: string[];
  pageQuality: PageQuality[];
  /** The lowest SSIM over the measured pages (null when none could be measured). */
  minSsim: number | null;
  valid: boolean;
  /** Why it is not valid. */
  problems: string[];
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function pageQuality(
  input: InputFacts,
  output: string,
  page: number,
  options: EvaluateOptions,
): Promise<PageQuality> {
  const { timeoutMs, limit = unlimited } = options;
  let before: GrayImage;
  try {
    before = await input.render(page);
  } catch (error) {
    return { page, ssim: null, identical: false, note: `input page not rendered: ${message(error)}` };
  }
  let after: GrayImage;
  try {
    after = await limit(() => renderPage(output, page, { timeoutMs }));
  } catch (error) {
    return { page, ssim: 0, identical: false, note: `output page not rendered: ${message(error)}` };
  }
  if (before.width !== after.width || before.height !== after.height) {
    return {
      page,
      ssim: 0,
      identical: false,
      note: `page size changed: ${before.width}x${before.height} → ${after.width}x${after.height} px`,
    };
  }
  const identical = Buffer.compare(before.data, after.data) === 0;
  return { page, ssim: identical ? 1 : ssim(before, after), identical };
}

/**
 * Measures an output against its input. `identicalText`: the text must be the same (lossless),
 * rather than only still extractable.
 */
export async function evaluateOutput(
  input: InputFacts,
  output: string,
  identicalText: boolean,
  options: EvaluateOptions,
): Promise<OutputEvaluation> {
  const { timeoutMs, limit = unlimited } = options;
  const bytes = await readFile(output);
  if (equalBytes(bytes, input.bytes)) {
    return {
      size: bytes.length,
      identicalToInput: true,
      check: input.check,
      pages: input.pages,
      textIdentical: true,
      textSimilarity: 1,
      textExtractable: hasText(input.text),
      structure: input.structure,
      structureLosses: [],
      pageQuality: input.measuredPages.map((page) => ({ page, ssim: 1, identical: true })),
      minSsim: input.measuredPages.length ? 1 : null,
      valid: input.check.status !== "errors",
      problems: input.check.status === "errors" ? ["qpdf --check: errors (as the input)"] : [],
    };
  }

  const problems: string[] = [];
  const check = await limit(() => qpdfCheck(output, { timeoutMs }));
  if (check.status === "errors") problems.push(`qpdf --check: ${check.message ?? "errors"}`);
  const pages = await limit(() => pageCount(output, { timeoutMs })).catch((error: unknown) => {
    problems.push(message(error));
    return null;
  });
  if (pages !== null && pages !== input.pages) problems.push(`pages ${input.pages}→${pages}`);

  const text = await limit(() => extractText(output, { timeoutMs })).catch((error: unknown) => {
    problems.push(message(error));
    return "";
  });
  const textIdentical = text === input.text;
  const extractable = hasText(text);
  if (identicalText && !textIdentical) problems.push("text differs");
  if (!identicalText && hasText(input.text) && !extractable) problems.push("text no longer extractable");

  const structure = await limit(() => structureCounts(output, { timeoutMs })).catch((error: unknown) => {
    problems.push(`structure not readable: ${message(error)}`);
    return null;
  });
  const losses = structure ? structureLosses(input.structure, structure) : ["structure not readable"];

  // Pages one at a time: a render can take a few hundred MB on a large page.
  const quality: PageQuality[] = [];
  for (const page of input.measuredPages) quality.push(await pageQuality(input, output, page, options));
  const measured = quality.map((q) => q.ssim).filter((s): s is number => s !== null);

  return {
    size: bytes.length,
    identicalToInput: false,
    check,
    pages,
    textIdentical,
    textSimilarity: textSimilarity(input.text, text),
    textExtractable: extractable,
    structure,
    structureLosses: losses,
    pageQuality: quality,
    minSsim: measured.length ? Math.min(...measured) : null,
    valid: problems.length === 0,
    problems,
  };
}
