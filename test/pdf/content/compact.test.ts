// Content-stream compaction (src/pdf/content/compact.ts) and sRGB profiles written as DeviceRGB
// (src/pdf/content/srgb.ts), in `balanced` and `extreme`: pages render pixel for pixel the same
// at 100 dpi (pdftoppm) and pdftotext reads the same text; marked content (MCIDs) stays. Documents
// are made here: text placed glyph by glyph as Skia (Chrome, Google Docs) writes it, with an
// embedded CID font (DejaVu Sans) and with a simple font whose widths the PDF gives, under
// character and word spacing; Chrome's CV from the corpus is run when the corpus is there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import fontkit from "@pdf-lib/fontkit";
import { afterAll, describe, expect, it } from "vitest";
import { PDFDict, PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFPage } from "@cantoo/pdf-lib";
import { Font, FontNames } from "@cantoo/pdf-lib/standard-fonts";
import { compressPdf } from "../../../src/pdf/index.ts";
import type { CompressionProfile } from "../../../src/pdf/index.ts";
import { compactContent, compactContentStreams, pageStartState } from "../../../src/pdf/content/compact.ts";
import { isSrgbProfile, srgbAsDeviceRgb } from "../../../src/pdf/content/srgb.ts";
import { openPdf } from "../../../src/pdf/structure/load.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { saveDocument } from "../../../src/pdf/structure/save.ts";
import { corpusDir } from "../fixtures.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";

const SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const ICC = "/usr/share/color/icc/ghostscript";
const HAVE_FONT = existsSync(SANS);
const HAVE_ICC = existsSync(path.join(ICC, "srgb.icc")) && existsSync(path.join(ICC, "a98.icc"));

const POPPLER = hasPoppler();
if (!POPPLER) console.log("engine-content.test.ts: skipped the rendering checks, poppler-utils is not installed.");
if (!HAVE_FONT)
  console.log(`engine-content.test.ts: skipped the CID font case, ${SANS} is missing (fonts-dejavu-core).`);
if (!HAVE_ICC) console.log(`engine-content.test.ts: skipped the profile cases, ${ICC} is missing (ghostscript).`);

const poppler = popplerScratch("engine-content");
afterAll(() => poppler.remove());

function expectSameLook(input: Uint8Array, output: Uint8Array): void {
  if (POPPLER) poppler.expectSameLook(input, output);
}

/** The decoded content of every page, joined. */
async function contentOf(bytes: Uint8Array): Promise<string> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  return doc
    .getPages()
    .map((page) => {
      const contents = page.node.lookup(PDFName.of("Contents"));
      return contents instanceof PDFRawStream
        ? Buffer.from(decodeStreamData(contents, 1 << 26)!).toString("latin1")
        : "";
    })
    .join("\n");
}

/** Places each glyph of `text` with its own move, in float32-like noise, as Skia does. */
function skiaLine(codes: string[], advances: number[], size: number): string {
  const out: string[] = [];
  codes.forEach((code, i) => {
    if (i > 0) out.push(`${(advances[i - 1]! * size) / 1000 + 0.0000123 * (i % 3)} 0 Td`);
    out.push(`${code} Tj`);
  });
  return out.join("\n");
}

async function skiaCidDocument(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(readFileSync(SANS), { subset: false });
  const page = doc.addPage([500, 300]);
  const lines = ["Justin Time", "Assistant to the Traveling Secretary", "Ωmega ∑ 0123456789"];
  const body = lines.map((line, n) => {
    const glyphs = [...line];
    const codes = glyphs.map((glyph) => font.encodeText(glyph).toString());
    const advances = glyphs.map((glyph) => font.widthOfTextAtSize(glyph, 1000));
    const size = 13.8599997 + n;
    return [
      "BT",
      `/P <</MCID ${n} >>BDC`,
      `/F1 ${size} Tf`,
      `1 0 0 -1 ${30.39063 + n} ${40 + 60 * n} Tm`,
      skiaLine(codes, advances, size),
      "EMC",
      "ET",
    ].join("\n");
  });
  const content = [
    ".23999999 0 0 -.23999999 0 300 cm",
    "q 4.1666665 0 0 4.1666665 0 0 cm",
    "0 g 0 G",
    ".0588 .1529 .302 RG .0588 .1529 .302 rg",
    ...body,
    ".0588 .1529 .302 rg",
    "10 200 100 20 re f",
    "Q",
  ].join("\n");
  setContent(doc, page, content, { F1: font.ref });
  return doc.save({ useObjectStreams: false });
}

function setContent(doc: PDFDocument, page: PDFPage, content: string, fonts: Record<string, unknown>): void {
  const stream = doc.context.flateStream(content);
  page.node.set(PDFName.of("Contents"), doc.context.register(stream));
  page.node.set(PDFName.of("Resources"), doc.context.obj({ Font: fonts } as never));
}

