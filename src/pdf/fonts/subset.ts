// Font subsetting: a font program is replaced by one holding only the glyphs the document draws
// (usage.ts finds them), built by HarfBuzz's hb-subset (harfbuzz.ts). Programs embedded
// whole and programs the producer already "subset" (FontName tagged ABCDEF+) alike: many
// producers tag programs that still carry every glyph, or the layout tables, names and device
// metrics no PDF reader uses; hb-subset drops those (flavour.ts lists them), and a result
// is kept only when smaller. Glyph ids are kept (hb-subset's retain-gids: the glyphs not drawn
// become empty), so codes, CIDs, the CIDToGIDMap, a CFF's charset, widths, encodings and
// ToUnicode all stay valid unchanged, and the font is renamed with a subset tag (PDF
// 32000-1:2008, 9.6.4: six capital letters and a plus sign). Visually lossless: every profile
// runs it. A program is replaced only when the subset is smaller, reads back, and maps every
// drawn code to the glyph it had. A program is read as the flavour its bytes are (TrueType, OpenType
// with CFF outlines, bare CFF; flavour.ts), whatever its dictionary and key say, and stored
// back as the same flavour.
//
// What is subset (everything else is left as it is):
// - Type 0 fonts with Identity-H or Identity-V over a CIDFontType2 or CIDFontType0 (FontFile2,
//   FontFile3 /OpenType or /CIDFontType0C): TrueType outlines are found by the CIDToGIDMap
//   (Identity or a stream), CFF ones (bare, given to hb-subset in an OpenType wrapper by
//   cff.ts, or in OpenType) by the charset of a CID-keyed CFF, which the subset is checked
//   to keep, else by CID; a CIDFontType2 holding CFF outlines keeps the glyphs of both readings.
//   A CIDFont's TrueType program also loses its cmap, name, OS/2 and post tables.
// - TrueType fonts with an sfnt program and WinAnsiEncoding or MacRomanEncoding (with or without
//   Differences) or, when symbolic, no encoding: every glyph any of the ways a reader may take
//   (9.6.6.4: the (3,1) subtable through the encoding's glyph names, (3,0) at 0xF000 + code,
//   (1,0) when there is no Microsoft subtable, the post table's names) reaches for a drawn code
//   is kept, and the subset's cmap is checked to map those codes to the same glyphs.
// - Type 1 fonts over a bare CFF (FontFile3 /Type1C, given to hb-subset in the same wrapper):
//   every glyph a drawn code reaches by the CFF's built-in encoding or by a glyph name the font's
//   encoding may give it (cff-names.ts reads the charset and encoding) is kept, and the
//   subset is checked to reach the same glyphs.
// Type 1 programs (FontFile), which hb-subset cannot read and no maintained library converts,
// are first converted to bare CFF (type1-convert.ts: the same outlines, hints, glyph names
// and encoding, in a program a fraction of the size once compressed, as Ghostscript stores them),
// and are then subset as the /Type1C fonts above.
// A font that shares a program with those drawn but is not drawn itself loses the glyphs nothing
// shows, and is renamed too.
// Not subset: fonts named by an interactive form (editing a field needs every glyph), fonts a use
// of which could not be read (usage.ts), Type 0 fonts with other CMaps, Standard or
// built-in encodings of non-symbolic TrueType fonts, Type 1 programs the conversion refuses, any
// font for which hb-subset fails or whose subset is no smaller, and the tagged programs of a
// document of more than MAX_OBJECTS_TAGGED_ONLY objects when it has no other (memory, below).
import { createHash } from "node:crypto";
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { Encodings } from "@cantoo/pdf-lib/standard-fonts";
import { decodeStreamData, N } from "../streams/filters.ts";
import { deflateAsStored } from "../streams/recompress.ts";
import { releaseSubsetter, subsetFontProgram } from "./harfbuzz.ts";
import type { SubsetRequest } from "./harfbuzz.ts";
import { CID_UNUSED_TABLES, flavourOf, UNUSED_TABLES } from "./flavour.ts";
import type { Flavour } from "./flavour.ts";
import { readCff, unwrapCff, wrapCff } from "./cff.ts";
import { readNamedCff } from "./cff-names.ts";
import { convertType1 } from "./type1-convert.ts";
import { STANDARD_ENCODING } from "./cff-strings.ts";
import { MAC_ROMAN_HIGH } from "./mac-roman.ts";
import type { CffFont } from "./cff.ts";
import { trimToUnicode, trimWidths } from "./maps.ts";
import { charMaps, glyphNames, readSfnt } from "./sfnt.ts";
import type { CharMap } from "./sfnt.ts";
import { everyDictList, findFontUsage, isIdentityType0 } from "./usage.ts";
import type { DictOf } from "./usage.ts";

export interface FontReport {
  /** Type 1 programs (FontFile) replaced by the same font in CFF (FontFile3 /Type1C). */
  converted: number;
  /** Font programs replaced by a subset. */
  subset: number;
  /** Their decoded size before and after. */
  bytesBefore: number;
  bytesAfter: number;
}

