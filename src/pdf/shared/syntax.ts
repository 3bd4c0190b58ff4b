// PDF syntax, read in one place (ISO 32000-2, 7.2): the character classes (white-space and
// delimiters: the only definition in the engine, used by the content rewriters, the Type 1 font
// reader, xref reading and reconstruction), and two readers of content streams built on them:
//
// - scanContent, for the image and font passes and the grayscale rewriter: linear time, never
//   throws, and reports only what those passes use: the operators with their number and name
//   operands (q, Q, cm, gs, Do, Tf, the text-showing ones), strings when asked for (the font
//   pass), and inline images (BI … ID … EI, found and skipped whole, their dictionary parsed).
//   Everything else (paths, comments, arrays, dictionaries) is read and dropped.
// - tokenize, for the content compaction: every token in order with the bytes it was written as
//   (its byte span in the stream, a subarray; a number also in its shortest form), strings with
//   their escapes applied; inline images found by scanContent and handed over whole.

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

const latin1 = new TextDecoder("latin1");

/** Operands kept before an operator; the operators read here take at most six. */
const MAX_OPERANDS = 8;

export interface ContentHandlers {
  /** An operator with its operands (the last few, oldest first). */
  operator?(op: number, operands: readonly Operand[]): void;
  inlineImage?(image: InlineImage): void;
  /**
   * A string operand (literal or hex, escapes applied), as it is read: those of a TJ array come
   * one by one before the operator. Without this handler strings are skipped, not decoded.
   */
  string?(bytes: Uint8Array): void;
}

class Reader {
  pos = 0;
  readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  skipWhitespaceAndComments(): void {
    const { bytes } = this;
    while (this.pos < bytes.length) {
      const b = bytes[this.pos]!;
      if (WHITESPACE[b]) this.pos++;
      else if (b === 0x25) {
        while (this.pos < bytes.length && bytes[this.pos] !== 0x0a && bytes[this.pos] !== 0x0d) this.pos++;
      } else return;
    }
  }

  /** Position after the regular characters starting at `from`. */
  regularEnd(from: number): number {
    let j = from;
    while (j < this.bytes.length && isRegular(this.bytes[j])) j++;
    return j;
  }

  name(): string {
    const start = this.pos + 1;
    const end = this.regularEnd(start);
    this.pos = end;
    const raw = latin1.decode(this.bytes.subarray(start, end));
    return raw.includes("#")
      ? raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
      : raw;
  }

