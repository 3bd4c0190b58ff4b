// Content streams decoded once for two passes (issue 42): the font pass's usage walk (fonts/usage.ts)
// and the image pass's placement walk (shared/placement.ts) each read every page's content. A
// stream that holds large inline images (inline_image_large: 1.7 MB of Flate, 2.1 MB decoded) was
// inflated by both; the usage walk now leaves its decoding here for the placement walk, which
// takes it (once) if the stream's data is still the one decoded. Only such streams: they are the
// ones the placement walk keeps decoded anyway (Placements.inline), so the peak holds nothing more
// for long; other content is read and dropped, as before (a long document's pages would take tens
// of megabytes). What the walk did not take it forgets (`forgetDecoded`); in a profile without an
// image pass (lossless) what was kept goes with the document.
import type { PDFContext, PDFRawStream } from "@cantoo/pdf-lib";

interface Decoded {
  /** The stream's stored data when it was decoded. */
  contents: Uint8Array;
  bytes: Uint8Array;
}

const documents = new WeakMap<PDFContext, Map<PDFRawStream, Decoded>>();

/** Leaves the decoded content of `stream` for a later pass. */
export function keepDecoded(context: PDFContext, stream: PDFRawStream, bytes: Uint8Array): void {
  let kept = documents.get(context);
  if (!kept) documents.set(context, (kept = new Map<PDFRawStream, Decoded>()));
  kept.set(stream, { contents: stream.contents, bytes });
}

/** The decoded content left for `stream`, if its data is still what was decoded; taken once. */
export function takeDecoded(context: PDFContext, stream: PDFRawStream): Uint8Array | undefined {
  const kept = documents.get(context);
  const decoded = kept?.get(stream);
  if (!decoded) return undefined;
  kept!.delete(stream);
  return decoded.contents === stream.contents ? decoded.bytes : undefined;
}

/** Drops whatever no pass took. */
export function forgetDecoded(context: PDFContext): void {
  documents.delete(context);
}