const F = {
  BaseEncoding: PDFName.of("BaseEncoding"),
  BaseFont: PDFName.of("BaseFont"),
  CIDFontType0: PDFName.of("CIDFontType0"),
  CIDFontType0C: PDFName.of("CIDFontType0C"),
  CIDFontType2: PDFName.of("CIDFontType2"),
  CIDToGIDMap: PDFName.of("CIDToGIDMap"),
  DescendantFonts: PDFName.of("DescendantFonts"),
  Differences: PDFName.of("Differences"),
  Encoding: PDFName.of("Encoding"),
  Flags: PDFName.of("Flags"),
  FontDescriptor: PDFName.of("FontDescriptor"),
  FontFile: PDFName.of("FontFile"),
  FontFile2: PDFName.of("FontFile2"),
  FontFile3: PDFName.of("FontFile3"),
  FontName: PDFName.of("FontName"),
  Identity: PDFName.of("Identity"),
  Length1: PDFName.of("Length1"),
  Length2: PDFName.of("Length2"),
  Length3: PDFName.of("Length3"),
  OpenType: PDFName.of("OpenType"),
  ToUnicode: PDFName.of("ToUnicode"),
  TrueType: PDFName.of("TrueType"),
  Type1: PDFName.of("Type1"),
  Type1C: PDFName.of("Type1C"),
  StandardEncoding: PDFName.of("StandardEncoding"),
  MacRomanEncoding: PDFName.of("MacRomanEncoding"),
  W: PDFName.of("W"),
  WinAnsiEncoding: PDFName.of("WinAnsiEncoding"),
} as const;

/** A font program is at most this large decoded (a CJK TrueType font runs to some 20 MB). */
const MAX_PROGRAM_BYTES = 64 * 1024 * 1024;
/** FontDescriptor /Flags: symbolic (bit 3). */
const SYMBOLIC = 4;

/** WinAnsiEncoding: code → glyph name, and glyph name → Unicode, from pdf-lib's table. */
const WIN_ANSI_NAMES = new Map<number, string>();
const UNICODE_OF_NAME = new Map<string, number>();
for (const cp of Encodings.WinAnsi.supportedCodePoints) {
  const { code, name } = Encodings.WinAnsi.encodeUnicodeCodePoint(cp);
  if (!WIN_ANSI_NAMES.has(code)) WIN_ANSI_NAMES.set(code, name);
  if (!UNICODE_OF_NAME.has(name)) UNICODE_OF_NAME.set(name, cp);
}
/** MacRomanEncoding: WinAnsiEncoding's names for 32-126, its own above (mac-roman.ts). */
const MAC_ROMAN_NAMES = new Map<number, string>();
for (let code = 32; code < 127; code++) MAC_ROMAN_NAMES.set(code, WIN_ANSI_NAMES.get(code)!);
MAC_ROMAN_HIGH.forEach((name, i) => MAC_ROMAN_NAMES.set(128 + i, name));
// The Adobe Glyph List's values of MacRomanEncoding's names that WinAnsiEncoding lacks.
// prettier-ignore
for (const [name, cp] of [
  ["notequal", 0x2260], ["infinity", 0x221e], ["lessequal", 0x2264], ["greaterequal", 0x2265],
  ["partialdiff", 0x2202], ["summation", 0x2211], ["product", 0x220f], ["pi", 0x03c0],
  ["integral", 0x222b], ["Omega", 0x2126], ["radical", 0x221a], ["approxequal", 0x2248],
  ["Delta", 0x2206], ["lozenge", 0x25ca], ["fraction", 0x2044], ["fi", 0xfb01], ["fl", 0xfb02],
  ["dotlessi", 0x0131], ["breve", 0x02d8], ["dotaccent", 0x02d9], ["ring", 0x02da],
  ["hungarumlaut", 0x02dd], ["ogonek", 0x02db], ["caron", 0x02c7], ["apple", 0xf8ff],
] as const) if (!UNICODE_OF_NAME.has(name)) UNICODE_OF_NAME.set(name, cp);

/** The Unicode value a glyph name stands for (the Adobe Glyph List's rules for uniXXXX and uXXXX[XX]). */
function unicodeOfName(name: string): number | undefined {
  const known = UNICODE_OF_NAME.get(name);
  if (known !== undefined) return known;
  const match = /^uni([0-9A-F]{4})$/.exec(name) ?? /^u([0-9A-F]{4,6})$/.exec(name);
  return match ? parseInt(match[1]!, 16) : undefined;
}

/** One font's part in a subset of its program. */
interface FontPlan {
  /** The dictionary holding /FontDescriptor (a TrueType font, or a Type 0 font's CIDFont). */
  owner: PDFDict;
  /** Dictionaries whose /BaseFont gets the tag. */
  named: PDFDict[];
  descriptor: PDFDict;
  program: PDFRawStream;
  /**
   * Glyphs and code points to keep, from the original program of the flavour its bytes say
   * (undefined: a program this font's plan cannot read).
   */
  keep(program: Uint8Array, flavour: Flavour): { glyphs: Set<number>; unicodes: Set<number> } | undefined;
  /** Whether the subset (stored as the original was) draws the same glyphs for the drawn codes. */
  check(original: Uint8Array, subset: Uint8Array, flavour: Flavour): boolean;
  /** A Type 0 font's drawn CIDs: its W and ToUnicode are trimmed to them once the program is subset. */
  cids?: Set<number>;
  /** A simple font's drawn codes: its ToUnicode is trimmed to them once the program is subset. */
  codes?: Set<number>;
}

