// Font subsetting (src/pdf/fonts/subset.ts): TrueType programs embedded whole come out
// holding only the glyphs drawn, with text extraction (pdftotext) and rendering (pdftoppm at
// 100 dpi) identical; fonts a form field names stay whole; Type 3 fonts keep working. Documents are
// made here with DejaVu fonts embedded whole by pdf-lib (fontkit), or by hand for a simple
// TrueType font; the corpus's mixed-fonts file is run when the corpus is there.
import { existsSync, readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import path from "node:path";
import fontkit from "@pdf-lib/fontkit";
import { afterAll, describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, StandardFonts } from "@cantoo/pdf-lib";
import { Encodings } from "@cantoo/pdf-lib/standard-fonts";
import type { PDFFont, PDFRef, PDFNumber } from "@cantoo/pdf-lib";
import { compressPdf, COMPRESSION_PROFILES } from "../../../src/pdf/index.ts";
import type { CompressionProfile, CompressionReport } from "../../../src/pdf/index.ts";
import { handleSignatures } from "../../../src/pdf/security/signatures.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { readCff, unwrapCff } from "../../../src/pdf/fonts/cff.ts";
import { flavourOf } from "../../../src/pdf/fonts/flavour.ts";
import { readSfnt } from "../../../src/pdf/fonts/sfnt.ts";
import { readNamedCff } from "../../../src/pdf/fonts/cff-names.ts";
import { writeType2 } from "../../../src/pdf/fonts/cff-write.ts";
import { interpretType1 } from "../../../src/pdf/fonts/type1-charstrings.ts";
import { convertType1 } from "../../../src/pdf/fonts/type1-convert.ts";
import { decrypt, readType1 } from "../../../src/pdf/fonts/type1.ts";
import { STANDARD_ENCODING } from "../../../src/pdf/fonts/cff-strings.ts";
import { trimToUnicode, trimWidths } from "../../../src/pdf/fonts/maps.ts";
import { createRunner } from "../../../src/compress/isolation/runner.ts";
import { corpusDir } from "../fixtures.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";

const FONTS = "/usr/share/fonts/truetype/dejavu";
const SANS = path.join(FONTS, "DejaVuSans.ttf");
const SERIF = path.join(FONTS, "DejaVuSerif.ttf");
const MONO = path.join(FONTS, "DejaVuSansMono.ttf");
/** A CFF-flavoured OpenType font (fonts-urw-base35, which ghostscript installs). */
const NIMBUS = "/usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf";
/** The same font as a Type 1 program (binary eexec), with its metrics. */
const NIMBUS_T1 = "/usr/share/fonts/type1/urw-base35/NimbusSans-Regular.t1";
const NIMBUS_AFM = "/usr/share/fonts/type1/urw-base35/NimbusSans-Regular.afm";
const HAVE_FONTS = [SANS, SERIF, MONO, NIMBUS, NIMBUS_T1, NIMBUS_AFM].every((file) => existsSync(file));

const POPPLER = hasPoppler();
if (!HAVE_FONTS)
  console.log(
    `engine-fonts.test.ts: skipped, the DejaVu fonts (${FONTS}) or ${NIMBUS} are missing (apt-get install fonts-dejavu-core fonts-urw-base35).`,
  );
if (!POPPLER) console.log("engine-fonts.test.ts: skipped, poppler-utils (pdftotext, pdftoppm) is not installed.");

const poppler = popplerScratch("engine-fonts");
afterAll(() => poppler.remove());
const { write, pixelsOf, expectSameLook } = poppler;

async function compress(input: Uint8Array, profile: CompressionProfile) {
  let report: CompressionReport | undefined;
  const { output } = await compressPdf(input, profile, (r) => (report = r));
  return { output, report: report! };
}

/** A W array as CID → width. */
function expandWidths(widths: PDFArray): Map<number, number> {
  const out = new Map<number, number>();
  const items = widths.asArray();
  for (let i = 0; i < items.length;) {
    const first = (items[i] as PDFNumber).asNumber();
    const next = items[i + 1];
    if (next instanceof PDFArray) {
      next.asArray().forEach((w, k) => out.set(first + k, (w as PDFNumber).asNumber()));
      i += 2;
    } else {
      const last = (next as PDFNumber).asNumber();
      for (let c = first; c <= last; c++) out.set(c, (items[i + 2] as PDFNumber).asNumber());
      i += 3;
    }
  }
  return out;
}

/** The bfchar entries of a ToUnicode CMap (pdf-lib writes only those), code → hex destination. */
function bfchars(cmap: string): Map<string, string> {
  expect(cmap).not.toContain("beginbfrange");
  const out = new Map<string, string>();
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const pair of block[1]!.matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g)) {
      out.set(pair[1]!.toUpperCase(), pair[2]!.toUpperCase());
    }
  }
  return out;
}

interface FontState {
  baseFont: string;
  /** Decoded size of its font program. */
  programBytes: number;
}

/** Each font with a FontFile2, by its /BaseFont without a subset tag. */
async function fontsOf(bytes: Uint8Array): Promise<Map<string, FontState>> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const found = new Map<string, FontState>();
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue;
    const descriptor = object.lookup(PDFName.of("FontDescriptor"));
    const program = descriptor instanceof PDFDict ? descriptor.lookup(PDFName.of("FontFile2")) : undefined;
    const name = object.lookup(PDFName.of("BaseFont"));
    if (!(program instanceof PDFRawStream) || !(name instanceof PDFName)) continue;
    const baseFont = name.decodeText();
    const data = decodeStreamData(program, 64 << 20)!;
    // pdf-lib names its fonts Name-1234.
    found.set(baseFont.replace(/^[A-Z]{6}\+/, "").replace(/-\d+$/, ""), { baseFont, programBytes: data.length });
  }
  return found;
}

/** Draws `text` with `font` through a Form XObject of its own resources, placed on `page`. */
function drawThroughForm(doc: PDFDocument, page: ReturnType<PDFDocument["addPage"]>, font: PDFFont, text: string) {
  const { context } = doc;
  const encoded = font.encodeText(text).toString();
  const form = context.flateStream(`BT /FX 16 Tf 0 0 Td ${encoded} Tj ET`, {
    Type: "XObject",
    Subtype: "Form",
    BBox: [0, 0, 400, 40],
    Resources: { Font: { FX: font.ref } },
  });
  const ref = context.register(form);
  page.node.setXObject(PDFName.of("Fm1"), ref);
  const contents = context.flateStream("q 1 0 0 1 60 600 cm /Fm1 Do Q");
  page.node.addContentStream(context.register(contents));
}

/**
 * Two pages: DejaVu Sans drawn on both (page text and a Form XObject), DejaVu Serif drawn on both
 * and named by a text field's default appearance, a standard font beside them.
 */
