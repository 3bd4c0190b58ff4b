// pdf-lib writes a dictionary (sizeInBytes, then copyBytesInto) through entries(), which copies its
// map into a new list of [key, value] pairs each time: twice for every dictionary the writer puts
// out, twice more for each one inside an object stream, and again when the output's size is
// counted (issue 42: short-lived garbage, a quarter of a text document's CPU being the collector).
// The same walk over the map itself, in its order, gives the same size and the same bytes.
import { PDFDict } from "@cantoo/pdf-lib";
import type { PDFName, PDFObject } from "@cantoo/pdf-lib";

// pdf-lib declares the map private: reached as its own methods reach it.
type Dict = { dict: Map<PDFName, PDFObject> };
type Methods = {
  sizeInBytes: (this: PDFDict) => number;
  copyBytesInto: (this: PDFDict, buffer: Uint8Array, offset: number) => number;
};

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;
const NEWLINE = 0x0a;
const SPACE = 0x20;

const prototype = PDFDict.prototype as unknown as Methods;
/** pdf-lib's own methods, kept for the tests that compare the two. */
export const pdfLibSizeInBytes = prototype.sizeInBytes;
export const pdfLibCopyBytesInto = prototype.copyBytesInto;

function sizeInBytes(this: PDFDict): number {
  let size = 5;
  for (const [key, value] of (this as unknown as Dict).dict) size += key.sizeInBytes() + value.sizeInBytes() + 2;
  return size;
}

function copyBytesInto(this: PDFDict, buffer: Uint8Array, offset: number): number {
  const initialOffset = offset;
  buffer[offset++] = LESS_THAN;
  buffer[offset++] = LESS_THAN;
  buffer[offset++] = NEWLINE;
  for (const [key, value] of (this as unknown as Dict).dict) {
    offset += key.copyBytesInto(buffer, offset);
    buffer[offset++] = SPACE;
    offset += value.copyBytesInto(buffer, offset);
    buffer[offset++] = NEWLINE;
  }
  buffer[offset++] = GREATER_THAN;
  buffer[offset++] = GREATER_THAN;
  return offset - initialOffset;
}

prototype.sizeInBytes = sizeInBytes;
prototype.copyBytesInto = copyBytesInto;