/**
 * The descriptor's font program (FontFile2, or FontFile3 /OpenType, /CIDFontType0C or /Type1C),
 * whatever flavour its bytes turn out to be (flavour.ts); undefined for Type 1 (FontFile)
 * and others.
 */
function programOf(descriptor: PDFDict): { program: PDFRawStream } | undefined {
  const file2 = descriptor.lookup(F.FontFile2);
  const file3 = descriptor.lookup(F.FontFile3);
  if (descriptor.has(F.FontFile) || (file2 !== undefined) === (file3 !== undefined)) return undefined;
  if (file2 instanceof PDFRawStream) return { program: file2 };
  if (!(file3 instanceof PDFRawStream)) return undefined;
  const subtype = file3.dict.lookup(N.Subtype);
  if (subtype === F.OpenType || subtype === F.CIDFontType0C || subtype === F.Type1C) return { program: file3 };
  return undefined;
}

/** The glyph of each drawn CID of a CIDFontType2 (CIDToGIDMap: Identity or a stream). */
function cidType2Glyphs(cidFont: PDFDict, codes: Set<number>): Set<number> | undefined {
  const map = cidFont.lookup(F.CIDToGIDMap);
  if (map === undefined || map === F.Identity) return codes;
  if (!(map instanceof PDFRawStream)) return undefined;
  const table = decodeStreamData(map, 2 * 65536 + 2);
  if (!table) return undefined;
  const gids = new Set<number>();
  for (const cid of codes) if (2 * cid + 1 < table.length) gids.add((table[2 * cid]! << 8) | table[2 * cid + 1]!);
  return gids;
}

/** The CFF of a program with CFF outlines: the bare CFF, or the 'CFF ' table of an OpenType font. */
function cffOf(program: Uint8Array, flavour: Flavour): CffFont | undefined {
  const cff = flavour === "cff" ? program : flavour === "opentype-cff" ? unwrapCff(program) : undefined;
  return cff && readCff(cff);
}

/** The glyph count of a program of any flavour read here. */
function glyphCount(program: Uint8Array, flavour: Flavour): number | undefined {
  return flavour === "cff" ? readCff(program)?.glyphs : readSfnt(program)?.numGlyphs;
}

/** A CIDFontType0's glyph for a CID: by the charset of a CID-keyed CFF, else the CID is the glyph id. */
function glyphOfCid(cff: CffFont, cid: number): number | undefined {
  const glyph = cff.glyphOfCid ? cff.glyphOfCid.get(cid) : cid;
  return glyph !== undefined && glyph < cff.glyphs ? glyph : undefined;
}

/**
 * A Type 0 font with Identity-H/V over a CIDFontType2 (glyphs by CIDToGIDMap) or a CIDFontType0
 * with CFF (glyphs by the charset of a CID-keyed CFF, which the subset must keep, else by id).
 */
function cidPlan(font: PDFDict, codes: Set<number>): FontPlan | undefined {
  const descendants = font.lookup(F.DescendantFonts);
  const cidFont = descendants instanceof PDFArray && descendants.size() === 1 ? descendants.lookup(0) : undefined;
  if (!(cidFont instanceof PDFDict)) return undefined;
  const descriptor = cidFont.lookup(F.FontDescriptor);
  const found = descriptor instanceof PDFDict ? programOf(descriptor) : undefined;
  if (!(descriptor instanceof PDFDict) || !found) return undefined;
  const subtype = cidFont.lookup(N.Subtype);
  // A name-keyed CFF (FontFile3 /Type1C) under a CIDFont: not read here.
  if (subtype !== F.CIDFontType2 && subtype !== F.CIDFontType0) return undefined;
  if (found.program.dict.lookup(N.Subtype) === F.Type1C) return undefined;
  // Readers go by the program's bytes: TrueType outlines are found by CIDToGIDMap (Identity when
  // absent), as in a CIDFontType2; CFF ones by the charset of a CID-keyed CFF, else by CID as
  // glyph id, as in a CIDFontType0. A CIDFontType2 holding CFF outlines (a flavour mismatch) may
  // be read either way: both sets of glyphs are kept, and both mappings checked.
  const byMap = cidType2Glyphs(cidFont, codes);
  // poppler also applies a CIDToGIDMap stream to an OpenType CFF program.
  const mapStream = cidFont.lookup(F.CIDToGIDMap) instanceof PDFRawStream;
  const mapApplies = (flavour: Flavour) => flavour === "truetype" || subtype === F.CIDFontType2 || mapStream;
  return {
    owner: cidFont,
    named: [font, cidFont],
    descriptor,
    ...found,
    cids: codes,
    keep: (program, flavour) => {
      const count = glyphCount(program, flavour);
      if (count === undefined || (mapApplies(flavour) && !byMap)) return undefined;
      const glyphs = new Set<number>();
      if (byMap && mapApplies(flavour)) for (const glyph of byMap) if (glyph < count) glyphs.add(glyph);
      if (flavour !== "truetype") {
        const cff = cffOf(program, flavour);
        if (!cff) return undefined;
        for (const cid of codes) {
          const glyph = glyphOfCid(cff, cid);
          if (glyph !== undefined) glyphs.add(glyph);
        }
      }
      return { glyphs, unicodes: new Set() };
    },
    check: (original, subset, flavour) => {
      const before = glyphCount(original, flavour);
      const after = glyphCount(subset, flavour);
      if (before === undefined || after === undefined) return false;
      // Glyph ids are kept: a glyph found by id needs only its id to be in the subset.
      if (byMap && mapApplies(flavour) && [...byMap].some((g) => g < before && g >= after)) return false;
      if (flavour === "truetype") return true;
      const cffBefore = cffOf(original, flavour);
      const cffAfter = cffOf(subset, flavour);
      if (!cffBefore || !cffAfter || !cffBefore.glyphOfCid !== !cffAfter.glyphOfCid) return false;
      return [...codes].every((cid) => {
        const glyph = glyphOfCid(cffBefore, cid);
        return glyph === undefined || glyphOfCid(cffAfter, cid) === glyph;
      });
    },
  };
}

