// pdf-lib inflates the object streams and cross-reference streams it parses with its own Flate
// decoder, in JavaScript (`FlateStream`), and the engine parses twice: the input, and the output
// read back. A tagged document keeps nearly all its objects in object streams (text_excel_warn_16p:
// 9,854 objects), and their inflate was 3 % of its job's profile (`ByteStream.fromPDFRawStream`,
// 66 ms of samples over the two parses). This is the same decode by zlib, for a stream with the one
// filter FlateDecode and no encryption transform: pdf-lib's decoder applies no /DecodeParms, so
// neither is any applied here. zlib refuses what pdf-lib's decoder may still read (a wrong Adler-32
// checksum, data that ends early); anything it refuses, and any other stream, goes to pdf-lib's
// own, so a stream either decodes as pdf-lib decodes it or is pdf-lib's to decode.
import { constants as buffer } from "node:buffer";
import { PDFContext, PDFName, PDFObjectParser } from "@cantoo/pdf-lib";
import type { PDFRawStream } from "@cantoo/pdf-lib";
import { inflate } from "../streams/filters.ts";

/** pdf-lib's ByteStream, as the parsers reach it (the class is not exported). */
interface ByteStreamClass {
  of(bytes: Uint8Array): unknown;
  fromPDFRawStream(rawStream: PDFRawStream): unknown;
}

const FLATE = PDFName.of("FlateDecode");
const FILTER = PDFName.of("Filter");

// The class of a parser's stream: the one pdf-lib's object stream and cross-reference stream
// parsers call `fromPDFRawStream` on.
const ByteStream = (
  PDFObjectParser.forBytes(new Uint8Array(0), PDFContext.create()) as unknown as {
    bytes: { constructor: ByteStreamClass };
  }
).bytes.constructor;

/** pdf-lib's own `ByteStream.fromPDFRawStream`, kept for what zlib does not decode and for the tests. */
export const pdfLibFromPDFRawStream = ByteStream.fromPDFRawStream.bind(ByteStream);

/**
 * The data of a stream pdf-lib parses objects from: inflated by zlib when its only filter is
 * FlateDecode and it is not encrypted, else (and whenever zlib refuses it) by pdf-lib.
 */
export function decodedForParsing(rawStream: PDFRawStream): Uint8Array | undefined {
  const { dict, contents, transform } = rawStream as PDFRawStream & { transform?: unknown };
  if (transform !== undefined || dict.lookup(FILTER) !== FLATE) return undefined;
  const data = inflate(contents, buffer.MAX_LENGTH);
  // A plain view: pdf-lib's ByteStream slices what it reads, and a Buffer's slice would share memory.
  return data && new Uint8Array(data.buffer, data.byteOffset, data.length);
}

ByteStream.fromPDFRawStream = (rawStream: PDFRawStream) => {
  const data = decodedForParsing(rawStream);
  return data ? ByteStream.of(data) : pdfLibFromPDFRawStream(rawStream);
};
