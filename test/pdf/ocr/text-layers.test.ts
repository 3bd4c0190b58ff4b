// The OCR pass on pages rendered by code: the words come back from pdftotext (English, and German
// with its umlauts and ß), a page with text is left as it is, and the layer does not change one
// pixel of the page.
import { PDFDocument } from "@cantoo/pdf-lib";
import { afterAll, describe, expect, it } from "vitest";
import { addTextLayers } from "../../../src/pdf/ocr/text-layers.ts";
import type { OcrSettings } from "../../../src/pdf/ocr/text-layers.ts";
import { glyphlessTrueType } from "../../../src/pdf/ocr/glyphless-font.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";
import { scanDocument, textDocument } from "../helpers/scans.ts";

const POPPLER = hasPoppler();
const poppler = popplerScratch("engine-ocr");
afterAll(() => poppler.remove());

const ENGLISH = ["The quick brown fox jumps over", "the lazy dog near seven zebras"];
const GERMAN = ["Größere Straßen führen über", "grüne Wiesen zum Flußufer"];

async function withLayers(input: Uint8Array, settings: Partial<OcrSettings> = {}) {
  const doc = await PDFDocument.load(input);
  const report = await addTextLayers(doc.context, {
    languages: ["eng"],
    pageTimeoutMs: 60_000,
    timeBudgetMs: 120_000,
    ...settings,
  });
  return { report, output: await doc.save({ useObjectStreams: false }) };
}

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

describe.skipIf(!POPPLER)("the invisible text layer", () => {
  it("gives back the words of an English page", { timeout: 120_000 }, async () => {
    const input = await scanDocument([{ lines: ENGLISH }]);
    const { report, output } = await withLayers(input);
    expect(report).toMatchObject({ pagesRead: 1, pagesWithText: 0, pagesNotRead: 0, languages: ["eng"] });
    expect(wordsOf(poppler.textOf(input))).toEqual([]);
    expect(wordsOf(poppler.textOf(output))).toEqual(wordsOf(ENGLISH.join(" ")));
    // Not one pixel moves: the same rendering at 100 dpi.
    const [before] = poppler.pixelsOf(input);
    const [after] = poppler.pixelsOf(output);
    expect(after!.equals(before!)).toBe(true);
  });

  it("gives back the words of a German page, read in German", { timeout: 120_000 }, async () => {
    const input = await scanDocument([{ lines: GERMAN }]);
    const { report, output } = await withLayers(input, { languages: ["deu"] });
    expect(report).toMatchObject({ pagesRead: 1, languages: ["deu"] });
    expect(wordsOf(poppler.textOf(output))).toEqual(wordsOf(GERMAN.join(" ")));
  });

  it("leaves a page with text as it is, and reads only the scanned one", { timeout: 120_000 }, async () => {
    const text = await PDFDocument.load(await textDocument("Already searchable text"));
    const scan = await PDFDocument.load(await scanDocument([{ lines: ENGLISH }]));
    const [copied] = await text.copyPages(scan, [0]);
    text.addPage(copied);
    const input = await text.save();
    const before = await PDFDocument.load(input);
    const { report, output } = await withLayers(input);
    expect(report).toMatchObject({ pagesRead: 1, pagesWithText: 1 });
    const after = await PDFDocument.load(output);
    expect(after.getPage(0).node.toString()).toBe(before.getPage(0).node.toString());
    const pages = poppler.textOf(output).split("\f");
    expect(wordsOf(pages[0]!)).toEqual(["Already", "searchable", "text"]);
    expect(wordsOf(pages[1]!)).toEqual(wordsOf(ENGLISH.join(" ")));
  });

  it("leaves a page that takes longer than its bound without a layer", { timeout: 60_000 }, async () => {
    const input = await scanDocument([{ lines: ENGLISH }]);
    const { report, output } = await withLayers(input, { pageTimeoutMs: 1 });
    expect(report).toMatchObject({ pagesRead: 0, pagesNotRead: 1, pagesTimedOut: 1 });
    expect(wordsOf(poppler.textOf(output))).toEqual([]);
  });

  it("writes a TrueType program with a valid checksum adjustment", () => {
    const font = glyphlessTrueType();
    const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
    let sum = 0;
    for (let at = 0; at + 4 <= font.length; at += 4) sum = (sum + view.getUint32(at)) >>> 0;
    expect(sum).toBe(0xb1b0afba);
  });
});