async function twoPagesAndAField(options: { formResources: boolean } = { formResources: true }): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  const sans = await doc.embedFont(readFileSync(SANS), { subset: false });
  const serif = await doc.embedFont(readFileSync(SERIF), { subset: false });
  const helvetica = await doc.embedFont(StandardFonts.Helvetica);
  const first = doc.addPage([500, 700]);
  first.drawText("Subset me: the quick brown fox", { x: 50, y: 650, size: 18, font: sans });
  first.drawText("Kept whole: jumps over the lazy dog", { x: 50, y: 620, size: 18, font: serif });
  first.drawText("Standard font, not embedded", { x: 50, y: 590, size: 12, font: helvetica });
  drawThroughForm(doc, first, sans, "Ωmega through a form: ∑ ≠ ∞");
  const second = doc.addPage([500, 700]);
  second.drawText("Second page: Zebra 0123456789 ÄÖÜ ß", { x: 50, y: 650, size: 18, font: sans });
  second.drawText("Serif on page two: Quixotic", { x: 50, y: 620, size: 18, font: serif });
  const field = doc.getForm().createTextField("name");
  field.setText("Ada");
  field.addToPage(first, { x: 50, y: 400, width: 300, height: 30, font: serif });
  field.updateAppearances(serif);
  // pdf-lib puts the font in the field's appearance only; the spec has the default appearance
  // name it in the form's default resources.
  if (!options.formResources) return doc.save({ useObjectStreams: false });
  const da = field.acroField.getDefaultAppearance()!;
  const name = /\/(\S+) [\d.]+ Tf/.exec(da)![1]!;
  doc.getForm().acroForm.dict.set(PDFName.of("DR"), doc.context.obj({ Font: doc.context.obj({ [name]: serif.ref }) }));
  return doc.save({ useObjectStreams: false });
}

/** A Type 3 font: one glyph a filled square, another showing DejaVu Sans text from its own resources. */
async function type3Document(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  const sans = await doc.embedFont(readFileSync(SANS), { subset: false });
  const { context } = doc;
  const square = context.register(context.flateStream("600 0 0 0 600 600 d1 50 0 500 500 re f"));
  const lettered = context.register(
    context.flateStream(`600 0 0 0 600 600 d1 BT /FS 700 Tf 0 0 Td ${sans.encodeText("Q").toString()} Tj ET`),
  );
  const type3 = context.register(
    context.obj({
      Type: "Font",
      Subtype: "Type3",
      FontBBox: [0, 0, 600, 600],
      FontMatrix: [0.001, 0, 0, 0.001, 0, 0],
      CharProcs: { square, lettered },
      Encoding: { Type: "Encoding", Differences: [65, "square", "lettered"] },
      FirstChar: 65,
      LastChar: 66,
      Widths: [600, 600],
      Resources: { Font: { FS: sans.ref } },
    }),
  );
  const page = doc.addPage([400, 300]);
  page.drawText("Beside a Type 3 font", { x: 40, y: 250, size: 16, font: sans });
  page.node.setFontDictionary(PDFName.of("T3"), type3);
  page.node.addContentStream(context.register(context.flateStream("BT /T3 40 Tf 40 120 Td (ABBA) Tj ET")));
  return doc.save({ useObjectStreams: false });
}

/** A simple TrueType font (WinAnsiEncoding, FontFile2 whole), made by hand as producers write them. */
/** A page drawing with DejaVu Sans Mono, embedded whole under `name` (a subset tag says it is not). */
async function simpleTrueTypeDocument(
  name = "DejaVuSansMono",
  encoding: "WinAnsiEncoding" | "MacRomanEncoding" = "WinAnsiEncoding",
): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const program = readFileSync(MONO);
  const fontFile = context.register(context.flateStream(program, { Length1: program.length }));
  const descriptor = context.register(
    context.obj({
      Type: "FontDescriptor",
      FontName: name,
      Flags: 32,
      FontBBox: [-558, -375, 718, 1042],
      ItalicAngle: 0,
      Ascent: 760,
      Descent: -240,
      CapHeight: 729,
      StemV: 80,
      FontFile2: fontFile,
    }),
  );
  const font: PDFRef = context.register(
    context.obj({
      Type: "Font",
      Subtype: "TrueType",
      BaseFont: name,
      FirstChar: 32,
      LastChar: 255,
      Widths: new Array<number>(224).fill(602),
      Encoding: encoding,
      FontDescriptor: descriptor,
      ToUnicode: context.register(context.flateStream(simpleToUnicode(encoding))),
    }),
  );
  const page = doc.addPage([500, 300]);
  page.node.setFontDictionary(PDFName.of("TT"), font);
  // café, then € (WinAnsi) or • (MacRoman), in either encoding's codes.
  const accents = encoding === "WinAnsiEncoding" ? "caf\\351 \\200" : "caf\\216 \\245";
  const text = `BT /TT 16 Tf 40 220 Td (Monospaced: ${accents} 100) Tj 0 -30 Td [(Kerned) -250 (array)] TJ ET`;
  page.node.addContentStream(context.register(context.flateStream(text)));
  return doc.save({ useObjectStreams: false });
}

/** A ToUnicode CMap for every printable ASCII code, and é and €/• in the encoding's codes, as bfchar entries. */
function simpleToUnicode(encoding: "WinAnsiEncoding" | "MacRomanEncoding"): string {
  const hex = (n: number, digits: number) => n.toString(16).toUpperCase().padStart(digits, "0");
  const pairs: [number, number][] = [];
  for (let code = 32; code < 127; code++) pairs.push([code, code]);
  pairs.push(
    ...((encoding === "WinAnsiEncoding"
      ? [
          [0xe9, 0xe9],
          [0x80, 0x20ac],
        ]
      : [
          [0x8e, 0xe9],
          [0xa5, 0x2022],
        ]) as [number, number][]),
  );
  const blocks: string[] = [];
  for (let i = 0; i < pairs.length; i += 100) {
    const block = pairs.slice(i, i + 100);
    blocks.push(
      `${block.length} beginbfchar\n${block.map(([c, u]) => `<${hex(c, 2)}> <${hex(u, 4)}>`).join("\n")}\nendbfchar`,
    );
  }
  return [
    "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
    "/CMapName /Adobe-Identity-UCS def /CMapType 2 def",
    "1 begincodespacerange <00> <FF> endcodespacerange",
    ...blocks,
    "endcmap CMapName currentdict /CMap defineresource pop end end",
  ].join("\n");
}

