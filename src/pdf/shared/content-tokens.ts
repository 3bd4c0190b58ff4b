// A content stream read an operator at a time, each part with the bytes it was written as, for the content compaction
// (content/compact.ts): read through the engine's one lexer (syntax.ts, `Lexer`), inline images
// found by its one inline-image finder (`scanContent`) and handed over whole. Numbers come with
// their shortest form, strings with their escapes applied (on request), operators with the
// white-space after them.
//
// An operator's operands are spans in typed arrays, reused from one operator to the next, not an
// object a token: optimised_geotopo_117p_3heights's 3.1 MB of content is 729,000 tokens, and their
// objects, number texts and string views were most of the 397 MB its job allocated (the collector
// 24-32 % of its CPU, issue 42). A number's value is read from its bytes, and a string's escapes
// applied, only for the operands the compaction follows.
import { isRegular, Lexer, plain, scanContent, textOf, Tok, WHITESPACE } from "./syntax.ts";

export const T = {
  Number: 0,
  /** A string (literal or hex): raw bytes as written, and the bytes it stands for. */
  String: 1,
  /** Anything else an operand is made of: a name, [ ] << >> { }, true, false, null. */
  Other: 2,
} as const;
export type TokenType = (typeof T)[keyof typeof T];

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

/**
 * Whether "BI" stands as a word somewhere (then inline images are found first, by the image pass's
 * reader). Without one, scanContent meets no inline image and reads any content to its end.
 */
export function mayHoldInlineImages(bytes: Uint8Array): boolean {
  for (let at = bytes.indexOf(0x42); at >= 0; at = bytes.indexOf(0x42, at + 1)) {
    if (bytes[at + 1] === 0x49 && (at === 0 || !isRegular(bytes[at - 1])) && !isRegular(bytes[at + 2] ?? 0x20))
      return true;
  }
  return false;
}

/** Digits whose integer is exact in a double (below 2^53), as are the powers of ten up to 10^22. */
const MAX_EXACT_DIGITS = 15;
const POWERS_OF_TEN = Array.from({ length: MAX_EXACT_DIGITS + 1 }, (_, k) => 10 ** k);

/**
 * The value of the digits (and one dot) in bytes[from, end), negated when told: what `Number` reads
 * from the text, without making the text. The digits as an integer m (exact) over 10^k (exact),
 * divided once: IEEE division rounds the exact quotient, the decimal written, as `Number` does.
 */
function exactValue(bytes: Uint8Array, from: number, end: number, negative: boolean): number {
  let m = 0;
  let decimals = -1;
  for (let i = from; i < end; i++) {
    const b = bytes[i]!;
    if (b === 0x2e) decimals = 0;
    else {
      m = m * 10 + (b - 0x30);
      if (decimals >= 0) decimals++;
    }
  }
  const value = decimals > 0 ? m / POWERS_OF_TEN[decimals]! : m;
  return negative ? -value : value;
}

const words = new Map<number, string>();

/** An operator's or keyword's text (operators of up to three bytes are made once). */
function wordOf(bytes: Uint8Array, start: number, end: number): string {
  if (end - start > 3) return textOf(bytes, start, end);
  let code = 0;
  for (let i = start; i < end; i++) code = code * 256 + bytes[i]!;
  let word = words.get(code);
  if (word === undefined) words.set(code, (word = textOf(bytes, start, end)));
  return word;
}

/** Where a number's digits start, after its signs, when its bytes are a number; -1 when they are not. */
function numberDigitsFrom(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end && (bytes[i] === 0x2d || bytes[i] === 0x2b)) i++;
  const from = i;
  let digits = 0;
  while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) {
    i++;
    digits++;
  }
  if (i < end && bytes[i] === 0x2e) {
    i++;
    while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) {
      i++;
      digits++;
    }
  }
  return i !== end || digits === 0 ? -1 : from;
}

