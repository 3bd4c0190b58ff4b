// Documents for the font tests, made with DejaVu fonts embedded whole by pdf-lib (fontkit), by hand for
// simple TrueType, Type 1 and Type 3 fonts, and what the tests read back of them (widths, ToUnicode
// maps, the programs). The font tests skip when the fonts or Poppler are missing.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import fontkit from "@pdf-lib/fontkit";
import { afterAll, expect } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, StandardFonts } from "@cantoo/pdf-lib";
import { Encodings } from "@cantoo/pdf-lib/standard-fonts";
import type { PDFFont, PDFRef, PDFNumber } from "@cantoo/pdf-lib";
import { compressPdf } from "../../../src/pdf/index.ts";
import type { CompressionProfile, CompressionReport } from "../../../src/pdf/index.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { unwrapCff } from "../../../src/pdf/fonts/cff.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";

export const FONTS = "/usr/share/fonts/truetype/dejavu";
export const SANS = path.join(FONTS, "DejaVuSans.ttf");
export const SERIF = path.join(FONTS, "DejaVuSerif.ttf");
export const MONO = path.join(FONTS, "DejaVuSansMono.ttf");
/** A CFF-flavoured OpenType font (fonts-urw-base35, which ghostscript installs). */
export const NIMBUS = "/usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf";
/** The same font as a Type 1 program (binary eexec), with its metrics. */
export const NIMBUS_T1 = "/usr/share/fonts/type1/urw-base35/NimbusSans-Regular.t1";
export const NIMBUS_AFM = "/usr/share/fonts/type1/urw-base35/NimbusSans-Regular.afm";
export const HAVE_FONTS = [SANS, SERIF, MONO, NIMBUS, NIMBUS_T1, NIMBUS_AFM].every((file) => existsSync(file));

export const POPPLER = hasPoppler();
if (!HAVE_FONTS)
  console.log(
    `test/pdf/fonts: skipped, the DejaVu fonts (${FONTS}) or ${NIMBUS} are missing (apt-get install fonts-dejavu-core fonts-urw-base35).`,
  );
if (!POPPLER) console.log("test/pdf/fonts: skipped, poppler-utils (pdftotext, pdftoppm) is not installed.");

export const poppler = popplerScratch("engine-fonts");
afterAll(() => poppler.remove());
export const { write, pixelsOf, expectSameLook } = poppler;

export async function compress(input: Uint8Array, profile: CompressionProfile) {
  let report: CompressionReport | undefined;
  const { output } = await compressPdf(input, profile, (r) => (report = r));
  return { output, report: report! };
}

/** A W array as CID → width. */
export function expandWidths(widths: PDFArray): Map<number, number> {
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
export function bfchars(cmap: string): Map<string, string> {
  expect(cmap).not.toContain("beginbfrange");
  const out = new Map<string, string>();
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const pair of block[1]!.matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g)) {
      out.set(pair[1]!.toUpperCase(), pair[2]!.toUpperCase());
    }
  }
  return out;
}

export interface FontState {
  baseFont: string;
  /** Decoded size of its font program. */
  programBytes: number;
}

/** Each font with a FontFile2, by its /BaseFont without a subset tag. */
export async function fontsOf(bytes: Uint8Array): Promise<Map<string, FontState>> {
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
export function drawThroughForm(
  doc: PDFDocument,
  page: ReturnType<PDFDocument["addPage"]>,
  font: PDFFont,
  text: string,
) {
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
export async function twoPagesAndAField(
  options: { formResources: boolean } = { formResources: true },
): Promise<Uint8Array> {
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
export async function type3Document(): Promise<Uint8Array> {
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
export async function simpleTrueTypeDocument(
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
export function simpleToUnicode(encoding: "WinAnsiEncoding" | "MacRomanEncoding"): string {
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
export async function simpleToUnicodeCodes(bytes: Uint8Array): Promise<string[]> {
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
export function winAnsiUnicodes(): Map<number, number> {
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
export async function type1cDocument(): Promise<Uint8Array> {
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
export function type1Lengths(program: Uint8Array): { Length1: number; Length2: number; Length3: number } {
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
export async function type1Document(): Promise<Uint8Array> {
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
export function type1CharString(...items: (number | string)[]): Uint8Array {
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
export function type2Text(code: Uint8Array, stems: number): string {
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

export function tagEveryFont(doc: PDFDocument): void {
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue;
    for (const key of [PDFName.of("BaseFont"), PDFName.of("FontName")]) {
      const name = object.lookup(key);
      if (name instanceof PDFName) object.set(key, PDFName.of(`QWERTY+${name.decodeText()}`));
    }
  }
}

/** The one CIDFont of a document, its descriptor and its program (under whichever key). */
export function cidFontOf(doc: PDFDocument): {
  cidFont: PDFDict;
  descriptor: PDFDict;
  program: PDFRawStream;
  key: string;
} {
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
export async function cidFontDocument(file: string, change: (doc: PDFDocument) => void): Promise<Uint8Array> {
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
export function inkOf(bytes: Uint8Array): number {
  const page = pixelsOf(bytes)[0]!;
  // A binary PPM: three header lines, then RGB bytes.
  let at = 0;
  for (let lines = 0; lines < 3; at++) if (page[at] === 0x0a) lines++;
  let ink = 0;
  for (let i = at; i < page.length; i++) if (page[i]! < 128) ink++;
  return ink;
}

/** The decoded program of the document's one CIDFont. */
export async function cidProgramOf(bytes: Uint8Array): Promise<Uint8Array> {
  return decodeStreamData(cidFontOf(await PDFDocument.load(bytes, { updateMetadata: false })).program, 64 << 20)!;
}
