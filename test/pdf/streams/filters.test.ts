import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PDFContext, PDFDict, PDFName, PDFNumber } from "@cantoo/pdf-lib";
import { decodeFilters, inflate, lzwDecode, runLengthDecode, unpredict } from "../../../src/pdf/streams/filters.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined) => (data ? new TextDecoder().decode(data) : undefined);

describe("stream filters", () => {
  it("decodes LZW (the example of ISO 32000-1, 7.4.4.2) and stops at its ceiling", () => {
    const encoded = new Uint8Array([0x80, 0x0b, 0x60, 0x50, 0x22, 0x0c, 0x0c, 0x85, 0x01]);
    expect(text(lzwDecode(encoded, 1, 1000))).toBe("-----A---B");
    expect(lzwDecode(encoded, 1, 5)).toBeUndefined();
  });

  it("decodes RunLength and stops at its ceiling", () => {
    // 3 literal bytes, then "z" repeated 257 - 254 = 3 times, then end of data
    const encoded = new Uint8Array([2, 0x61, 0x62, 0x63, 254, 0x7a, 128]);
    expect(text(runLengthDecode(encoded, 100))).toBe("abczzz");
    const bomb = new Uint8Array(2000).map((_, i) => (i % 2 === 0 ? 129 : 0x41)); // 1000 runs of 128
    expect(runLengthDecode(bomb, 64 * 1024)).toBeUndefined();
    expect(runLengthDecode(bomb, 128 * 1000)?.length).toBe(128 * 1000);
  });

  it("inflates sized into one buffer, with the same bytes and the same ceiling", () => {
    const data = new Uint8Array(300_001).map((_, i) => (i * 7 + (i >> 9)) & 0xff);
    const deflated = deflateSync(data);
    for (const ceiling of [300_001, 300_500, 1_000_000]) {
      const sized = inflate(deflated, ceiling, false, true);
      expect(Buffer.from(sized!).equals(Buffer.from(data))).toBe(true);
      // Never joined from chunks: a view of one buffer a byte larger than the ceiling.
      expect(sized!.buffer.byteLength).toBe(ceiling + 1);
    }
    expect(inflate(deflated, 300_000, false, true)).toBeUndefined();
    expect(inflate(deflated, 0, false, true)).toBeUndefined();
    expect(inflate(deflateSync(new Uint8Array(0)), 10, false, true)?.length).toBe(0);
    const cut = deflated.subarray(0, deflated.length - 8);
    expect(inflate(cut, 400_000, false, true)).toBeUndefined();
    expect(inflate(cut, 400_000, true, true)?.length).toBeGreaterThan(0);
    expect(inflate(new Uint8Array([1, 2, 3, 4]), 100, false, true)).toBeUndefined();
  });

  it("inflates within a ceiling, and tolerates a missing end only when asked", () => {
    const data = bytes("x".repeat(100_000));
    const deflated = deflateSync(data);
    expect(inflate(deflated, 200_000)?.length).toBe(100_000);
    expect(inflate(deflated, 50_000)).toBeUndefined();
    const cut = deflated.subarray(0, deflated.length - 4); // no checksum
    expect(inflate(cut, 200_000)).toBeUndefined();
    expect(inflate(cut, 200_000, true)?.length).toBe(100_000);
  });

  it("decodes a chain sized as it does unsized, the last Flate in one buffer", () => {
    const data = new Uint8Array(300_001).map((_, i) => (i * 7 + (i >> 9)) & 0xff);
    const deflated = deflateSync(data);
    // ASCII85 of the Flate data, as inline_image_large stores its photograph.
    let text = "";
    for (let i = 0; i < deflated.length; i += 4) {
      const group = deflated.subarray(i, i + 4);
      let value = 0;
      for (let j = 0; j < 4; j++) value = value * 256 + (group[j] ?? 0);
      const digits: string[] = [];
      for (let j = 0; j < 5; j++, value = Math.floor(value / 85))
        digits.unshift(String.fromCharCode(33 + (value % 85)));
      text += digits.slice(0, group.length + 1).join("");
    }
    const chain = bytes(`${text}~>`);
    const like = PDFDict.withContext(PDFContext.create());
    const filters = ["ASCII85Decode", "FlateDecode"];
    const parms = [undefined, undefined];
    for (const [ceiling, tolerant] of [
      [300_001, false],
      [304_097, true],
      [300_000, true],
    ] as const) {
      const plain = decodeFilters(chain, filters, parms, like, ceiling, { tolerant });
      const sized = decodeFilters(chain, filters, parms, like, ceiling, { tolerant, sized: true });
      expect(sized && Buffer.from(sized).equals(Buffer.from(data))).toBe(
        plain && Buffer.from(plain).equals(Buffer.from(data)),
      );
      if (sized) expect(sized.buffer.byteLength).toBe(ceiling + 1);
      else expect(plain).toBeUndefined();
    }
  });

  it("undoes PNG predictors", () => {
    const context = PDFContext.create();
    const parms = PDFDict.withContext(context);
    parms.set(PDFName.of("Predictor"), PDFNumber.of(12));
    parms.set(PDFName.of("Columns"), PDFNumber.of(3));
    // rows [1 2 3] (None), [+1 +1 +1] (Up), [1 +1 +1] (Sub)
    const predicted = new Uint8Array([0, 1, 2, 3, 2, 1, 1, 1, 1, 1, 1, 1]);
    expect([...unpredict(predicted, parms)!]).toEqual([1, 2, 3, 2, 3, 4, 1, 2, 3]);
  });
});
