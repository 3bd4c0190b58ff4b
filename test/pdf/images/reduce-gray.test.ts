// A very large Flate image reduced straight to gray (src/pdf/images/samples.ts reduceWhileInflating
// with a gray tolerance): the engine's answer is what the RGB reduction made gray afterwards gave
// (candidates.ts: each pixel the mean of its three samples, when red and blue are within the
// tolerance of green everywhere), without holding that RGB copy beside the gray (issue 42: the
// corpus's 9000 x 9000 page held 61 MB of RGB and 20 MB of gray at once, 100 % of its memory budget).
// Fuzzed over sizes, reduction factors, predictors, images gray to the last pixel or not, and
// damaged data.
import { deflateSync } from "node:zlib";
import { PDFContext } from "@cantoo/pdf-lib";
import type { PDFDict } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import type { Pixels } from "../../../src/pdf/images/codecs.ts";
import { reduceWhileInflating } from "../../../src/pdf/images/samples.ts";

const TOLERANCE = 2;

/** A deterministic generator (the fuzz's cases are the same on every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

/** The gray the engine made of an RGB reduction (candidates.ts grayOf), or undefined. */
function grayOfRgb(pixels: Pixels, tolerance: number): Uint8Array | undefined {
  const { data } = pixels;
  for (let i = 0; i < data.length; i += 3) {
    const g = data[i + 1]!;
    if (Math.abs(data[i]! - g) > tolerance || Math.abs(data[i + 2]! - g) > tolerance) return undefined;
  }
  const gray = new Uint8Array(data.length / 3);
  for (let p = 0; p < gray.length; p++) gray[p] = Math.round((data[3 * p]! + data[3 * p + 1]! + data[3 * p + 2]!) / 3);
  return gray;
}

interface Case {
  width: number;
  height: number;
  factor: number;
  /** Where the first sample out of the tolerance is (a row), or undefined for a gray image. */
  colourAt: number | undefined;
  png: boolean;
}

/** An RGB image whose channels stay within the tolerance of each other, but from row `colourAt`. */
function image({ width, height, colourAt }: Case, next: () => number): Uint8Array {
  const samples = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      const g = Math.floor(next() * 256);
      samples[at] = Math.max(0, Math.min(255, g + Math.round((next() * 2 - 1) * TOLERANCE)));
      samples[at + 1] = g;
      samples[at + 2] = Math.max(0, Math.min(255, g - Math.round(next() * TOLERANCE)));
      // Red 60 away from green on the whole row: at least 10 in a block's average.
      if (y === colourAt) samples[at] = g > 127 ? g - 60 : g + 60;
    }
  }
  return samples;
}

/** The samples deflated as stored, with a PNG "None" tag before each row when `png`. */
function stored(samples: Uint8Array, { width, height, png }: Case): Uint8Array {
  if (!png) return deflateSync(samples);
  const rowBytes = width * 3;
  const rows = new Uint8Array((rowBytes + 1) * height);
  for (let y = 0; y < height; y++) rows.set(samples.subarray(y * rowBytes, (y + 1) * rowBytes), y * (rowBytes + 1) + 1);
  return deflateSync(rows);
}

const context = PDFContext.create();
const parmsOf = ({ width, png }: Case): PDFDict | undefined =>
  png ? context.obj({ Predictor: 15, Colors: 3, BitsPerComponent: 8, Columns: width }) : undefined;

const reduce = (data: Uint8Array, c: Case, tolerance?: number) =>
  reduceWhileInflating(data, parmsOf(c), c.width, c.height, 3, c.factor, tolerance);

describe("reduceWhileInflating to gray", () => {
  const next = random(42);
  const cases: Case[] = [];
  for (let i = 0; i < 40; i++) {
    const width = 2 + Math.floor(next() * 300);
    const height = 2 + Math.floor(next() * 200);
    const factor = 2 + Math.floor(next() * 5);
    // A third gray to the end; the others turn to colour at the first row, the last, or between.
    const pick = i % 3;
    const colourAt = pick === 0 ? undefined : pick === 1 ? height - 1 : Math.floor(next() * height);
    cases.push({ width, height, factor, colourAt, png: next() < 0.5 });
  }
  cases.push({ width: 9000, height: 3, factor: 2, colourAt: undefined, png: true });
  cases.push({ width: 9000, height: 3, factor: 2, colourAt: 2, png: false });

  it.each(cases)("%o: what the RGB reduction made gray gives", async (c) => {
    const data = stored(image(c, random(c.width * 7919 + c.height)), c);
    const rgb = await reduce(data, c);
    expect(rgb?.components).toBe(3);
    const expected = grayOfRgb(rgb!, TOLERANCE);
    const result = await reduce(data, c, TOLERANCE);
    expect(result).toBeDefined();
    if (expected) {
      // Gray, and only the gray was made: a buffer a third of the RGB one.
      expect(result!.components).toBe(1);
      expect(result!.data.buffer.byteLength).toBe(rgb!.data.length / 3);
      expect(Buffer.from(result!.data).equals(Buffer.from(expected))).toBe(true);
    } else {
      expect(result!.components).toBe(3);
      expect(Buffer.from(result!.data).equals(Buffer.from(rgb!.data))).toBe(true);
    }
    expect([result!.width, result!.height]).toEqual([rgb!.width, rgb!.height]);
  });

  it("short data gives nothing, gray or not; damaged data what the RGB reduction gives", async () => {
    for (const colourAt of [undefined, 5]) {
      const c: Case = { width: 120, height: 40, factor: 3, colourAt, png: false };
      const data = stored(image(c, random(7)), c);
      const short = data.subarray(0, Math.floor(data.length / 2));
      expect(await reduce(short, c, TOLERANCE)).toBeUndefined();
      expect(await reduce(short, c)).toBeUndefined();
      // Whatever zlib makes of damaged data, the gray answer is the RGB one's.
      const damaged = Uint8Array.from(data);
      damaged.fill(0xff, 2, 40);
      const rgb = await reduce(damaged, c);
      const gray = await reduce(damaged, c, TOLERANCE);
      expect(gray === undefined).toBe(rgb === undefined);
    }
  });
});
