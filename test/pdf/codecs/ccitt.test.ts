// codecs/ccitt.ts's pack: gray samples to packed bits, held to its definition (a sample of at least
// 128 is a 1 bit, rows padded to whole bytes with 0 bits; inverted, every byte inverted) on widths on and off multiples of 4 and 8,
// aligned views and views that start off a word's boundary. decodeCcitt's bits (packed by libvips)
// held to its plain path's (a byte a pixel from libvips, packed by pack).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import sharp from "sharp";
import { decodeCcitt, oneBitTiff, pack, uncompressedRows } from "../../../src/pdf/codecs/ccitt.ts";
import { encodeG4 } from "../../../src/pdf/images/bitonal.ts";
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

/** The samples as libvips decodes the TIFF to a byte a pixel, packed by pack (decodeCcitt's plain path). */
async function plainDecode(g4: Uint8Array, width: number, height: number, blackIs1: boolean): Promise<Uint8Array> {
  const { data } = await sharp(oneBitTiff(g4, width, height, 4, 0), { limitInputPixels: 0 })
    .toColourspace("b-w")
    .raw()
    .toBuffer({ resolveWithObject: true });
  return pack(data, width, height, blackIs1).data;
}

describe("decodeCcitt", () => {
  it("gives the bits of the plain path (a byte a pixel, packed), padding included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.integer(),
        async (width, height, blackIs1, seed) => {
          const rowBytes = rowBytesOf(width);
          const gray = new Uint8Array(width * height);
          let state = seed | 1;
          for (let i = 0; i < gray.length; i++) {
            state = (Math.imul(state, 1103515245) + 12345) | 0;
            gray[i] = (state >>> 16) % 5 === 0 ? 0 : 255;
          }
          const g4 = await encodeG4(pack(gray, width, height));
          expect(g4).toBeDefined();
          const parms = { k: -1, columns: width, rows: height, blackIs1, encodedByteAlign: false };
          const bits = await decodeCcitt(g4!, parms);
          expect(bits?.data.length).toBe(rowBytes * height);
          expect(bits?.data).toEqual(await plainDecode(g4!, width, height, blackIs1));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reads no TIFF but an uncompressed one-bit image of the size asked", () => {
    const strip = new Uint8Array([0xf0, 0x0f]);
    expect(uncompressedRows(oneBitTiff(strip, 8, 2, 1, 1), 8, 2)).toEqual(strip);
    expect(uncompressedRows(oneBitTiff(strip, 8, 2, 4, 1), 8, 2)).toBeUndefined();
    expect(uncompressedRows(oneBitTiff(strip, 8, 2, 1, 1), 16, 1)).toBeUndefined();
    expect(uncompressedRows(oneBitTiff(strip, 8, 2, 1, 1, [[258, 3, 8]]), 8, 2)).toBeUndefined();
    expect(uncompressedRows(oneBitTiff(strip.subarray(0, 1), 8, 2, 1, 1), 8, 2)).toBeUndefined();
    expect(uncompressedRows(new Uint8Array([0x4d, 0x4d, 0, 42, 0, 0, 0, 8]), 8, 2)).toBeUndefined();
  });
});