/** The bfchar codes of the ToUnicode CMap of the document's simple TrueType font. */
async function simpleToUnicodeCodes(bytes: Uint8Array): Promise<string[]> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict) || object.lookup(PDFName.of("Subtype")) !== PDFName.of("TrueType")) continue;
    const stream = object.lookup(PDFName.of("ToUnicode"));
    if (!(stream instanceof PDFRawStream)) throw new Error("no ToUnicode stream");
    const cmap = decodeStreamData(stream, 1 << 20)!;
    return [...bfchars(Buffer.from(cmap).toString("latin1")).keys()].sort();
  }
  throw new Error("no TrueType font");
}

/** WinAnsiEncoding code → Unicode, from pdf-lib's table. */
function winAnsiUnicodes(): Map<number, number> {
  const out = new Map<number, number>();
  for (const cp of Encodings.WinAnsi.supportedCodePoints) {
    const { code } = Encodings.WinAnsi.encodeUnicodeCodePoint(cp);
    if (!out.has(code)) out.set(code, cp);
  }
  return out;
}

/**
 * Two pages drawing with Nimbus Sans as a simple font over its bare CFF (FontFile3 /Type1C, as
 * Acrobat and Distiller embed Type 1 fonts): one font dictionary with WinAnsiEncoding on both
 * pages, a second over the same program with /Differences on page two.
 */
async function type1cDocument(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const otf = readFileSync(NIMBUS);
  const program = unwrapCff(otf)!;
  const metrics = fontkit.create(otf) as unknown as { glyphForCodePoint(cp: number): { advanceWidth: number } };
  const unicodes = winAnsiUnicodes();
  const widths = Array.from({ length: 224 }, (_, i) => {
    const cp = unicodes.get(32 + i);
    return cp === undefined ? 0 : metrics.glyphForCodePoint(cp).advanceWidth;
  });
  const fontFile = context.register(context.flateStream(program, { Subtype: "Type1C" }));
  const descriptor = context.register(
    context.obj({
      ...{ Type: "FontDescriptor", FontName: "NimbusSans-Regular", Flags: 32, FontBBox: [-210, -300, 1032, 1000] },
      ...{ ItalicAngle: 0, Ascent: 729, Descent: -218, CapHeight: 729, StemV: 80, FontFile3: fontFile },
    }),
  );
  const simple = (encoding: PDFName | PDFDict) =>
    context.register(
      context.obj({
        ...{ Type: "Font", Subtype: "Type1", BaseFont: "NimbusSans-Regular", FirstChar: 32, LastChar: 255 },
        ...{ Widths: widths, Encoding: encoding, FontDescriptor: descriptor },
      }),
    );
  const winAnsi = simple(PDFName.of("WinAnsiEncoding"));
  // Codes 65 and 66 draw Euro and eacute here; 67 draws a glyph by a name the font lacks.
  const differences = simple(context.obj({ Type: "Encoding", Differences: [65, "Euro", "eacute", "notInFont"] }));
  const first = doc.addPage([500, 300]);
  first.node.setFontDictionary(PDFName.of("F1"), winAnsi);
  first.node.addContentStream(
    context.register(context.flateStream("BT /F1 20 Tf 30 220 Td (Type 1C: caf\\351 \\200 fjord) Tj ET")),
  );
  const second = doc.addPage([500, 300]);
  second.node.setFontDictionary(PDFName.of("F1"), winAnsi);
  second.node.setFontDictionary(PDFName.of("F2"), differences);
  const text = "BT /F1 20 Tf 30 220 Td [(Page two) -300 (Quixotic)] TJ /F2 20 Tf 0 -40 Td (ABC) Tj ET";
  second.node.addContentStream(context.register(context.flateStream(text)));
  return doc.save({ useObjectStreams: false });
}

/** A Type 1 program's parts as a FontFile gives them: clear text, eexec section, the zeros after. */
function type1Lengths(program: Uint8Array): { Length1: number; Length2: number; Length3: number } {
  const text = Buffer.from(program).toString("latin1");
  let clear = text.indexOf("eexec") + 5;
  while (/\s/.test(text[clear]!)) clear++;
  let trailer = text.lastIndexOf("cleartomark");
  while (/[0\s]/.test(text[trailer - 1]!)) trailer--;
  return { Length1: clear, Length2: trailer - clear, Length3: program.length - trailer };
}

/**
 * Two pages drawing with Nimbus Sans embedded whole as a Type 1 program (FontFile): one font
 * dictionary on both pages through the font's built-in encoding, a second over the same
 * program with /Differences (accented letters, Euro) on page two. Widths from the font's AFM.
 */
async function type1Document(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const program = readFileSync(NIMBUS_T1);
  const widthOf = new Map<string, number>();
  const widthAt = new Map<number, number>();
  for (const match of readFileSync(NIMBUS_AFM, "latin1").matchAll(/^C (-?\d+) ; WX (\d+) ; N (\S+)/gm)) {
    widthOf.set(match[3]!, Number(match[2]));
    if (Number(match[1]) >= 0) widthAt.set(Number(match[1]), Number(match[2]));
  }
  const fontFile = context.register(context.flateStream(program, type1Lengths(program)));
  const descriptor = context.register(
    context.obj({
      ...{ Type: "FontDescriptor", FontName: "NimbusSans-Regular", Flags: 32, FontBBox: [-210, -300, 1032, 1000] },
      ...{ ItalicAngle: 0, Ascent: 729, Descent: -218, CapHeight: 729, StemV: 80, FontFile: fontFile },
    }),
  );
  const font = (widths: number[], encoding?: PDFDict) =>
    context.register(
      context.obj({
        ...{
          Type: "Font",
          Subtype: "Type1",
          BaseFont: "NimbusSans-Regular",
          FirstChar: 32,
          LastChar: 32 + widths.length - 1,
        },
        ...{ Widths: widths, FontDescriptor: descriptor, ...(encoding ? { Encoding: encoding } : {}) },
      }),
    );
  const builtIn = font(Array.from({ length: 95 }, (_, i) => widthAt.get(32 + i) ?? 0));
  const accented = ["Aacute", "Euro", "Lslash", "ccedilla", "fi"];
  const differences = font(
    [32, 33, 34, 35, 36, 37].map((code) => (code === 32 ? widthAt.get(32)! : widthOf.get(accented[code - 33]!)!)),
    context.obj({ Type: "Encoding", Differences: [33, ...accented] }),
  );
  const first = doc.addPage([500, 300]);
  first.node.setFontDictionary(PDFName.of("F1"), builtIn);
  const line = "BT /F1 20 Tf 30 220 Td (Type 1 program: Sphinx of black quartz) Tj 0 -30 Td (judge my vow!) Tj ET";
  first.node.addContentStream(context.register(context.flateStream(line)));
  const second = doc.addPage([500, 300]);
  second.node.setFontDictionary(PDFName.of("F1"), builtIn);
  second.node.setFontDictionary(PDFName.of("F2"), differences);
  const text = 'BT /F1 20 Tf 30 220 Td [(Page two) -300 (0123456789)] TJ /F2 24 Tf 0 -40 Td (!"#$%) Tj ET';
  second.node.addContentStream(context.register(context.flateStream(text)));
  return doc.save({ useObjectStreams: false });
}

