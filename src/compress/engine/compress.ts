// compressPdf: bytes in, smaller bytes out (never larger), same pages.
import { ParseSpeeds, PDFDocument, PDFRawStream } from "@cantoo/pdf-lib";
import { discardPrivateData } from "./cleanup.ts";
import { decodeStreamData, N } from "./filters.ts";
import { optimiseImages } from "./images.ts";
import type { ImageReport } from "./images.ts";
import { openPdf } from "./load.ts";
import { isCompressionProfile, PROFILE_SETTINGS } from "./profiles.ts";
import type { CompressionProfile } from "./profiles.ts";
import { removeUnreachableObjects } from "./prune.ts";
import { recompressStreams } from "./streams.ts";
import { writeClassic, writeWithObjectStreams } from "./writer.ts";
import { findCrossReferenceProblem } from "./xref.ts";
import type { StreamReport } from "./streams.ts";

export interface EngineOutput {
  output: Uint8Array;
  pages: number;
}

export interface CompressionReport {
  images?: ImageReport;
  streams: StreamReport;
  /** /PieceInfo and /Thumb entries dropped. */
  discardedEntries: number;
  removedObjects: number;
  /** Why the input came back unchanged, if it did. */
  unchanged?: "not_smaller" | "write_failed" | "output_invalid";
}

const latin1 = new TextDecoder("latin1");

/** PDF/A-1 forbids object streams: such files are written the classic way. */
function isPdfA1(doc: PDFDocument): boolean {
  const metadata = doc.catalog.lookup(N.Metadata);
  if (!(metadata instanceof PDFRawStream)) return false;
  const xmp = decodeStreamData(metadata, 16 * 1024 * 1024);
  return xmp !== undefined && /pdfaid:part(?:="|>)\s*1\b/.test(latin1.decode(xmp));
}

/** Writes the document, with object streams unless it is PDF/A-1. */
export async function saveDocument(doc: PDFDocument): Promise<Uint8Array> {
  return isPdfA1(doc) ? writeClassic(doc.context) : writeWithObjectStreams(doc.context);
}

/**
 * Whether bytes we wrote read back, unencrypted, with the same number of pages, and with a
 * cross-reference that matches the objects (what a reader other than pdf-lib relies on).
 */
export async function readsBack(output: Uint8Array, pages: number): Promise<boolean> {
  try {
    const doc = await PDFDocument.load(output, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest });
    return doc.getPageCount() === pages && findCrossReferenceProblem(output, doc.context, 0) === undefined;
  } catch {
    return false;
  }
}

/**
 * Compresses a PDF with a profile. Resolves with the input itself when nothing smaller came out;
 * rejects with PdfRejected when the input is not a PDF, is encrypted, or is damaged.
 */
export async function compressPdf(
  input: Uint8Array,
  profile: CompressionProfile,
  onReport?: (report: CompressionReport) => void,
): Promise<EngineOutput> {
  if (!isCompressionProfile(profile)) throw new TypeError(`unknown compression profile: ${String(profile)}`);
  const { doc, pages } = await openPdf(input);
  const settings = PROFILE_SETTINGS[profile];

  const discarded = settings.discardPrivateData ? discardPrivateData(doc.context) : 0;
  const images = settings.images ? await optimiseImages(doc.context, settings.images) : undefined;
  const streams = recompressStreams(doc.context, {
    ...(images ? { skip: images.replaced } : {}),
    keepEncodedImages: !settings.images,
  });
  const removedObjects = removeUnreachableObjects(doc.context);
  const report: CompressionReport = {
    ...(images ? { images: images.report } : {}),
    streams,
    discardedEntries: discarded,
    removedObjects,
  };

  let output: Uint8Array;
  try {
    output = await saveDocument(doc);
  } catch {
    onReport?.({ ...report, unchanged: "write_failed" });
    return { output: input, pages };
  }
  if (output.length >= input.length) {
    onReport?.({ ...report, unchanged: "not_smaller" });
    return { output: input, pages };
  }
  if (!(await readsBack(output, pages))) {
    onReport?.({ ...report, unchanged: "output_invalid" });
    return { output: input, pages };
  }
  onReport?.(report);
  return { output, pages };
}