  /** A literal string; with `keep`, its bytes (escapes applied). */
  literalString(keep: boolean): Uint8Array | undefined {
    const { bytes } = this;
    const out: number[] | undefined = keep ? [] : undefined;
    let depth = 1;
    this.pos++;
    while (this.pos < bytes.length) {
      const b = bytes[this.pos++]!;
      if (b === 0x5c) {
        if (this.pos >= bytes.length) break;
        const e = bytes[this.pos++]!;
        if (!out) continue;
        const simple: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12 };
        if (simple[e] !== undefined) out.push(simple[e]);
        else if (e >= 0x30 && e <= 0x37) {
          let value = e - 0x30;
          for (let k = 0; k < 2 && this.pos < bytes.length; k++) {
            const d = bytes[this.pos]!;
            if (d < 0x30 || d > 0x37) break;
            value = value * 8 + d - 0x30;
            this.pos++;
          }
          out.push(value & 0xff);
        } else if (e === 0x0d) {
          if (bytes[this.pos] === 0x0a) this.pos++;
        } else if (e !== 0x0a) out.push(e);
        continue;
      }
      if (b === 0x28) depth++;
      else if (b === 0x29 && --depth === 0) break;
      out?.push(b);
    }
    return out && Uint8Array.from(out);
  }

  /** A hex string (after `<`); with `keep`, its bytes. */
  hexString(keep: boolean): Uint8Array | undefined {
    const { bytes } = this;
    const out: number[] | undefined = keep ? [] : undefined;
    let half = -1;
    this.pos++;
    while (this.pos < bytes.length) {
      const b = bytes[this.pos++]!;
      if (b === 0x3e) break;
      if (!out) continue;
      const v = b >= 0x30 && b <= 0x39 ? b - 0x30 : (b | 0x20) >= 0x61 && (b | 0x20) <= 0x66 ? (b | 0x20) - 0x57 : -1;
      if (v < 0) continue;
      if (half < 0) half = v;
      else {
        out.push(half * 16 + v);
        half = -1;
      }
    }
    if (out && half >= 0) out.push(half * 16);
    return out && Uint8Array.from(out);
  }

  /** A number token between `start` and `end`, or undefined when it is not one. */
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

  /**
   * One object of an inline image dictionary, or the keyword `ID` (returned as the string "ID"),
   * or undefined at the end of the data or on something that cannot be there.
   */
  object(depth = 0): InlineValue | "ID" | undefined {
    this.skipWhitespaceAndComments();
    const { bytes } = this;
    if (this.pos >= bytes.length || depth > 8) return undefined;
    const b = bytes[this.pos]!;
    if (b === 0x2f) return { name: this.name() };
    if (b === 0x28) return { bytes: this.literalString(true)! };
    if (b === 0x3c) {
      if (bytes[this.pos + 1] === 0x3c) {
        this.pos += 2;
        const dict = new Map<string, InlineValue>();
        for (;;) {
          this.skipWhitespaceAndComments();
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
      return { bytes: this.hexString(true)! };
    }
    if (b === 0x5b) {
      this.pos++;
      const items: InlineValue[] = [];
      for (;;) {
        this.skipWhitespaceAndComments();
        if (this.pos >= bytes.length) return undefined;
        if (bytes[this.pos] === 0x5d) {
          this.pos++;
          return items;
        }
        const item = this.object(depth + 1);
        if (item === undefined || item === "ID") return undefined;
        items.push(item);
      }
    }
    if (!isRegular(b)) return undefined;
    const end = this.regularEnd(this.pos);
    const start = this.pos;
    this.pos = end;
    const number = this.number(start, end);
    if (number !== undefined) return number;
    const word = latin1.decode(bytes.subarray(start, end));
    if (word === "ID") return "ID";
    if (word === "true" || word === "false") return word === "true";
    if (word === "null") return null;
    return undefined;
  }
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
  for (let k = bytes.indexOf(0x45, dataStart); k >= 0; k = bytes.indexOf(0x45, k + 1)) {
    if (k > dataStart && WHITESPACE[bytes[k - 1]!] === 0) continue;
    if (!isEndMarker(bytes, k)) continue;
    return [k > dataStart ? k - 1 : k, k + 2];
  }
  return undefined;
}

/**
 * Reads a content stream and calls the handlers. Returns false when it met something it could not
 * read as a content stream (an inline image without an end): what came before was reported.
 */
export function scanContent(bytes: Uint8Array, handlers: ContentHandlers): boolean {
  const reader = new Reader(bytes);
  const operands: Operand[] = [];
  const push = (operand: Operand) => {
    if (operands.length >= MAX_OPERANDS) operands.shift();
    operands.push(operand);
  };
  const n = bytes.length;
  while (reader.pos < n) {
    const b = bytes[reader.pos]!;
    if (WHITESPACE[b]) {
      reader.pos++;
      continue;
    }
    switch (b) {
      case 0x25: // %
        reader.skipWhitespaceAndComments();
        continue;
      case 0x2f: // /
        push(reader.name());
        continue;
      case 0x28: {
        // (
        const string = reader.literalString(handlers.string !== undefined);
        if (string) handlers.string?.(string);
        push(null);
        continue;
      }
      case 0x3c: // <
        if (bytes[reader.pos + 1] === 0x3c) reader.pos += 2;
        else {
          const string = reader.hexString(handlers.string !== undefined);
          if (string) handlers.string?.(string);
        }
        push(null);
        continue;
      case 0x3e: // >
        reader.pos += bytes[reader.pos + 1] === 0x3e ? 2 : 1;
        push(null);
        continue;
      case 0x5b:
      case 0x5d:
      case 0x7b:
      case 0x7d:
      case 0x29: // a stray ')'
        reader.pos++;
        push(null);
        continue;
    }
    const start = reader.pos;
    const end = reader.regularEnd(start);
    reader.pos = end;
    const first = bytes[start]!;
    if ((first >= 0x30 && first <= 0x39) || first === 0x2b || first === 0x2d || first === 0x2e) {
      push(reader.number(start, end) ?? null);
      continue;
    }
    let op = -1;
    if (end - start <= 3) {
      op = 0;
      for (let i = end - 1; i >= start; i--) op = op * 256 + bytes[i]!;
    }
    if (op === Op.BI) {
      const dict = new Map<string, InlineValue>();
      let complete = false;
      for (;;) {
        const key = reader.object();
        if (key === "ID") {
          complete = true;
          break;
        }
        if (key === undefined || key === null || typeof key !== "object" || !("name" in key)) break;
        const value = reader.object();
        if (value === undefined || value === "ID") break;
        dict.set(key.name, value);
      }
      if (!complete) return false;
      // One whitespace byte separates ID from the data.
      const dataStart = Math.min(n, reader.pos + 1);
      const found = findInlineEnd(bytes, dataStart, inlineDataLength(dict));
      if (!found) return false;
      reader.pos = found[1];
      operands.length = 0;
      handlers.inlineImage?.({ start, end: found[1], dict, data: bytes.subarray(dataStart, found[0]) });
      continue;
    }
    if (
      (end - start === 4 && latin1.decode(bytes.subarray(start, end)) === "true") ||
      (end - start === 5 && latin1.decode(bytes.subarray(start, end)) === "false") ||
      (end - start === 4 && latin1.decode(bytes.subarray(start, end)) === "null")
    ) {
      push(null);
      continue;
    }
    handlers.operator?.(op, operands);
    operands.length = 0;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Tokens, in order, with their bytes (the content compaction: content/compact.ts)

export const T = {
  Number: 0,
  /** A string (literal or hex): raw bytes as written, and the bytes it stands for. */
  String: 1,
  /** Anything else an operand is made of: a name, [ ] << >> { }, true, false, null. */
  Other: 2,
  Operator: 3,
  /** BI … EI, copied as written. */
  Inline: 4,
} as const;
export type TokenType = (typeof T)[keyof typeof T];

export interface Token {
  type: TokenType;
  /** The bytes as written (a number: its shortest form). */
  raw: Uint8Array;
  value?: number;
  /** A string's bytes, escapes applied. */
  bytes?: Uint8Array;
  /** An operator's name. */
  op?: string;
  /** The whitespace byte after an operator, kept (producers' line structure deflates well as it is). */
  after?: number;
}

const encoder = new TextEncoder();
const ascii = (text: string) => encoder.encode(text);

/** The shortest way to write a number token that reads back as the same value. */
function shortNumber(text: string): string {
  let sign = "";
  let body = text;
  while (body.startsWith("+") || body.startsWith("-")) {
    if (body[0] === "-") sign = sign === "-" ? "" : "-";
    body = body.slice(1);
  }
  let [int = "", frac] = body.split(".") as [string, string | undefined];
  int = int.replace(/^0+/, "");
  frac = frac?.replace(/0+$/, "");
  const out = frac ? `${int}.${frac}` : int || "0";
  return out === "0" ? "0" : sign + out;
}

/** A number written with at most `decimals` decimals, shortest form. */
export function formatNumber(value: number, decimals: number): string {
  return shortNumber(value.toFixed(decimals));
}

function literalBytes(bytes: Uint8Array, from: number): { end: number; value: Uint8Array } | undefined {
  const out: number[] = [];
  let depth = 1;
  let pos = from + 1;
  while (pos < bytes.length) {
    const b = bytes[pos++]!;
    if (b === 0x5c) {
      if (pos >= bytes.length) return undefined;
      const e = bytes[pos++]!;
      const simple: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12, 0x28: 40, 0x29: 41 };
      if (simple[e] !== undefined) out.push(simple[e]);
      else if (e >= 0x30 && e <= 0x37) {
        let value = e - 0x30;
        for (let k = 0; k < 2 && pos < bytes.length; k++) {
          const d = bytes[pos]!;
          if (d < 0x30 || d > 0x37) break;
          value = value * 8 + d - 0x30;
          pos++;
        }
        out.push(value & 0xff);
      } else if (e === 0x0d) {
        if (bytes[pos] === 0x0a) pos++;
      } else if (e !== 0x0a) out.push(e);
      continue;
    }
    if (b === 0x28) depth++;
    else if (b === 0x29 && --depth === 0) return { end: pos, value: Uint8Array.from(out) };
    out.push(b);
  }
  return undefined;
}

function hexBytes(bytes: Uint8Array, from: number): { end: number; value: Uint8Array } | undefined {
  const out: number[] = [];
  let half = -1;
  let pos = from + 1;
  while (pos < bytes.length) {
    const b = bytes[pos++]!;
    if (b === 0x3e) {
      if (half >= 0) out.push(half * 16);
      return { end: pos, value: Uint8Array.from(out) };
    }
    if (WHITESPACE[b]) continue;
    const v = b >= 0x30 && b <= 0x39 ? b - 0x30 : (b | 0x20) >= 0x61 && (b | 0x20) <= 0x66 ? (b | 0x20) - 0x57 : -1;
    if (v < 0) return undefined;
    if (half < 0) half = v;
    else {
      out.push(half * 16 + v);
      half = -1;
    }
  }
  return undefined;
}

/** Whether "BI" stands as a word somewhere (then inline images are found first, by the image pass's reader). */
function mayHoldInlineImages(bytes: Uint8Array): boolean {
  for (let at = bytes.indexOf(0x42); at >= 0; at = bytes.indexOf(0x42, at + 1)) {
    if (bytes[at + 1] === 0x49 && (at === 0 || !isRegular(bytes[at - 1])) && !isRegular(bytes[at + 2] ?? 0x20))
      return true;
  }
  return false;
}

/** A number token (its shortest form: written again only when it is not already), or undefined when malformed. */
function numberToken(bytes: Uint8Array, start: number, end: number): Token | undefined {
  let i = start;
  let negative = false;
  while (i < end && (bytes[i] === 0x2d || bytes[i] === 0x2b)) {
    if (bytes[i] === 0x2d) negative = !negative;
    i++;
  }
  const digitsFrom = i;
  let digits = 0;
  while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) {
    i++;
    digits++;
  }
  let dot = -1;
  if (i < end && bytes[i] === 0x2e) {
    dot = i++;
    while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) {
      i++;
      digits++;
    }
  }
  if (i !== end || digits === 0) return undefined;
  const text = latin1.decode(bytes.subarray(start, end));
  // Already short: no sign but one minus, no leading zero, no trailing zero or dot after a dot.
  const short =
    bytes[start] !== 0x2b &&
    digitsFrom - start === (negative ? 1 : 0) &&
    !(bytes[digitsFrom] === 0x30 && end - digitsFrom > 1) &&
    (dot < 0 || (bytes[end - 1] !== 0x30 && bytes[end - 1] !== 0x2e));
  const written = short ? text : shortNumber(text);
  return { type: T.Number, raw: short ? bytes.subarray(start, end) : ascii(written), value: Number(written) };
}