/** Type 1 charstring bytes: numbers, operators by name (escape operators as 12 x). */
function type1CharString(...items: (number | string)[]): Uint8Array {
  const ops: Record<string, number[]> = {
    hstem: [1],
    vstem: [3],
    rlineto: [5],
    rrcurveto: [8],
    closepath: [9],
    callsubr: [10],
    return: [11],
    hsbw: [13],
    endchar: [14],
    rmoveto: [21],
    seac: [12, 6],
    div: [12, 12],
    callothersubr: [12, 16],
    pop: [12, 17],
    setcurrentpoint: [12, 33],
  };
  const out: number[] = [];
  for (const item of items) {
    if (typeof item === "string") out.push(...ops[item]!);
    else if (item >= -107 && item <= 107) out.push(item + 139);
    else if (item >= 108 && item <= 1131) out.push(((item - 108) >> 8) + 247, (item - 108) & 0xff);
    else if (item <= -108 && item >= -1131) out.push(((-item - 108) >> 8) + 251, (-item - 108) & 0xff);
    else out.push(255, (item >>> 24) & 0xff, (item >>> 16) & 0xff, (item >>> 8) & 0xff, item & 0xff);
  }
  return Uint8Array.from(out);
}

/** A Type 2 charstring as text: numbers (16.16 ones as decimals) and operators by number, hintmask with its byte. */
function type2Text(code: Uint8Array, stems: number): string {
  const out: string[] = [];
  const u8 = (k: number) => code[k]!;
  for (let i = 0; i < code.length;) {
    const v = u8(i);
    let size = 1;
    let token: string;
    if (v >= 32 && v <= 246) token = String(v - 139);
    else if (v >= 247 && v <= 254) {
      const magnitude = ((v - (v >= 251 ? 251 : 247)) << 8) + u8(i + 1) + 108;
      token = String(v >= 251 ? -magnitude : magnitude);
      size = 2;
    } else if (v === 28) {
      token = String((((u8(i + 1) << 8) | u8(i + 2)) << 16) >> 16);
      size = 3;
    } else if (v === 255) {
      token = String(new DataView(code.buffer, code.byteOffset + i + 1, 4).getInt32(0) / 65536);
      size = 5;
    } else if (v === 12) {
      token = `op12.${u8(i + 1)}`;
      size = 2;
    } else if (v === 19) {
      size = 1 + Math.ceil(stems / 8);
      const bits = [...code.subarray(i + 1, i + size)].map((b) => b.toString(2).padStart(8, "0"));
      token = `hintmask:${bits.join("")}`;
    } else token = `op${v}`;
    out.push(token);
    i += size;
  }
  return out.join(" ");
}

