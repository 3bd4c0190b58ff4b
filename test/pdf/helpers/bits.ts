// Bi-tonal drawings for the codecs' tests (G4, its size counted, JBIG2).
import { rowBytesOf } from "../../../src/pdf/codecs/jbig2.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";

/**
 * Bits (1 white) of a drawing: `black(x, y)` says where it is black; `padding` is or-ed into the
 * bits past each row's end (what a decoder or coder must ignore).
 */
export function bitsOf(width: number, height: number, black: (x: number, y: number) => boolean, padding = 0): Bits {
  const rowBytes = rowBytesOf(width);
  const data = new Uint8Array(rowBytes * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) if (!black(x, y)) data[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
    if (width % 8) data[(y + 1) * rowBytes - 1]! |= padding & (0xff >> (width % 8));
  }
  return { data, width, height };
}

/** Drawings of every kind the G4 and JBIG2 tests code: flat, stripes, long runs, text-like dots, noise. */
export function codecDrawings(): [string, Bits][] {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
  const dots = Array.from({ length: 300 }, () => [random() * 3000, random() * 400, 2 + random() * 40] as const);
  return [
    ["white", bitsOf(1728, 20, () => false)],
    ["black", bitsOf(1728, 20, () => true)],
    ["stripes of every width", bitsOf(2561, 40, (x, y) => Math.floor(x / (1 + (y % 37))) % 2 === 0)],
    ["long runs over the make-up codes", bitsOf(3000, 8, (x, y) => x > 2600 - y * 300 && x < 2900)],
    [
      "text-like dots, an odd width",
      bitsOf(3001, 400, (x, y) => dots.some(([cx, cy, r]) => (x - cx) ** 2 + (y - cy) ** 2 < r * r)),
    ],
    ["noise", bitsOf(203, 101, () => random() < 0.5)],
  ];
}