const words = new Map<number, string>();

/** An operator's or keyword's text (operators of up to three bytes are made once). */
function wordOf(bytes: Uint8Array, start: number, end: number): string {
  if (end - start > 3) return latin1.decode(bytes.subarray(start, end));
  let code = 0;
  for (let i = start; i < end; i++) code = code * 256 + bytes[i]!;
  let word = words.get(code);
  if (word === undefined) words.set(code, (word = latin1.decode(bytes.subarray(start, end))));
  return word;
}

/**
 * Hands the tokens of a content stream to `emit` one at a time (a long stream's tokens are never
 * held together); false when some part of it cannot be read as content (the stream is then left as
 * it is). Comments are dropped.
 */
export function tokenize(bytes: Uint8Array, emit: (token: Token) => void): boolean {
  const inline: [number, number][] = [];
  if (
    mayHoldInlineImages(bytes) &&
    !scanContent(bytes, { inlineImage: (image) => inline.push([image.start, image.end]) })
  ) {
    return false;
  }
  let next = 0;
  let pos = 0;
  const n = bytes.length;
  while (pos < n) {
    const b = bytes[pos]!;
    if (next < inline.length && pos === inline[next]![0]) {
      const [start, end] = inline[next++]!;
      emit({ type: T.Inline, raw: bytes.subarray(start, end) });
      pos = end;
      continue;
    }
    if (WHITESPACE[b]) {
      pos++;
      continue;
    }
    if (b === 0x25) {
      while (pos < n && bytes[pos] !== 0x0a && bytes[pos] !== 0x0d) pos++;
      continue;
    }
    if (b === 0x28) {
      const s = literalBytes(bytes, pos);
      if (!s) return false;
      emit({ type: T.String, raw: bytes.subarray(pos, s.end), bytes: s.value });
      pos = s.end;
      continue;
    }
    if (b === 0x3c && bytes[pos + 1] !== 0x3c) {
      const s = hexBytes(bytes, pos);
      if (!s) return false;
      emit({ type: T.String, raw: bytes.subarray(pos, s.end), bytes: s.value });
      pos = s.end;
      continue;
    }
    if ((b === 0x3c || b === 0x3e) && bytes[pos + 1] === b) {
      emit({ type: T.Other, raw: bytes.subarray(pos, pos + 2) });
      pos += 2;
      continue;
    }
    if (b === 0x5b || b === 0x5d || b === 0x7b || b === 0x7d) {
      emit({ type: T.Other, raw: bytes.subarray(pos, pos + 1) });
      pos++;
      continue;
    }
    if (b === 0x2f) {
      let end = pos + 1;
      while (end < n && isRegular(bytes[end])) end++;
      emit({ type: T.Other, raw: bytes.subarray(pos, end) });
      pos = end;
      continue;
    }
    if (!isRegular(b)) return false; // a stray ')' or '>'
    let end = pos;
    while (end < n && isRegular(bytes[end])) end++;
    const start = pos;
    pos = end;
    if ((b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x2b) {
      const token = numberToken(bytes, start, end);
      if (!token) return false;
      emit(token);
      continue;
    }
    const word = wordOf(bytes, start, end);
    if (word === "true" || word === "false" || word === "null") {
      emit({ type: T.Other, raw: bytes.subarray(start, end) });
    } else {
      const after = pos < n && WHITESPACE[bytes[pos]!] ? bytes[pos]! : 0x0a;
      emit({ type: T.Operator, raw: bytes.subarray(start, end), op: word, after });
    }
  }
  return next === inline.length;
}
