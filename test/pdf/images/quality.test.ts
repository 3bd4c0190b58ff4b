// The quality check (src/pdf/images/quality.ts): drawing as pdftoppm does, sampled bands, the score
// of a candidate and SSIM.
import { describe, expect, it } from "vitest";
import {
  drawAt,
  drawLuminanceAt,
  joinSample,
  luminance,
  QualityCheck,
  sampledHeight,
  ssim,
} from "../../../src/pdf/images/quality.ts";
import { photoPixels } from "../fixtures.ts";

describe("the quality check's rendering model", () => {
  it("draws as pdftoppm does: box averages when shrinking", () => {
    const src = new Uint8Array([0, 100, 200, 0, 100, 200, 50, 50, 50]);
    // 3 x 3 to 2 x 2: columns in runs of 1 and 2 (Splash's whole-pixel steps)
    const out = drawAt(src, 3, 3, 2, 2);
    expect(out).toHaveLength(4);
    expect(out[0]).toBe(0);
    expect(out[1]).toBe(150);
  });

  it.each([
    [1, 173, 0],
    [3, 173, 0],
    [4, 173, 0],
    // a width of whole words, read four pixels at a time; then the same in a Buffer at an odd offset
    [3, 172, 0],
    [3, 172, 1],
  ] as const)(
    "draws the luminance of %i-component pixels %i wide (at offset %i) at both device sizes in one pass, as drawAt draws luminance()",
    (components, width, offset) => {
      const height = 211;
      const data = Buffer.alloc(width * height * components + offset).subarray(offset);
      for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
      const pixels = { data, width, height, components };
      const sizes: [number, number][] = [
        [57, 70], // shrinking: runs of 3 and 4
        [58, 71],
        [200, 240], // enlarging
        [90, 300], // shrinking across, enlarging down
      ];
      const drawn = drawLuminanceAt(pixels, sizes);
      const gray = luminance(pixels);
      sizes.forEach(([dw, dh], i) => expect(drawn[i]).toEqual(drawAt(gray, width, height, dw, dh)));
    },
  );

  it("draws a sample of the rows as the same rows of the whole drawing, band after band, and the rest as the others", () => {
    const [width, height] = [400, 1300];
    const data = new Uint8Array(width * height * 3);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
    const pixels = { data, width, height, components: 3 as const };
    const sizes: [number, number][] = [
      [133, 433],
      [134, 434],
    ];
    const sample = { band: 16, every: 4 };
    const rest = { ...sample, rest: true };
    const whole = drawLuminanceAt(pixels, sizes);
    const sampled = drawLuminanceAt(pixels, sizes, sample);
    const others = drawLuminanceAt(pixels, sizes, rest);
    sizes.forEach(([dw, dh], i) => {
      const rows: number[] = [];
      for (let y = 0; y < dh; y++) if (Math.floor(y / 16) % 4 === 0) rows.push(y);
      expect(sampledHeight(dh, sample)).toBe(rows.length);
      const expected = new Uint8Array(rows.length * dw);
      rows.forEach((y, k) => expected.set(whole[i]!.subarray(y * dw, (y + 1) * dw), k * dw));
      expect(sampled[i]).toEqual(expected);
      // the rows it leaves out complete it
      expect(sampledHeight(dh, rest)).toBe(dh - rows.length);
      expect(joinSample(sampled[i]!, others[i]!, dw, dh, sample)).toEqual(whole[i]);
    });
    // an enlarging size has no sample
    expect(() => drawLuminanceAt(pixels, [[500, 100]], sample)).toThrow(RangeError);
  });

  it("scores a candidate by its sample when that is clear of the floor, above or below, else whole", () => {
    // A page of text-like stripes, and candidates blurred more and more: the check's score is
    // the sample's when it is 0.01 or more from the floor, and the whole drawing's otherwise.
    const [width, height] = [1240, 1754];
    const page = new Uint8Array(width * height);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) page[y * width + x] = (x >> 2) % 3 === 0 && (y >> 3) % 5 !== 0 ? 20 : 235;
    const original = { data: page, width, height, components: 1 as const };
    // 8 x 11 in: one device size at 100 dpi, 800 x 1100
    const placement = { width: 576, height: 792, pageShare: 1 };
    const sizes: [number, number][] = [[800, 1100]];
    const sample = { band: 16, every: 4 };
    const references = drawLuminanceAt(original, sizes);
    const sampledReferences = drawLuminanceAt(original, sizes, sample);
    const scores = [0, 24, 48, 96, 160].map((noise) => {
      const data = new Uint8Array(page);
      for (let i = 0; i < data.length; i++)
        data[i] = Math.max(0, Math.min(255, data[i]! + ((((i * 2654435761) >>> 24) - 128) * noise) / 128));
      const candidate = { data, width, height, components: 1 as const };
      const whole = drawLuminanceAt(candidate, sizes);
      const sampled = drawLuminanceAt(candidate, sizes, sample);
      return {
        whole: Math.min(...sizes.map(([dw, dh], i) => ssim(references[i]!, whole[i]!, dw, dh))),
        sampled: Math.min(
          ...sizes.map(([dw, dh], i) => ssim(sampledReferences[i]!, sampled[i]!, dw, sampledHeight(dh, sample))),
        ),
        candidate,
      };
    });
    for (const floor of [0.5, 0.8, 0.9, 0.95]) {
      const check = new QualityCheck(original, placement, floor);
      for (const { whole, sampled, candidate } of scores) {
        const score = check.similarity(candidate);
        if (sampled >= floor + 0.01 || sampled < floor - 0.01) expect(score).toBeCloseTo(sampled, 6);
        else expect(score).toBeCloseTo(whole, 6);
        // The same candidate as a source of rows scores the same, and is asked only for the rows
        // the drawings keep: a quarter of them when the sample decides.
        let asked = 0;
        const rows = {
          width,
          height,
          components: 1 as const,
          rows: (from: number, to: number, into: Uint8Array) => {
            asked += to - from;
            into.set(candidate.data.subarray(from * width, to * width));
          },
        };
        expect(check.similarity(rows)).toBe(score);
        if (sampled >= floor + 0.01 || sampled < floor - 0.01) expect(asked).toBeLessThan(height * 0.3);
        else expect(asked).toBe(height);
      }
    }
    // the candidates span the floors: some were scored whole
    expect(scores.some(({ sampled }) => [0.5, 0.8, 0.9, 0.95].some((f) => Math.abs(sampled - f) < 0.01))).toBe(true);
  });

  it("scores identical images 1 and different ones less", () => {
    const a = photoPixels(64, 64, 1, 3);
    const b = photoPixels(64, 64, 1, 4);
    expect(ssim(a, a, 64, 64)).toBeCloseTo(1, 6);
    expect(ssim(a, b, 64, 64)).toBeLessThan(0.9);
  });
});
