// The service's one %PDF- check, whatever brings the file (a multipart upload, a direct upload, a
// file_url): the engine's own reading of the header (findPdfHeader: `%PDF-` within the first 1024
// bytes), applied to the first bytes as they arrive, so a file that is not a PDF is refused before
// the rest of it is read.
import { HttpError } from "../../errors.ts";
import { findPdfHeader, PDF_HEADER_WINDOW } from "../../pdf/index.ts";

/** How many first bytes decide (ISO 32000: the header within the first kilobyte). */
export const SNIFF_BYTES = PDF_HEADER_WINDOW;

/** Whether a file's first bytes hold the PDF header where readers look for it. */
export const hasPdfHeader = (head: Uint8Array): boolean => findPdfHeader(head) >= 0;

export const notPdf = () =>
  new HttpError(422, "not_a_pdf", "The file is not a PDF: it does not start with a %PDF- header.");

export type SniffVerdict = "pdf" | "not_pdf" | "undecided";

/**
 * Watches a stream's first bytes: push each chunk as it arrives; the verdict is "pdf" once the
 * header is seen, "not_pdf" once SNIFF_BYTES arrived without it (or, at end(), when the file ended
 * first), and "undecided" until then. Holds at most SNIFF_BYTES plus one chunk.
 */
export function pdfSniffer(): { push(chunk: Uint8Array): SniffVerdict; end(): SniffVerdict } {
  let head = Buffer.alloc(0);
  let verdict: SniffVerdict = "undecided";
  const judge = (final: boolean): SniffVerdict => {
    if (verdict !== "undecided") return verdict;
    if (hasPdfHeader(head)) verdict = "pdf";
    else if (final || head.length >= SNIFF_BYTES) verdict = "not_pdf";
    if (verdict !== "undecided") head = Buffer.alloc(0);
    return verdict;
  };
  return {
    push(chunk) {
      if (verdict !== "undecided") return verdict;
      head = Buffer.concat([head, chunk]).subarray(0, SNIFF_BYTES);
      return judge(false);
    },
    end: () => judge(true),
  };
}
