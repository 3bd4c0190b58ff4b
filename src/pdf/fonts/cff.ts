// Bare CFF font programs (FontFile3 /CIDFontType0C or /Type1C) for hb-subset, which reads only
// OpenType: the CFF goes into a minimal OpenType wrapper ('OTTO' with the 'CFF ' table and a
// 'maxp' giving the glyph count) and comes back out of the subset's wrapper. What the font pass needs of the
// CFF itself (Adobe Technical Note #5176, "The Compact Font Format Specification"): whether it is
// CID-keyed (a ROS operator in the Top DICT), its glyph count, and its charset, which in a
// CID-keyed font maps each glyph to its CID. Bounds-checked: a damaged font reads as undefined.

export interface CffFont {
  /** Glyph count (the CharStrings INDEX). */
  glyphs: number;
  /** A CID-keyed font's glyph of each CID (its charset read backwards); undefined when not CID-keyed. */
  glyphOfCid: Map<number, number> | undefined;
}

export interface Index {
  /** Offsets of the items, count + 1 of them, absolute. */
  offsets: number[];
  end: number;
}

export function readIndex(b: Uint8Array, at: number): Index | undefined {
  if (at + 2 > b.length) return undefined;
  const count = (b[at]! << 8) | b[at + 1]!;
  if (count === 0) return { offsets: [], end: at + 2 };
  const offSize = b[at + 2]!;
  if (offSize < 1 || offSize > 4) return undefined;
  const base = at + 3 + (count + 1) * offSize - 1;
  if (at + 3 + (count + 1) * offSize > b.length) return undefined;
  const offsets: number[] = [];
  for (let i = 0; i <= count; i++) {
    let value = 0;
    for (let k = 0; k < offSize; k++) value = value * 256 + b[at + 3 + i * offSize + k]!;
    offsets.push(base + value);
  }
  const end = offsets[count]!;
  if (end > b.length) return undefined;
  return { offsets, end };
}

/** The Top DICT's operators (12 x as 1200 + x) with their integer operands; reals are skipped. */
export function readDict(b: Uint8Array, start: number, end: number): Map<number, number[]> | undefined {
  const entries = new Map<number, number[]>();
  let operands: number[] = [];
  let i = start;
  while (i < end) {
    const v = b[i]!;
    if (v <= 21) {
      let op = v;
      if (v === 12) {
        if (i + 1 >= end) return undefined;
        op = 1200 + b[i + 1]!;
        i++;
      }
      entries.set(op, operands);
      operands = [];
      i++;
    } else if (v === 28) {
      if (i + 3 > end) return undefined;
      operands.push((((b[i + 1]! << 8) | b[i + 2]!) << 16) >> 16);
      i += 3;
    } else if (v === 29) {
      if (i + 5 > end) return undefined;
      operands.push((b[i + 1]! << 24) | (b[i + 2]! << 16) | (b[i + 3]! << 8) | b[i + 4]!);
      i += 5;
    } else if (v === 30) {
      // A real: nibbles up to an 0xf one.
      i++;
      while (i < end && (b[i]! & 0x0f) !== 0x0f && (b[i]! & 0xf0) !== 0xf0) i++;
      i++;
      operands.push(0);
    } else if (v >= 32 && v <= 246) {
      operands.push(v - 139);
      i++;
    } else if (v >= 247 && v <= 250) {
      if (i + 2 > end) return undefined;
      operands.push((v - 247) * 256 + b[i + 1]! + 108);
      i += 2;
    } else if (v >= 251 && v <= 254) {
      if (i + 2 > end) return undefined;
      operands.push(-(v - 251) * 256 - b[i + 1]! - 108);
      i += 2;
    } else return undefined;
  }
  return entries;
}

const CHARSET = 15;
const CHARSTRINGS = 17;
const ROS = 1230;

/**
 * A custom charset (formats 0 to 2): the string id (name-keyed) or CID (CID-keyed) of each glyph,
 * glyph 0 (.notdef) first; undefined when damaged.
 */
