// The quality check's WebAssembly kernels (src/pdf/images/assembly/check.ts) against plain
// definitions written here: a pixel's luminance, Splash's box average over whole source pixels,
// and SSIM window by window. Sizes run across the kernels' 16-pixel SIMD steps and their tails.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { drawAt, drawLuminanceAt, luminance, sampledHeight, ssim } from "../../../src/pdf/images/quality.ts";

/** A repeatable pseudo-random byte source (xorshift). */
function bytes(count: number, seed: number): Uint8Array {
  const out = new Uint8Array(count);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s >>> 24;
  }
  return out;
}

/** Luminance as a renderer computes gray from 1, 3 or 4 components. */
function luminanceOf(data: Uint8Array, i: number, components: number): number {
  if (components === 1) return data[i]!;
  const ink = (77 * data[i]! + 151 * data[i + 1]! + 28 * data[i + 2]! + 128) / 256;
  if (components === 3) return Math.floor(ink);
  const k = ink + data[i + 3]!;
  return k >= 255 ? 0 : 255 - Math.round(k);
}

/** Splash's runs of whole source pixels per device pixel along one axis. */
function runsOf(source: number, device: number): number[] {
  const steps: number[] = [];
  for (let d = 0, t = 0; d < device; d++) {
    t += source % device;
    steps.push(Math.floor(source / device) + (t >= device ? 1 : 0));
    if (t >= device) t -= device;
  }
  return steps;
}

/** Each device pixel the rounded mean of the luminance of its box of source pixels. */
function boxDrawing(data: Uint8Array, width: number, height: number, components: number, dw: number, dh: number) {
  const xs = runsOf(width, dw);
  const ys = runsOf(height, dh);
  const out = new Uint8Array(dw * dh);
  for (let dy = 0, sy = 0; dy < dh; sy += ys[dy]!, dy++) {
    for (let dx = 0, sx = 0; dx < dw; sx += xs[dx]!, dx++) {
      let sum = 0;
      for (let y = sy; y < sy + ys[dy]!; y++)
        for (let x = sx; x < sx + xs[dx]!; x++) sum += luminanceOf(data, (y * width + x) * components, components);
      out[dy * dw + dx] = Math.round(sum / (xs[dx]! * ys[dy]!));
    }
  }
  return out;
}

/**
 * Splash's bilinear enlargement as the check drew it in JavaScript before the kernel: source position
 * x * (sw / dw), fractions truncated; each source row expanded across, then two rows blended down.
 */
function bilinearDrawing(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  const out = new Uint8Array(dw * dh);
  const [xs, ys] = [sw / dw, sh / dh];
  const expand = (row: number) => {
    const into = new Uint8Array(dw);
    for (let x = 0; x < dw; x++) {
      const fx = x * xs;
      const p = Math.min(sw - 1, Math.floor(fx));
      const w = fx - Math.floor(fx);
      into[x] = src[row * sw + p]! * (1 - w) + src[row * sw + Math.min(sw - 1, p + 1)]! * w;
    }
    return into;
  };
  for (let y = 0; y < dh; y++) {
    const fy = y * ys;
    const y0 = Math.min(sh - 1, Math.floor(fy));
    const wy = fy - Math.floor(fy);
    const [a, b] = [expand(y0), expand(Math.min(sh - 1, y0 + 1))];
    for (let x = 0; x < dw; x++) out[y * dw + x] = a[x]! * (1 - wy) + b[x]! * wy;
  }
  return out;
}

/** Mean SSIM over every 8 x 8 window at a step of 4 pixels, each window computed on its own. */
function windowSsim(a: Uint8Array, b: Uint8Array, width: number, height: number): number {
  const [c1, c2] = [(0.01 * 255) ** 2, (0.03 * 255) ** 2];
  let total = 0;
  let count = 0;
  for (let y = 0; y + 8 <= Math.floor(height / 4) * 4; y += 4) {
    for (let x = 0; x + 8 <= Math.floor(width / 4) * 4; x += 4) {
      let [sa, sb, saa, sbb, sab] = [0, 0, 0, 0, 0];
      for (let j = y; j < y + 8; j++)
        for (let i = x; i < x + 8; i++) {
          const p = a[j * width + i]!;
          const q = b[j * width + i]!;
          [sa, sb, saa, sbb, sab] = [sa + p, sb + q, saa + p * p, sbb + q * q, sab + p * q];
        }
      const [ma, mb] = [sa / 64, sb / 64];
      const [va, vb, cov] = [saa / 64 - ma * ma, sbb / 64 - mb * mb, sab / 64 - ma * mb];
      total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      count++;
    }
  }
  return total / count;
}