/** Whether a well-formed number is already in its shortest form: no sign but one minus, no leading zero, no trailing zero or dot after a dot. */
function isShort(bytes: Uint8Array, start: number, digitsFrom: number, end: number): boolean {
  let negative = false;
  for (let i = start; i < digitsFrom; i++) if (bytes[i] === 0x2d) negative = !negative;
  const dot = bytes.indexOf(0x2e, digitsFrom);
  return (
    bytes[start] !== 0x2b &&
    digitsFrom - start === (negative ? 1 : 0) &&
    !(bytes[digitsFrom] === 0x30 && end - digitsFrom > 1) &&
    (dot < 0 || dot >= end || (bytes[end - 1] !== 0x30 && bytes[end - 1] !== 0x2e))
  );
}

/**
 * The value of a number in its shortest form (at most one minus, then digits and one dot): what
 * `Number` reads from its text.
 */
export function numberValue(bytes: Uint8Array, start: number, end: number): number {
  const negative = bytes[start] === 0x2d;
  const from = negative ? start + 1 : start;
  let digits = end - from;
  for (let i = from; i < end; i++) if (bytes[i] === 0x2e) digits--;
  return digits <= MAX_EXACT_DIGITS ? exactValue(bytes, from, end, negative) : Number(textOf(bytes, start, end));
}

/** Whether a hex string's bytes between its brackets are hex digits and white-space only. */
function isCleanHex(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    const lower = b | 0x20;
    if (!((b >= 0x30 && b <= 0x39) || (lower >= 0x61 && lower <= 0x66) || WHITESPACE[b])) return false;
  }
  return true;
}

const OPERAND = 0;
const OPERATOR = 1;
const MALFORMED = 2;

/** Room for numbers written shorter, a block at a time (a full block is left to what points into it). */
const SHORTENED_BLOCK = 4096;

/**
 * A content stream read an operator at a time: the operands read since the last operator (their
 * kinds and spans: `count`, `types`, `starts`, `ends`, and `src(i)`, the bytes a span is in), and
 * the operator (`op`, its span in `bytes` and the white-space byte after it). Spans are kept by the
 * caller as they are (a number written shorter points into a block of its own, never written over).
 */
export class ContentReader {
  /** The stream's bytes. */
  readonly bytes: Uint8Array;
  /** Operands read since the last operator. */
  count = 0;
  types = new Uint8Array(16);
  starts = new Int32Array(16);
  ends = new Int32Array(16);
  private srcs: Uint8Array[] = new Array<Uint8Array>(16);
  /** The operator just read, its span in `bytes`, and the white-space byte after it (a line end when none). */
  op = "";
  opStart = 0;
  opEnd = 0;
  after = 0x0a;
  private shortened = new Uint8Array(SHORTENED_BLOCK);
  private shortenedLength = 0;

  constructor(content: Uint8Array) {
    this.bytes = plain(content);
  }

  /** The bytes operand i's span is in. */
  src(i: number): Uint8Array {
    return this.srcs[i]!;
  }

  /** Operand i's value when it is a number, else undefined. */
  number(i: number): number | undefined {
    if (i >= this.count || this.types[i] !== T.Number) return undefined;
    return numberValue(this.srcs[i]!, this.starts[i]!, this.ends[i]!);
  }

  /** Operand i's bytes when it is a string, escapes applied. */
  string(i: number): Uint8Array {
    const lexer = new Lexer(this.bytes, this.starts[i]);
    lexer.next(true);
    return lexer.string!;
  }

  /**
   * Reads the stream: `operator` for each operator (the operands are emptied after it), `inline`
   * for each inline image (BI … EI, its span in `bytes`); false when some part of it cannot be read
   * as content (the stream is then left as it is). Comments are dropped. Operands without an
   * operator at the end are left in the reader.
   */
  read(operator: (reader: ContentReader) => void, inline: (start: number, end: number) => void): boolean {
    const { bytes } = this;
    const images: number[] = [];
    if (
      mayHoldInlineImages(bytes) &&
      !scanContent(bytes, { inlineImage: (image) => images.push(image.start, image.end) })
    ) {
      return false;
    }
    const lexer = new Lexer(bytes);
    let next = 0;
    for (;;) {
      const at = lexer.skipWhiteAndComments();
      if (next < images.length && at === images[next]) {
        inline(at, images[next + 1]!);
        lexer.pos = images[next + 1]!;
        next += 2;
        continue;
      }
      const kind = lexer.next(false);
      const { start, pos: end } = lexer;
      switch (kind) {
        case Tok.End:
          return next === images.length;
        case Tok.Stray:
          return false;
        case Tok.Literal:
        case Tok.Hex:
          if (!lexer.wellFormed || (kind === Tok.Hex && !isCleanHex(bytes, start + 1, end - 1))) return false;
          this.push(T.String, bytes, start, end);
          continue;
        case Tok.Regular: {
          const read = this.regular(start, end);
          if (read === MALFORMED) return false;
          if (read === OPERATOR) {
            operator(this);
            this.count = 0;
          }
          continue;
        }
        default: // a name, << >> [ ] { }
          this.push(T.Other, bytes, start, end);
      }
    }
  }

