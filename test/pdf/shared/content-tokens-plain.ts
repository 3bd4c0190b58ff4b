// The content tokenizer as the engine wrote it before its operands became spans in typed arrays
// (src/pdf/shared/content-tokens.ts, ContentReader): a Token object a token, each number's value
// read and its shortest form written as it came, each string's escapes applied. content-tokens.test.ts
// compares the reader with it.
import { isRegular, Lexer, plain, scanContent, textOf, Tok, WHITESPACE } from "../../../src/pdf/shared/syntax.ts";

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

/**
 * A token: its bytes as written are src[start, end) (the stream's own, or a number's shortest form
 * written again), told by their place rather than copied or viewed (a subarray a token cost more
 * than reading it: most are written out as they came).
 */
export class Token {
  readonly type: TokenType;
  readonly src: Uint8Array;
  readonly start: number;
  readonly end: number;
  readonly value: number | undefined;
  /** A string's bytes, escapes applied. */
  readonly bytes: Uint8Array | undefined;
  /** An operator's name. */
  readonly op: string | undefined;
  /** The whitespace byte after an operator, kept (producers' line structure deflates well as it is). */
  readonly after: number | undefined;

  constructor(
    type: TokenType,
    src: Uint8Array,
    start: number,
    end: number,
    value?: number,
    bytes?: Uint8Array,
    op?: string,
    after?: number,
  ) {
    this.type = type;
    this.src = src;
    this.start = start;
    this.end = end;
    this.value = value;
    this.bytes = bytes;
    this.op = op;
    this.after = after;
  }

  /** The bytes as written (a number: its shortest form). */
  get raw(): Uint8Array {
    return this.src.subarray(this.start, this.end);
  }
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
  // Already short: no sign but one minus, no leading zero, no trailing zero or dot after a dot.
  const short =
    bytes[start] !== 0x2b &&
    digitsFrom - start === (negative ? 1 : 0) &&
    !(bytes[digitsFrom] === 0x30 && end - digitsFrom > 1) &&
    (dot < 0 || (bytes[end - 1] !== 0x30 && bytes[end - 1] !== 0x2e));
  if (short && digits <= MAX_EXACT_DIGITS) {
    return new Token(T.Number, bytes, start, end, exactValue(bytes, digitsFrom, end, negative));
  }
  const text = textOf(bytes, start, end);
  const written = short ? text : shortNumber(text);
  if (short) return new Token(T.Number, bytes, start, end, Number(written));
  const shortened = ascii(written);
  return new Token(T.Number, shortened, 0, shortened.length, Number(written));
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

/**
 * Hands the tokens of a content stream to `emit` one at a time (a long stream's tokens are never
 * held together); false when some part of it cannot be read as content (the stream is then left as
 * it is). Comments are dropped.
 */
export function tokenize(content: Uint8Array, emit: (token: Token) => void): boolean {
  const bytes = plain(content);
  const inline: [number, number][] = [];
  if (
    mayHoldInlineImages(bytes) &&
    !scanContent(bytes, { inlineImage: (image) => inline.push([image.start, image.end]) })
  ) {
    return false;
  }
  const lexer = new Lexer(bytes);
  let next = 0;
  for (;;) {
    const at = lexer.skipWhiteAndComments();
    if (next < inline.length && at === inline[next]![0]) {
      const [start, end] = inline[next++]!;
      emit(new Token(T.Inline, bytes, start, end));
      lexer.pos = end;
      continue;
    }
    const kind = lexer.next(true);
    const { start, pos: end } = lexer;
    switch (kind) {
      case Tok.End:
        return next === inline.length;
      case Tok.Stray:
        return false;
      case Tok.Literal:
      case Tok.Hex:
        if (!lexer.wellFormed) return false;
        emit(new Token(T.String, bytes, start, end, undefined, lexer.string));
        continue;
      case Tok.Regular: {
        const token = regularToken(bytes, start, end);
        if (!token) return false;
        emit(token);
        continue;
      }
      default: // a name, << >> [ ] { }
        emit(new Token(T.Other, bytes, start, end));
    }
  }
}

/** A number, keyword or operator token, or undefined when a number is malformed. */
function regularToken(bytes: Uint8Array, start: number, end: number): Token | undefined {
  const b = bytes[start]!;
  if ((b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x2b) return numberToken(bytes, start, end);
  const word = wordOf(bytes, start, end);
  if (word === "true" || word === "false" || word === "null") return new Token(T.Other, bytes, start, end);
  const after = end < bytes.length && WHITESPACE[bytes[end]!] ? bytes[end]! : 0x0a;
  return new Token(T.Operator, bytes, start, end, undefined, undefined, word, after);
}
