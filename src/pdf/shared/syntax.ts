// PDF syntax, read in one place (ISO 32000-2, 7.2): the character classes (white-space and
// delimiters: the only definition in the engine), and one lexer on them (`Lexer`, a token at a
// time with its byte span; as pdf.js's Lexer feeds both its object and its content-stream parsers),
// through which every reader of PDF syntax in the engine reads: xref validation and reconstruction
// (structure/), the grayscale rewriter, and the two readers of content streams:
//
// - scanContent, here, for the image and font passes and the grayscale rewriter: linear time,
//   never throws, and reports only what those passes use: the operators with their number and
//   name operands (q, Q, cm, gs, Do, Tf, the text-showing ones; only those a pass asks for are
//   made into values), strings when asked for (the font pass), and inline images (BI … ID … EI,
//   found and skipped whole, their dictionary parsed: the engine's one inline-image finder).
//   Everything else (paths, comments, arrays, dictionaries) is read and dropped.
// - ContentReader (content-tokens.ts), for the content compaction: an operator at a time, its
//   operands as byte spans (a number's also in its shortest form, a string's escapes applied when
//   asked); inline images found by scanContent and handed over whole.
// The Type 1 font reader (fonts/type1.ts) reads PostScript with the same white-space table.

/** An operand as the passes see it: a number, a name (without the slash), or anything else. */
export type Operand = number | string | null;

/** A value of an inline image's dictionary. */
export type InlineValue =
  number | boolean | null | { name: string } | { bytes: Uint8Array } | InlineValue[] | Map<string, InlineValue>;

export interface InlineImage {
  /** Offset of `BI`. */
  start: number;
  /** Offset just after `EI`. */
  end: number;
  /** The dictionary between BI and ID, keys without the slash (abbreviations as written). */
  dict: Map<string, InlineValue>;
  /** The image data between ID and EI. */
  data: Uint8Array;
}

export const Op = {
  q: code("q"),
  Q: code("Q"),
  cm: code("cm"),
  Do: code("Do"),
  gs: code("gs"),
  BI: code("BI"),
  ID: code("ID"),
  Tf: code("Tf"),
  Tj: code("Tj"),
  TJ: code("TJ"),
  quote: code("'"),
  doubleQuote: code('"'),
} as const;

/** Up to three operator bytes packed in a number (longer operators are -1: none matter here). */
function code(op: string): number {
  let value = 0;
  for (let i = op.length - 1; i >= 0; i--) value = value * 256 + op.charCodeAt(i);
  return value;
}

/** PDF white-space (ISO 32000-2, 7.2.3), which PostScript (Type 1 programs) shares: 1 for each byte. */
export const WHITESPACE = new Uint8Array(256);
for (const b of [0, 9, 10, 12, 13, 32]) WHITESPACE[b] = 1;
/** PDF delimiters (7.2.3): 1 for each byte. */
export const DELIMITER = new Uint8Array(256);
for (const c of "()<>[]{}/%") DELIMITER[c.charCodeAt(0)] = 1;
export const isWhite = (b: number | undefined): boolean => b !== undefined && WHITESPACE[b] === 1;
export const isDelimiter = (b: number | undefined): boolean => b !== undefined && DELIMITER[b] === 1;
/** A byte of a name, number or keyword: neither white-space nor a delimiter (false past the end). */
export const isRegular = (b: number | undefined): boolean =>
  b !== undefined && WHITESPACE[b] === 0 && DELIMITER[b] === 0;

/** An ASCII digit (false past the end). */
export const isDigit = (b: number | undefined): boolean => b !== undefined && b >= 0x30 && b <= 0x39;

const latin1 = new TextDecoder("latin1");

/**
 * The text of bytes[start, end) as `latin1.decode` reads it (windows-1252), without a TextDecoder
 * call (a crossing into C++ and a buffer a call) for the short ASCII words content streams are made
 * of: names, numbers and operators.
 */
export function textOf(bytes: Uint8Array, start: number, end: number): string {
  if (end - start > 32) return latin1.decode(bytes.subarray(start, end));
  let text = "";
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (b >= 0x80) return latin1.decode(bytes.subarray(start, end));
    text += String.fromCharCode(b);
  }
  return text;
}