describe.skipIf(!HAVE_FONTS || !POPPLER)("font subsetting", () => {
  it.each(COMPRESSION_PROFILES)(
    "%s: a font on two pages is subset, the form field's font stays whole, text and pixels unchanged",
    async (profile) => {
      const input = await twoPagesAndAField();
      const { output, report } = await compress(input, profile);
      expect(report.fonts.subset).toBe(1);
      // What is left is mostly the form field's font, whole.
      expect(output.length).toBeLessThan(input.length / 2);
      const before = await fontsOf(input);
      const after = await fontsOf(output);
      expect(after.get("DejaVuSans")!.baseFont).toMatch(/^[A-Z]{6}\+DejaVuSans-\d+$/);
      expect(after.get("DejaVuSans")!.programBytes).toBeLessThan(before.get("DejaVuSans")!.programBytes / 10);
      expect(after.get("DejaVuSerif")).toEqual(before.get("DejaVuSerif"));
      expectSameLook(input, output);
      // The field can still be filled with any text the font has.
      const doc = await PDFDocument.load(output);
      const field = doc.getForm().getTextField("name");
      expect(field.getText()).toBe("Ada");
    },
    60_000,
  );

  it("the font a field's default appearance names stays whole without AcroForm /DR too (found in its appearance)", async () => {
    const input = await twoPagesAndAField({ formResources: false });
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect((await fontsOf(output)).get("DejaVuSerif")).toEqual((await fontsOf(input)).get("DejaVuSerif"));
    expectSameLook(input, output);
  }, 60_000);

  it("a Type 3 font keeps working, and the font its glyphs draw keeps their glyphs", async () => {
    const input = await type3Document();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expectSameLook(input, output);
  }, 60_000);

  it("a CID font with Identity-H keeps its CIDToGIDMap; W and ToUnicode keep the drawn CIDs' entries", async () => {
    const input = await twoPagesAndAField();
    const { output } = await compress(input, "lossless");
    const read = async (bytes: Uint8Array) => {
      const doc = await PDFDocument.load(bytes, { updateMetadata: false });
      for (const [, object] of doc.context.enumerateIndirectObjects()) {
        if (!(object instanceof PDFDict) || object.lookup(PDFName.of("Subtype")) !== PDFName.of("Type0")) continue;
        const base = object.lookup(PDFName.of("BaseFont"), PDFName).decodeText();
        if (!/DejaVuSans-\d+$/.test(base)) continue;
        expect(object.lookup(PDFName.of("Encoding"))).toBe(PDFName.of("Identity-H"));
        const cid = object.lookup(PDFName.of("DescendantFonts"), PDFArray).lookup(0, PDFDict);
        const stream = object.lookup(PDFName.of("ToUnicode"));
        if (!(stream instanceof PDFRawStream)) throw new Error("no ToUnicode stream");
        const cmap = Buffer.from(decodeStreamData(stream, 1 << 24)!).toString("latin1");
        return {
          map: String(cid.lookup(PDFName.of("CIDToGIDMap"))),
          widths: expandWidths(cid.lookup(PDFName.of("W"), PDFArray)),
          toUnicode: bfchars(cmap),
        };
      }
      throw new Error("no DejaVuSans Type 0 font");
    };
    const before = await read(input);
    const after = await read(output);
    expect(after.map).toBe(before.map);
    // Some 40 distinct characters are drawn with the font, of its 6,000 glyphs.
    expect(after.widths.size).toBeGreaterThan(30);
    expect(after.widths.size).toBeLessThan(before.widths.size / 50);
    for (const [cid, width] of after.widths) expect(before.widths.get(cid), `width of CID ${cid}`).toBe(width);
    expect(after.toUnicode.size).toBe(after.widths.size);
    for (const [code, text] of after.toUnicode) expect(before.toUnicode.get(code), `ToUnicode of ${code}`).toBe(text);
  }, 60_000);

  it("a simple TrueType font with WinAnsiEncoding is subset through its cmap", async () => {
    const input = await simpleTrueTypeDocument();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const after = await fontsOf(output);
    expect(after.get("DejaVuSansMono")!.baseFont).toMatch(/^[A-Z]{6}\+DejaVuSansMono$/);
    expect(after.get("DejaVuSansMono")!.programBytes).toBeLessThan(readFileSync(MONO).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a simple font over a bare CFF (FontFile3 /Type1C) on two pages, by WinAnsi and Differences, is subset", async () => {
    const input = await type1cDocument();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect(report.fonts.bytesAfter).toBeLessThan(report.fonts.bytesBefore / 5);
    const doc = await PDFDocument.load(output, { updateMetadata: false });
    const fonts = doc.context
      .enumerateIndirectObjects()
      .map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.has(PDFName.of("Widths")));
    expect(fonts).toHaveLength(2);
    const program = fonts[0]!.lookup(PDFName.of("FontDescriptor"), PDFDict).lookup(PDFName.of("FontFile3"));
    if (!(program instanceof PDFRawStream)) throw new Error("no FontFile3");
    expect(program.dict.lookup(PDFName.of("Subtype"))).toBe(PDFName.of("Type1C"));
    const cff = readNamedCff(decodeStreamData(program, 1 << 24)!)!;
    const whole = readNamedCff(unwrapCff(readFileSync(NIMBUS))!)!;
    // The glyphs drawn keep their ids and names (the others are emptied, or cut off the end).
    for (const name of ["T", "y", "eacute", "Euro", "j", "Q", "B", "C"]) {
      expect(cff.glyphOfName.get(name), name).toBe(whole.glyphOfName.get(name));
    }
    expect(cff.glyphs).toBeLessThanOrEqual(whole.glyphs);
    for (const font of fonts) expect(font.lookup(PDFName.of("BaseFont"), PDFName).decodeText()).toMatch(/^[A-Z]{6}\+/);
    expectSameLook(input, output);
  }, 60_000);

  it("a Type 1 font (FontFile) on two pages becomes CFF (FontFile3 /Type1C), then is subset", async () => {
    const input = await type1Document();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.converted).toBe(1);
    expect(report.fonts.subset).toBe(1);
    const doc = await PDFDocument.load(output, { updateMetadata: false });
    const descriptors = doc.context
      .enumerateIndirectObjects()
      .map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.has(PDFName.of("FontName")));
    expect(descriptors).toHaveLength(1);
    const descriptor = descriptors[0]!;
    expect(descriptor.has(PDFName.of("FontFile"))).toBe(false);
    const program = descriptor.lookup(PDFName.of("FontFile3"));
    if (!(program instanceof PDFRawStream)) throw new Error("no FontFile3");
    expect(program.dict.lookup(PDFName.of("Subtype"))).toBe(PDFName.of("Type1C"));
    expect(program.dict.has(PDFName.of("Length1"))).toBe(false);
    // The whole font is some 120 KB as Type 1; its subset in CFF a few KB.
    expect(program.contents.length).toBeLessThan(readFileSync(NIMBUS_T1).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("every glyph of a Type 1 font converts to CFF with its name and encoding", () => {
    const program = new Uint8Array(readFileSync(NIMBUS_T1));
    const type1 = readType1(program)!;
    const cff = convertType1(program)!;
    const named = readNamedCff(cff)!;
    expect(named.glyphs).toBe(type1.charStrings.size);
    for (const name of type1.charStrings.keys()) expect(named.glyphOfName.has(name), name).toBe(true);
    // The font's encoding is StandardEncoding: its codes reach the same names.
    expect(type1.encoding).toBe("standard");
    for (const [code, name] of STANDARD_ENCODING) expect(named.glyphOfCode.get(code)).toBe(named.glyphOfName.get(name));
    // The same program with its eexec section in hex (as PFA files and some producers store it).
    const { Length1, Length2 } = type1Lengths(program);
    const hex = Buffer.from(program.subarray(Length1, Length1 + Length2))
      .toString("hex")
      .replace(/(.{64})/g, "$1\n");
    const pfa = Buffer.concat([
      program.subarray(0, Length1),
      Buffer.from(hex, "latin1"),
      program.subarray(Length1 + Length2),
    ]);
    expect(Buffer.from(convertType1(new Uint8Array(pfa))!).equals(Buffer.from(cff))).toBe(true);
    // Smaller, and unlike the encrypted Type 1 program it compresses: under half the size stored.
    expect(cff.length).toBeLessThan(program.length);
    expect(deflateSync(cff).length).toBeLessThan(deflateSync(program).length / 2);
  });
  it("a simple TrueType font with MacRomanEncoding is subset through its cmap; its ToUnicode keeps the drawn codes", async () => {
    const input = await simpleTrueTypeDocument("DejaVuSansMono", "MacRomanEncoding");
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect(await simpleToUnicodeCodes(input)).toHaveLength(97);
    // "Monospaced: café • 100", "Kerned", "array": the codes drawn, and nothing else.
    const drawn = new Set(Buffer.from("Monospaced: caf\x8e \xa5 100Kernedarray", "latin1"));
    expect(await simpleToUnicodeCodes(output)).toEqual(
      [...drawn].map((c) => c.toString(16).toUpperCase().padStart(2, "0")).sort(),
    );
    expect((await fontsOf(output)).get("DejaVuSansMono")!.programBytes).toBeLessThan(readFileSync(MONO).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a simple TrueType font tagged as subset but embedded whole is subset again", async () => {
    const input = await simpleTrueTypeDocument("QWERTY+DejaVuSansMono");
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const after = (await fontsOf(output)).get("DejaVuSansMono")!;
    expect(after.baseFont).toMatch(/^[A-Z]{6}\+DejaVuSansMono$/);
    expect(after.baseFont).not.toBe("QWERTY+DejaVuSansMono");
    expect(after.programBytes).toBeLessThan(readFileSync(MONO).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a document of more than 20,000 objects whose fonts all carry a subset tag is not walked", async () => {
    const doc = await PDFDocument.load(await simpleTrueTypeDocument("QWERTY+DejaVuSansMono"));
    const { context } = doc;
    const filler = Array.from({ length: 20_001 }, (_, i) => context.register(context.obj({ Filler: i })));
    doc.catalog.set(PDFName.of("Filler"), context.obj(filler));
    const { output, report } = await compress(await doc.save({ useObjectStreams: true }), "lossless");
    expect(report.fonts.subset).toBe(0);
    expect((await fontsOf(output)).get("DejaVuSansMono")).toEqual({
      baseFont: "QWERTY+DejaVuSansMono",
      programBytes: readFileSync(MONO).length,
    });
  }, 120_000);

  it("a CID font with CFF outlines (FontFile3 /OpenType, Identity-H) is subset", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.registerFontkit(fontkit);
    const nimbus = await doc.embedFont(readFileSync(NIMBUS), { subset: false });
    const page = doc.addPage([500, 300]);
    page.drawText("CFF outlines: Sphinx of black quartz", { x: 30, y: 220, size: 20, font: nimbus });
    page.drawText("judge my vow 1234567890", { x: 30, y: 180, size: 20, font: nimbus });
    const input = await doc.save({ useObjectStreams: false });
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect(report.fonts.bytesAfter).toBeLessThan(report.fonts.bytesBefore / 5);
    const loaded = await PDFDocument.load(output);
    const names = loaded.context
      .enumerateIndirectObjects()
      .map(([, object]) => (object instanceof PDFDict ? object.lookup(PDFName.of("BaseFont")) : undefined))
      .filter((name): name is PDFName => name instanceof PDFName)
      .map((name) => name.decodeText());
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/^[A-Z]{6}\+NimbusSans-Regular/);
    expectSameLook(input, output);
  }, 60_000);

  it("a form without resources that nothing draws, and that shows no text, does not stop subsetting", async () => {
    const doc = await PDFDocument.load(await twoPagesAndAField());
    const { context } = doc;
    const orphan = context.register(
      context.flateStream("0 0 1 1 re f", { Type: "XObject", Subtype: "Form", BBox: [0, 0, 1, 1] }),
    );
    doc.catalog.set(PDFName.of("Orphan"), orphan);
    const { report } = await compress(await doc.save({ useObjectStreams: false }), "lossless");
    expect(report.fonts.subset).toBe(1);
  }, 60_000);

  it("a font whose use cannot be read completely stays whole", async () => {
    // A Form XObject without resources that nothing draws could show any glyph of any font.
    const doc = await PDFDocument.load(await twoPagesAndAField());
    const { context } = doc;
    const orphan = context.register(
      context.flateStream("BT /F1 12 Tf (anything) Tj ET", { Type: "XObject", Subtype: "Form", BBox: [0, 0, 1, 1] }),
    );
    doc.catalog.set(PDFName.of("Orphan"), orphan);
    const input = await doc.save({ useObjectStreams: false });
    const { report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(0);
  }, 60_000);

  it("runs in the warm engine processes (the stripped JavaScript copy)", async () => {
    const input = await twoPagesAndAField();
    const inputPath = write(input);
    const outputPath = path.join(poppler.dir, "runner-out.pdf");
    const runner = createRunner({ concurrency: 1, queueLimit: 1, timeoutMs: 60_000, memoryMb: 512 });
    try {
      const result = await runner.run({ kind: "compress", inputPath, outputPath, profile: "lossless" });
      expect(result.ok).toBe(true);
    } finally {
      await runner.close();
    }
    const output = readFileSync(outputPath);
    expect((await fontsOf(output)).get("DejaVuSans")!.baseFont).toMatch(/^[A-Z]{6}\+/);
    expectSameLook(input, output);
  }, 60_000);
});

/** Every BaseFont and FontName of the document with a subset tag, as producers that subset write them. */
function tagEveryFont(doc: PDFDocument): void {
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue;
    for (const key of [PDFName.of("BaseFont"), PDFName.of("FontName")]) {
      const name = object.lookup(key);
      if (name instanceof PDFName) object.set(key, PDFName.of(`QWERTY+${name.decodeText()}`));
    }
  }
}

/** The one CIDFont of a document, its descriptor and its program (under whichever key). */
function cidFontOf(doc: PDFDocument): { cidFont: PDFDict; descriptor: PDFDict; program: PDFRawStream; key: string } {
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue;
    const subtype = object.lookup(PDFName.of("Subtype"));
    if (subtype !== PDFName.of("CIDFontType0") && subtype !== PDFName.of("CIDFontType2")) continue;
    const descriptor = object.lookup(PDFName.of("FontDescriptor"), PDFDict);
    for (const key of ["FontFile2", "FontFile3"]) {
      const program = descriptor.lookup(PDFName.of(key));
      if (program instanceof PDFRawStream) return { cidFont: object, descriptor, program, key };
    }
  }
  throw new Error("no CIDFont with a program");
}

