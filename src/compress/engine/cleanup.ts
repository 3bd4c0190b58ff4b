// Data a viewer never shows: other applications' private data (/PieceInfo, e.g. Illustrator's
// editing state, often half of such a file) and page thumbnails (/Thumb: viewers draw their own).
// Dropping them changes nothing on screen or paper; the next pass removes what they referred to.
import { PDFDict, PDFName, PDFPageLeaf, PDFStream } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";

const PIECE_INFO = PDFName.of("PieceInfo");
const THUMB = PDFName.of("Thumb");

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
