// The OCR pass: an invisible text layer on every page that has no text of its own and is mostly
// one image (page-image.ts), read by Tesseract (recognise.ts) from the image as it is stored,
// before the image pass touches it; the layer (text-layer.ts) is drawn after the page's own
// content, which is wrapped in q / Q so that nothing it leaves in the graphics state moves it.
// Pages with text, and pages whose image cannot be read, are left as they are. Bounded: each page
// by `pageTimeoutMs`, the whole pass by `timeBudgetMs` (pages after it are not read); the report
// counts what was read, left, and cut short.
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFRef } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { N } from "../streams/filters.ts";
import { addGlyphlessFont } from "./glyphless-font.ts";
import { pageImageOf, surveyPages } from "./page-image.ts";
import type { ScanPage } from "./page-image.ts";
import type { OcrLanguage } from "../shared/options.ts";
import { OcrTimeout, openReader } from "./recognise.ts";
import { textLayerContent } from "./text-layer.ts";

export interface OcrSettings {
  languages: readonly OcrLanguage[];
  /** One page's recognition, at most. */
  pageTimeoutMs: number;
  /** The whole pass, at most: pages not begun by then are not read. */
  timeBudgetMs: number;
  /** Called before the first scanned page and after each: how many of the scanned pages are done. */
  onPage?: (done: number, of: number) => void;
  /** The most scanned pages to read: more, and the pass refuses the document (OcrPageLimit). */
  pageLimit?: number;
}

/**
 * The document has more scanned pages than `OcrSettings.pageLimit`: refused before a page is read,
 * so that a caller which must answer soon (a synchronous request) can run it as a job instead.
 */
export class OcrPageLimit extends Error {
  readonly code = "ocr_page_limit";
  /** The scanned pages OCR would read. */
  readonly pages: number;
  readonly limit: number;
  constructor(pages: number, limit: number) {
    super(`The PDF has ${pages} scanned pages to read with ocr, more than the ${limit} read at once.`);
    this.name = "OcrPageLimit";
    this.pages = pages;
    this.limit = limit;
  }
}

export interface OcrReport {
  /** Pages that got a text layer. */
  pagesRead: number;
  /** Scanned pages on which no word was found. */
  pagesWithoutWords: number;
  /** Pages that already had text: left as they were. */
  pagesWithText: number;
  /** Scanned pages whose image could not be read (a format not read), or out of time. */
  pagesNotRead: number;
  /** Pages cut short by the per-page or per-document bound (counted in pagesNotRead). */
  pagesTimedOut: number;
  languages: OcrLanguage[];
}

const P = { Font: PDFName.of("Font"), Resources: PDFName.of("Resources") };

/** The page's own resources dictionary (a copy of the inherited one when it has none). */
function ownResources(context: PDFContext, scan: ScanPage): PDFDict {
  const own = scan.page.lookup(P.Resources);
  if (own instanceof PDFDict) return own;
  const copy = scan.resources ? scan.resources.clone(context) : context.obj({});
  scan.page.set(P.Resources, copy);
  return copy;
}

/** Adds the font under a name the page does not use yet; returns the name. */
function addFont(context: PDFContext, scan: ScanPage, font: PDFRef): string {
  const resources = ownResources(context, scan);
  let fonts = resources.lookup(P.Font);
  if (!(fonts instanceof PDFDict)) {
    fonts = context.obj({});
    resources.set(P.Font, fonts);
  }
  const dict = fonts as PDFDict;
  let name = "OCR";
  for (let i = 1; dict.has(PDFName.of(name)); i++) name = `OCR${i}`;
  dict.set(PDFName.of(name), font);
  return name;
}

/** The page's content as an array of references: `before`, its own streams, `after`. */
function wrapContents(context: PDFContext, page: PDFDict, before: PDFRef, after: PDFRef): boolean {
  const raw = page.get(N.Contents);
  const own: PDFRef[] = [];
  const resolved = context.lookup(raw);
  if (raw instanceof PDFRef && resolved instanceof PDFRawStream) own.push(raw);
  else if (resolved instanceof PDFRawStream) own.push(context.register(resolved));
  else if (resolved instanceof PDFArray) {
    for (let i = 0; i < resolved.size(); i++) {
      const item = resolved.get(i);
      if (!(item instanceof PDFRef)) return false;
      own.push(item);
    }
  } else return false;
  page.set(N.Contents, context.obj([before, ...own, after]));
  return true;
}

/** Reads the scanned pages and adds their text layers. */
export async function addTextLayers(context: PDFContext, settings: OcrSettings): Promise<OcrReport> {
  const started = Date.now();
  const survey = surveyPages(context);
  const report: OcrReport = {
    pagesRead: 0,
    pagesWithoutWords: 0,
    pagesWithText: survey.withText,
    pagesNotRead: 0,
    pagesTimedOut: 0,
    languages: [...settings.languages],
  };
  if (survey.scans.length === 0) return report;
  const limit = settings.pageLimit;
  if (limit !== undefined && survey.scans.length > limit) throw new OcrPageLimit(survey.scans.length, limit);
  settings.onPage?.(0, survey.scans.length);
  const reader = openReader(settings.languages);
  let font: PDFRef | undefined;
  let push: PDFRef | undefined;
  try {
    for (const [index, scan] of survey.scans.entries()) {
      const left = settings.timeBudgetMs - (Date.now() - started);
      const image = left > 0 ? await pageImageOf(context, scan.image) : undefined;
      if (left <= 0) report.pagesTimedOut++;
      if (!image) {
        report.pagesNotRead++;
      } else {
        try {
          const [a, b] = scan.placement;
          const dpi = (image.width * 72) / Math.hypot(a, b);
          const lines = await reader.read({ ...image, dpi }, Math.min(settings.pageTimeoutMs, left));
          if (lines.length === 0) report.pagesWithoutWords++;
          else {
            font ??= addGlyphlessFont(context);
            const name = addFont(context, scan, font);
            const layer = textLayerContent(lines, image.width, image.height, scan.placement, name);
            push ??= context.register(context.stream("q\n"));
            const after = context.register(context.flateStream(`Q\n${layer}`));
            if (wrapContents(context, scan.page, push, after)) report.pagesRead++;
            else report.pagesNotRead++;
          }
        } catch (error) {
          if (!(error instanceof OcrTimeout)) throw error;
          report.pagesTimedOut++;
          report.pagesNotRead++;
        }
      }
      settings.onPage?.(index + 1, survey.scans.length);
    }
  } finally {
    await reader.close();
  }
  return report;
}