/** One page of text in `file` (a CID font, Identity-H, embedded whole by pdf-lib), then `change`d. */
async function cidFontDocument(file: string, change: (doc: PDFDocument) => void): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(readFileSync(file), { subset: false });
  const page = doc.addPage([500, 200]);
  page.drawText("Producer subset: Sphinx of black quartz", { x: 20, y: 150, size: 18, font });
  page.drawText("judge my vow 0123456789 fi", { x: 20, y: 110, size: 18, font });
  await doc.flush();
  change(doc);
  return doc.save({ useObjectStreams: false });
}

/** How much of the first page is not white (pdftoppm at 100 dpi): the text was drawn. */
function inkOf(bytes: Uint8Array): number {
  const page = pixelsOf(bytes)[0]!;
  // A binary PPM: three header lines, then RGB bytes.
  let at = 0;
  for (let lines = 0; lines < 3; at++) if (page[at] === 0x0a) lines++;
  let ink = 0;
  for (let i = at; i < page.length; i++) if (page[i]! < 128) ink++;
  return ink;
}

/** The decoded program of the document's one CIDFont. */
async function cidProgramOf(bytes: Uint8Array): Promise<Uint8Array> {
  return decodeStreamData(cidFontOf(await PDFDocument.load(bytes, { updateMetadata: false })).program, 64 << 20)!;
}