/** A simple font (Helvetica's metrics in /Widths), text with character and word spacing and literal strings. */
async function simpleFontDocument(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const metrics = Font.load(FontNames.Helvetica);
  const widths: number[] = [];
  for (let code = 32; code <= 126; code++) widths.push(metrics.getWidthOfGlyph(glyphName(code)) ?? 500);
  const font = doc.context.register(
    doc.context.obj({
      Type: "Font",
      Subtype: "Type1",
      BaseFont: "Helvetica",
      FirstChar: 32,
      LastChar: 126,
      Widths: widths,
      Encoding: "WinAnsiEncoding",
    }),
  );
  const page = doc.addPage([400, 200]);
  const words = ["Hello ", "(world) ", "and ", "TJ"];
  const size = 12;
  const charSpacing = 0.5;
  const wordSpacing = 2.25;
  const advance = (text: string) =>
    [...text].reduce(
      (sum, ch) => sum + (widths[ch.charCodeAt(0) - 32]! / 1000) * size + charSpacing + (ch === " " ? wordSpacing : 0),
      0,
    );
  const shows: string[] = [];
  words.forEach((word, i) => {
    if (i > 0) shows.push(`${advance(words[i - 1]!) + 0.37} 0 Td`);
    shows.push(`(${word.replace(/[()\\]/g, (c) => `\\${c}`)}) Tj`);
  });
  const content = [
    "BT",
    `/F1 ${size} Tf ${charSpacing} Tc ${wordSpacing} Tw`,
    "20 150 Td",
    ...shows,
    "0 -20 Td (next line) Tj",
    "T* (and T*) Tj",
    "ET",
  ].join("\n");
  setContent(doc, page, content, { F1: font });
  return doc.save({ useObjectStreams: false });
}

function glyphName(code: number): string {
  const names: Record<number, string> = {
    40: "parenleft",
    41: "parenright",
    42: "asterisk",
    46: "period",
    92: "backslash",
  };
  if (names[code]) return names[code];
  const ch = String.fromCharCode(code);
  if (/[A-Za-z]/.test(ch)) return ch;
  const digits = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
  return /\d/.test(ch) ? digits[Number(ch)]! : "space";
}

async function compress(input: Uint8Array, profile: CompressionProfile): Promise<Uint8Array> {
  return (await compressPdf(input, profile)).output;
}

describe("content compaction", () => {
  it("writes redundant colours and fonts once, numbers short, and keeps what it cannot read as it is", () => {
    const content = Buffer.from(
      "0 g 0 G 1 0 0 rg 1.000 0 0 rg 0.50 w BT /F1 12 Tf /F1 12 Tf ET 1 0 0 rg % note\nq 1 0 0 rg Q",
    );
    const out = compactContent(content, undefined, pageStartState());
    // The whitespace after each operator stays as the producer wrote it.
    expect(Buffer.from(out!.bytes).toString("latin1")).toBe("1 0 0 rg .5 w BT /F1 12 Tf ET q Q\n");
    // An unterminated string: not read, left to the caller.
    expect(compactContent(Buffer.from("BT (abc Tj ET"), undefined, pageStartState())).toBeUndefined();
  });

  it.skipIf(!HAVE_FONT)(
    "merges a CID font's glyph-by-glyph moves into TJ arrays, pixels and text the same",
    async () => {
      const input = await skiaCidDocument();
      const before = await contentOf(input);
      expect(before.match(/ Td\n/g)!.length).toBeGreaterThan(50);
      for (const profile of ["balanced", "extreme"] as const) {
        const output = await compress(input, profile);
        const after = await contentOf(output);
        expect(after).toContain("TJ");
        expect(after).not.toMatch(/ 0 Td\n<[0-9a-f]+>\s*Tj/i);
        // Marked content stays, with its MCIDs, and the colours set again to the same value go.
        expect(after.match(/MCID (\d)/g)).toEqual(before.match(/MCID (\d)/g));
        expect(after.match(/ rg\n/g)!.length).toBe(1);
        expect(after.length).toBeLessThan(before.length * 0.6);
        expectSameLook(input, output);
      }
      // lossless: the content decodes to what it was.
      expect(await contentOf(await compress(input, "lossless"))).toBe(before);
    },
  );

  it("merges a simple font's moves under character and word spacing, later moves corrected", async () => {
    const input = await simpleFontDocument();
    const output = await compress(input, "balanced");
    const after = await contentOf(output);
    expect(after).toContain("TJ");
    expect(after).toContain("(Hello ");
    expectSameLook(input, output);
  });

  const corpus = corpusDir();
  const chrome = corpus && path.join(corpus, "files/cv_chrome_twocolumn_photo.pdf");
  it.skipIf(!chrome || !existsSync(chrome))(
    "halves Chrome's CV content, pixels and text the same",
    async () => {
      const input = readFileSync(chrome!);
      const { doc } = await openPdf(input);
      const report = compactContentStreams(doc.context);
      expect(report.rewritten).toBe(2);
      expect(report.bytesAfter).toBeLessThan(report.bytesBefore * 0.8);
      expectSameLook(input, await saveDocument(doc));
    },
    60_000,
  );
  if (!chrome || !existsSync(chrome))
    console.log("engine-content.test.ts: skipped the corpus case, the shared corpus is absent.");
});

