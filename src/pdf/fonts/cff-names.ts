// What a simple font over a bare CFF (FontFile3 /Type1C) draws a code with: a PDF reader takes
// the code to a glyph name (the font's /Encoding and /Differences) and the name to a glyph
// through the CFF's charset, or takes the code to a glyph through the CFF's own (built-in)
// encoding (Adobe Technical Note #5176, sections 12 and 13). Both maps are read here, for a
// name-keyed CFF only; anything damaged or not read (the Expert charsets and encoding) reads
// as undefined, and the font is then left whole.
import { readCharset, readDict, readIndex } from "./cff.ts";
import type { Index } from "./cff.ts";
import { STANDARD_ENCODING, STANDARD_STRINGS } from "./cff-strings.ts";

export interface NamedCff {
  glyphs: number;
  /** Glyph name → glyph id, by the charset (the first glyph of a name, as readers search). */
  glyphOfName: Map<string, number>;
  /** Code → glyph id, by the CFF's built-in encoding. */
  glyphOfCode: Map<number, number>;
}

const CHARSET = 15;
const ENCODING = 16;
const CHARSTRINGS = 17;
const ROS = 1230;

/** A string id's text: a standard string, or one of the String INDEX. */
function stringOf(b: Uint8Array, strings: Index, sid: number): string | undefined {
  if (sid < STANDARD_STRINGS.length) return STANDARD_STRINGS[sid];
  const i = sid - STANDARD_STRINGS.length;
  if (i + 1 >= strings.offsets.length) return undefined;
  return String.fromCharCode(...b.subarray(strings.offsets[i], strings.offsets[i + 1]));
}

/**
 * The built-in encoding: StandardEncoding (offset 0, through glyph names) or a custom one
 * (format 0: a code per glyph from glyph 1; format 1: ranges of codes; the high bit adds
 * supplements, codes given a glyph by string id).
 */
function readEncoding(
  b: Uint8Array,
  at: number,
  glyphOfName: Map<string, number>,
  sidOfGlyph: number[],
): Map<number, number> | undefined {
  const glyphOfCode = new Map<number, number>();
  if (at === 0) {
    for (const [code, name] of STANDARD_ENCODING) {
      const glyph = glyphOfName.get(name);
      if (glyph !== undefined) glyphOfCode.set(code, glyph);
    }
    return glyphOfCode;
  }
  if (at === 1 || at + 2 > b.length) return undefined;
  const format = b[at]! & 0x7f;
  const count = b[at + 1]!;
  let p = at + 2;
  let glyph = 1;
  if (format === 0) {
    if (p + count > b.length) return undefined;
    for (let i = 0; i < count; i++) glyphOfCode.set(b[p++]!, glyph++);
  } else if (format === 1) {
    if (p + 2 * count > b.length) return undefined;
    for (let i = 0; i < count; i++, p += 2) for (let k = 0; k <= b[p + 1]!; k++) glyphOfCode.set(b[p]! + k, glyph++);
  } else return undefined;
  if (b[at]! & 0x80) {
    const sups = b[p++];
    if (sups === undefined || p + 3 * sups > b.length) return undefined;
    for (let i = 0; i < sups; i++, p += 3) {
      const target = sidOfGlyph.indexOf((b[p + 1]! << 8) | b[p + 2]!);
      if (target >= 0) glyphOfCode.set(b[p]!, target);
    }
  }
  return glyphOfCode;
}

/** A name-keyed CFF's charset and built-in encoding; undefined when CID-keyed, damaged or not read. */
export function readNamedCff(b: Uint8Array): NamedCff | undefined {
  if (b.length < 4 || b[0] !== 1) return undefined;
  const names = readIndex(b, b[2]!);
  const top = names && readIndex(b, names.end);
  const strings = top && readIndex(b, top.end);
  if (!top || !strings || top.offsets.length !== 2) return undefined;
  const dict = readDict(b, top.offsets[0]!, top.offsets[1]!);
  if (!dict || dict.has(ROS)) return undefined;
  const charStringsAt = dict.get(CHARSTRINGS)?.[0];
  const charStrings = charStringsAt === undefined ? undefined : readIndex(b, charStringsAt);
  if (!charStrings || charStrings.offsets.length < 2) return undefined;
  const glyphs = charStrings.offsets.length - 1;
  const charsetAt = dict.get(CHARSET)?.[0] ?? 0;
  // Charset 0 (ISOAdobe) gives glyph i the string id i; 1 and 2 (the Expert ones) are not read.
  const sidOfGlyph =
    charsetAt === 0
      ? Array.from({ length: Math.min(glyphs, 229) }, (_, i) => i)
      : charsetAt > 2
        ? readCharset(b, charsetAt, glyphs)
        : undefined;
  if (!sidOfGlyph) return undefined;
  const glyphOfName = new Map<string, number>();
  for (let glyph = 0; glyph < sidOfGlyph.length; glyph++) {
    const name = stringOf(b, strings, sidOfGlyph[glyph]!);
    if (name === undefined) return undefined;
    if (!glyphOfName.has(name)) glyphOfName.set(name, glyph);
  }
  const glyphOfCode = readEncoding(b, dict.get(ENCODING)?.[0] ?? 0, glyphOfName, sidOfGlyph);
  return glyphOfCode && { glyphs, glyphOfName, glyphOfCode };
}
