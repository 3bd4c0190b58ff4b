// The font of the invisible text layer, as Tesseract's PDF renderer and OCRmyPDF write it: a Type0
// font (Identity-H, two-byte codes that are the text's UTF-16 code units) whose CIDFontType2
// draws every code with one empty glyph 500/1000 wide, and a ToUnicode map that gives each code
// back as itself, so that copying and text extraction give the words. The TrueType program (built
// here, 300-odd bytes) holds two empty glyphs: nothing is ever drawn with it (text render mode 3
// draws nothing anyway), but the font is embedded, as PDF/A asks of every font.
import { PDFString } from "@cantoo/pdf-lib";
import type { PDFContext, PDFRef } from "@cantoo/pdf-lib";
import { deflate } from "../streams/filters.ts";

/** Every glyph's advance, in thousandths of the font size. */
export const GLYPH_WIDTH = 500;

const UNITS_PER_EM = 1000;

function be(values: readonly (readonly [bits: 16 | 32, value: number])[]): Uint8Array {
  const size = values.reduce((sum, [bits]) => sum + bits / 8, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [bits, value] of values) {
    if (bits === 16) view.setUint16(at, value & 0xffff);
    else view.setUint32(at, value >>> 0);
    at += bits / 8;
  }
  return out;
}

const u16 = (...values: number[]) => values.map((v) => [16, v] as const);
const u32 = (...values: number[]) => values.map((v) => [32, v] as const);

function checksum(table: Uint8Array): number {
  const padded = new Uint8Array((table.length + 3) & ~3);
  padded.set(table);
  const view = new DataView(padded.buffer);
  let sum = 0;
  for (let at = 0; at < padded.length; at += 4) sum = (sum + view.getUint32(at)) >>> 0;
  return sum;
}

/** A TrueType program of two empty glyphs (.notdef and the glyph every code is drawn with). */
export function glyphlessTrueType(): Uint8Array {
  const tables: [string, Uint8Array][] = [
    // cmap: one format 4 subtable (Windows, Unicode BMP) that maps nothing.
    ["cmap", be([...u16(0, 1, 3, 1), ...u32(12), ...u16(4, 24, 0, 2, 2, 0, 0, 0xffff, 0, 0xffff, 1, 0)])],
    ["glyf", new Uint8Array(4)],
    [
      "head",
      be([
        ...u32(0x10000, 0x10000, 0, 0x5f0f3cf5),
        ...u16(0x000b, UNITS_PER_EM),
        ...u32(0, 0, 0, 0),
        ...u16(0, 0, GLYPH_WIDTH, UNITS_PER_EM, 0, 8, 2, 0, 0),
      ]),
    ],
    ["hhea", be([...u32(0x10000), ...u16(UNITS_PER_EM, 0, 0, GLYPH_WIDTH, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2)])],
    ["hmtx", be(u16(GLYPH_WIDTH, 0, GLYPH_WIDTH, 0))],
    ["loca", be(u16(0, 0, 0))],
    ["maxp", be([...u32(0x10000), ...u16(2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0)])],
    ["name", be(u16(0, 0, 6))],
    ["post", be([...u32(0x30000, 0), ...u16(0, 0), ...u32(1, 0, 0, 0, 0)])],
  ];
  const headerSize = 12 + 16 * tables.length;
  let size = headerSize;
  for (const [, data] of tables) size += (data.length + 3) & ~3;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  const count = tables.length;
  const power = 2 ** Math.floor(Math.log2(count));
  out.set(be([...u32(0x10000), ...u16(count, power * 16, Math.log2(power), count * 16 - power * 16)]));
  let offset = headerSize;
  tables.forEach(([tag, data], i) => {
    const entry = 12 + 16 * i;
    for (let k = 0; k < 4; k++) out[entry + k] = tag.charCodeAt(k);
    view.setUint32(entry + 4, checksum(data));
    view.setUint32(entry + 8, offset);
    view.setUint32(entry + 12, data.length);
    out.set(data, offset);
    offset += (data.length + 3) & ~3;
  });
  // head's checkSumAdjustment: 0xB1B0AFBA minus the sum of the whole file.
  const headOffset = view.getUint32(12 + 16 * 2 + 8);
  view.setUint32(headOffset + 8, (0xb1b0afba - checksum(out)) >>> 0);
  return out;
}

/** A ToUnicode CMap giving every two-byte code of the BMP (surrogates aside) back as itself. */
function identityToUnicode(): string {
  const ranges: string[] = [];
  const hex = (n: number) => n.toString(16).padStart(4, "0").toUpperCase();
  for (let high = 0; high < 256; high++) {
    if (high >= 0xd8 && high <= 0xdf) continue;
    const first = high * 256;
    ranges.push(`<${hex(first)}> <${hex(first + 255)}> <${hex(first)}>`);
  }
  const blocks: string[] = [];
  for (let i = 0; i < ranges.length; i += 100) {
    const block = ranges.slice(i, i + 100);
    blocks.push(`${block.length} beginbfrange\n${block.join("\n")}\nendbfrange`);
  }
  return [
    "/CIDInit /ProcSet findresource begin",
    "12 dict begin",
    "begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
    "/CMapName /Adobe-Identity-UCS def",
    "/CMapType 2 def",
    "1 begincodespacerange",
    "<0000> <FFFF>",
    "endcodespacerange",
    ...blocks,
    "endcmap",
    "CMapName currentdict /CMap defineresource pop",
    "end",
    "end",
  ].join("\n");
}

const flateStream = (context: PDFContext, data: Uint8Array) => context.register(context.flateStream(data));

/** Adds the font's objects to the document; returns the Type0 font's reference. */
export function addGlyphlessFont(context: PDFContext): PDFRef {
  const program = glyphlessTrueType();
  const fontFile = context.register(
    context.stream(deflate(program), { Filter: "FlateDecode", Length1: program.length }),
  );
  // Every CID drawn with glyph 1: 65,536 big-endian glyph ids (deflated to a few hundred bytes).
  const map = new Uint8Array(65536 * 2);
  for (let at = 1; at < map.length; at += 2) map[at] = 1;
  const cidToGid = flateStream(context, map);
  const descriptor = context.register(
    context.obj({
      Type: "FontDescriptor",
      FontName: "GlyphLessFont",
      Flags: 5,
      FontBBox: [0, 0, GLYPH_WIDTH, UNITS_PER_EM],
      ItalicAngle: 0,
      Ascent: UNITS_PER_EM,
      Descent: 0,
      CapHeight: UNITS_PER_EM,
      StemV: 80,
      FontFile2: fontFile,
    }),
  );
  const cidFont = context.register(
    context.obj({
      Type: "Font",
      Subtype: "CIDFontType2",
      BaseFont: "GlyphLessFont",
      CIDSystemInfo: { Registry: PDFString.of("Adobe"), Ordering: PDFString.of("Identity"), Supplement: 0 },
      FontDescriptor: descriptor,
      DW: GLYPH_WIDTH,
      CIDToGIDMap: cidToGid,
    }),
  );
  const toUnicode = flateStream(context, new TextEncoder().encode(identityToUnicode()));
  return context.register(
    context.obj({
      Type: "Font",
      Subtype: "Type0",
      BaseFont: "GlyphLessFont",
      Encoding: "Identity-H",
      DescendantFonts: [cidFont],
      ToUnicode: toUnicode,
    }),
  );
}