/** An encoding's /Differences array as code → glyph name; undefined when malformed. */
function readDifferences(differences: PDFArray): Map<number, string> | undefined {
  const names = new Map<number, string>();
  let code = -1;
  for (let i = 0; i < differences.size(); i++) {
    const item = differences.lookup(i);
    if (item instanceof PDFNumber) code = item.asNumber();
    else if (item instanceof PDFName && code >= 0) names.set(code++, item.decodeText());
    else return undefined;
  }
  return names;
}

/** Glyph names of the codes, from the font's encoding; undefined when it is not one read here. */
function encodingNames(font: PDFDict, symbolic: boolean, codes: Set<number>): Map<number, string> | undefined {
  const encoding = font.lookup(F.Encoding);
  let base: Map<number, string> | undefined;
  let differences: PDFArray | undefined;
  const bases = new Map([
    [F.WinAnsiEncoding, WIN_ANSI_NAMES],
    [F.MacRomanEncoding, MAC_ROMAN_NAMES],
  ]);
  if (encoding instanceof PDFName && bases.has(encoding)) base = bases.get(encoding);
  else if (encoding instanceof PDFDict) {
    const baseName = encoding.lookup(F.BaseEncoding);
    if (baseName instanceof PDFName && bases.has(baseName)) base = bases.get(baseName);
    else if (baseName !== undefined) return undefined;
    const d = encoding.lookup(F.Differences);
    if (d !== undefined && !(d instanceof PDFArray)) return undefined;
    differences = d;
  } else if (encoding !== undefined) return undefined;
  const names = differences ? readDifferences(differences) : new Map<number, string>();
  if (!names) return undefined;
  for (const code of codes) {
    if (names.has(code)) continue;
    const name = base?.get(code);
    if (name !== undefined) names.set(code, name);
    // No base encoding: a symbolic font is drawn through its cmap by code alone; a non-symbolic
    // one through StandardEncoding, which is not read here.
    else if (!symbolic) return undefined;
  }
  return names;
}

