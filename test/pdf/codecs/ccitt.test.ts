// codecs/ccitt.ts's pack: gray samples to packed bits, held to its definition (a sample of at least
// 128 is a 1 bit, rows padded to whole bytes with 0 bits; inverted, every byte inverted) on widths on and off multiples of 4 and 8,
// aligned views and views that start off a word's boundary.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pack } from "../../../src/pdf/codecs/ccitt.ts";
import { rowBytesOf } from "../../../src/pdf/codecs/jbig2.ts";

function plainPack(gray: Uint8Array, width: number, height: number, invert = false): Uint8Array {
  const rowBytes = rowBytesOf(width);
  const data = new Uint8Array(rowBytes * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) if (gray[y * width + x]! >= 128) data[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
  if (invert) for (let i = 0; i < data.length; i++) data[i] = ~data[i]! & 0xff;
  return data;
}

describe("pack", () => {
  it("packs as the plain definition does", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.boolean(),
        fc.integer(),
        (width, height, offset, bilevel, invert, seed) => {
          const backing = new Uint8Array(offset + width * height);
          let state = seed | 1;
          for (let i = 0; i < backing.length; i++) {
            state = (Math.imul(state, 1103515245) + 12345) | 0;
            const byte = (state >>> 16) & 0xff;
            backing[i] = bilevel ? (byte & 1 ? 255 : 0) : byte;
          }
          const gray = backing.subarray(offset);
          const bits = pack(gray, width, height, invert);
          expect(bits.width).toBe(width);
          expect(bits.height).toBe(height);
          expect(bits.data).toEqual(plainPack(gray, width, height, invert));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("packs a page of white and black runs", () => {
    const width = 3440;
    const height = 5;
    const gray = new Uint8Array(width * height);
    for (let i = 0; i < gray.length; i++) gray[i] = (i >> 5) % 3 === 0 ? 0 : 255;
    expect(pack(gray, width, height).data).toEqual(plainPack(gray, width, height));
    expect(pack(gray, width, height, true).data).toEqual(plainPack(gray, width, height, true));
  });
});