/**
 * The same bytes as a plain Uint8Array: a Buffer's (zlib's output) subarray is a Buffer, made
 * through its species at several times the cost, and the content readers make one a string or
 * token.
 */
export const plain = (bytes: Uint8Array): Uint8Array =>
  bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** What Lexer.next found: the kinds of PDF tokens (7.2-7.3), told apart by their first bytes. */
export const Tok = {
  End: 0,
  /** A run of regular bytes: a number or a keyword (an operator, true, false, null, obj, R, …). */
  Regular: 1,
  /** A name, with its slash (`nameText` decodes it). */
  Name: 2,
  /** A literal string `( … )`. */
  Literal: 3,
  /** A hex string `< … >`. */
  Hex: 4,
  DictOpen: 5,
  DictClose: 6,
  /** `[`, `]`, `{` or `}`. */
  Bracket: 7,
  /** A byte no token starts with: a stray `)` or a lone `>`. */
  Stray: 8,
} as const;
export type TokKind = (typeof Tok)[keyof typeof Tok];

/** Escapes of literal strings (7.3.4.2) that stand for one byte other than themselves. */
const ESCAPE = new Int16Array(256).fill(-1);
for (const [e, value] of [
  [0x6e, 10],
  [0x72, 13],
  [0x74, 9],
  [0x62, 8],
  [0x66, 12],
]) {
  ESCAPE[e!] = value!;
}

/** A hex digit's value, or -1. */
function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const lower = b | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * The engine's one reader of PDF syntax, as pdf.js's Lexer: a position in bytes (up to `end`),
 * and `next()`, which skips white-space and comments and reads one token, leaving its byte span
 * in [start, pos). The content-stream readers below, the grayscale rewriter, xref validation and
 * reconstruction all read through it; what a token means is theirs to say.
 */
export class Lexer {
  readonly bytes: Uint8Array;
  /** Where reading stops (a region of the bytes). */
  readonly end: number;
  pos: number;
  /** Where the token `next()` read starts (it ends at `pos`). */
  start = 0;
  /** The last string's bytes, escapes applied, when it was read with `keep` (else undefined). */
  string: Uint8Array | undefined;
  /**
   * Whether the last string was well formed: closed before the end, and (a hex string read with
   * `keep`) of hex digits and white-space only.
   */
  wellFormed = true;

  constructor(bytes: Uint8Array, pos = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = pos;
    this.end = end;
  }

  /** Skips white-space; returns the position. */
  skipWhite(): number {
    const { bytes, end } = this;
    while (this.pos < end && WHITESPACE[bytes[this.pos]!]) this.pos++;
    return this.pos;
  }