/** A simple TrueType font whose program is an sfnt (FontFile2, or FontFile3 /OpenType). */
function trueTypePlan(font: PDFDict, codes: Set<number>): FontPlan | undefined {
  const descriptor = font.lookup(F.FontDescriptor);
  const found = descriptor instanceof PDFDict ? programOf(descriptor) : undefined;
  if (!(descriptor instanceof PDFDict) || !found) return undefined;
  const flags = descriptor.lookup(F.Flags);
  const symbolic = flags instanceof PDFNumber && (flags.asNumber() & SYMBOLIC) !== 0;
  const names = encodingNames(font, symbolic, codes);
  if (!names) return undefined;
  /** Code points a reader may look each drawn code up at. */
  const candidates = (code: number) => {
    const points = [code, 0xf000 + code, 0xf100 + code, 0xf200 + code];
    const name = names.get(code);
    const unicode = name === undefined ? undefined : unicodeOfName(name);
    if (unicode !== undefined) points.push(unicode);
    return points;
  };
  const relevant = (maps: CharMap[]) => {
    // 9.6.6.4: (1,0) is consulted only when the font has no Microsoft subtable to use.
    const microsoft = maps.some((m) => m.platform === 3);
    return maps.filter((m) => m.platform === 0 || m.platform === 3 || (m.platform === 1 && !microsoft));
  };
  return {
    owner: font,
    named: [font],
    codes,
    descriptor,
    ...found,
    keep: (bytes) => {
      const program = readSfnt(bytes);
      const maps = program && charMaps(program);
      if (!program || !maps || maps.length === 0) return undefined;
      const byName = glyphNames(program, []);
      const glyphs = new Set<number>();
      const unicodes = new Set<number>();
      for (const code of codes) {
        const name = names.get(code);
        const named = name === undefined ? undefined : byName.get(name);
        if (name !== undefined && unicodeOfName(name) === undefined && named === undefined) return undefined;
        if (named !== undefined) glyphs.add(named);
        for (const point of candidates(code)) {
          unicodes.add(point);
          for (const map of maps) {
            const glyph = map.lookup(point);
            if (glyph > 0 && glyph < program.numGlyphs) glyphs.add(glyph);
          }
        }
      }
      return { glyphs, unicodes };
    },
    check: (originalBytes, subsetBytes) => {
      const original = readSfnt(originalBytes);
      const subset = readSfnt(subsetBytes);
      const before = original && charMaps(original);
      const after = subset && charMaps(subset);
      if (!before || !after) return false;
      for (const map of relevant(before)) {
        const twin = after.find((m) => m.platform === map.platform && m.encoding === map.encoding);
        for (const code of codes) {
          for (const point of candidates(code)) {
            const glyph = map.lookup(point);
            if (glyph === 0) continue;
            // hb-subset writes the Unicode subtables it keeps as (0,3) and (3,1): a glyph a
            // dropped twin mapped must come from a kept subtable of the same platform.
            const kept = twin ? twin.lookup(point) : after.find((m) => m.platform === map.platform)?.lookup(point);
            if (kept !== glyph) return false;
          }
        }
      }
      return true;
    },
  };
}

/**
 * The glyph names a reader may take each code to: the /Differences name, else that of the
 * declared base encoding, or with none declared (the font's built-in encoding is then the base)
 * those of StandardEncoding and WinAnsiEncoding, which some readers assume. Undefined for the
 * MacRoman and MacExpert encodings, not read here.
 */
function simpleFontNames(font: PDFDict, codes: Set<number>): Map<number, string[]> | undefined {
  const encoding = font.lookup(F.Encoding);
  const dict = encoding instanceof PDFDict ? encoding : undefined;
  const baseName = dict ? dict.lookup(F.BaseEncoding) : encoding;
  const bases =
    baseName === undefined
      ? [STANDARD_ENCODING, WIN_ANSI_NAMES]
      : baseName === F.WinAnsiEncoding
        ? [WIN_ANSI_NAMES]
        : baseName === F.StandardEncoding
          ? [STANDARD_ENCODING]
          : undefined;
  const differences = dict?.lookup(F.Differences);
  if (!bases || (differences !== undefined && !(differences instanceof PDFArray))) return undefined;
  const named = differences ? readDifferences(differences) : new Map<number, string>();
  if (!named) return undefined;
  const names = new Map<number, string[]>();
  for (const c of codes) {
    const own = named.get(c);
    names.set(c, own !== undefined ? [own] : bases.flatMap((base) => base.get(c) ?? []));
  }
  return names;
}

/**
 * A simple Type 1 font over a bare CFF (FontFile3 /Type1C): every glyph a drawn code reaches,
 * by the CFF's built-in encoding or by any glyph name the code may stand for, is kept; the subset
 * must reach the same glyphs the same ways. /Widths and /Encoding need no change (ids are kept).
 */
function type1cPlan(font: PDFDict, codes: Set<number>): FontPlan | undefined {
  const descriptor = font.lookup(F.FontDescriptor);
  const found = descriptor instanceof PDFDict ? programOf(descriptor) : undefined;
  if (!(descriptor instanceof PDFDict) || !found || found.program.dict.lookup(N.Subtype) !== F.Type1C) return undefined;
  const names = simpleFontNames(font, codes);
  if (!names) return undefined;
  /** Each way (a code by the built-in encoding, or a name) to the glyph it reaches. */
  const reached = (bytes: Uint8Array) => {
    const cff = readNamedCff(bytes);
    if (!cff) return undefined;
    const ways = new Map<string, number>();
    for (const code of codes) {
      const glyph = cff.glyphOfCode.get(code);
      if (glyph !== undefined) ways.set(`code ${code}`, glyph);
      for (const name of names.get(code)!) {
        const named = cff.glyphOfName.get(name);
        if (named !== undefined) ways.set(`name ${name}`, named);
      }
    }
    return ways;
  };
  return {
    owner: font,
    named: [font],
    codes,
    descriptor,
    ...found,
    keep: (bytes) => {
      const ways = reached(bytes);
      return ways && { glyphs: new Set(ways.values()), unicodes: new Set() };
    },
    check: (original, subset) => {
      const before = reached(original);
      const after = reached(subset);
      return !!before && !!after && [...before].every(([way, glyph]) => after.get(way) === glyph);
    },
  };
}

function planOf(font: PDFDict, codes: Set<number>): FontPlan | undefined {
  if (isIdentityType0(font)) return cidPlan(font, codes);
  if (font.lookup(N.Subtype) === F.TrueType) return trueTypePlan(font, codes);
  if (font.lookup(N.Subtype) === F.Type1) return type1cPlan(font, codes);
  return undefined;
}

