// Lossless stream work: every stream decodes to exactly the same bytes afterwards.
//
// - unfiltered streams get Flate;
// - chains of general filters without parameters (ASCIIHex, ASCII85, LZW, RunLength, Flate) become
//   one Flate at the highest level;
// - a Flate stream with a predictor is re-deflated, its predicted data and /DecodeParms kept.
// A result replaces the stream only when it is smaller. Streams we cannot decode in full (damaged
// data, more than MAX_DECODED bytes) are left as they are.
import { PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { decodeFilters, decodeParmsOf, deflate, filtersOf, hasNoPredictor, inflate, N } from "./filters.ts";

const MAX_DECODED = 128 * 1024 * 1024;
/** What a /Filter /FlateDecode entry costs in the dictionary. */
const FILTER_ENTRY_BYTES = 20;

export interface StreamReport {
  streams: number;
  recompressed: number;
  bytesBefore: number;
  bytesAfter: number;
}

export interface StreamOptions {
  /** Streams to leave alone (images just re-encoded). */
  skip?: ReadonlySet<PDFRawStream>;
  /** Leave images that already have a filter byte-for-byte as they are (lossless profile). */
  keepEncodedImages?: boolean;
}

function recompress(stream: PDFRawStream, options: StreamOptions): Uint8Array | undefined {
  const { dict, contents } = stream;
  const filters = filtersOf(dict);
  const parms = filters && decodeParmsOf(dict, filters.length);
  if (!filters || !parms) return undefined;
  if (filters.length > 0 && options.keepEncodedImages && dict.lookup(N.Subtype) === N.Image) return undefined;
  if (filters.length === 1 && filters[0] === "FlateDecode" && !hasNoPredictor(parms[0])) {
    const data = inflate(contents, MAX_DECODED);
    return data && deflate(data);
  }
  if (!parms.every((parm) => parm === undefined)) return undefined;
  if (filters.length === 0 && dict.has(N.DecodeParms)) return undefined;
  const data = filters.length === 0 ? contents : decodeFilters(contents, filters, parms, dict, MAX_DECODED);
  return data && deflate(data);
}

/** Re-encodes the document's streams losslessly where that makes them smaller. */
export function recompressStreams(context: PDFContext, options: StreamOptions = {}): StreamReport {
  const report: StreamReport = { streams: 0, recompressed: 0, bytesBefore: 0, bytesAfter: 0 };
  for (const [, stream] of context.enumerateIndirectObjects()) {
    if (!(stream instanceof PDFRawStream) || options.skip?.has(stream)) continue;
    const type = stream.dict.lookup(N.Type);
    // Cross-reference and object streams are rewritten by the writer; XMP metadata stays
    // readable as text (PDF/A asks for it unfiltered); /F streams live in another file.
    if (type === N.XRef || type === N.ObjStm || type === N.Metadata || stream.dict.has(N.F)) continue;
    report.streams++;
    const encoded = recompress(stream, options);
    const before = stream.contents.length;
    const hadFilter = stream.dict.has(N.Filter);
    if (!encoded || encoded.length + (hadFilter ? 0 : FILTER_ENTRY_BYTES) >= before) continue;
    const filters = filtersOf(stream.dict) ?? [];
    const keepsParms = filters.length === 1 && filters[0] === "FlateDecode";
    if (!keepsParms) {
      stream.dict.set(N.Filter, N.FlateDecode);
      stream.dict.delete(N.DecodeParms);
    }
    stream.updateContents(encoded);
    report.recompressed++;
    report.bytesBefore += before;
    report.bytesAfter += encoded.length;
  }
  return report;
}