describe.skipIf(!HAVE_FONTS || !POPPLER)("fonts the producer already subset, and programs of another flavour", () => {
  it("a tagged CID TrueType font that still carries unused glyphs, GSUB and GPOS is subset again", async () => {
    const input = await cidFontDocument(SANS, tagEveryFont);
    const before = readSfnt(await cidProgramOf(input))!;
    for (const table of ["GSUB", "GPOS", "cmap", "name"]) expect(before.tables.has(table), table).toBe(true);
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    // Some 40 glyphs drawn of 6,000: what is left is mostly loca and hmtx, kept for every glyph id.
    expect(program.length).toBeLessThan(readFileSync(SANS).length / 10);
    const after = readSfnt(program)!;
    // Glyph ids are kept; what only text layout, character codes or names use is gone.
    expect(after.numGlyphs).toBeLessThanOrEqual(before.numGlyphs);
    for (const table of ["GSUB", "GPOS", "GDEF", "cmap", "name", "post", "OS/2"]) {
      expect(after.tables.has(table), table).toBe(false);
    }
    for (const table of ["glyf", "loca", "head", "hhea", "hmtx", "maxp"])
      expect(after.tables.has(table), table).toBe(true);
    expect(inkOf(input)).toBeGreaterThan(1000);
    expectSameLook(input, output);
  }, 60_000);

  it("a tagged CID font with CFF outlines (FontFile3 /OpenType) is subset again", async () => {
    const input = await cidFontDocument(NIMBUS, tagEveryFont);
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    expect(flavourOf(program)).toBe("opentype-cff");
    expect(program.length).toBeLessThan(readFileSync(NIMBUS).length / 5);
    expectSameLook(input, output);
  }, 60_000);

  // poppler: "Mismatch between font type and embedded font file"; readers go by the bytes.
  it("a CIDFontType2 whose FontFile2 holds an OpenType font with CFF outlines is subset as such", async () => {
    const input = await cidFontDocument(NIMBUS, (doc) => {
      const { cidFont, descriptor, program } = cidFontOf(doc);
      const bytes = decodeStreamData(program, 64 << 20)!;
      descriptor.delete(PDFName.of("FontFile3"));
      descriptor.set(PDFName.of("FontFile2"), doc.context.register(doc.context.flateStream(bytes)));
      cidFont.set(PDFName.of("Subtype"), PDFName.of("CIDFontType2"));
      cidFont.set(PDFName.of("CIDToGIDMap"), PDFName.of("Identity"));
    });
    expect(flavourOf(await cidProgramOf(input))).toBe("opentype-cff");
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    expect(flavourOf(program)).toBe("opentype-cff");
    expect(program.length).toBeLessThan(readFileSync(NIMBUS).length / 5);
    expect(inkOf(input)).toBeGreaterThan(1000);
    expectSameLook(input, output);
  }, 60_000);

  it("a CIDFontType2 whose FontFile2 holds a bare CFF is subset as a CFF and stays bare", async () => {
    const input = await cidFontDocument(NIMBUS, (doc) => {
      const { cidFont, descriptor, program } = cidFontOf(doc);
      const cff = unwrapCff(decodeStreamData(program, 64 << 20)!)!;
      descriptor.delete(PDFName.of("FontFile3"));
      descriptor.set(PDFName.of("FontFile2"), doc.context.register(doc.context.flateStream(cff)));
      cidFont.set(PDFName.of("Subtype"), PDFName.of("CIDFontType2"));
    });
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    expect(flavourOf(program)).toBe("cff");
    // Glyph ids are kept (those past the last one drawn are left out).
    expect(readCff(program)!.glyphs).toBeLessThanOrEqual(readCff(await cidProgramOf(input))!.glyphs);
    expect(program.length).toBeLessThan(unwrapCff(new Uint8Array(readFileSync(NIMBUS)))!.length / 5);
    expect(inkOf(input)).toBeGreaterThan(1000);
    expectSameLook(input, output);
  }, 60_000);
});

describe("Type 1 charstrings to Type 2", () => {
  const standard = STANDARD_ENCODING;

  it("keeps the points, moves vstems by the side bearing, and turns hint replacement into hintmask", () => {
    // Subroutine 1 holds the replacement hints; OtherSubr 3 announces it (Type 1 spec, 8.1).
    const subrs = [new Uint8Array(0), type1CharString(200, 30, "hstem", "return")];
    const flex = [
      [10, 0],
      [5, 5],
      [5, 0],
      [5, 0],
      [5, 0],
      [5, -5],
      [5, 0],
    ].flatMap(([dx, dy]) => [dx!, dy!, "rmoveto", 0, 2, "callothersubr"]);
    const glyph = type1CharString(
      ...[50, 500, "hsbw", 0, 20, "hstem", 10, 30, "vstem", 0, 0, "rmoveto", 100, 0, "rlineto"],
      ...[1, 1, 3, "callothersubr", "pop", "callsubr", 0, 100, "rlineto", "closepath", 10, 0, "rlineto"],
      ...[7, 2, "div", 0, "rlineto", 0, 1, "callothersubr", ...flex, 50, 208.5, 100, 3, 0, "callothersubr"],
      ...["pop", "pop", "setcurrentpoint", "endchar"],
    );
    const outline = interpretType1(glyph, { charStrings: new Map(), subrs, standard })!;
    expect(outline.width).toBe(500);
    expect(outline.hstems).toEqual([
      [0, 20],
      [200, 30],
    ]);
    expect(outline.vstems).toEqual([[60, 30]]);
    expect(outline.ops.map((op) => `${op.kind} ${op.points.join(" ")}`)).toEqual([
      "move 50,0",
      "line 150,0",
      "line 150,100",
      // After closepath a line starts a new subpath where the last one ended, as FreeType draws it.
      "move 150,100",
      "line 160,100",
      "line 163.5,100",
      "flex 178.5,105 183.5,105 188.5,105 193.5,105 198.5,100 203.5,100",
    ]);
    expect(type2Text(writeType2(outline), 3)).toBe(
      [
        "500 0 20 180 30 op18 60 30 op23 hintmask:10100000 50 0 op21 100 0 op5",
        "hintmask:01000000 0 100 op5 0 0 op21 10 0 op5 3.5 0 op5",
        "15 5 5 0 5 0 5 0 5 -5 5 0 50 op12.35 op14",
      ].join(" "),
    );
  });

  it("draws a seac accent into the glyph, placed by the composite's side bearing + adx - asb", () => {
    const charStrings = new Map([
      ["A", type1CharString(10, 600, "hsbw", 0, 0, "rmoveto", 500, 0, "rlineto", "endchar")],
      ["acute", type1CharString(30, 300, "hsbw", 0, 600, "rmoveto", 100, 100, "rlineto", "endchar")],
    ]);
    // asb 30, adx 200, ady 100: the accent's origin at 20 + 200 - 30.
    const composite = type1CharString(20, 600, "hsbw", 30, 200, 100, 65, 194, "seac");
    const outline = interpretType1(composite, { charStrings, subrs: [], standard })!;
    expect(outline.width).toBe(600);
    expect(outline.ops.map((op) => `${op.kind} ${op.points.join(" ")}`)).toEqual([
      "move 10,0",
      "line 510,0",
      "move 220,700",
      "line 320,800",
    ]);
    // A component missing, a component that is itself a seac, and subroutines calling each other without end.
    const glyphs = { charStrings, subrs: [], standard };
    expect(interpretType1(type1CharString(0, 600, "hsbw", 0, 0, 0, 65, 99, "seac"), glyphs)).toBeUndefined();
    charStrings.set("A", type1CharString(0, 600, "hsbw", 0, 0, 0, 65, 194, "seac"));
    expect(interpretType1(type1CharString(0, 600, "hsbw", 0, 0, 0, 65, 194, "seac"), glyphs)).toBeUndefined();
    const loop = type1CharString(0, "callsubr", 0, "callsubr", "return");
    const looping = { charStrings, subrs: [loop], standard };
    expect(interpretType1(type1CharString(0, 600, "hsbw", 0, "callsubr", "endchar"), looping)).toBeUndefined();
  });

  it("decrypts eexec and charstrings (Type 1 spec, 7.1)", () => {
    // Encrypting is the same recurrence with the cipher byte fed back.
    const encrypt = (plain: Uint8Array, key: number) => {
      const out = new Uint8Array(plain.length);
      let r = key;
      plain.forEach((p, i) => {
        const c = p ^ (r >> 8);
        out[i] = c;
        r = ((c + r) * 52845 + 22719) & 0xffff;
      });
      return out;
    };
    const plain = Uint8Array.from([1, 2, 3, 4, ...new TextEncoder().encode("dup /Private 8 dict")]);
    expect(Buffer.from(decrypt(encrypt(plain, 55665), 55665, 4)).toString("latin1")).toBe("dup /Private 8 dict");
  });
});