describe("the quality check's WebAssembly kernels", () => {
  it.each([
    [1, 61, 47],
    [1, 64, 50],
    [3, 16, 33],
    [3, 47, 40],
    [3, 96, 70],
    [3, 131, 29],
    [4, 33, 31],
    [4, 80, 45],
  ] as const)("draw %i-component pixels %i x %i as box averages of their luminance", (components, width, height) => {
    const data = bytes(width * height * components, width * 31 + height);
    const pixels = { data, width, height, components };
    for (const [dw, dh] of [
      [width, height],
      [Math.ceil(width / 2), Math.ceil(height / 3)],
      [Math.max(1, Math.floor(width / 3)), Math.max(1, height - 7)],
      [1, 1],
    ] as const) {
      expect(drawLuminanceAt(pixels, [[dw, dh]])[0]).toEqual(boxDrawing(data, width, height, components, dw, dh));
    }
  });

  it("take CMYK's ink to black at the ends (full K; full C + M + Y) and round it half up", () => {
    const data = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 0, 255, 255, 0, 200, 10, 20, 30, 40]);
    const pixels = { data, width: 5, height: 1, components: 4 as const };
    const drawn = drawLuminanceAt(pixels, [[5, 1]])[0]!;
    // no ink: (0 + 128) / 256 rounds up to 1; the last: 255 - round((770 + 3020 + 840 + 128) / 256 + 40)
    expect([...drawn]).toEqual([254, 0, 0, 0, 196]);
  });

  it("draw a sample of the rows of an image wider than many SIMD steps, with both device sizes in one pass", () => {
    const [width, height, components] = [517, 700, 3 as const];
    const data = bytes(width * height * components, 7);
    const pixels = { data, width, height, components };
    const sizes: [number, number][] = [
      [172, 233],
      [173, 234],
    ];
    const sample = { band: 16, every: 4 };
    const sampled = drawLuminanceAt(pixels, sizes, sample);
    sizes.forEach(([dw, dh], i) => {
      const whole = boxDrawing(data, width, height, components, dw, dh);
      const rows: Uint8Array[] = [];
      for (let y = 0; y < dh; y++) if (Math.floor(y / 16) % 4 === 0) rows.push(whole.subarray(y * dw, (y + 1) * dw));
      expect(sampledHeight(dh, sample)).toBe(rows.length);
      expect(sampled[i]).toEqual(Uint8Array.from(rows.flatMap((row) => [...row])));
    });
  });

  it.each([
    [8, 8],
    [16, 9],
    [23, 41],
    [64, 64],
    [211, 97],
  ])("score SSIM %i x %i as the mean over 8 x 8 windows every 4 pixels", (width, height) => {
    const a = bytes(width * height, width + 3 * height);
    const b = new Uint8Array(a.map((v, i) => Math.max(0, Math.min(255, v + (i % 7) * 9 - 27))));
    expect(ssim(a, b, width, height)).toBeCloseTo(windowSsim(a, b, width, height), 12);
    expect(ssim(a, a, width, height)).toBeCloseTo(1, 12);
  });

  // Small images on any sizes; then rows many SIMD steps wide, blended eight pixels at a time and
  // the rest one by one.
  it.each([
    { sw: [1, 40], sh: [1, 40], ew: 90, eh: 90, numRuns: 300 },
    { sw: [8, 400], sh: [1, 6], ew: 400, eh: 12, numRuns: 200 },
  ])(
    "enlarge gray pixels as Splash's bilinear filter (fuzzed against the JavaScript drawing): %o",
    ({ sw: [swMin, swMax], sh: [shMin, shMax], ew: ewMax, eh: ehMax, numRuns }) => {
      fc.assert(
        fc.property(
          fc.integer({ min: swMin!, max: swMax! }),
          fc.integer({ min: shMin!, max: shMax! }),
          fc.integer({ min: 0, max: ewMax }),
          fc.integer({ min: 0, max: ehMax }),
          fc.integer(),
          (sw, sh, ew, eh, seed) => {
            const src = bytes(sw * sh, seed);
            const [dw, dh] = [sw + ew, sh + eh];
            expect(drawAt(src, sw, sh, dw, dh)).toEqual(bilinearDrawing(src, sw, sh, dw, dh));
          },
        ),
        { numRuns },
      );
    },
  );

  it.each([3, 4] as const)(
    "take the luminance of %i-component pixels through the kernel's blocks where the drawing enlarges",
    (components) => {
      // 300 x 300 pixels: more than one 256 KB block of RGB or CMYK.
      const [width, height] = [300, 300];
      const data = bytes(width * height * components, components);
      const pixels = { data, width, height, components };
      const gray = luminance(pixels);
      const [drawn] = drawLuminanceAt(pixels, [[451, 377]]);
      expect(drawn).toEqual(bilinearDrawing(gray, width, height, 451, 377));
    },
  );
});