  /** Skips white-space and comments (to the end of their line); returns the position. */
  skipWhiteAndComments(): number {
    const { bytes, end } = this;
    while (this.pos < end) {
      const b = bytes[this.pos]!;
      if (WHITESPACE[b]) this.pos++;
      else if (b === 0x25) {
        while (this.pos < end && bytes[this.pos] !== 0x0a && bytes[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
    return this.pos;
  }

  /** Position after the regular bytes starting at `from`. */
  regularEnd(from: number): number {
    const { bytes, end } = this;
    let j = from;
    while (j < end && WHITESPACE[bytes[j]!] === 0 && DELIMITER[bytes[j]!] === 0) j++;
    return j;
  }

  /** Reads the next token (strings decoded into `string` with `keepStrings`); its kind. */
  next(keepStrings = false): TokKind {
    const at = (this.start = this.skipWhiteAndComments());
    if (at >= this.end) return Tok.End;
    const { bytes } = this;
    switch (bytes[at]) {
      case 0x2f: // /
        this.pos = this.regularEnd(at + 1);
        return Tok.Name;
      case 0x28: // (
        this.string = this.literalString(keepStrings);
        return Tok.Literal;
      case 0x3c: // <
        if (bytes[at + 1] === 0x3c) {
          this.pos = at + 2;
          return Tok.DictOpen;
        }
        this.string = this.hexString(keepStrings);
        return Tok.Hex;
      case 0x3e: // >
        if (bytes[at + 1] === 0x3e) {
          this.pos = at + 2;
          return Tok.DictClose;
        }
        this.pos = at + 1;
        return Tok.Stray;
      case 0x5b:
      case 0x5d:
      case 0x7b:
      case 0x7d:
        this.pos = at + 1;
        return Tok.Bracket;
      case 0x29: // )
        this.pos = at + 1;
        return Tok.Stray;
    }
    this.pos = this.regularEnd(at);
    return Tok.Regular;
  }

  /** The name just read (without its slash, `#xx` escapes decoded). */
  nameText(): string {
    return nameAt(this.bytes, this.start, this.pos);
  }

  /** Reads a literal string at `pos` (its `(`); with `keep`, returns its bytes (escapes applied). */
  literalString(keep: boolean): Uint8Array | undefined {
    const { bytes, end } = this;
    let depth = 1;
    this.pos++;
    this.wellFormed = false;
    // Most strings have no escape: their bytes are the ones written, handed over as they are.
    const from = this.pos;
    while (this.pos < end) {
      const b = bytes[this.pos]!;
      if (b === 0x5c) break;
      this.pos++;
      if (b === 0x28) depth++;
      else if (b === 0x29 && --depth === 0) {
        this.wellFormed = true;
        return keep ? bytes.subarray(from, this.pos - 1) : undefined;
      }
    }
    if (this.pos >= end) return keep ? bytes.slice(from, this.pos) : undefined;
    const out: number[] | undefined = keep ? Array.from(bytes.subarray(from, this.pos)) : undefined;
    while (this.pos < end) {
      const b = bytes[this.pos++]!;
      if (b === 0x5c) {
        if (this.pos >= end) break;
        const e = bytes[this.pos++]!;
        if (out) this.escape(e, out);
        continue;
      }
      if (b === 0x28) depth++;
      else if (b === 0x29 && --depth === 0) {
        this.wellFormed = true;
        break;
      }
      out?.push(b);
    }
    return out && Uint8Array.from(out);
  }

  /** One escape after a backslash (its byte `e` read), into `out`. */
  private escape(e: number, out: number[]): void {
    const { bytes, end } = this;
    if (ESCAPE[e]! >= 0) out.push(ESCAPE[e]!);
    else if (e >= 0x30 && e <= 0x37) {
      let value = e - 0x30;
      for (let k = 0; k < 2 && this.pos < end; k++) {
        const d = bytes[this.pos]!;
        if (d < 0x30 || d > 0x37) break;
        value = value * 8 + d - 0x30;
        this.pos++;
      }
      out.push(value & 0xff);
    } else if (e === 0x0d) {
      if (bytes[this.pos] === 0x0a) this.pos++;
    } else if (e !== 0x0a) out.push(e);
  }

  /** Reads a hex string at `pos` (its `<`); with `keep`, returns its bytes. */
  hexString(keep: boolean): Uint8Array | undefined {
    const { bytes, end } = this;
    let half = -1;
    let clean = true;
    this.pos++;
    this.wellFormed = false;
    if (!keep) {
      const close = bytes.indexOf(0x3e, this.pos);
      if (close >= 0 && close < end) {
        this.pos = close + 1;
        this.wellFormed = true;
      } else this.pos = end;
      return undefined;
    }
    // At most half the bytes up to the end (or the closing bracket) come out, rounded up.
    const close = bytes.indexOf(0x3e, this.pos);
    const out = new Uint8Array(((close >= 0 && close < end ? close : end) - this.pos + 1) >> 1);
    let length = 0;
    while (this.pos < end) {
      const b = bytes[this.pos++]!;
      if (b === 0x3e) {
        this.wellFormed = clean;
        break;
      }
      const v = hexValue(b);
      if (v < 0) {
        if (!WHITESPACE[b]) clean = false;
        continue;
      }
      if (half < 0) half = v;
      else {
        out[length++] = half * 16 + v;
        half = -1;
      }
    }
    if (half >= 0) out[length++] = half * 16;
    return out.subarray(0, length);
  }

  /** The number written between `start` and `end`, or undefined when it is not one. */
  number(start: number, end: number): number | undefined {
    const { bytes } = this;
    let i = start;
    let sign = 1;
    while (i < end && (bytes[i] === 0x2d || bytes[i] === 0x2b)) {
      if (bytes[i] === 0x2d) sign = -sign;
      i++;
    }
    let value = 0;
    let digits = 0;
    while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) {
      value = value * 10 + bytes[i++]! - 0x30;
      digits++;
    }
    if (i < end && bytes[i] === 0x2e) {
      i++;
      let scale = 0.1;
      while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) {
        value += (bytes[i++]! - 0x30) * scale;
        scale /= 10;
        digits++;
      }
    }
    return i === end && digits > 0 ? sign * value : undefined;
  }

  /** The digits at `pos` (at most `maxDigits`) as an unsigned integer, or undefined when there are none. */
  unsignedInt(maxDigits = Infinity): number | undefined {
    const { bytes, end } = this;
    const start = this.pos;
    let value = 0;
    while (this.pos < end && isDigit(bytes[this.pos]) && this.pos - start < maxDigits) {
      value = value * 10 + bytes[this.pos++]! - 0x30;
    }
    return this.pos > start ? value : undefined;
  }

  /** Whether the bytes at `pos` are `word`; if so, reads past it. */
  keyword(word: string): boolean {
    for (let i = 0; i < word.length; i++) if (this.bytes[this.pos + i] !== word.charCodeAt(i)) return false;
    this.pos += word.length;
    return true;
  }

  /**
   * One object of an inline image dictionary, or the keyword `ID` (returned as the string "ID"),
   * or undefined at the end of the data or on something that cannot be there.
   */
  object(depth = 0): InlineValue | "ID" | undefined {
    if (depth > 8) return undefined;
    switch (this.next(true)) {
      case Tok.Name:
        return { name: this.nameText() };
      case Tok.Literal:
      case Tok.Hex:
        return { bytes: this.string! };
      case Tok.DictOpen:
        return this.dictionary(depth);
      case Tok.Bracket:
        return this.bytes[this.start] === 0x5b ? this.array(depth) : undefined;
      case Tok.Regular:
        return this.word();
      default:
        return undefined;
    }
  }

  /** The rest of a dictionary (after `<<`), or undefined. */
  private dictionary(depth: number): Map<string, InlineValue> | undefined {
    const { bytes } = this;
    const dict = new Map<string, InlineValue>();
    for (;;) {
      this.skipWhiteAndComments();
      if (bytes[this.pos] === 0x3e && bytes[this.pos + 1] === 0x3e) {
        this.pos += 2;
        return dict;
      }
      const key = this.object(depth + 1);
      if (key === undefined || key === "ID" || typeof key !== "object" || key === null || !("name" in key)) {
        return undefined;
      }
      const value = this.object(depth + 1);
      if (value === undefined || value === "ID") return undefined;
      dict.set(key.name, value);
    }
  }

  /** The rest of an array (after `[`), or undefined. */
  private array(depth: number): InlineValue[] | undefined {
    const items: InlineValue[] = [];
    for (;;) {
      if (this.skipWhiteAndComments() >= this.end) return undefined;
      if (this.bytes[this.pos] === 0x5d) {
        this.pos++;
        return items;
      }
      const item = this.object(depth + 1);
      if (item === undefined || item === "ID") return undefined;
      items.push(item);
    }
  }

  /** The regular token just read as an inline image's value: a number, a boolean, null or `ID`. */
  private word(): InlineValue | "ID" | undefined {
    const number = this.number(this.start, this.pos);
    if (number !== undefined) return number;
    const word = latin1.decode(this.bytes.subarray(this.start, this.pos));
    if (word === "ID") return "ID";
    if (word === "true" || word === "false") return word === "true";
    if (word === "null") return null;
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Content streams, read for the passes (scanContent) and for the compaction (ContentReader)

/** Operands kept before an operator; the operators read here take at most six. */
const MAX_OPERANDS = 8;

export interface ContentHandlers {
  /**
   * An operator with its operands (the last few, oldest first; the list is reused, copy what is
   * kept). With `operandsOf`, only those operators are given theirs, the others an empty list.
   */
  operator?(op: number, operands: readonly Operand[]): void;
  /** The operators (Op codes) whose operands `operator` reads; all when absent. */
  operandsOf?: ReadonlySet<number>;
  inlineImage?(image: InlineImage): void;
  /**
   * A string operand (literal or hex, escapes applied), as it is read: those of a TJ array come
   * one by one before the operator. Without this handler strings are skipped, not decoded.
   */
  string?(bytes: Uint8Array): void;
}

const INLINE_COMPONENTS: Record<string, number> = {
  G: 1,
  DeviceGray: 1,
  CalGray: 1,
  RGB: 3,
  DeviceRGB: 3,
  CalRGB: 3,
  CMYK: 4,
  DeviceCMYK: 4,
  I: 1,
  Indexed: 1,
};

function inlineNumber(dict: Map<string, InlineValue>, ...keys: string[]): number | undefined {
  for (const key of keys) {
    const value = dict.get(key);
    if (typeof value === "number") return value;
  }
  return undefined;
}

/** The byte length of unfiltered inline image data when the dictionary tells it, else undefined. */
function inlineDataLength(dict: Map<string, InlineValue>): number | undefined {
  const explicit = inlineNumber(dict, "L", "Length");
  if (explicit !== undefined) return explicit >= 0 ? explicit : undefined;
  const filter = dict.get("F") ?? dict.get("Filter");
  if (filter !== undefined && !(Array.isArray(filter) && filter.length === 0)) return undefined;
  const width = inlineNumber(dict, "W", "Width");
  const height = inlineNumber(dict, "H", "Height");
  if (!width || !height || width < 0 || height < 0) return undefined;
  const mask = dict.get("IM") ?? dict.get("ImageMask");
  let components: number | undefined;
  let bpc = inlineNumber(dict, "BPC", "BitsPerComponent");
  if (mask === true) {
    components = 1;
    bpc = 1;
  } else {
    const cs = dict.get("CS") ?? dict.get("ColorSpace");
    const name =
      cs && typeof cs === "object" && "name" in cs
        ? cs.name
        : Array.isArray(cs) && cs[0] && typeof cs[0] === "object" && "name" in cs[0]
          ? cs[0].name
          : undefined;
    components = name === undefined ? undefined : INLINE_COMPONENTS[name];
  }
  if (!components || !bpc) return undefined;
  return Math.ceil((width * components * bpc) / 8) * height;
}

/** Whether `EI` at `at` ends an inline image: whitespace before it, a delimiter or the end after. */
function isEndMarker(bytes: Uint8Array, at: number): boolean {
  if (bytes[at] !== 0x45 || bytes[at + 1] !== 0x49) return false;
  const after = at + 2;
  if (after < bytes.length && isRegular(bytes[after])) return false;
  // What follows must look like content-stream text, not more binary data (up to the next
  // inline image's ID, whose data may follow closely).
  const end = Math.min(bytes.length, after + 48);
  for (let k = after; k < end; k++) {
    const c = bytes[k]!;
    if (c === 0x49 && bytes[k + 1] === 0x44 && WHITESPACE[bytes[k - 1]!] && !isRegular(bytes[k + 2] ?? 32)) return true;
    if (c > 0x7e || (c < 0x20 && WHITESPACE[c] === 0)) return false;
  }
  return true;
}

/** Finds the end of an inline image's data: [data end, position after EI], or undefined. */
function findInlineEnd(
  bytes: Uint8Array,
  dataStart: number,
  knownLength: number | undefined,
): [number, number] | undefined {
  if (knownLength !== undefined) {
    let k = dataStart + knownLength;
    while (k < bytes.length && WHITESPACE[bytes[k]!]) k++;
    if (isEndMarker(bytes, k)) return [dataStart + knownLength, k + 2];
  }
  // Only an `EI` can be the marker: searched for as two bytes (native), not `E` by `E`. ASCII85
  // data has an `E` every 85 characters or so: inline_image_large's 2.1 MB photograph took 25,000
  // turns of this loop, 16 ms of the font pass's first (unoptimised) call; `EI` comes some 300 times.
  const search = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let k = search.indexOf(EI, dataStart); k >= 0; k = search.indexOf(EI, k + 1)) {
    if (k > dataStart && WHITESPACE[bytes[k - 1]!] === 0) continue;
    if (!isEndMarker(bytes, k)) continue;
    return [k > dataStart ? k - 1 : k, k + 2];
  }
  return undefined;
}

const EI = Buffer.from("EI", "latin1");

/**
 * Reads a content stream and calls the handlers. Returns false when it met something it could not
 * read as a content stream (an inline image without an end): what came before was reported.
 */
export function scanContent(content: Uint8Array, handlers: ContentHandlers): boolean {
  const bytes = plain(content);
  const lexer = new Lexer(bytes);
  const keepStrings = handlers.string !== undefined;
  const wanted = handlers.operandsOf;
  // The last MAX_OPERANDS operands as spans (a ring), made into values only for an operator whose
  // operands are wanted: most operands (a path's coordinates, marked content's tags) never are.
  const kinds = new Uint8Array(MAX_OPERANDS);
  const starts = new Int32Array(MAX_OPERANDS);
  const ends = new Int32Array(MAX_OPERANDS);
  let first = 0;
  let count = 0;
  const push = (kind: number, start: number, end: number) => {
    const slot = (first + count) % MAX_OPERANDS;
    if (count === MAX_OPERANDS) first = (first + 1) % MAX_OPERANDS;
    else count++;
    kinds[slot] = kind;
    starts[slot] = start;
    ends[slot] = end;
  };
  const operands: Operand[] = [];
  for (let kind = lexer.next(keepStrings); kind !== Tok.End; kind = lexer.next(keepStrings)) {
    if (kind === Tok.Name) {
      push(OPERAND_NAME, lexer.start, lexer.pos);
      continue;
    }
    if (kind !== Tok.Regular) {
      if (lexer.string && (kind === Tok.Literal || kind === Tok.Hex)) handlers.string?.(lexer.string);
      push(OPERAND_NULL, 0, 0);
      continue;
    }
    const { start, pos: end } = lexer;
    const b = bytes[start]!;
    if ((b >= 0x30 && b <= 0x39) || b === 0x2b || b === 0x2d || b === 0x2e) {
      push(OPERAND_NUMBER, start, end);
      continue;
    }
    let op = -1;
    if (end - start <= 3) {
      op = 0;
      for (let i = end - 1; i >= start; i--) op = op * 256 + bytes[i]!;
    }
    if (op === Op.BI) {
      const image = inlineImageAt(lexer);
      if (!image) return false;
      count = 0;
      handlers.inlineImage?.(image);
      continue;
    }
    if (isWord(bytes, start, end, "true") || isWord(bytes, start, end, "false") || isWord(bytes, start, end, "null")) {
      push(OPERAND_NULL, 0, 0);
      continue;
    }
    if (handlers.operator) {
      operands.length = 0;
      if (!wanted || wanted.has(op)) {
        for (let k = 0; k < count; k++) {
          const slot = (first + k) % MAX_OPERANDS;
          const kind = kinds[slot];
          operands.push(
            kind === OPERAND_NUMBER
              ? (lexer.number(starts[slot]!, ends[slot]!) ?? null)
              : kind === OPERAND_NAME
                ? nameAt(bytes, starts[slot]!, ends[slot]!)
                : null,
          );
        }
      }
      handlers.operator(op, operands);
    }
    first = 0;
    count = 0;
  }
  return true;
}

const OPERAND_NULL = 0;
const OPERAND_NUMBER = 1;
const OPERAND_NAME = 2;

/** Whether bytes[start, end) are the ASCII `word`. */
function isWord(bytes: Uint8Array, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (bytes[start + i] !== word.charCodeAt(i)) return false;
  return true;
}

/** The name token at [start, end) (with its slash), without the slash, `#xx` escapes decoded. */
function nameAt(bytes: Uint8Array, start: number, end: number): string {
  const raw = textOf(bytes, start + 1, end);
  return raw.includes("#")
    ? raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : raw;
}

/** The inline image whose `BI` the lexer just read (reading past its `EI`), or undefined when it has no end. */
function inlineImageAt(lexer: Lexer): InlineImage | undefined {
  const { bytes, start } = lexer;
  const dict = new Map<string, InlineValue>();
  for (;;) {
    const key = lexer.object();
    if (key === "ID") break;
    if (key === undefined || key === null || typeof key !== "object" || !("name" in key)) return undefined;
    const value = lexer.object();
    if (value === undefined || value === "ID") return undefined;
    dict.set(key.name, value);
  }
  // One whitespace byte separates ID from the data.
  const dataStart = Math.min(bytes.length, lexer.pos + 1);
  const found = findInlineEnd(bytes, dataStart, inlineDataLength(dict));
  if (!found) return undefined;
  lexer.pos = found[1];
  return { start, end: found[1], dict, data: bytes.subarray(dataStart, found[0]) };
}
