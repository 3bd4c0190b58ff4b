import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodePDFRawStream, PDFContext, PDFDict, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import { ascii85Decode } from "../../../src/pdf/streams/ascii85.ts";

/** pdf-lib's decoder, which ascii85Decode replaces. */
function pdfLibDecode(data: Uint8Array): Uint8Array {
  const dict = PDFDict.withContext(PDFContext.create());
  dict.set(PDFName.of("Filter"), PDFName.of("ASCII85Decode"));
  return decodePDFRawStream(PDFRawStream.of(dict, data)).decode();
}

const bytes = (text: string) => new TextEncoder().encode(text);
const hex = (data: Uint8Array | undefined) => (data ? Buffer.from(data).toString("hex") : "undefined");

/** ASCII85 of `data` as writers make it: groups of five, `z` for zeros, lines broken, `~>` at the end. */
function encode(data: Uint8Array, z: boolean): string {
  let text = "";
  for (let i = 0; i < data.length; i += 4) {
    const group = data.subarray(i, i + 4);
    let value = 0;
    for (let j = 0; j < 4; j++) value = value * 256 + (group[j] ?? 0);
    if (z && group.length === 4 && value === 0) {
      text += "z";
      continue;
    }
    const digits: string[] = [];
    for (let j = 0; j < 5; j++) {
      digits.unshift(String.fromCharCode(0x21 + (value % 85)));
      value = Math.floor(value / 85);
    }
    text += digits.slice(0, group.length + 1).join("");
    if (i % 60 === 56) text += "\n";
  }
  return `${text}~>`;
}

describe("ASCII85Decode", () => {
  it("decodes what writers write, z and partial groups included", () => {
    const data = new Uint8Array(1001).map((_, i) => (i % 97 < 30 ? 0 : (i * 131 + (i >> 3)) & 0xff));
    for (const z of [false, true]) {
      for (const length of [0, 1, 2, 3, 4, 5, 8, 1001]) {
        const text = bytes(encode(data.subarray(0, length), z));
        expect(hex(ascii85Decode(text, 1 << 20))).toBe(hex(data.subarray(0, length)));
        expect(hex(ascii85Decode(text, 1 << 20))).toBe(hex(pdfLibDecode(text)));
      }
    }
    expect(new TextDecoder().decode(ascii85Decode(bytes('87cURD]i,"Ebo80~>'), 100))).toBe("Hello World!");
  });

  it("gives pdf-lib's bytes on any input (spaces, z inside a group, out of range bytes, ~ and the end)", () => {
    const alphabet = [..."!#5su z~\n\r\t\f\0>{vwxy"].map((c) => c.charCodeAt(0));
    const anyByte = fc.integer({ min: 0, max: 255 });
    const likely = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0x21, max: 0x75 }) },
      { weight: 3, arbitrary: fc.constantFrom(...alphabet) },
      { weight: 1, arbitrary: anyByte },
    );
    fc.assert(
      fc.property(fc.array(likely, { maxLength: 200 }), (codes) => {
        const data = new Uint8Array(codes);
        expect(hex(ascii85Decode(data, 1 << 20))).toBe(hex(pdfLibDecode(data)));
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses output past its ceiling, and only then", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(0x21, 0x75, 0x7a, 0x20, 0x7e, 0x22), { maxLength: 60 }),
        fc.nat(80),
        (codes, max) => {
          const data = new Uint8Array(codes);
          const whole = pdfLibDecode(data);
          const capped = ascii85Decode(data, max);
          if (whole.length > max) expect(capped).toBeUndefined();
          else expect(hex(capped)).toBe(hex(whole));
        },
      ),
      { numRuns: 3000 },
    );
    const zeros = bytes("z".repeat(1000));
    expect(ascii85Decode(zeros, 3999)).toBeUndefined();
    expect(ascii85Decode(zeros, 4000)?.length).toBe(4000);
  });

  it("gives pdf-lib's bytes on long data, its room grown by z groups, and refuses past the ceiling", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let round = 0; round < 40; round++) {
      const data = new Uint8Array(Math.floor(random() * 6000)).map(() =>
        random() < 0.5 ? 0 : Math.floor(random() * 256),
      );
      const text = bytes(encode(data, round % 2 === 0));
      const whole = pdfLibDecode(text);
      expect(hex(ascii85Decode(text, 1 << 20))).toBe(hex(whole));
      const max = Math.floor(random() * whole.length * 1.2);
      const capped = ascii85Decode(text, max);
      if (whole.length > max) expect(capped).toBeUndefined();
      else expect(hex(capped)).toBe(hex(whole));
    }
  });
});
