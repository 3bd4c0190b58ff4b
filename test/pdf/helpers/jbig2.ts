// Made JBIG2 bitmaps and the stream around a generic region's coded data, for the tests of the
// JBIG2 coder's WebAssembly loops (test/pdf/codecs/jbig2-wasm*.test.ts).
import { rowBytesOf } from "../../../src/pdf/codecs/jbig2.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";
import { random } from "./random.ts";

/** Template 0's pixels with the default adaptive ones, the context's most significant bit first. */
// prettier-ignore
export const TEMPLATE = [
  [-2, -2], [-1, -2], [0, -2], [1, -2], [2, -2],
  [-3, -1], [-2, -1], [-1, -1], [0, -1], [1, -1], [2, -1], [3, -1],
  [-4, 0], [-3, 0], [-2, 0], [-1, 0],
] as const;

export type Kind = "noise" | "sparse" | "text" | "black" | "white" | "stripes";
export const KINDS: Kind[] = ["noise", "sparse", "text", "black", "white", "stripes"];

/** A JBIG2 bitmap (1 black) of `kind`, bits past each row's width 0. */
export function bitmap(kind: Kind, width: number, height: number, seed: number): Bits {
  const rowBytes = rowBytesOf(width);
  const data = new Uint8Array(rowBytes * height);
  const source = random(seed);
  const next = () => source() / 2 ** 32;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const r = next();
      const black =
        kind === "noise"
          ? r < 0.5
          : kind === "sparse"
            ? r < 0.01
            : kind === "text"
              ? y % 24 < 9 && x % 11 < 7 && x > 3 && r < 0.7
              : kind === "black"
                ? true
                : kind === "stripes"
                  ? Math.floor(y / 5) % 2 === 0 && (x >> 2) % 3 !== 0
                  : false;
      if (black) data[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  return { data, width, height };
}

/** The samples (0 black) of a JBIG2 bitmap, as decodeJbig2 gives them. */
export function samplesOf({ data, width, height }: Bits): Uint8Array {
  const rowBytes = rowBytesOf(width);
  const samples = new Uint8Array(data.length);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (!((data[y * rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1))
        samples[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
  return samples;
}

/**
 * The region wrapped as encodeJbig2 wraps it (a page, one immediate lossless generic region of
 * template 0 with the default adaptive pixels), with typical prediction unless `tpgdon` is false.
 */
export function stream(coded: Uint8Array, width: number, height: number, tpgdon = true): Uint8Array {
  const u32 = (v: number) => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
  const page = [...u32(width), ...u32(height), 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0];
  const region = [
    ...u32(width),
    ...u32(height),
    ...u32(0),
    ...u32(0),
    0,
    tpgdon ? 0x08 : 0,
    3,
    0xff,
    0xfd,
    0xff,
    2,
    0xfe,
    0xfe,
    0xfe,
  ];
  return Uint8Array.from([
    ...[0, 0, 0, 0, 48, 0, 1, ...u32(page.length)],
    ...page,
    ...[0, 0, 0, 1, 39, 0, 1, ...u32(region.length + coded.length)],
    ...region,
    ...coded,
  ]);
}