/** A subset font's name begins with its tag: six capital letters and a plus sign (9.6.4). */
const SUBSET_TAG = /^[A-Z]{6}\+/;

/**
 * Programs the producer subset (tagged) may still carry glyphs and tables the document never
 * draws, and are subset again like whole ones; but on a document of this many objects whose
 * programs are all tagged, the pass ends before reading every content stream: on a 206-page one
 * of 85,000 objects, the walk and the subsetter raised the peak memory by some 30 MiB, over its
 * budget (3 x input + 200 MB), for a few percent of its size.
 */
const MAX_OBJECTS_TAGGED_ONLY = 20_000;

/**
 * The programs this pass could subset (programOf's) that the document holds: none, tagged ones
 * only (their FontName has a subset tag), or one embedded whole.
 */
function programsHeld(dicts: readonly DictOf[]): "none" | "tagged" | "whole" {
  let held: "none" | "tagged" = "none";
  // By index, not destructuring each pair: an iterator and its result objects a step until V8 has
  // optimised the loop, over every dictionary of the document (9,800 on text_excel_warn_16p).
  for (let i = 0; i < dicts.length; i++) {
    const dict = dicts[i]![0];
    const descriptor = dict.lookup(F.FontDescriptor);
    if (!(descriptor instanceof PDFDict) || !programOf(descriptor)) continue;
    const name = descriptor.lookup(F.FontName);
    if (!(name instanceof PDFName) || !SUBSET_TAG.test(name.decodeText())) return "whole";
    held = "tagged";
  }
  return held;
}

/** Six capital letters from the program and its glyphs: the same subset gets the same tag. */
function subsetTag(program: Uint8Array, glyphs: Set<number>): string {
  const hash = createHash("sha256")
    .update(program)
    .update(Uint32Array.from([...glyphs].sort((a, b) => a - b)));
  const digest = hash.digest();
  let tag = "";
  for (let i = 0; i < 6; i++) tag += String.fromCharCode(65 + (digest[i]! % 26));
  return tag;
}

function tagged(name: PDFName, tag: string): PDFName {
  const text = name.decodeText();
  return PDFName.of(`${tag}+${SUBSET_TAG.test(text) ? text.slice(7) : text}`);
}

/** The font programs a descriptor holds, of any kind (a program refused here keeps its glyphs). */
function programsIn(descriptor: PDFDict | undefined): PDFRawStream[] {
  if (!descriptor) return [];
  return [F.FontFile, F.FontFile2, F.FontFile3]
    .map((key) => descriptor.lookup(key))
    .filter((program): program is PDFRawStream => program instanceof PDFRawStream);
}

/** Every dictionary that holds a FontDescriptor with this program, among all of the document's. */
function programOwners(dicts: readonly DictOf[]): Map<PDFRawStream, Set<PDFDict>> {
  const owners = new Map<PDFRawStream, Set<PDFDict>>();
  for (let i = 0; i < dicts.length; i++) {
    const dict = dicts[i]![0];
    const descriptor = dict.lookup(F.FontDescriptor);
    if (!(descriptor instanceof PDFDict)) continue; // no program (programsIn), nothing made for it
    for (const program of programsIn(descriptor)) {
      let set = owners.get(program);
      if (!set) owners.set(program, (set = new Set()));
      set.add(dict);
    }
  }
  return owners;
}

/** The descriptor of a simple font, or of a Type 0 font's descendant. */
function fontDescriptorOf(font: PDFDict): PDFDict | undefined {
  const own = font.lookup(F.FontDescriptor);
  if (own instanceof PDFDict) return own;
  const descendants = font.lookup(F.DescendantFonts);
  const cidFont = descendants instanceof PDFArray ? descendants.lookup(0) : undefined;
  const descriptor = cidFont instanceof PDFDict ? cidFont.lookup(F.FontDescriptor) : undefined;
  return descriptor instanceof PDFDict ? descriptor : undefined;
}

/** hb-subset on a program as it is stored; the result stored the same way, or undefined. */
async function subsetProgram(
  bytes: Uint8Array,
  flavour: Flavour,
  request: SubsetRequest,
): Promise<Uint8Array | undefined> {
  if (flavour !== "cff") return readSfnt(bytes) && subsetFontProgram(bytes, request);
  const cff = readCff(bytes);
  if (!cff) return undefined;
  const wrapped = await subsetFontProgram(wrapCff(bytes, cff.glyphs), request);
  return wrapped && unwrapCff(wrapped);
}

/**
 * Converts the Type 1 programs to CFF (type1-convert.ts), then subsets the font programs
 * the document's fonts embed whole to the glyphs drawn.
 */
