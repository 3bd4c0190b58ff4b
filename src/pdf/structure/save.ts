// Writing the document out, and checking that what was written reads back: for compressPdf and
// unlockPdf alike.
import { ParseSpeeds, PDFDocument } from "@cantoo/pdf-lib";
import { catalogXmp, pdfAPart } from "./cleanup.ts";
import { LinearizeRefused, writeLinearized } from "./linearize.ts";
import { renumberObjects, writeClassic, writeWithObjectStreams } from "./writer.ts";
import { findCrossReferenceProblem } from "./xref.ts";
import "./object-order.ts";
import "./parse-names.ts";
import "./stream-inflate.ts";
import "./xref-table.ts";

export type LinearizationReport = { linearized: true } | { linearized: false; reason: string; message: string };

/** Writes the document, with object streams unless it is PDF/A-1 (which forbids them). */
export async function saveDocument(doc: PDFDocument): Promise<Uint8Array> {
  renumberObjects(doc.context);
  return pdfAPart(catalogXmp(doc.context)) === 1 ? writeClassic(doc.context) : writeWithObjectStreams(doc.context);
}

/**
 * Writes the document linearized, checked as it will be read back; when it cannot be (a
 * structural reason, or output that does not read back), writes it as saveDocument does and says why.
 */
export async function saveLinearized(
  doc: PDFDocument,
  pages: number,
): Promise<{ output: Uint8Array; linearization: LinearizationReport }> {
  let refused: { reason: string; message: string };
  try {
    const output = writeLinearized(doc.context, pdfAPart(catalogXmp(doc.context)) !== 1);
    if (await readsBack(output, pages)) return { output, linearization: { linearized: true } };
    refused = { reason: "output_invalid", message: "the linearized output did not read back" };
  } catch (error) {
    if (!(error instanceof LinearizeRefused)) throw error;
    refused = { reason: error.reason, message: error.message };
  }
  return { output: await saveDocument(doc), linearization: { linearized: false, ...refused } };
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
