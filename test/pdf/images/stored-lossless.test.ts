// The stored data's lossless size as the photograph probe asks for it (images/candidates.ts:
// storedLosslessOf, leastSizeAtRatio): samples not stored in Flate are deflated on the thread pool
// only until the answer is sure. Under `least` the size is the whole deflate's; from `least` on it
// is a size from `least` on that the whole deflate reaches too (the probe's decision with it:
// probe.test.ts).
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { LOSSLESS_LEVEL, leastSizeAtRatio, storedLosslessOf } from "../../../src/pdf/images/candidates.ts";
import { photoPixels, random } from "../fixtures.ts";

const wholeSize = (data: Uint8Array) => deflateSync(data, { level: LOSSLESS_LEVEL, memLevel: 9 }).length;

describe("the least size at a ratio", () => {
  it("is the least whole size whose product with the ratio reaches the JPEG's", () => {
    const next = random(5);
    for (let i = 0; i < 5000; i++) {
      const jpeg = 1 + Math.floor(next() * (i % 2 ? 100 : 10_000_000));
      const ratio = [0.5, 0.7, 0.3, next() + 0.01][i % 4]!;
      const least = leastSizeAtRatio(jpeg, ratio);
      expect([jpeg, ratio, least * ratio >= jpeg, (least - 1) * ratio < jpeg]).toEqual([jpeg, ratio, true, true]);
    }
  });
});

describe("the stored data's lossless size", () => {
  it("is the stored Flate data's size, whatever is asked", async () => {
    const stored = storedLosslessOf({ kind: "samples", data: new Uint8Array(100), flate: true }, 1234)!;
    expect(await stored(1)).toBe(1234);
    expect(await stored(1_000_000)).toBe(1234);
    expect(storedLosslessOf({ kind: "large-flate", parms: undefined }, 10)).toBeUndefined();
  });

  it("is the whole deflate's under `least`, and from `least` on a size the whole deflate reaches", async () => {
    const next = random(9);
    const noise = Uint8Array.from({ length: 300_000 }, () => Math.floor(next() * 256));
    for (const data of [photoPixels(400, 300, 3, 2), noise, new Uint8Array(200_000), new Uint8Array(0)]) {
      const whole = wholeSize(data);
      for (const least of [1, 2, whole - 1, whole, whole + 1, Math.floor(whole / 7), 10 * whole + 5]) {
        if (least < 1) continue;
        const size = await storedLosslessOf({ kind: "samples", data, flate: false }, 0)!(least);
        if (whole < least) expect([least, size]).toEqual([least, whole]);
        else expect([least, size >= least && size <= whole]).toEqual([least, true]);
      }
      // Once worked out whole, the size is kept for the next question.
      const stored = storedLosslessOf({ kind: "samples", data, flate: false }, 0)!;
      expect(await stored(whole + 1)).toBe(whole);
      expect(await stored(1)).toBe(whole);
    }
  });
});
