// Reading a Type 1 font program (FontFile; Adobe Type 1 Font Format, 1990) for its conversion to
// CFF (type1-convert.ts): the clear-text part gives the name, matrix, bounding box and
// encoding; the eexec-encrypted part (binary or hex) gives the Private dictionary's hint values,
// the Subrs and the CharStrings, each charstring decrypted (lenIV bytes dropped). Only what a
// renderer of the converted font needs is read; anything this reader does not understand (a
// multiple-master font, a stroked one, a damaged one) reads as undefined and the font is left
// as it is.
import { isWhite } from "../shared/syntax.ts";

export interface Type1Program {
  fontName: string;
  fontMatrix: number[];
  fontBBox: number[];
  /** The built-in encoding: code → glyph name; "standard" for StandardEncoding. */
  encoding: Map<number, string> | "standard";
  /** Private dictionary entries kept in CFF (numbers, arrays of numbers, ForceBold as 0/1). */
  privateDict: Map<string, number[]>;
  /** Decrypted subroutines (lenIV bytes dropped), by number. */
  subrs: Uint8Array[];
  /** Decrypted charstrings by glyph name, in the font's order. */
  charStrings: Map<string, Uint8Array>;
}

/** The Private dictionary's hint entries that CFF has operators for. */
const PRIVATE_KEYS = [
  "BlueValues",
  "OtherBlues",
  "FamilyBlues",
  "FamilyOtherBlues",
  "BlueScale",
  "BlueShift",
  "BlueFuzz",
  "StdHW",
  "StdVW",
  "StemSnapH",
  "StemSnapV",
  "ForceBold",
  "LanguageGroup",
  "ExpansionFactor",
];

const EEXEC_KEY = 55665;
const CHARSTRING_KEY = 4330;

/** Type 1 decryption (section 7.1): each plain byte is the cipher byte xor the key's high byte. */
export function decrypt(data: Uint8Array, key: number, skip: number): Uint8Array {
  const out = new Uint8Array(Math.max(0, data.length - skip));
  let r = key;
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!;
    if (i >= skip) out[i - skip] = c ^ (r >> 8);
    r = ((c + r) * 52845 + 22719) & 0xffff;
  }
  return out;
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** The eexec section decrypted (its 4 random bytes dropped): binary, or hex when it starts with 4 hex digits. */
function eexecSection(program: Uint8Array, start: number): Uint8Array {
  let at = start;
  while (at < program.length && isWhite(program[at])) at++;
  const head = program.subarray(at, at + 4);
  if (head.length < 4 || !head.every(isHex)) return decrypt(program.subarray(at), EEXEC_KEY, 4);
  const bytes: number[] = [];
  let high = -1;
  for (let i = at; i < program.length; i++) {
    const c = program[i]!;
    if (isWhite(c)) continue;
    if (!isHex(c)) break;
    const v = parseInt(String.fromCharCode(c), 16);
    if (high < 0) high = v;
    else {
      bytes.push(high * 16 + v);
      high = -1;
    }
  }
  return decrypt(Uint8Array.from(bytes), EEXEC_KEY, 4);
}

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");

/** Numbers of a PostScript array or procedure body. */
function numbers(text: string): number[] | undefined {
  const items = text.trim().split(/\s+/).filter(Boolean);
  const values = items.map(Number);
  return values.every(Number.isFinite) ? values : undefined;
}

/** entry's pattern of each key, compiled once (a font reads some 17 keys). */
const ENTRY_PATTERNS = new Map<string, RegExp>();

/** `/Key [numbers]`, `/Key {numbers}` or `/Key number` (or true/false) in a dictionary's text. */
function entry(text: string, key: string): number[] | undefined {
  let pattern = ENTRY_PATTERNS.get(key);
  if (!pattern) {
    pattern = new RegExp(`/${key}\\s*(?:[\\[{]([^\\]}]*)[\\]}]|(-?[\\d.]+(?:[eE]-?\\d+)?|true|false))`);
    ENTRY_PATTERNS.set(key, pattern);
  }
  const match = pattern.exec(text);
  if (!match) return undefined;
  if (match[1] !== undefined) return numbers(match[1]);
  if (match[2] === "true" || match[2] === "false") return [match[2] === "true" ? 1 : 0];
  return numbers(match[2]!);
}

/** The clear-text encoding: StandardEncoding, or the `dup code /name put` entries. */
function readEncoding(clear: string): Map<number, string> | "standard" | undefined {
  const at = clear.indexOf("/Encoding");
  if (at < 0) return undefined;
  const rest = clear.slice(at + 9);
  if (/^\s*StandardEncoding\s+def/.test(rest)) return "standard";
  const end = rest.search(/\bdef\b|readonly/);
  const body = end < 0 ? rest : rest.slice(0, end);
  const encoding = new Map<number, string>();
  for (const match of body.matchAll(/dup\s+(\d+)\s*\/([^\s/[\]{}()<>%]+)\s+put/g)) {
    const code = Number(match[1]);
    if (code < 256) encoding.set(code, match[2]!);
  }
  return encoding;
}