export async function subsetFonts(context: PDFContext): Promise<FontReport> {
  const unstored = new Map<PDFRawStream, Uint8Array>();
  // The document's dictionaries, walked once for the readings that follow: a conversion changes
  // descriptors and programs' dictionaries, and the walk is made again after one.
  const dicts = everyDictList(context);
  const converted = convertType1Programs(context, unstored, dicts);
  try {
    return { ...(await subsetAll(context, unstored, converted > 0 ? everyDictList(context) : dicts)), converted };
  } finally {
    releaseSubsetter();
    for (const [program, cff] of unstored) program.updateContents(deflateAsStored(cff));
  }
}

/**
 * What deflating `length` bytes (zlib format, any level and memLevel) can come to at most, whatever
 * the data: zlib's deflateBound for non-default parameters (which covers its stored and fixed
 * blocks, deflate.c) plus the wrapper's 6 bytes.
 */
const deflatedAtMost = (length: number) => length + ((length + 7) >> 3) + ((length + 63) >> 6) + 5 + 6;

/**
 * Every Type 1 program (FontFile) of fonts that are all /Type1 (not MMType1, whose program
 * carries a blend) becomes a bare CFF (FontFile3 /Type1C) in the same stream object, when that
 * converts faithfully and is smaller stored. The number converted.
 *
 * A CFF that is smaller stored whatever deflate makes of it is not deflated here: it goes into
 * `unstored` (the stream's contents still the Type 1 program's), and subsetAll reads it there;
 * the subset usually replaces it (on the pdfTeX CVs, every one), and subsetFonts deflates those
 * it did not. The same bytes, without a level 9 deflate thrown away and an inflate per program.
 */
function convertType1Programs(
  context: PDFContext,
  unstored: Map<PDFRawStream, Uint8Array>,
  dicts: readonly DictOf[],
): number {
  let converted = 0;
  for (const [program, owners] of programOwners(dicts)) {
    const descriptors = new Set([...owners].map((owner) => owner.lookup(F.FontDescriptor) as PDFDict));
    const eligible = [...descriptors].every(
      (d) => d.lookup(F.FontFile) === program && !d.has(F.FontFile2) && !d.has(F.FontFile3),
    );
    if (!eligible || [...owners].some((owner) => owner.lookup(N.Subtype) !== F.Type1)) continue;
    const bytes = decodeStreamData(program, MAX_PROGRAM_BYTES);
    const cff = bytes && convertType1(bytes);
    if (!cff) continue;
    const surely = deflatedAtMost(cff.length) < program.contents.length;
    const stored = surely ? undefined : deflateAsStored(cff);
    if (stored && stored.length >= program.contents.length) continue;
    for (const key of [F.Length1, F.Length2, F.Length3, N.DecodeParms]) program.dict.delete(key);
    program.dict.set(N.Subtype, F.Type1C);
    program.dict.set(N.Filter, N.FlateDecode);
    if (stored) program.updateContents(stored);
    else unstored.set(program, cff);
    for (const descriptor of descriptors) {
      descriptor.set(F.FontFile3, descriptor.get(F.FontFile)!);
      descriptor.delete(F.FontFile);
    }
    converted++;
  }
  return converted;
}

/** Converted programs waiting undeflated (convertType1Programs). */
type Unstored = Map<PDFRawStream, Uint8Array>;
type SubsetReport = Omit<FontReport, "converted">;

/**
 * Subsets the programs the fonts drawn embed. `dicts`: every dictionary of the document as it is
 * (everyDictList); they are read before any is changed, when the subsets are written.
 */