describe("code tables trimmed to the drawn codes", () => {
  it("ToUnicode: bfchar, both bfrange forms and a carry that is refused", () => {
    const cmap = [
      "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
      "1 begincodespacerange <0000> <FFFF> endcodespacerange",
      "2 beginbfchar <0003> <0020> <0010> <D83DDE00> endbfchar",
      "2 beginbfrange <0020> <0030> <0041> <0040> <0042> [<0061> <00620063> <0064>] endbfrange",
      "endcmap CMapName currentdict /CMap defineresource pop end end",
    ].join("\n");
    const trimmed = trimToUnicode(new TextEncoder().encode(cmap), new Set([3, 0x10, 0x22, 0x41, 0x999]), 2)!;
    expect(bfchars(Buffer.from(trimmed).toString("latin1"))).toEqual(
      new Map([
        ["0003", "0020"],
        ["0010", "D83DDE00"],
        ["0022", "0043"],
        ["0041", "00620063"],
      ]),
    );
    const carry = "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfrange <00> <20> <00FF> endbfrange";
    expect(trimToUnicode(new TextEncoder().encode(carry), new Set([1]), 1)).toBeUndefined();
    expect(trimToUnicode(new TextEncoder().encode(`/Other usecmap ${cmap}`), new Set([3]), 2)).toBeUndefined();
  });

  it("W: both forms, the drawn CIDs' widths kept in runs", async () => {
    const { context } = await PDFDocument.create();
    const widths = context.obj([1, [500, 600, 700], 10, 20, 333, 30, [250]]);
    const trimmed = trimWidths(context, widths, new Set([2, 3, 12, 13, 30, 99]))!;
    expect(expandWidths(trimmed)).toEqual(
      new Map([
        [2, 600],
        [3, 700],
        [12, 333],
        [13, 333],
        [30, 250],
      ]),
    );
    expect(trimmed.size()).toBe(6);
  });
});

const CORPUS = corpusDir();
if (!CORPUS)
  console.log("engine-fonts.test.ts: corpus cases skipped, the PDF corpus is not there (set PDF_CORPUS_DIR).");

describe.skipIf(!CORPUS || !POPPLER)("font subsetting on the corpus", () => {
  it.each([
    // A DejaVuSans CIDFontType2 (Identity-H) embedded whole beside unembedded fonts.
    ["text_mixedfonts_truetype.pdf", 0.125],
    // A bare CID-keyed CFF (FontFile3 /CIDFontType0C, Identity-H) of 1.9 MB embedded whole.
    ["text_cjk_cidfont_issue6286.pdf", 0.05],
  ])(
    "%s: the whole font is subset, text and pixels unchanged",
    async (name, ratio) => {
      const input = readFileSync(path.join(CORPUS!, "files", name));
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.subset).toBe(1);
      expect(output.length).toBeLessThan(input.length * ratio);
      expectSameLook(input, output);
    },
    60_000,
  );

  it.each([
    // Six subset Type 1 fonts (pdfTeX): gs /ebook, which converts them to CFF too, writes 34,672 bytes.
    ["text_multicolumn_type1.pdf", 6, 34_672],
    // Fifteen of them over 14 pages beside images (kept as they are by lossless): gs /ebook writes 770,963 bytes.
    ["text_tracemonkey_14p_type1.pdf", 15, 770_963],
  ])(
    "%s: the Type 1 fonts become CFF, text and pixels unchanged",
    async (name, fonts, bound) => {
      const input = readFileSync(path.join(CORPUS!, "files", name));
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.converted).toBe(fonts);
      expect(output.length).toBeLessThan(bound);
      expectSameLook(input, output);
    },
    120_000,
  );

  it.each([
    // Word: TrueType (WinAnsi) and CID TrueType programs tagged as subset that still hold 4,685
    // glyph slots, names in many languages; gs /ebook writes 92,992 bytes.
    ["cv_word_tagged_1p.pdf", 5, 92_992],
    // Word for Mac through Quartz: tagged TrueType fonts drawn through a Mac (1,0) cmap alone,
    // three of them MacRomanEncoding; the input is 106,704 bytes.
    ["cv_word_mac_quartz.pdf", 6, 60_000],
    // Google Docs: tagged CID TrueType programs with GSUB/GPOS/GDEF; gs /ebook writes 25,685 bytes.
    ["cv_gdocs_coverletter.pdf", 5, 25_685],
    // Scribus: four whole programs, each shared by six font dictionaries of which some are never
    // drawn; with the photo kept lossless, 366,190 bytes here (the input is 760,831).
    ["cv_scribus_wholefonts_photo.pdf", 5, 400_000],
  ])(
    "%s: programs the producer tagged as subset are subset again, text and pixels unchanged",
    async (name, fonts, bound) => {
      const input = readFileSync(path.join(CORPUS!, "files", name));
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.subset).toBe(fonts);
      expect(output.length).toBeLessThan(bound);
      expectSameLook(input, output);
    },
    120_000,
  );

  it.each([
    // Seven simple fonts over bare CFF (FontFile3 /Type1C) embedded whole, Symbol and ZapfDingbats
    // with their built-in encodings among them; its publisher signed it (the signature, whose
    // removal takes its seal off page 1, is removed first, so that the pages are compared as they are).
    ["text_federal_register_15p.pdf", 7],
    // Nine of them (WinAnsi, and /Differences over the built-in encoding) beside a bare CID-keyed CFF.
    ["text_redbook_18p_cff.pdf", 10],
  ])(
    "%s: the simple fonts over bare CFF are subset, text and pixels unchanged",
    async (name, fonts) => {
      const signed = await PDFDocument.load(readFileSync(path.join(CORPUS!, "files", name)), { updateMetadata: false });
      handleSignatures(signed.context, "remove");
      const input = await signed.save({ useObjectStreams: false });
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.subset).toBeGreaterThanOrEqual(fonts);
      expect(report.fonts.bytesAfter).toBeLessThan(report.fonts.bytesBefore / 3);
      expectSameLook(input, output);
    },
    120_000,
  );
});
