// The little of a TrueType/OpenType file (the sfnt container) the font pass reads itself: the
// table directory, the glyph count (maxp), the character maps (cmap formats 0, 4, 6 and 12, the
// ones PDF TrueType fonts use) and glyph names (post format 2). OpenType spec, chapters "Font file",
// "cmap", "maxp" and "post". Every read is bounds-checked: a damaged font reads as undefined.

export interface Sfnt {
  bytes: Uint8Array;
  tables: Map<string, { offset: number; length: number }>;
  /** Glyphs in the font (maxp). */
  numGlyphs: number;
}

/** A character map: (platform, encoding) and its lookup. */
export interface CharMap {
  platform: number;
  encoding: number;
  lookup(code: number): number;
}

const u16 = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u32 = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

export function readSfnt(bytes: Uint8Array): Sfnt | undefined {
  if (bytes.length < 12) return undefined;
  const version = u32(bytes, 0);
  // TrueType outlines (1.0 or 'true') or CFF ('OTTO').
  if (version !== 0x00010000 && version !== 0x74727565 && version !== 0x4f54544f) return undefined;
  const count = u16(bytes, 4);
  if (12 + count * 16 > bytes.length) return undefined;
  const tables = new Map<string, { offset: number; length: number }>();
  for (let i = 0; i < count; i++) {
    const at = 12 + i * 16;
    const name = String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
    const offset = u32(bytes, at + 8);
    const length = u32(bytes, at + 12);
    if (offset + length > bytes.length) return undefined;
    tables.set(name, { offset, length });
  }
  const maxp = tables.get("maxp");
  if (!maxp || maxp.length < 6) return undefined;
  return { bytes, tables, numGlyphs: u16(bytes, maxp.offset + 4) };
}

/** One cmap subtable as a lookup; undefined for a format not read here or a damaged one. */
function subtable(b: Uint8Array, at: number, end: number): ((code: number) => number) | undefined {
  if (at + 4 > end) return undefined;
  const format = u16(b, at);
  if (format === 0) {
    if (at + 6 + 256 > end) return undefined;
    return (code) => (code < 256 ? b[at + 6 + code]! : 0);
  }
  if (format === 6) {
    if (at + 10 > end) return undefined;
    const first = u16(b, at + 6);
    const count = u16(b, at + 8);
    if (at + 10 + count * 2 > end) return undefined;
    return (code) => (code >= first && code < first + count ? u16(b, at + 10 + (code - first) * 2) : 0);
  }
  if (format === 4) {
    if (at + 14 > end) return undefined;
    const segments = u16(b, at + 6) >> 1;
    const ends = at + 14;
    const starts = ends + segments * 2 + 2;
    const deltas = starts + segments * 2;
    const ranges = deltas + segments * 2;
    if (ranges + segments * 2 > end) return undefined;
    return (code) => {
      if (code > 0xffff) return 0;
      for (let i = 0; i < segments; i++) {
        if (code > u16(b, ends + i * 2)) continue;
        const start = u16(b, starts + i * 2);
        if (code < start) return 0;
        const delta = u16(b, deltas + i * 2);
        const range = u16(b, ranges + i * 2);
        if (range === 0) return (code + delta) & 0xffff;
        const glyphAt = ranges + i * 2 + range + (code - start) * 2;
        if (glyphAt + 2 > end) return 0;
        const glyph = u16(b, glyphAt);
        return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
      }
      return 0;
    };
  }
  if (format === 12) {
    if (at + 16 > end) return undefined;
    const groups = u32(b, at + 12);
    if (at + 16 + groups * 12 > end) return undefined;
    return (code) => {
      for (let i = 0; i < groups; i++) {
        const g = at + 16 + i * 12;
        const first = u32(b, g);
        if (code >= first && code <= u32(b, g + 4)) return u32(b, g + 8) + code - first;
      }
      return 0;
    };
  }
  return undefined;
}

/** The font's character maps; undefined when the cmap table is damaged or has a format not read here. */
export function charMaps(font: Sfnt): CharMap[] | undefined {
  const table = font.tables.get("cmap");
  if (!table) return [];
  const b = font.bytes;
  const end = table.offset + table.length;
  if (table.length < 4) return undefined;
  const count = u16(b, table.offset + 2);
  if (table.offset + 4 + count * 8 > end) return undefined;
  const maps: CharMap[] = [];
  for (let i = 0; i < count; i++) {
    const record = table.offset + 4 + i * 8;
    const lookup = subtable(b, table.offset + u32(b, record + 4), end);
    // Format 14 (variation sequences) maps no single code: not one a PDF reader consults.
    if (!lookup) {
      if (u16(b, table.offset + u32(b, record + 4)) === 14) continue;
      return undefined;
    }
    maps.push({ platform: u16(b, record), encoding: u16(b, record + 2), lookup });
  }
  return maps;
}

/** Glyph ids by name from a format 2 post table (the only format that names glyphs freely). */
export function glyphNames(font: Sfnt, standardNames: readonly string[]): Map<string, number> {
  const names = new Map<string, number>();
  const table = font.tables.get("post");
  const b = font.bytes;
  if (!table || table.length < 34 || u32(b, table.offset) !== 0x00020000) return names;
  const end = table.offset + table.length;
  const count = u16(b, table.offset + 32);
  const indexAt = table.offset + 34;
  if (indexAt + count * 2 > end) return names;
  // The names' bytes as one latin1 string, each name a slice of it (a byte is its code unit, as
  // String.fromCharCode gives it): a whole font names thousands of glyphs.
  const start = indexAt + count * 2;
  const text = start < end ? Buffer.from(b.buffer, b.byteOffset + start, end - start).toString("latin1") : "";
  const custom: string[] = [];
  for (let at = 0; at < text.length;) {
    const length = b[start + at]!;
    if (at + 1 + length > text.length) break;
    custom.push(text.slice(at + 1, at + 1 + length));
    at += 1 + length;
  }
  for (let gid = 0; gid < count; gid++) {
    const index = u16(b, indexAt + gid * 2);
    const name = index < 258 ? standardNames[index] : custom[index - 258];
    if (name !== undefined && !names.has(name)) names.set(name, gid);
  }
  return names;
}
