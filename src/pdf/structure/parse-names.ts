// pdf-lib's parser makes every reference and name through a pool keyed by a string: `PDFRef.of`
// builds the text "n g R" for each reference it reads, and a name is decoded twice by a regular
// expression (the parser's `decodePdfNameEscapes`, then `PDFName.of`'s own) before its lookup. In a
// tagged document (text_excel_warn_16p: 9,769 structure elements, each with /P, /Pg and /K
// references) that was a fifth of a parse, and the engine parses twice: the input, and the output
// read back (issue 42). These are the same functions with a cheaper way to the same pooled object:
// a reference of generation 0 by its number, a name without `#` by its text (nothing to decode, so
// it is its own key in pdf-lib's pool). Anything else goes through pdf-lib's own, which stays the
// one place objects are made, so an object is the same instance whichever way it was asked for.
import { PDFName, PDFObjectParser, PDFRef } from "@cantoo/pdf-lib";
import { DELIMITER, WHITESPACE } from "../shared/syntax.ts";

const HASH = 0x23;
const SLASH = 0x2f;
/** References numbered from here go through pdf-lib's pool only (a sparse array is slow). */
const DIRECT_REFS = 1 << 24;

/** pdf-lib's own functions, which make and pool the objects. */
export const pdfLibRefOf = PDFRef.of;
export const pdfLibNameOf = PDFName.of;

const refs: PDFRef[] = [];
const names = new Map<string, PDFName>();

/** PDFRef.of: the same pooled reference, found by its number when its generation is 0. */
export function refOf(objectNumber: number, generationNumber = 0): PDFRef {
  if (generationNumber !== 0 || !Number.isInteger(objectNumber) || objectNumber < 0 || objectNumber >= DIRECT_REFS) {
    return pdfLibRefOf(objectNumber, generationNumber);
  }
  return (refs[objectNumber] ??= pdfLibRefOf(objectNumber, 0));
}

/** PDFName.of: the same pooled name, found by its text when it holds no `#` (nothing to decode). */
export function nameOf(name: string): PDFName {
  let pooled = names.get(name);
  if (pooled === undefined) {
    pooled = pdfLibNameOf(name);
    if (!name.includes("#")) names.set(name, pooled);
  }
  return pooled;
}

/** What parseName (and parse-numbers.ts) read of pdf-lib's ByteStream (its fields are not in its types). */
export interface Bytes {
  bytes: Uint8Array;
  idx: number;
  column: number;
  length: number;
}
export type Parser = { bytes: Bytes };
type ParseName = (this: Parser) => PDFName;
// pdf-lib declares the method protected: reached through the prototype, as the parser calls it.
const prototype = PDFObjectParser.prototype as unknown as { parseName: ParseName };
/** pdf-lib's own parseName, kept for the tests that compare the two. */
export const pdfLibParseName: ParseName = prototype.parseName;

/**
 * The parser's parseName: a name's bytes up to white-space or a delimiter, as pdf-lib reads them
 * (a character a byte), the stream left where pdf-lib leaves it (a name holds no line feed, so only
 * the column moves). A name with `#` escapes, or no `/` where one should be, goes to pdf-lib's.
 */
function parseName(this: Parser): PDFName {
  const stream = this.bytes;
  const { bytes, idx: slash, length } = stream;
  if (slash >= length || bytes[slash] !== SLASH) return pdfLibParseName.call(this);
  let end = slash + 1;
  let name = "";
  for (; end < length; end++) {
    const byte = bytes[end]!;
    if (WHITESPACE[byte] === 1 || DELIMITER[byte] === 1) break;
    if (byte === HASH) return pdfLibParseName.call(this);
    name += String.fromCharCode(byte);
  }
  stream.idx = end;
  stream.column += end - slash;
  return nameOf(name);
}

(PDFRef as { of: typeof refOf }).of = refOf;
(PDFName as { of: typeof nameOf }).of = nameOf;
prototype.parseName = parseName;