/** A page filling a rectangle in a colour space; the profile from ghostscript's set. */
async function profileDocument(profile: string, outputIntent = false): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const icc = context.register(context.flateStream(readFileSync(path.join(ICC, profile)), { N: 3 }));
  const space = context.register(context.obj([PDFName.of("ICCBased"), icc]));
  const page = doc.addPage([200, 200]);
  page.node.set(PDFName.of("Resources"), context.obj({ ColorSpace: { Cs1: space } } as never));
  page.node.set(
    PDFName.of("Contents"),
    context.register(context.flateStream("/Cs1 cs .2 .6 .9 sc 20 20 160 160 re f")),
  );
  if (outputIntent) {
    doc.catalog.set(
      PDFName.of("OutputIntents"),
      context.obj([{ Type: "OutputIntent", S: "GTS_PDFA1", DestOutputProfile: icc }] as never),
    );
  }
  return doc.save({ useObjectStreams: false });
}

async function spacesOf(bytes: Uint8Array): Promise<string> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const resources = doc.getPage(0).node.lookup(PDFName.of("Resources"));
  const spaces = resources instanceof PDFDict ? resources.lookup(PDFName.of("ColorSpace")) : undefined;
  return spaces instanceof PDFDict ? String(spaces.lookup(PDFName.of("Cs1"))) : "";
}

describe.skipIf(!HAVE_ICC)("sRGB profiles", () => {
  it("knows sRGB from other RGB profiles", () => {
    expect(isSrgbProfile(readFileSync(path.join(ICC, "srgb.icc")))).toBe(true);
    expect(isSrgbProfile(readFileSync(path.join(ICC, "a98.icc")))).toBe(false);
    expect(isSrgbProfile(readFileSync(path.join(ICC, "rommrgb.icc")))).toBe(false);
    expect(isSrgbProfile(new Uint8Array(200))).toBe(false);
  });

  it("writes an sRGB colour space as DeviceRGB in balanced and extreme, pixels the same", async () => {
    const input = await profileDocument("srgb.icc");
    for (const profile of ["balanced", "extreme"] as const) {
      const output = await compress(input, profile);
      expect(await spacesOf(output)).toBe("/DeviceRGB");
      expect(Buffer.from(output).includes("ICCBased")).toBe(false);
      expect(output.length).toBeLessThan(input.length - 1000);
      expectSameLook(input, output);
    }
    expect(await spacesOf(await compress(input, "lossless"))).toContain("ICCBased");
  });

  it("keeps other profiles, and every profile of a document with an output intent", async () => {
    const a98 = await compress(await profileDocument("a98.icc"), "extreme");
    expect(await spacesOf(a98)).toContain("ICCBased");
    const pdfa = await profileDocument("srgb.icc", true);
    const { doc } = await openPdf(pdfa);
    expect(srgbAsDeviceRgb(doc.context)).toBe(0);
  });

  it("changes nothing where no stream is an sRGB profile, and finds one used only inline", async () => {
    // No sRGB profile: the walk is not made, and nothing changes.
    const { doc } = await openPdf(await profileDocument("a98.icc"));
    const before = await saveDocument(doc);
    expect(srgbAsDeviceRgb(doc.context)).toBe(0);
    expect(Buffer.from(await saveDocument(doc)).equals(Buffer.from(before))).toBe(true);
    // An sRGB profile named by a colour space written inline in a nested resource dictionary.
    const inline = await PDFDocument.create({ updateMetadata: false });
    const { context } = inline;
    const icc = context.register(context.flateStream(readFileSync(path.join(ICC, "srgb.icc")), { N: 3 }));
    const page = inline.addPage([200, 200]);
    const pattern = context.obj({ Resources: { ColorSpace: { Cs1: [PDFName.of("ICCBased"), icc] } } } as never);
    page.node.set(PDFName.of("Resources"), context.obj({ Pattern: { P1: pattern } } as never));
    expect(srgbAsDeviceRgb(context)).toBe(1);
    expect(String(pattern)).toContain("/Cs1 /DeviceRGB");
  });
});
