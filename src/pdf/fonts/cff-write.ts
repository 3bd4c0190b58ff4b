// Writing a name-keyed CFF font (Adobe Technical Note #5176) with Type 2 charstrings (#5177), for
// Type 1 fonts converted to FontFile3 /Type1C: a header, the Name, Top DICT, String and (empty)
// Global Subr INDEXes, a format 0 charset, the built-in encoding (StandardEncoding, or a custom
// one with supplements for codes sharing a glyph), the CharStrings INDEX and the Private DICT,
// without local subroutines (every Type 1 subroutine is inlined by the conversion). Offsets in
// the Top DICT are written in their 5-byte form, so its size is known before they are.
import type { Outline } from "./type1-charstrings.ts";
import { STANDARD_STRINGS } from "./cff-strings.ts";

/** A charstring operand: an integer in its shortest form, else a 16.16 fixed-point number. */
function charStringNumber(out: number[], value: number): void {
  const v = Math.round(value * 65536) / 65536;
  if (Number.isInteger(v) && v >= -32768 && v <= 32767) {
    if (v >= -107 && v <= 107) out.push(v + 139);
    else if (v >= 108 && v <= 1131) out.push(((v - 108) >> 8) + 247, (v - 108) & 0xff);
    else if (v <= -108 && v >= -1131) out.push(((-v - 108) >> 8) + 251, (-v - 108) & 0xff);
    else out.push(28, (v >> 8) & 0xff, v & 0xff);
    return;
  }
  const fixed = Math.round(v * 65536) | 0;
  out.push(255, (fixed >>> 24) & 0xff, (fixed >>> 16) & 0xff, (fixed >>> 8) & 0xff, fixed & 0xff);
}

/** Deltas rounded as written, so that rounding never accumulates along a path. */
const rounded = (v: number) => Math.round(v * 65536) / 65536;

/** A stem list as Type 2 operands: each edge relative to the previous stem's end. */
function stemOperands(stems: [number, number][]): number[] {
  const operands: number[] = [];
  let end = 0;
  for (const [at, size] of stems) {
    operands.push(rounded(at - end), rounded(size));
    end = rounded(end + rounded(at - end) + rounded(size));
  }
  return operands;
}

/** The outline as a Type 2 charstring: width first when not 0 (defaultWidthX and nominalWidthX are 0). */
export function writeType2(outline: Outline): Uint8Array {
  const out: number[] = [];
  // The width goes before the first operator's operands; numbers are written as they are made
  // (no operand lists, spreads or flatMap: the conversion runs once a job, mostly unoptimised).
  let widthPending = outline.width !== 0;
  const begin = () => {
    if (!widthPending) return;
    charStringNumber(out, outline.width);
    widthPending = false;
  };
  // Stems sorted by position (Type 2 wants them in increasing order), the sets mapped to them.
  const order = (stems: [number, number][]) =>
    stems.map((_, i) => i).sort((a, b) => stems[a]![0] - stems[b]![0] || stems[a]![1] - stems[b]![1]);
  const hOrder = order(outline.hstems);
  const vOrder = order(outline.vstems);
  const total = hOrder.length + vOrder.length;
  const sets = total <= 96 ? outline.hintSets : [];
  const masked = sets.length > 1;
  // A stem operator takes at most 48 operands: long lists are split (Type 2 allows repeating it).
  const stems = (list: [number, number][], op: number) => {
    const operands = stemOperands(list);
    for (let i = 0; i < operands.length; i += 44) {
      begin();
      for (let k = i; k < Math.min(i + 44, operands.length); k++) charStringNumber(out, operands[k]!);
      out.push(op);
    }
  };
  if (sets.length > 0) {
    stems(
      hOrder.map((i) => outline.hstems[i]!),
      masked ? 18 : 1,
    );
    stems(
      vOrder.map((i) => outline.vstems[i]!),
      masked ? 23 : 3,
    );
  }
  const mask = (set: { h: Set<number>; v: Set<number> }) => {
    begin();
    out.push(19);
    const at = out.length;
    for (let k = 0; k < total; k += 8) out.push(0);
    for (let k = 0; k < total; k++) {
      const on = k < hOrder.length ? set.h.has(hOrder[k]!) : set.v.has(vOrder[k - hOrder.length]!);
      if (on) out[at + (k >> 3)]! |= 0x80 >> (k & 7);
    }
  };
  let x = 0;
  let y = 0;
  const delta = (point: [number, number]) => {
    const dx = rounded(point[0] - x);
    const dy = rounded(point[1] - y);
    x = rounded(x + dx);
    y = rounded(y + dy);
    charStringNumber(out, dx);
    charStringNumber(out, dy);
  };
  let next = 1;
  const ops = outline.ops;
  for (let index = 0; index < ops.length; index++) {
    const op = ops[index]!;
    if (masked) {
      // The set in force from this op on, when it changes here (the last of several starting here).
      let current = index === 0 ? sets[0] : undefined;
      while (next < sets.length && sets[next]!.at <= index) current = sets[next++];
      if (current) mask(current);
    }
    begin();
    const points = op.points;
    const count = op.kind === "move" || op.kind === "line" ? 1 : points.length;
    for (let k = 0; k < count; k++) delta(points[k]!);
    if (op.kind === "move") out.push(21);
    else if (op.kind === "line") out.push(5);
    else if (op.kind === "flex") {
      charStringNumber(out, op.depth);
      out.push(12, 35);
    } else out.push(8);
  }
  begin();
  out.push(14);
  return Uint8Array.from(out);
}

