// The layers' WebAssembly kernels (src/pdf/images/assembly/check.ts: segmentRow, backgroundRow,
// backgroundEmit, driven by src/pdf/images/layers.ts) against plain definitions written here: the
// text of a page image is every pixel darker than half-way between paper and ink, its colour the
// mean of its darker half; the background is the rounded mean of the samples (every second pixel
// of every second row) that are not text or beside it. Widths run across the kernels' 16-pixel
// steps, the 32-pixel blocks and their tails.
import { describe, expect, it } from "vitest";
import { backgroundOf, segment } from "../../../src/pdf/images/layers.ts";
import type { Pixels } from "../../../src/pdf/images/codecs.ts";
import { random } from "../helpers/random.ts";

const lumOf = (data: Uint8Array, i: number, n: number) =>
  n === 1 ? data[i]! : (77 * data[i]! + 151 * data[i + 1]! + 28 * data[i + 2]! + 128) >> 8;

/** Paper (about 235) with strokes of ink (about 25) on a share of the pixels; no middle tones. */
function page(width: number, height: number, n: 1 | 3, inkShare: number, seed: number): Pixels {
  const next = random(seed);
  const data = new Uint8Array(width * height * n);
  for (let p = 0; p < width * height; p++) {
    const ink = next() % 1000 < inkShare * 1000;
    for (let c = 0; c < n; c++) data[p * n + c] = (ink ? 18 + c * 3 : 232 - c) + (next() % 7);
  }
  return { data, width, height, components: n };
}

/** The levels of `segment`: paper the most common bright luminance, ink the 1st percentile. */
function levels(pixels: Pixels) {
  const { data, width, height, components: n } = pixels;
  const histogram = new Array<number>(256).fill(0);
  let counted = 0;
  for (let y = 0; y < height; y += 4) {
    for (let x = 0; x < width; x++) histogram[lumOf(data, (y * width + x) * n, n)]!++;
    counted += width;
  }
  let paper = 128;
  for (let v = 128; v < 256; v++) if (histogram[v]! > histogram[paper]!) paper = v;
  let ink = 0;
  for (let seen = 0; ink < 256; ink++) if ((seen += histogram[ink]!) >= counted * 0.01) break;
  const threshold = (paper + ink) >> 1;
  return { threshold, core: (ink + threshold) >> 1 };
}

describe("the layers' WebAssembly kernels", () => {
  it.each([
    [1, 517, 300],
    [3, 517, 300],
    [3, 64, 97],
    [3, 1000, 41],
    [1, 31, 65],
  ] as const)("take the text of %i-component pixels %i x %i, its mask and its colour", (n, width, height) => {
    const pixels = page(width, height, n, 0.04, width + height * 7 + n);
    const { threshold, core } = levels(pixels);
    const seg = segment(pixels)!;
    expect(seg).toBeDefined();
    const rowBytes = Math.ceil(width / 8);
    let ink = 0;
    const sums = new Array<number>(n).fill(0);
    let cores = 0;
    const expected = new Uint8Array(rowBytes * height).fill(0xff);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * n;
        const lum = lumOf(pixels.data, i, n);
        if (lum > threshold) continue;
        expected[y * rowBytes + (x >> 3)]! &= ~(0x80 >> (x & 7));
        ink++;
        if (lum > core) continue;
        cores++;
        for (let c = 0; c < n; c++) sums[c]! += pixels.data[i + c]!;
      }
    }
    expect(seg.pictures).toBe(0);
    expect(seg.ink).toBe(ink);
    expect(seg.mask.data).toEqual(expected);
    expect(seg.colour).toEqual(sums.map((s) => Math.round(s / cores)));
  });

  it.each([1, 3] as const)("take no text from a photograph's middle tones (%i components)", (n) => {
    // Text all over, and a photograph (a ramp of middle tones, 90 to 200) over a square of 8 x 8
    // blocks of 32 pixels, starting on a block's edge.
    const width = 517;
    const height = 400;
    const pixels = page(width, height, n, 0.03, 11 + n);
    const [left, top, side] = [64, 96, 256];
    for (let y = top; y < top + side; y++) {
      for (let x = left; x < left + side; x++) {
        for (let c = 0; c < n; c++) pixels.data[(y * width + x) * n + c] = 90 + ((x + y) % 111);
      }
    }
    const seg = segment(pixels)!;
    expect(seg.pictures).toBeGreaterThanOrEqual((side / 32) ** 2);
    const rowBytes = Math.ceil(width / 8);
    for (let y = top; y < top + side; y++) {
      for (let x = left; x < left + side; x++) {
        expect(seg.mask.data[y * rowBytes + (x >> 3)]! & (0x80 >> (x & 7))).not.toBe(0);
      }
    }
    // Text away from it is still taken.
    expect(seg.ink).toBeGreaterThan(0);
    expect(seg.mask.data.subarray(0, rowBytes * 32).some((byte) => byte !== 0xff)).toBe(true);
  });

  it.each([
    [3, 517, 300, 4],
    [1, 517, 300, 3],
    [3, 93, 61, 2],
    [3, 1000, 41, 6],
  ] as const)(
    "average %i-component pixels %i x %i over blocks of %i, text and its neighbours left out",
    (n, width, height, factor) => {
      const pixels = page(width, height, n, 0.01, width * 3 + height + factor);
      // A photograph's shading, so that the blocks differ.
      for (let p = 0; p < width * height; p++) pixels.data[p * n] = (pixels.data[p * n]! + (p % width)) & 0xff;
      const seg = segment(pixels) ?? {
        mask: { data: new Uint8Array(Math.ceil(width / 8) * height).fill(0xff), width, height },
      };
      const rowBytes = Math.ceil(width / 8);
      const isText = (x: number, y: number) =>
        x >= 0 && y >= 0 && x < width && y < height && !(seg.mask.data[y * rowBytes + (x >> 3)]! & (0x80 >> (x & 7)));
      const nearText = (x: number, y: number) =>
        [-1, 0, 1].some((dy) => [-1, 0, 1].some((dx) => isText(x + dx, y + dy)));
      const ow = Math.ceil(width / factor);
      const oh = Math.ceil(height / factor);
      const sums = new Array<number>(ow * oh * n).fill(0);
      const counts = new Array<number>(ow * oh).fill(0);
      for (let y = 0; y < height; y += 2) {
        for (let x = 0; x < width; x += 2) {
          if (nearText(x, y)) continue;
          const o = Math.floor(y / factor) * ow + Math.floor(x / factor);
          counts[o]!++;
          for (let c = 0; c < n; c++) sums[o * n + c]! += pixels.data[(y * width + x) * n + c]!;
        }
      }
      const background = backgroundOf(pixels, factor, seg.mask);
      expect([background.pixels.width, background.pixels.height]).toEqual([ow, oh]);
      for (let o = 0; o < ow * oh; o++) {
        // Blocks without samples are filled from their neighbours: not defined here.
        if (counts[o] === 0) continue;
        for (let c = 0; c < n; c++) {
          expect(background.pixels.data[o * n + c]).toBe(Math.round(sums[o * n + c]! / counts[o]!));
        }
      }
    },
  );
});