async function subsetAll(context: PDFContext, unstored: Unstored, dicts: readonly DictOf[]): Promise<SubsetReport> {
  const report = { subset: 0, bytesBefore: 0, bytesAfter: 0 };
  const held = programsHeld(dicts);
  // Every plan subsets a program programOf finds in its font's descriptor, and every font's
  // dictionary is among `dicts`: without one, the walk of every content stream below would find
  // nothing to subset. Its readings kept for the image pass (placements, decoded inline images)
  // are then read by that pass itself. text_excel_warn_16p (two fonts, none embedded, 986 KB of
  // content): the walk was 100-200 ms of a job's CPU, most of which the walk of placements then
  // took instead (shared/placement.ts skims what it need not read); the job 1,053 -> 1,019 ms
  // (quick flags, 9 rounds alternated, lower in 5).
  if (held === "none" || (held === "tagged" && context.largestObjectNumber > MAX_OBJECTS_TAGGED_ONLY)) return report;
  const usage = findFontUsage(context, dicts);
  if (!usage.complete || usage.codes.size === 0) return report;
  const groups = new Map<PDFRawStream, FontPlan[]>();
  const refused = new Set<PDFRawStream>();
  for (const [font, codes] of usage.codes) {
    const plan = usage.excluded.has(font) ? undefined : planOf(font, codes);
    if (!plan) {
      // A font drawn but not planned keeps its program whole, whoever else shares it.
      for (const program of programsIn(fontDescriptorOf(font))) refused.add(program);
      continue;
    }
    const list = groups.get(plan.program);
    if (list) list.push(plan);
    else groups.set(plan.program, [plan]);
  }
  for (const font of usage.excluded) for (const program of programsIn(fontDescriptorOf(font))) refused.add(program);
  const owners = programOwners(dicts);
  for (const [program, plans] of groups) {
    if (refused.has(program)) continue;
    // Other fonts with this program are not drawn (a drawn one without a plan, or one kept whole,
    // refused it above): they lose glyphs nothing shows, and are named as subset too.
    const planned = new Set(plans.map((p) => p.owner));
    const idle = [...(owners.get(program) ?? [])].filter((owner) => !planned.has(owner));
    // A converted program not yet deflated is read where it waits (within the same limit).
    const cff = unstored.get(program);
    const bytes = cff
      ? cff.length <= MAX_PROGRAM_BYTES
        ? cff
        : undefined
      : decodeStreamData(program, MAX_PROGRAM_BYTES);
    const flavour = bytes && flavourOf(bytes);
    if (!bytes || !flavour) continue;
    const keep = { glyphs: new Set<number>(), unicodes: new Set<number>() };
    let readable = true;
    for (const plan of plans) {
      const kept = plan.keep(bytes, flavour);
      if (!kept) {
        readable = false;
        break;
      }
      for (const g of kept.glyphs) keep.glyphs.add(g);
      for (const u of kept.unicodes) keep.unicodes.add(u);
    }
    if (!readable) continue;
    // A CIDFont's TrueType program is read by glyph id alone: its cmap, names and OS/2 can go too.
    const cidOnly = flavour === "truetype" && plans.every((plan) => plan.cids);
    const dropTables = cidOnly ? [...UNUSED_TABLES, ...CID_UNUSED_TABLES] : UNUSED_TABLES;
    const fits = (subset: Uint8Array | undefined): subset is Uint8Array =>
      !!subset && subset.length < bytes.length && plans.every((plan) => plan.check(bytes, subset, flavour));
    let output = await subsetProgram(bytes, flavour, { ...keep, dropTables });
    // hb-subset writes only Unicode and symbol cmap subtables: a font drawn through another (a
    // Mac (1,0) one, as Quartz writes them) keeps its cmap as it was, still valid as ids are kept.
    if (!fits(output) && flavour !== "cff" && !cidOnly) {
      output = await subsetProgram(bytes, flavour, { ...keep, dropTables, keepTables: ["cmap"] });
    }
    if (!fits(output)) continue;
    program.dict.set(N.Filter, N.FlateDecode);
    program.dict.delete(N.DecodeParms);
    // FontFile2 gives the decoded length (Length1); FontFile3 (with its /Subtype) does not.
    if (!program.dict.has(N.Subtype) || program.dict.has(F.Length1))
      program.dict.set(F.Length1, PDFNumber.of(output.length));
    program.updateContents(deflateAsStored(output));
    unstored.delete(program);
    const tag = subsetTag(bytes, keep.glyphs);
    const names: [PDFDict, PDFName][] = [];
    for (const plan of plans) names.push(...plan.named.map((d): [PDFDict, PDFName] => [d, F.BaseFont]));
    for (const owner of idle) names.push([owner, F.BaseFont]);
    for (const owner of [...plans.map((plan) => plan.owner), ...idle]) {
      const descriptor = owner.lookup(F.FontDescriptor);
      if (descriptor instanceof PDFDict) names.push([descriptor, F.FontName]);
    }
    for (const [dict, key] of names) {
      const name = dict.lookup(key);
      if (name instanceof PDFName) dict.set(key, tagged(name, tag));
    }
    trimCodeTables(context, plans);
    report.subset++;
    report.bytesBefore += bytes.length;
    report.bytesAfter += output.length;
  }
  return report;
}

/**
 * The W widths of subset CIDFonts and the ToUnicode maps of their Type 0 fonts, trimmed to the
 * drawn CIDs, and the ToUnicode maps of subset simple fonts, to the drawn codes (maps.ts). New objects replace them, so that a table another font shares is
 * left as it was.
 */
function trimCodeTables(context: PDFContext, plans: readonly FontPlan[]): void {
  const cidsOf = new Map<PDFDict, Set<number>>();
  for (const plan of plans) {
    if (plan.cids) {
      const cids = cidsOf.get(plan.owner) ?? new Set<number>();
      for (const cid of plan.cids) cids.add(cid);
      cidsOf.set(plan.owner, cids);
    }
    const codes = plan.cids ?? plan.codes;
    const font = plan.named[0]!;
    const toUnicode = font.lookup(F.ToUnicode);
    const cmap = toUnicode instanceof PDFRawStream ? decodeStreamData(toUnicode, MAX_PROGRAM_BYTES) : undefined;
    const trimmed = cmap && codes && trimToUnicode(cmap, codes, plan.cids ? 2 : 1);
    if (trimmed && trimmed.length < cmap.length) font.set(F.ToUnicode, context.register(context.flateStream(trimmed)));
  }
  for (const [cidFont, cids] of cidsOf) {
    const widths = cidFont.lookup(F.W);
    const trimmed = widths instanceof PDFArray ? trimWidths(context, widths, cids) : undefined;
    if (trimmed) cidFont.set(F.W, trimmed);
  }
}