/** A DICT operand: an integer (offsets always in the 5-byte form), else a real in nibbles. */
function dictNumber(out: number[], value: number, long = false): void {
  if (Number.isInteger(value) && !long && value >= -1131 && value <= 1131) {
    charStringNumber(out, value);
    return;
  }
  if (Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) {
    out.push(29, (value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
    return;
  }
  const text = String(value).replace("e-", "c").replace("e+", "b").replace("e", "b");
  const nibbles = [...text].map((ch) =>
    ch === "." ? 0xa : ch === "b" ? 0xb : ch === "c" ? 0xc : ch === "-" ? 0xe : +ch,
  );
  nibbles.push(0xf);
  if (nibbles.length % 2) nibbles.push(0xf);
  out.push(30);
  for (let i = 0; i < nibbles.length; i += 2) out.push((nibbles[i]! << 4) | nibbles[i + 1]!);
}

function index(items: Uint8Array[]): Uint8Array {
  if (items.length === 0) return Uint8Array.of(0, 0);
  const size = items.reduce((sum, item) => sum + item.length, 0) + 1;
  const offSize = size < 0x100 ? 1 : size < 0x10000 ? 2 : size < 0x1000000 ? 3 : 4;
  const out: number[] = [items.length >> 8, items.length & 0xff, offSize];
  let offset = 1;
  for (let i = 0; i <= items.length; i++) {
    for (let k = offSize - 1; k >= 0; k--) out.push(Math.floor(offset / 256 ** k) & 0xff);
    offset += items[i]?.length ?? 0;
  }
  return new Uint8Array(Buffer.concat([Uint8Array.from(out), ...items]));
}

export interface CffGlyph {
  name: string;
  charString: Uint8Array;
}

export interface CffSource {
  fontName: string;
  fontMatrix: number[];
  fontBBox: number[];
  privateDict: Map<string, number[]>;
  /** Glyph 0 must be .notdef. */
  glyphs: CffGlyph[];
  /** The built-in encoding by glyph name, or StandardEncoding. */
  encoding: Map<number, string> | "standard";
}

/** Private DICT operators (12 x as [12, x]) and whether the value is a delta-coded array. */
const PRIVATE_OPERATORS: Record<string, [number[], boolean]> = {
  BlueValues: [[6], true],
  OtherBlues: [[7], true],
  FamilyBlues: [[8], true],
  FamilyOtherBlues: [[9], true],
  BlueScale: [[12, 9], false],
  BlueShift: [[12, 10], false],
  BlueFuzz: [[12, 11], false],
  StdHW: [[10], false],
  StdVW: [[11], false],
  StemSnapH: [[12, 12], true],
  StemSnapV: [[12, 13], true],
  ForceBold: [[12, 14], false],
  LanguageGroup: [[12, 17], false],
  ExpansionFactor: [[12, 18], false],
};

function privateDict(values: Map<string, number[]>): Uint8Array {
  const out: number[] = [];
  for (const [key, [op, delta]] of Object.entries(PRIVATE_OPERATORS)) {
    const value = values.get(key);
    if (!value || value.length === 0) continue;
    value.forEach((v, i) => dictNumber(out, delta && i > 0 ? rounded(v - value[i - 1]!) : v));
    out.push(...op);
  }
  return Uint8Array.from(out);
}

/**
 * The custom encoding (format 0, with supplements): the encoded glyphs must be glyphs 1 to n in
 * code order, which the caller's glyph order provides (encodedFirst).
 */
function encodingTable(encoding: Map<number, string>, gidOf: Map<string, number>, sidOf: (n: string) => number) {
  const codes: number[] = [];
  const sups: [number, number][] = [];
  for (const [code, name] of [...encoding].sort((a, b) => a[0] - b[0])) {
    const gid = gidOf.get(name);
    if (gid === undefined || gid === 0) continue;
    if (gid === codes.length + 1) codes.push(code);
    else sups.push([code, sidOf(name)]);
  }
  const out = [sups.length ? 0x80 : 0, codes.length, ...codes];
  if (sups.length) out.push(sups.length, ...sups.flatMap(([code, sid]) => [code, sid >> 8, sid & 0xff]));
  return Uint8Array.from(out);
}

/** Glyphs ordered for a custom encoding: .notdef, the encoded ones by their first code, the rest. */
export function encodedFirst(glyphs: CffGlyph[], encoding: Map<number, string> | "standard"): CffGlyph[] {
  if (encoding === "standard") return glyphs;
  const byName = new Map(glyphs.map((g) => [g.name, g]));
  const ordered = [glyphs[0]!];
  const placed = new Set([glyphs[0]!.name]);
  for (const [, name] of [...encoding].sort((a, b) => a[0] - b[0])) {
    const glyph = byName.get(name);
    if (glyph && !placed.has(name) && ordered.length < 256) {
      ordered.push(glyph);
      placed.add(name);
    }
  }
  for (const glyph of glyphs) if (!placed.has(glyph.name)) ordered.push(glyph);
  return ordered;
}

/** The standard strings' ids by name, made once. */
let standardIds: Map<string, number> | undefined;

/** The CFF font program. */
export function writeCff(source: CffSource): Uint8Array {
  const strings: string[] = [];
  const standard = (standardIds ??= new Map(STANDARD_STRINGS.map((name, sid) => [name, sid])));
  const sidOf = (name: string) => {
    const known = standard.get(name);
    if (known !== undefined) return known;
    let i = strings.indexOf(name);
    if (i < 0) i = strings.push(name) - 1;
    return STANDARD_STRINGS.length + i;
  };
  const { glyphs } = source;
  const charset = [0, ...glyphs.slice(1).flatMap((g) => [sidOf(g.name) >> 8, sidOf(g.name) & 0xff])];
  const gidOf = new Map(glyphs.map((g, gid) => [g.name, gid]));
  const encoding = source.encoding === "standard" ? undefined : encodingTable(source.encoding, gidOf, sidOf);
  const privateBytes = privateDict(source.privateDict);
  const bytes = (text: string) => Uint8Array.from(text, (ch) => ch.charCodeAt(0) & 0xff);
  const names = index([bytes(source.fontName)]);
  const stringIndex = index(strings.map(bytes));
  const charStrings = index(glyphs.map((g) => g.charString));
  const topDict = (offsets: { charset: number; encoding: number; charStrings: number; private: number }) => {
    const out: number[] = [];
    for (const v of source.fontBBox) dictNumber(out, v);
    out.push(5);
    const m = source.fontMatrix;
    if (m.join(" ") !== "0.001 0 0 0.001 0 0") {
      for (const v of m) dictNumber(out, v);
      out.push(12, 7);
    }
    dictNumber(out, offsets.charset, true);
    out.push(15);
    if (encoding) {
      dictNumber(out, offsets.encoding, true);
      out.push(16);
    }
    dictNumber(out, offsets.charStrings, true);
    out.push(17);
    dictNumber(out, privateBytes.length, true);
    dictNumber(out, offsets.private, true);
    out.push(18);
    return Uint8Array.from(out);
  };
  const zero = { charset: 0, encoding: 0, charStrings: 0, private: 0 };
  const topSize = index([topDict(zero)]).length;
  const charsetAt = 4 + names.length + topSize + stringIndex.length + 2;
  const encodingAt = charsetAt + charset.length;
  const charStringsAt = encodingAt + (encoding?.length ?? 0);
  const privateAt = charStringsAt + charStrings.length;
  const top = index([
    topDict({ charset: charsetAt, encoding: encodingAt, charStrings: charStringsAt, private: privateAt }),
  ]);
  const parts = [
    Uint8Array.of(1, 0, 4, 4),
    names,
    top,
    stringIndex,
    Uint8Array.of(0, 0),
    Uint8Array.from(charset),
    encoding ?? new Uint8Array(0),
    charStrings,
    privateBytes,
  ];
  return new Uint8Array(Buffer.concat(parts));
}
