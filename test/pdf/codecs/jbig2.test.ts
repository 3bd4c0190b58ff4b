// The JBIG2 generic region coder (src/pdf/codecs/jbig2.ts): runs of white pixels in an all-white
// context are coded at once (issue 42), which must give the bytes of coding them one symbol at a
// time. The md5s below are of the coder before that shortcut, on page-like bitmaps whose margins,
// rows after a line of text and isolated specks make such runs of every length.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeJbig2, encodeGenericRegion, encodeJbig2, rowBytesOf } from "../../../src/pdf/codecs/jbig2.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";

/** Samples (0 black) of lines of glyph-like marks between white margins, a rule and specks. */
function page(width: number, height: number, seed: number): Bits {
  const rowBytes = rowBytesOf(width);
  const data = new Uint8Array(rowBytes * height).fill(0xff);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const glyphs = y % 32 < 11 && x >= 60 && x < width - 60 && x % 9 < 6 && (seed >> 16) % 3 !== 0;
      const rule = y === height - 20 && x >= 30 && x < width - 30;
      const speck = (seed >> 8) % 9973 === 0;
      if (glyphs || rule || speck) data[y * rowBytes + (x >> 3)]! &= ~(0x80 >> (x & 7));
    }
  }
  return { data, width, height };
}

/** Whether two bitmaps have the same pixels (the bits past each row's width aside). */
function samePixels(a: Bits, b: Bits): boolean {
  const rowBytes = rowBytesOf(a.width);
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      const at = y * rowBytes + (x >> 3);
      if (((a.data[at]! ^ b.data[at]!) & (0x80 >> (x & 7))) !== 0) return false;
    }
  }
  return true;
}

describe("JBIG2 generic region coding", () => {
  it.each([
    [1203, 160, 1, "de1161344c1b97c6eca990cab51e7336"],
    [640, 97, 2, "13cc001a9d5d7326bcaef3e1e980348a"],
    [2550, 60, 3, "fdcf61eca0d06f281e21fa7c934bad74"],
  ] as const)("codes white runs at once into the same bytes (%i x %i)", (width, height, seed, md5) => {
    const samples = page(width, height, seed);
    const coded = encodeJbig2(samples);
    expect(createHash("md5").update(coded).digest("hex")).toBe(md5);
    const decoded = decodeJbig2(coded, width, height);
    expect(decoded && samePixels(decoded, samples)).toBe(true);
  });

  /** The bitmap encodeJbig2 coded before the coder inverted it (issue 42): the samples' inverse, bits past the width 0. */
  function inverted(samples: Bits): Bits {
    const rowBytes = rowBytesOf(samples.width);
    const data = samples.data.slice(0, rowBytes * samples.height).map((byte) => ~byte & 0xff);
    const last = (0xff << (8 - (samples.width & 7 || 8))) & 0xff;
    for (let at = rowBytes - 1; at < data.length; at += rowBytes) data[at]! &= last;
    return { data, width: samples.width, height: samples.height };
  }

  const codesTheInverse = (samples: Bits) => {
    const coded = encodeJbig2(samples);
    const region = encodeGenericRegion(inverted(samples));
    expect(coded.subarray(coded.length - region.length)).toEqual(region);
  };

  it("codes the inverse of the samples whatever the bits past each row's width (fuzzed against the bitmap inverted first)", () => {
    const size = fc.integer({ min: 1, max: 70 });
    fc.assert(
      fc.property(size, size, fc.integer(), (width, height, seed) => {
        const data = new Uint8Array(rowBytesOf(width) * height);
        for (let i = 0, s = seed | 1; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) & 0x7fffffff) >> 16;
        codesTheInverse({ data, width, height });
      }),
      { numRuns: 200 },
    );
  });

  it("codes the inverse of a page band by band", () => {
    // 2,003 x 700: some three bands of 64 KB, the width not a whole byte.
    codesTheInverse(page(2003, 700, 4));
  });
});
