// Data a viewer never shows.
//
// - Other applications' private data (/PieceInfo, e.g. Illustrator's editing state, often half
//   of such a file) and page thumbnails (/Thumb: viewers draw their own): balanced and extreme.
// - Metadata (extreme): XMP /Metadata streams everywhere, and the document information
//   dictionary down to what a viewer's document properties show as the document's own
//   description (Title, Author, Subject, Keywords and the two dates; Creator, Producer, Trapped
//   and private keys go). The catalog's XMP stays when it declares PDF/A or PDF/UA conformance:
//   both standards require it, and dropping it would make the file's claim false.
//
// - All metadata (the removeMetadata option, any profile): every XMP stream and the whole
//   document information dictionary; what readers use to show and read the document (/Lang,
//   the structure tree, /MarkInfo, outlines, output intents) is not metadata and stays.
//
// Dropping them changes nothing on screen or paper; prune.ts then removes what they referred to.
import { PDFDict, PDFName, PDFPageLeaf, PDFRawStream, PDFStream } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { decodeStreamData, N } from "../streams/filters.ts";

const PIECE_INFO = PDFName.of("PieceInfo");
const THUMB = PDFName.of("Thumb");
const INFO_KEPT = new Set(
  ["Title", "Author", "Subject", "Keywords", "CreationDate", "ModDate"].map((name) => PDFName.of(name)),
);
const MAX_XMP = 16 * 1024 * 1024;
const latin1 = new TextDecoder("latin1");

/** Removes /PieceInfo from every dictionary and /Thumb from every page; returns how many entries. */
export function discardPrivateData(context: PDFContext): number {
  let removed = 0;
  for (const [, object] of context.enumerateIndirectObjects()) {
    const dict = object instanceof PDFStream ? object.dict : object;
    if (!(dict instanceof PDFDict)) continue;
    if (dict.delete(PIECE_INFO)) removed++;
    if (dict instanceof PDFPageLeaf && dict.delete(THUMB)) removed++;
  }
  return removed;
}

/** The catalog's XMP packet as text, if it has one we can read. */
export function catalogXmp(context: PDFContext): string | undefined {
  const catalog = context.lookup(context.trailerInfo.Root);
  const metadata = catalog instanceof PDFDict ? catalog.lookup(N.Metadata) : undefined;
  if (!(metadata instanceof PDFRawStream)) return undefined;
  const xmp = decodeStreamData(metadata, MAX_XMP);
  return xmp && latin1.decode(xmp);
}

/** The part of PDF/A the XMP declares (1 for PDF/A-1b), if any. */
export function pdfAPart(xmp: string | undefined): number | undefined {
  const match = xmp && /pdfaid:part(?:\s*=\s*["']|>)\s*(\d)/.exec(xmp);
  return match ? Number(match[1]) : undefined;
}

const declaresConformance = (xmp: string | undefined) =>
  pdfAPart(xmp) !== undefined || (xmp !== undefined && /pdfuaid:part/.test(xmp));

/**
 * Removes every /Metadata stream and the document information dictionary; returns how many
 * entries it removed (each key of the dictionary counts).
 */
export function removeAllMetadata(context: PDFContext): number {
  let removed = 0;
  for (const [, object] of context.enumerateIndirectObjects()) {
    const dict = object instanceof PDFStream ? object.dict : object;
    if (dict instanceof PDFDict && dict.delete(N.Metadata)) removed++;
  }
  const info = context.lookup(context.trailerInfo.Info);
  if (info instanceof PDFDict) removed += info.keys().length;
  context.trailerInfo.Info = undefined;
  return removed;
}

/**
 * Removes /Metadata streams (all but a PDF/A or PDF/UA catalog's) and trims the document
 * information dictionary; returns how many entries it removed.
 */
export function discardMetadata(context: PDFContext): number {
  let removed = 0;
  const catalog = context.lookup(context.trailerInfo.Root);
  const keepCatalogXmp = declaresConformance(catalogXmp(context));
  for (const [, object] of context.enumerateIndirectObjects()) {
    const dict = object instanceof PDFStream ? object.dict : object;
    if (!(dict instanceof PDFDict) || (dict === catalog && keepCatalogXmp)) continue;
    if (dict.delete(N.Metadata)) removed++;
  }
  const info = context.lookup(context.trailerInfo.Info);
  if (info instanceof PDFDict) {
    for (const key of info.keys()) {
      if (!INFO_KEPT.has(key)) {
        info.delete(key);
        removed++;
      }
    }
  }
  return removed;
}
