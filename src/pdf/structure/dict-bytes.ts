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

// The map is walked by forEach with one callback for all dictionaries, its running figures in the
// variables below (a dictionary's values are written inside the walk of its own entries, so each
// call keeps the figures it found and puts them back): a map's iterator makes a result object and
// an entry pair a step until V8 has optimised the loop, which a job's one writing does not reach.
let size = 0;
let target: Uint8Array = new Uint8Array(0);
let at = 0;

const addSize = (value: PDFObject, key: PDFName) => {
  size += key.sizeInBytes() + value.sizeInBytes() + 2;
};

const copyEntry = (value: PDFObject, key: PDFName) => {
  at += key.copyBytesInto(target, at);
  target[at++] = SPACE;
  // The value may be a dictionary, whose own walk moves `at` on and leaves it past its bytes.
  const offset = at;
  at = offset + value.copyBytesInto(target, offset);
  target[at++] = NEWLINE;
};

function sizeInBytes(this: PDFDict): number {
  const outer = size;
  size = 5;
  (this as unknown as Dict).dict.forEach(addSize);
  const own = size;
  size = outer;
  return own;
}

function copyBytesInto(this: PDFDict, buffer: Uint8Array, offset: number): number {
  const outerTarget = target;
  const outerAt = at;
  target = buffer;
  at = offset;
  buffer[at++] = LESS_THAN;
  buffer[at++] = LESS_THAN;
  buffer[at++] = NEWLINE;
  (this as unknown as Dict).dict.forEach(copyEntry);
  buffer[at++] = GREATER_THAN;
  buffer[at++] = GREATER_THAN;
  const written = at - offset;
  target = outerTarget;
  at = outerAt;
  return written;
}

prototype.sizeInBytes = sizeInBytes;
prototype.copyBytesInto = copyBytesInto;
