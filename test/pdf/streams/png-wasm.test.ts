// The PNG predictors' WebAssembly (src/pdf/streams/assembly/png.ts, through streams/png.ts): the
// same bytes as the JavaScript definitions (unpngRow in streams/filters.ts; png-plain.ts), on
// random rows of every type, odd widths, every pixel size, and rows enough to pass through the
// module's memory in several bands; a type PNG does not define, and data shorter than a row, refused.
import { describe, expect, it } from "vitest";
import { unpngRow } from "../../../src/pdf/streams/filters.ts";
import { pngFilterRows, pngPredictRows, unpngRows } from "../../../src/pdf/streams/png.ts";
import { photoPixels } from "../fixtures.ts";
import { random } from "../helpers/random.ts";
import { plainPngPredict, pngFilterRow } from "./png-plain.ts";

const bytesOf = (length: number, next: () => number) => Uint8Array.from({ length }, () => next() & 0xff);
const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  a !== undefined && b !== undefined && Buffer.from(a).equals(Buffer.from(b));

/**
 * Row lengths, pixel sizes (RGB and RGBA a pixel at a time, with rows not whole pixels as any
 * other), rows: one byte, shorter than a pixel, odd, pixels wider than a SIMD vector, and rows
 * enough for bands of a megabyte (3, 2 and 2).
 */
const SHAPES: [length: number, bpp: number, rows: number][] = [
  [1, 1, 5],
  [2, 3, 4],
  [37, 1, 9],
  [111, 3, 13],
  [64, 4, 7],
  [66, 6, 6],
  [150, 2, 11],
  [200, 20, 5],
  [3001, 3, 900],
  [3072, 3, 700],
  [4000, 4, 300],
  [600_001, 8, 4],
];

/** The samples of `rows` rows of `length` bytes: noise, a photograph, or flat. */
function samplesOf(length: number, rows: number, next: () => number): Uint8Array[] {
  return [bytesOf(length * rows, next), photoPixels(length, rows, 1, 5), new Uint8Array(length * rows).fill(200)];
}

/** unpngRow row by row: the samples and types, undefined for a type PNG does not define. */
function plainUnpng(data: Uint8Array, length: number, bpp: number) {
  const rows = Math.floor(data.length / (length + 1));
  const samples = new Uint8Array(rows * length);
  let previous = new Uint8Array(length);
  for (let r = 0; r < rows; r++) {
    const row = samples.subarray(r * length, (r + 1) * length);
    if (!unpngRow(data[r * (length + 1)]!, data, r * (length + 1) + 1, previous, row, bpp)) return undefined;
    previous = row;
  }
  return samples;
}

/** pngFilterRow row by row over rows [from, to). */
function plainFilter(samples: Uint8Array, types: Uint8Array, length: number, bpp: number, from: number, to: number) {
  const out = new Uint8Array((to - from) * (length + 1));
  for (let r = from; r < to; r++) {
    const up = r > 0 ? samples.subarray((r - 1) * length, r * length) : new Uint8Array(length);
    out[(r - from) * (length + 1)] = types[r]!;
    pngFilterRow(
      types[r]!,
      samples.subarray(r * length, (r + 1) * length),
      up,
      bpp,
      out,
      (r - from) * (length + 1) + 1,
    );
  }
  return out;
}

describe("PNG rows undone in WebAssembly", () => {
  it("are unpngRow's, with each row's type", () => {
    const next = random(11);
    for (const [length, bpp, rows] of SHAPES) {
      // A part of a row after the last: left out.
      const data = bytesOf(rows * (length + 1) + Math.min(3, length), next);
      for (let r = 0; r < rows; r++) data[r * (length + 1)] = next() % 5;
      const undone = unpngRows(data, length, bpp)!;
      expect([length, same(undone.samples, plainUnpng(data, length, bpp))]).toEqual([length, true]);
      for (let r = 0; r < rows; r++) expect(undone.types[r]).toBe(data[r * (length + 1)]);
    }
  });

  it("refuse a type PNG does not define, and data shorter than a row", () => {
    const data = new Uint8Array(5 * 4);
    data[3 * 5] = 5;
    expect(unpngRows(data, 4, 1)).toBeUndefined();
    expect(unpngRows(new Uint8Array(4), 4, 1)).toBeUndefined();
  });
});

describe("PNG types applied again in WebAssembly", () => {
  it("are pngFilterRow's, for the whole and for some rows", () => {
    const next = random(13);
    for (const [length, bpp, rows] of SHAPES) {
      const samples = bytesOf(length * rows, next);
      const types = Uint8Array.from({ length: rows }, () => next() % 5);
      for (const [from, to] of [
        [0, rows],
        [Math.floor(rows / 2), rows],
        [1, Math.max(1, rows - 1)],
      ] as const) {
        const filtered = pngFilterRows(samples, types, length, bpp, from, to);
        expect([length, from, same(filtered, plainFilter(samples, types, length, bpp, from, to))]).toEqual([
          length,
          from,
          true,
        ]);
      }
    }
  });
});

describe("PNG prediction in WebAssembly", () => {
  it("is the JavaScript prediction's, for the whole and for some rows", () => {
    const next = random(17);
    for (const [length, bpp, rows] of SHAPES) {
      const layout = { colors: bpp, bitsPerComponent: 8, rowBytes: length, rows };
      for (const samples of samplesOf(length, rows, next)) {
        for (const [from, to] of [
          [0, rows],
          [Math.floor(rows / 3), rows - 1],
        ] as const) {
          const predicted = pngPredictRows(samples, length, bpp, from, to);
          const plain = plainPngPredict(samples, layout, from, to);
          expect([length, bpp, from, same(predicted, plain)]).toEqual([length, bpp, from, true]);
        }
      }
    }
  });
});
