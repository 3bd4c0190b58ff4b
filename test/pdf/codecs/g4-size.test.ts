// The G4 size counted without writing it (src/pdf/codecs/g4-size.ts) against libtiff's G4 through
// libvips (images/bitonal.ts, encodeG4): the same number of bytes on drawings of every kind, random
// ones (junk in the rows' padding bits included), and runs past the longest make-up code.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { g4Size } from "../../../src/pdf/codecs/g4-size.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";
import { encodeBitonal, encodeG4 } from "../../../src/pdf/images/bitonal.ts";
import { bitsOf, codecDrawings } from "../helpers/bits.ts";

let seed = 11;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);

const drawings: [string, Bits][] = [
  ...codecDrawings(),
  ["one column", bitsOf(1, 30, (_x, y) => y % 3 === 0)],
  ["runs past 2,624 pixels", bitsOf(6000, 6, (x, y) => (x > 2650 && x < 2660) || (y === 2 && x > 10 && x < 5990))],
  ["noise, junk in the padding", bitsOf(203, 101, () => random() < 0.5, 0xff)],
];

describe("the G4 size counted", () => {
  it.each(drawings)("is libtiff's for %s", async (_name, bits) => {
    expect(g4Size(bits)).toBe((await encodeG4(bits))!.length);
  });

  it("is libtiff's for random drawings", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 1, max: 24 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 255 }),
        fc.integer(),
        async (width, height, share, padding, start) => {
          let s = start >>> 0 || 1;
          const next = () => ((s = (s * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
          // Blobs more than noise: a pixel takes the colour above it most of the time.
          const rows: boolean[][] = [];
          const bits = bitsOf(
            width,
            height,
            (x, y) => ((rows[y] ??= [])[x] = y > 0 && next() < 0.7 ? rows[y - 1]![x]! : next() < share),
            padding,
          );
          expect(g4Size(bits)).toBe((await encodeG4(bits))!.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("the G4 size counted up to a bound", () => {
  it.each(drawings)("is the whole size, or some size over the bound once it is passed, for %s", (_name, bits) => {
    const whole = g4Size(bits);
    for (const above of [0, 1, Math.floor(whole / 2), whole - 1, whole, whole + 1, 10 * whole]) {
      const counted = g4Size(bits, above);
      if (whole > above) {
        expect(counted).toBeGreaterThan(above);
        expect(counted).toBeLessThanOrEqual(whole);
      } else expect(counted).toBe(whole);
    }
  });
});

describe("the smaller bi-tonal coding", () => {
  it.each(drawings)("is the same whether G4 is counted or written, for %s", async (_name, bits) => {
    const chosen = await encodeBitonal(bits, "best");
    const g4 = (await encodeG4(bits))!;
    const jbig2 = chosen!.filter === "JBIG2Decode" ? chosen!.data : undefined;
    if (jbig2) expect(jbig2.length).toBeLessThan(g4.length);
    else expect(chosen!.data).toEqual(g4);
  });
});