  /** A number, keyword or operator read: an operand, an operator (the reader's `op`), or a malformed number. */
  private regular(start: number, end: number): typeof OPERAND | typeof OPERATOR | typeof MALFORMED {
    const { bytes } = this;
    const b = bytes[start]!;
    if ((b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x2b) {
      const digitsFrom = numberDigitsFrom(bytes, start, end);
      if (digitsFrom < 0) return MALFORMED;
      if (isShort(bytes, start, digitsFrom, end)) this.push(T.Number, bytes, start, end);
      else this.pushShortened(start, digitsFrom, end);
      return OPERAND;
    }
    const word = wordOf(bytes, start, end);
    if (word === "true" || word === "false" || word === "null") {
      this.push(T.Other, bytes, start, end);
      return OPERAND;
    }
    this.op = word;
    this.opStart = start;
    this.opEnd = end;
    this.after = end < bytes.length && WHITESPACE[bytes[end]!] ? bytes[end]! : 0x0a;
    return OPERATOR;
  }

  private push(type: TokenType, src: Uint8Array, start: number, end: number): void {
    const i = this.count;
    if (i === this.types.length) this.grow();
    this.types[i] = type;
    this.starts[i] = start;
    this.ends[i] = end;
    this.srcs[i] = src;
    this.count = i + 1;
  }

  /**
   * A well-formed number written shorter, into the current block (a new one when it is full): what
   * `shortNumber` makes of its text, byte by byte (61,073 of optimised_geotopo's numbers).
   */
  private pushShortened(start: number, digitsFrom: number, end: number): void {
    const { bytes } = this;
    let negative = false;
    for (let i = start; i < digitsFrom; i++) if (bytes[i] === 0x2d) negative = !negative;
    let intStart = digitsFrom;
    while (intStart < end && bytes[intStart] === 0x30) intStart++;
    let intEnd = intStart;
    while (intEnd < end && bytes[intEnd] !== 0x2e) intEnd++;
    const fracStart = intEnd + 1;
    let fracEnd = end;
    while (fracEnd > fracStart && bytes[fracEnd - 1] === 0x30) fracEnd--;
    const int = intEnd - intStart;
    const frac = Math.max(0, fracEnd - fracStart);
    // No digit left but zeros: "0", without its sign.
    const zero = int === 0 && frac === 0;
    const length = zero ? 1 : (negative ? 1 : 0) + int + (frac > 0 ? frac + 1 : 0);
    if (this.shortenedLength + length > this.shortened.length) {
      this.shortened = new Uint8Array(Math.max(SHORTENED_BLOCK, length));
      this.shortenedLength = 0;
    }
    const out = this.shortened;
    const from = this.shortenedLength;
    let at = from;
    if (zero) out[at++] = 0x30;
    else {
      if (negative) out[at++] = 0x2d;
      for (let i = intStart; i < intEnd; i++) out[at++] = bytes[i]!;
      if (frac > 0) {
        out[at++] = 0x2e;
        for (let i = fracStart; i < fracEnd; i++) out[at++] = bytes[i]!;
      }
    }
    this.shortenedLength = at;
    this.push(T.Number, out, from, at);
  }

  private grow(): void {
    const size = this.types.length * 2;
    const types = new Uint8Array(size);
    const starts = new Int32Array(size);
    const ends = new Int32Array(size);
    types.set(this.types);
    starts.set(this.starts);
    ends.set(this.ends);
    this.types = types;
    this.starts = starts;
    this.ends = ends;
    this.srcs.length = size;
  }
}
