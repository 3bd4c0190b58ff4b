// A dictionary's size and bytes (src/pdf/structure/dict-bytes.ts) against pdf-lib's own
// sizeInBytes and copyBytesInto: on fuzzed dictionaries of names, numbers, strings, references,
// arrays and dictionaries inside, the same size and the same bytes at any offset.
import { PDFArray, PDFContext, PDFDict, PDFHexString, PDFName, PDFNumber, PDFRef, PDFString } from "@cantoo/pdf-lib";
import type { PDFObject } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pdfLibCopyBytesInto, pdfLibSizeInBytes } from "../../../src/pdf/structure/dict-bytes.ts";

const context = PDFContext.create();
const name = fc.stringMatching(/^[A-Za-z0-9#() ]{1,8}$/).map((text) => PDFName.of(text));

const { value } = fc.letrec<{ value: PDFObject }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    name,
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((n) => PDFNumber.of(n)),
    fc.string({ maxLength: 8 }).map((text) => PDFString.of(text)),
    fc.string({ maxLength: 8 }).map((text) => PDFHexString.fromText(text)),
    fc.integer({ min: 0, max: 500 }).map((n) => PDFRef.of(n)),
    fc.array(tie("value"), { maxLength: 4 }).map((items) => {
      const array = PDFArray.withContext(context);
      for (const item of items) array.push(item);
      return array;
    }),
    fc.array(fc.tuple(name, tie("value")), { maxLength: 5 }).map((entries) => {
      const dict = PDFDict.withContext(context);
      for (const [key, item] of entries) dict.set(key, item);
      return dict;
    }),
  ),
}));

const dict = fc.array(fc.tuple(name, value), { maxLength: 8 }).map((entries) => {
  const made = PDFDict.withContext(context);
  for (const [key, item] of entries) made.set(key, item);
  return made;
});

describe("dict-bytes", () => {
  it("sizes and writes a dictionary as pdf-lib does", () => {
    fc.assert(
      fc.property(dict, fc.integer({ min: 0, max: 7 }), (made, offset) => {
        const size = made.sizeInBytes();
        expect(size).toBe(pdfLibSizeInBytes.call(made));
        const ours = new Uint8Array(size + offset + 2);
        const theirs = new Uint8Array(size + offset + 2);
        expect(made.copyBytesInto(ours, offset)).toBe(size);
        expect(pdfLibCopyBytesInto.call(made, theirs, offset)).toBe(size);
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 500 },
    );
  });
});
