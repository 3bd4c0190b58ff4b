// pdf-lib's parser reads a number by building its text a character at a time (`charFromCode`, a
// string concatenation a byte) and handing it to `Number`, and `PDFNumber.of` then writes the
// value back to text through `numberToString` (three conversions and two splits a number). A
// number is the most common object a PDF holds: form_f1040_prefilled's parse, and the output's
// read back, spent some 40 ms of a 300 ms job there (issue 42). These are the same functions with a
// shorter way to the same value: a number of at most 15 digits, an optional sign first and an
// optional period, is worked out from its bytes (an integer under 2^53 over a power of ten up to
// 10^15, both exact, so the division rounds once, as `Number` reads the text); a number's text is
// `String` of it where that has no exponent (what `numberToString` then gives). Anything else goes
// to pdf-lib's own.
import { numberToString, PDFNumber, PDFObjectParser } from "@cantoo/pdf-lib";
import type { Parser } from "./parse-names.ts";

const PERIOD = 0x2e;
const PLUS = 0x2b;
const MINUS = 0x2d;
/** Digits that make an integer under 2^53 (Number.MAX_SAFE_INTEGER has 16). */
const MAX_DIGITS = 15;
const POWERS = Array.from({ length: MAX_DIGITS + 1 }, (_, k) => 10 ** k);

/** pdf-lib's own PDFNumber.of, which runs the constructor. */
export const pdfLibNumberOf = PDFNumber.of;

type ParseRawNumber = (this: Parser) => number;
// pdf-lib declares the method protected (on BaseParser, which it does not export): set on the
// object parser's prototype, which every parser of a document's objects inherits from.
const prototype = PDFObjectParser.prototype as unknown as { parseRawNumber: ParseRawNumber };
/** pdf-lib's own parseRawNumber, kept for the tests that compare the two. */
export const pdfLibParseRawNumber: ParseRawNumber = prototype.parseRawNumber;

/**
 * The parser's parseRawNumber: pdf-lib's reads + - . and digits up to the first period, then
 * digits. The same value, and the stream left where pdf-lib leaves it (a number holds no line
 * feed, so only the column moves), when the number is [+-]digits[.digits] of at most 15 digits
 * and no sign follows it; otherwise pdf-lib's reads it (or throws) from where it starts.
 */
function parseRawNumber(this: Parser): number {
  const stream = this.bytes;
  const { bytes, idx: start, length } = stream;
  let at = start;
  let negative = false;
  if (at < length && (bytes[at] === MINUS || bytes[at] === PLUS)) negative = bytes[at++] === MINUS;
  let value = 0;
  let digits = 0;
  let decimals = -1;
  for (; at < length; at++) {
    const byte = bytes[at]!;
    if (byte >= 0x30 && byte <= 0x39) {
      value = value * 10 + (byte - 0x30);
      digits++;
      if (decimals >= 0) decimals++;
    } else if (byte === PERIOD && decimals < 0) decimals = 0;
    // After a period pdf-lib stops at any other byte; before one, a sign is read on (into NaN).
    else if (decimals < 0 && (byte === PLUS || byte === MINUS)) return pdfLibParseRawNumber.call(this);
    else break;
  }
  if (digits === 0 || digits > MAX_DIGITS) return pdfLibParseRawNumber.call(this);
  stream.idx = at;
  stream.column += at - start;
  if (decimals > 0) value /= POWERS[decimals]!;
  return negative ? -value : value;
}

/**
 * PDFNumber.of: the object pdf-lib's constructor makes (the same fields, in the same order), its
 * text made by String from 10^-6 to 10^21, where String writes no exponent and numberToString
 * gives String's text.
 */
function numberOf(value: number): PDFNumber {
  const number = Object.create(PDFNumber.prototype) as { numberValue: number; stringValue: string };
  number.numberValue = value;
  const size = Math.abs(value);
  number.stringValue = size < 1e21 && (size >= 1e-6 || size === 0) ? String(value) : numberToString(value);
  return number as unknown as PDFNumber;
}

prototype.parseRawNumber = parseRawNumber;
(PDFNumber as { of: typeof numberOf }).of = numberOf;
