// pdf-lib's parser reads each cross-reference table it meets into a PDFCrossRefSection (a pooled
// reference and an entry object a line) and then drops it: parseDocumentSection does not keep what
// maybeParseCrossRefSection returns, and the objects are found by scanning the file. A table of
// free entries is long in some producers' files (text_excel_warn_16p: 9,809 of them, each with a
// reference of generation 65535 that pdf-lib pools by a string key, for as long as the process
// lives). The parser here walks the table as pdf-lib's does, stopping where it stops and leaving the
// parser where it leaves it (the same skipping of white-space and comments, an integer's digits,
// an `n` or `f`), without making the references and entries nobody reads (issue 42).
import { PDFParser } from "@cantoo/pdf-lib";

/** What the walk reads of pdf-lib's parser (its members are not in its types). */
interface Parser {
  bytes: { done(): boolean; peek(): number | undefined; next(): number };
  skipWhitespaceAndComments(): void;
  matchKeyword(keyword: number[]): boolean;
  parseRawInt(): number;
}
type Walk = (this: Parser) => unknown;

const XREF = [0x78, 0x72, 0x65, 0x66];
const N = 0x6e;
const F = 0x66;
const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39;

// pdf-lib declares the method private: reached through the prototype, as the parser calls it.
const prototype = PDFParser.prototype as unknown as { maybeParseCrossRefSection: Walk };
/** pdf-lib's own, kept for the tests that compare the two. */
export const pdfLibCrossRefSection: Walk = prototype.maybeParseCrossRefSection;

/** maybeParseCrossRefSection without the section: the parser left where pdf-lib's leaves it. */
function skipCrossRefSection(this: Parser): undefined {
  this.skipWhitespaceAndComments();
  if (!this.matchKeyword(XREF)) return undefined;
  this.skipWhitespaceAndComments();
  while (!this.bytes.done() && isDigit(this.bytes.peek())) {
    this.parseRawInt();
    this.skipWhitespaceAndComments();
    if (!isDigit(this.bytes.peek())) return undefined;
    this.parseRawInt();
    this.skipWhitespaceAndComments();
    const byte = this.bytes.peek();
    if (byte === N || byte === F) this.bytes.next();
    this.skipWhitespaceAndComments();
  }
  return undefined;
}

prototype.maybeParseCrossRefSection = skipCrossRefSection;