export function readCharset(b: Uint8Array, charsetAt: number, glyphs: number): number[] | undefined {
  const charset = [0];
  const format = b[charsetAt];
  let at = charsetAt + 1;
  const u16 = (p: number) => (b[p]! << 8) | b[p + 1]!;
  if (format === 0) {
    if (at + (glyphs - 1) * 2 > b.length) return undefined;
    for (; charset.length < glyphs; at += 2) charset.push(u16(at));
  } else if (format === 1 || format === 2) {
    const size = format === 1 ? 3 : 4;
    while (charset.length < glyphs) {
      if (at + size > b.length) return undefined;
      const first = u16(at);
      const left = format === 1 ? b[at + 2]! : u16(at + 2);
      for (let k = 0; k <= left && charset.length < glyphs; k++) charset.push(first + k);
      at += size;
    }
  } else return undefined;
  return charset;
}

/** A CFF font's glyph count and, CID-keyed, its CID map; undefined when damaged. */
export function readCff(b: Uint8Array): CffFont | undefined {
  if (b.length < 4 || b[0] !== 1) return undefined;
  const names = readIndex(b, b[2]!);
  const top = names && readIndex(b, names.end);
  if (!top || top.offsets.length !== 2) return undefined;
  const dict = readDict(b, top.offsets[0]!, top.offsets[1]!);
  const charStringsAt = dict?.get(CHARSTRINGS)?.[0];
  const charStrings = charStringsAt === undefined ? undefined : readIndex(b, charStringsAt);
  if (!dict || !charStrings || charStrings.offsets.length < 2) return undefined;
  const glyphs = charStrings.offsets.length - 1;
  if (!dict.has(ROS)) return { glyphs, glyphOfCid: undefined };
  const charsetAt = dict.get(CHARSET)?.[0];
  // Predefined charsets (0-2) name glyphs, not CIDs: not a CID-keyed font's.
  if (charsetAt === undefined || charsetAt <= 2) return undefined;
  const charset = readCharset(b, charsetAt, glyphs);
  if (!charset) return undefined;
  const glyphOfCid = new Map<number, number>([[0, 0]]);
  for (let gid = 1; gid < glyphs; gid++) glyphOfCid.set(charset[gid]!, gid);
  return { glyphs, glyphOfCid };
}

/** The CFF in a minimal OpenType wrapper: 'CFF ' and a version 0.5 'maxp'. */
export function wrapCff(cff: Uint8Array, glyphs: number): Uint8Array {
  const cffLength = cff.length;
  const cffAt = 12 + 2 * 16;
  const maxpAt = cffAt + Math.ceil(cffLength / 4) * 4;
  const out = new Uint8Array(maxpAt + 8);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x4f54544f); // 'OTTO'
  view.setUint16(4, 2); // numTables
  view.setUint16(6, 32); // searchRange: 16 × 2^floor(log2 2)
  view.setUint16(8, 1); // entrySelector
  view.setUint16(10, 0); // rangeShift
  const record = (at: number, tag: string, offset: number, length: number) => {
    for (let i = 0; i < 4; i++) out[at + i] = tag.charCodeAt(i);
    view.setUint32(at + 8, offset);
    view.setUint32(at + 12, length);
  };
  record(12, "CFF ", cffAt, cffLength);
  record(28, "maxp", maxpAt, 6);
  out.set(cff, cffAt);
  view.setUint32(maxpAt, 0x00005000);
  view.setUint16(maxpAt + 4, glyphs);
  return out;
}

/** The 'CFF ' table of an OpenType font, or undefined. */
export function unwrapCff(font: Uint8Array): Uint8Array | undefined {
  if (font.length < 12) return undefined;
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  if (view.getUint32(0) !== 0x4f54544f) return undefined;
  const count = view.getUint16(4);
  for (let i = 0; i < count; i++) {
    const at = 12 + i * 16;
    if (at + 16 > font.length) return undefined;
    if (String.fromCharCode(font[at]!, font[at + 1]!, font[at + 2]!, font[at + 3]!) !== "CFF ") continue;
    const offset = view.getUint32(at + 8);
    const length = view.getUint32(at + 12);
    return offset + length <= font.length ? font.slice(offset, offset + length) : undefined;
  }
  return undefined;
}