/** A cursor over the decrypted section, reading PostScript tokens and the binary strings after RD. */
class Tokens {
  readonly bytes: Uint8Array;
  /** The same bytes as latin1 text: a token is a slice of it (not a string made from bytes). */
  readonly text: string;
  at: number;

  constructor(bytes: Uint8Array, text: string, at: number) {
    this.bytes = bytes;
    this.text = text;
    this.at = at;
  }

  token(): string | undefined {
    const b = this.bytes;
    while (this.at < b.length && isWhite(b[this.at])) this.at++;
    const start = this.at;
    while (this.at < b.length && !isWhite(b[this.at])) this.at++;
    return start < this.at ? this.text.slice(start, this.at) : undefined;
  }

  /** `length RD<space>binary`: the binary string (the RD token is named anything: RD, -|). */
  binary(length: number): Uint8Array | undefined {
    if (this.token() === undefined) return undefined;
    const start = this.at + 1;
    if (!Number.isInteger(length) || length < 0 || start + length > this.bytes.length) return undefined;
    this.at = start + length;
    return this.bytes.subarray(start, start + length);
  }
}

/** A charstring or subroutine decrypted, its lenIV leading bytes dropped (lenIV -1: not encrypted). */
function plain(data: Uint8Array, lenIV: number): Uint8Array {
  return lenIV < 0 ? data : decrypt(data, CHARSTRING_KEY, lenIV);
}

/** `/Subrs n array` then n times `dup i length RD <binary> NP`. */
function readSubrs(section: Uint8Array, text: string, lenIV: number): Uint8Array[] | undefined {
  const match = /\/Subrs\s+(\d+)\s+array/.exec(text);
  if (!match) return [];
  const tokens = new Tokens(section, text, match.index + match[0].length);
  const subrs: Uint8Array[] = [];
  for (let n = Number(match[1]); n > 0; n--) {
    if (tokens.token() !== "dup") break;
    const index = Number(tokens.token());
    const data = tokens.binary(Number(tokens.token()));
    if (!data || !Number.isInteger(index) || index < 0 || index > 65535) return undefined;
    subrs[index] = plain(data, lenIV);
    // NP, |, or `noaccess put`.
    if (tokens.token() === "noaccess") tokens.token();
  }
  return subrs;
}

/** `/CharStrings n dict dup begin` then `/name length RD <binary> ND` up to `end`. */
function readCharStrings(section: Uint8Array, text: string, lenIV: number): Map<string, Uint8Array> | undefined {
  const match = /\/CharStrings\s+\d+\s+dict\s+dup\s+begin/.exec(text);
  if (!match) return undefined;
  const tokens = new Tokens(section, text, match.index + match[0].length);
  const charStrings = new Map<string, Uint8Array>();
  for (;;) {
    const name = tokens.token();
    if (name === undefined || name === "end") break;
    if (!name.startsWith("/")) return undefined;
    const data = tokens.binary(Number(tokens.token()));
    if (!data) return undefined;
    if (!charStrings.has(name.slice(1))) charStrings.set(name.slice(1), plain(data, lenIV));
    // ND, |-, or `noaccess def`.
    if (tokens.token() === "noaccess") tokens.token();
  }
  return charStrings.size > 0 ? charStrings : undefined;
}

/** A Type 1 font program (a FontFile's decoded data); undefined when not read. */
export function readType1(program: Uint8Array): Type1Program | undefined {
  const head = latin1(program.subarray(0, Math.min(program.length, 1 << 20)));
  const eexec = head.indexOf("eexec");
  if (eexec < 0 || !/^%!(PS-AdobeFont|FontType1)/.test(head)) return undefined;
  const clear = head.slice(0, eexec);
  const fontName = /\/FontName\s*\/([^\s/[\]{}()<>%]+)/.exec(clear)?.[1];
  const fontMatrix = entry(clear, "FontMatrix");
  const fontBBox = entry(clear, "FontBBox");
  const encoding = readEncoding(clear);
  // A stroked font (PaintType 2), a multiple-master one or another FontType is not converted.
  if (!/\/FontType\s+1\b/.test(clear) || /\/PaintType\s+[12]\b|\/BlendDesignPositions|\/WeightVector/.test(clear))
    return undefined;
  if (!fontName || fontMatrix?.length !== 6 || fontBBox?.length !== 4 || !encoding) return undefined;
  const section = eexecSection(program, eexec + 5);
  const text = latin1(section);
  const privateAt = text.indexOf("/Private");
  const lenIV = entry(text, "lenIV")?.[0] ?? 4;
  if (privateAt < 0 || /\/(WeightVector|NDV|CDV)\b/.test(text)) return undefined;
  const subrsAt = text.search(/\/(Subrs|CharStrings)\b/);
  const privateText = text.slice(privateAt, subrsAt < 0 ? undefined : subrsAt);
  const privateDict = new Map<string, number[]>();
  for (const key of PRIVATE_KEYS) {
    const value = entry(privateText, key);
    if (value) privateDict.set(key, value);
  }
  const subrs = readSubrs(section, text, lenIV);
  const charStrings = readCharStrings(section, text, lenIV);
  if (!subrs || !charStrings) return undefined;
  return { fontName, fontMatrix, fontBBox, encoding, privateDict, subrs, charStrings };
}
