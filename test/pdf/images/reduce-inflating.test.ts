// A very large Flate image reduced as it inflates (src/pdf/images/samples.ts reduceWhileInflating):
// each output sample the rounded mean of its factor x factor block (narrower at the right and
// bottom edges), whatever the samples a pixel, the predictor, or where zlib's chunks cut the rows.
// The block row's column sums live in the WebAssembly kernels' memory while a chunk is read and in
// JavaScript between chunks, where another image's kernels (the quality check, layers) use that
// memory: reductions run at once, with other kernels run between their chunks, give what each
// gives alone.
import { deflateSync } from "node:zlib";
import { PDFContext } from "@cantoo/pdf-lib";
import type { PDFDict } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import type { Components, Pixels } from "../../../src/pdf/images/codecs.ts";
import { luminanceOfPixels } from "../../../src/pdf/images/kernels.ts";
import { reduceWhileInflating } from "../../../src/pdf/images/samples.ts";

/** A deterministic generator (the fuzz's cases are the same on every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

interface Case {
  width: number;
  height: number;
  n: Components;
  factor: number;
  predictor: "none" | "png" | "tiff";
}

/** The reduction as the engine defines it (samples.ts writeAverages), one block at a time. */
function expected({ width, height, n, factor }: Case, samples: Uint8Array): Pixels {
  const ow = Math.ceil(width / factor);
  const oh = Math.ceil(height / factor);
  const out = new Uint8Array(ow * oh * n);
  const lastColumns = width - (ow - 1) * factor;
  for (let oy = 0; oy < oh; oy++) {
    const rows = Math.min(factor, height - oy * factor);
    for (let ox = 0; ox < ow; ox++) {
      const columns = Math.min(factor, width - ox * factor);
      for (let c = 0; c < n; c++) {
        let sum = 0;
        for (let y = oy * factor; y < oy * factor + rows; y++) {
          for (let x = ox * factor; x < ox * factor + columns; x++) sum += samples[(y * width + x) * n + c]!;
        }
        const scale = ox < ow - 1 ? 1 / (factor * rows) : 1 / (lastColumns * rows);
        out[(oy * ow + ox) * n + c] = Math.round(sum * scale);
      }
    }
  }
  return { data: out, width: ow, height: oh, components: n };
}

/** Samples with smooth runs and noise, so that every block's sum differs. */
function samplesOf({ width, height, n }: Case, next: () => number): Uint8Array {
  const samples = new Uint8Array(width * height * n);
  for (let i = 0; i < samples.length; i++) samples[i] = next() < 0.3 ? Math.floor(next() * 256) : (i * 7) & 0xff;
  return samples;
}

/** The samples deflated as stored: PNG's Sub filter on each row, TIFF's predictor 2, or as they are. */
function stored(samples: Uint8Array, { width, height, n, predictor }: Case): Uint8Array {
  const rowBytes = width * n;
  if (predictor === "none") return deflateSync(samples);
  if (predictor === "tiff") {
    const out = new Uint8Array(samples.length);
    for (let i = 0; i < samples.length; i++) {
      out[i] = i % rowBytes < n ? samples[i]! : (samples[i]! - samples[i - n]!) & 0xff;
    }
    return deflateSync(out);
  }
  const rows = new Uint8Array((rowBytes + 1) * height);
  for (let y = 0; y < height; y++) {
    const at = y * (rowBytes + 1);
    rows[at] = 1;
    for (let x = 0; x < rowBytes; x++) {
      const i = y * rowBytes + x;
      rows[at + 1 + x] = x < n ? samples[i]! : (samples[i]! - samples[i - n]!) & 0xff;
    }
  }
  return deflateSync(rows);
}

const context = PDFContext.create();
const parmsOf = ({ width, n, predictor }: Case): PDFDict | undefined =>
  predictor === "none"
    ? undefined
    : context.obj({ Predictor: predictor === "png" ? 15 : 2, Colors: n, BitsPerComponent: 8, Columns: width });

const reduce = (data: Uint8Array, c: Case) => reduceWhileInflating(data, parmsOf(c), c.width, c.height, c.n, c.factor);

const same = (a: Pixels | undefined, b: Pixels) =>
  a !== undefined &&
  a.width === b.width &&
  a.height === b.height &&
  a.components === b.components &&
  Buffer.from(a.data).equals(Buffer.from(b.data));

describe("reduceWhileInflating", () => {
  const next = random(1234);
  const cases: Case[] = [];
  const predictors = ["none", "png", "tiff"] as const;
  const components: Components[] = [1, 3, 4];
  for (let i = 0; i < 36; i++) {
    cases.push({
      width: 1 + Math.floor(next() * 400),
      height: 1 + Math.floor(next() * 120),
      n: components[i % 3]!,
      factor: 2 + Math.floor(next() * 7),
      predictor: predictors[Math.floor(i / 3) % 3]!,
    });
  }
  // Rows of 27,000 and 36,000 bytes: zlib's chunks (64 KiB and up) end within rows and blocks.
  cases.push({ width: 9000, height: 7, n: 3, factor: 2, predictor: "none" });
  cases.push({ width: 9001, height: 9, n: 4, factor: 3, predictor: "png" });
  cases.push({ width: 40_000, height: 5, n: 1, factor: 4, predictor: "tiff" });

  it.each(cases)("%o: each block's rounded mean", async (c) => {
    const samples = samplesOf(c, random(c.width * 31 + c.height));
    expect(same(await reduce(stored(samples, c), c), expected(c, samples))).toBe(true);
  });

  it("reductions at once, and other kernels between their chunks, give what each gives alone", async () => {
    const group: Case[] = [
      { width: 9000, height: 12, n: 3, factor: 2, predictor: "none" },
      { width: 7001, height: 10, n: 1, factor: 3, predictor: "png" },
      { width: 5003, height: 11, n: 4, factor: 5, predictor: "tiff" },
    ];
    const inputs = group.map((c) => samplesOf(c, random(c.width)));
    let interfering = true;
    const other = new Uint8Array(300_000).fill(0xa5);
    const interfere = async () => {
      // Another image's kernels, run whenever the reductions wait for zlib.
      while (interfering) {
        luminanceOfPixels(other, 3, 100_000);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const running = interfere();
    const results = await Promise.all(group.map((c, i) => reduce(stored(inputs[i]!, c), c)));
    interfering = false;
    await running;
    results.forEach((result, i) => expect(same(result, expected(group[i]!, inputs[i]!))).toBe(true));
  });

  it("short or damaged data gives nothing or a reduction of the right size", async () => {
    const c: Case = { width: 3000, height: 30, n: 3, factor: 4, predictor: "png" };
    const data = stored(samplesOf(c, random(5)), c);
    expect(await reduce(data.subarray(0, Math.floor(data.length / 2)), c)).toBeUndefined();
    const damaged = Uint8Array.from(data);
    damaged.fill(0x55, 2, 200);
    const result = await reduce(damaged, c);
    if (result) expect([result.width, result.height, result.data.length]).toEqual([750, 8, 750 * 8 * 3]);
  });
});
