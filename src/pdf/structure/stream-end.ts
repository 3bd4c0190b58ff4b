// pdf-lib finds where a stream ends by its /Length when that is a number the data agrees with, and
// otherwise (a /Length that is a reference, as many writers store it, or a wrong one) walks the
// data a byte at a time, trying five keywords at each: 7 % of a document of photographs' CPU and
// 236 ms of the corpus's Epson scan (issue 42's profiles). This is the same walk, made by searching
// for the one thing every keyword it looks for holds, `stream`, with the same answer: the same end,
// the same nesting (pdf-lib counts a `stream` inside the data as a stream within it), the same
// error, and the parser left where the walk leaves it.
import { PDFObjectParser, PDFStreamParsingError } from "@cantoo/pdf-lib";

const STREAM = Buffer.from("stream", "latin1");
const END = Buffer.from("end", "latin1");
const CR = 0x0d;
const LF = 0x0a;

/** What the walk reads of pdf-lib's ByteStream (its fields are not in its types). */
interface Bytes {
  bytes: Uint8Array;
  length: number;
  offset(): number;
  moveTo(offset: number): void;
}

const isEndAt = (data: Buffer, at: number) => data[at] === END[0] && data[at + 1] === END[1] && data[at + 2] === END[2];

/**
 * The keyword pdf-lib's walk from `from` meets at the first `stream` at or after it, `at`: where it
 * starts, how long it is and whether it closes a stream. The walk tries, at each byte, `stream`,
 * then `\r\nendstream`, `\rendstream`, `\nendstream` and `endstream`; each holds `stream`, and two
 * occurrences of it cannot overlap, so the first it matches ends with this one, at the lowest start
 * at or after `from`.
 */
function keywordAt(data: Buffer, at: number, from: number): { start: number; length: number; closes: boolean } {
  const ended = at - 3 >= from && isEndAt(data, at - 3);
  if (ended && at - 5 >= from && data[at - 5] === CR && data[at - 4] === LF) {
    return { start: at - 5, length: 11, closes: true };
  }
  if (ended && at - 4 >= from && (data[at - 4] === CR || data[at - 4] === LF)) {
    return { start: at - 4, length: 10, closes: true };
  }
  if (ended) return { start: at - 3, length: 9, closes: true };
  return { start: at, length: STREAM.length, closes: false };
}

/** The offset where the stream whose data starts at the parser's offset ends (pdf-lib's findEndOfStreamFallback). */
export function findEndOfStream(stream: Bytes, startPos: unknown): number {
  const source = stream.bytes;
  const data = Buffer.from(source.buffer, source.byteOffset, stream.length);
  let from = stream.offset();
  let nesting = 1;
  for (;;) {
    const at = data.indexOf(STREAM, from);
    if (at < 0) {
      stream.moveTo(stream.length);
      throw new PDFStreamParsingError(startPos as never);
    }
    const keyword = keywordAt(data, at, from);
    from = keyword.start + keyword.length;
    nesting += keyword.closes ? -1 : 1;
    if (nesting === 0) {
      stream.moveTo(from);
      return keyword.start;
    }
  }
}

type Parser = { bytes: Bytes };
type Walk = (this: Parser, startPos: unknown) => number;
// pdf-lib declares the method protected: reached through the prototype, as the parser calls it.
const prototype = PDFObjectParser.prototype as unknown as { findEndOfStreamFallback: Walk };
/** pdf-lib's own walk, kept for the tests that compare the two. */
export const pdfLibFindEndOfStream: Walk = prototype.findEndOfStreamFallback;

prototype.findEndOfStreamFallback = function (this: Parser, startPos: unknown) {
  return findEndOfStream(this.bytes, startPos);
};
