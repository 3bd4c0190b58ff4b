// The photograph probe (images/candidates.ts: candidatesAt): its JPEG and lossless encodings made at
// once, and its JPEG taken as the photograph's candidate when it was made of the same pixels at the
// same settings: the candidate is the bytes a JPEG made again would be. `both`: a failing branch
// is reported only once the other has settled (no libvips work left reading freed pixels). With
// the stored data's size deflated only as far as it needs (storedLosslessOf), the same decisions.
import { deflateSync } from "node:zlib";
import { PDFDocument, PDFRawStream } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { PROFILE_SETTINGS } from "../../../src/pdf/index.ts";
import { both, candidatesAt, LOSSLESS_LEVEL, storedLosslessOf } from "../../../src/pdf/images/candidates.ts";
import type { Job, Working } from "../../../src/pdf/images/candidates.ts";
import { encodeJpeg } from "../../../src/pdf/images/codecs.ts";
import type { Pixels } from "../../../src/pdf/images/codecs.ts";
import { N } from "../../../src/pdf/streams/filters.ts";
import { photoPixels, random } from "../fixtures.ts";

const BALANCED = PROFILE_SETTINGS.balanced.images!;

async function jobOf(pixels: Pixels, mask = false): Promise<{ job: Job; working: Working }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const stream = PDFRawStream.of(doc.context.obj({}), new Uint8Array(10_000_000));
  const colour = {
    kind: "direct" as const,
    components: 3 as const,
    ranges: [0, 1, 0, 1, 0, 1],
    object: N.DeviceRGB,
    rgbLike: true,
  };
  const info = { width: pixels.width, height: pixels.height, bpc: 8, colour, decode: undefined };
  const job: Job = {
    stream,
    info,
    mask,
    masked: false,
    placement: undefined,
    target: undefined,
    settings: BALANCED,
    effort: "best",
  };
  const working: Working = {
    pixels,
    reduced: false,
    recoloured: {},
    jpeg: undefined,
    storedLossless: undefined,
    owned: false,
  };
  return { job, working };
}

describe("the photograph probe", () => {
  it("takes its JPEG as the photograph's candidate: the bytes of a JPEG made again", async () => {
    const pixels: Pixels = { data: photoPixels(300, 200, 3, 9), width: 300, height: 200, components: 3 };
    const { job, working } = await jobOf(pixels);
    const kind: { photo?: boolean } = {};
    const [candidate] = await candidatesAt(job, working, pixels, true, kind, true);
    expect(kind.photo).toBe(true);
    const again = await encodeJpeg(pixels, { quality: BALANCED.jpegQuality, effort: "best" });
    expect(candidate!.replacement.filter).toBe(N.DCTDecode);
    expect(Buffer.from(candidate!.replacement.data).equals(Buffer.from(again))).toBe(true);
    // Its next size is told a photograph without a probe, and encoded as before.
    const [next] = await candidatesAt(job, working, pixels, true, kind, true);
    expect(Buffer.from(next!.replacement.data).equals(Buffer.from(again))).toBe(true);
  });

  it("fails when one of its encodings does, without leaving the other behind", async () => {
    const pixels: Pixels = { data: new Uint8Array(10), width: 300, height: 200, components: 3 };
    const { job, working } = await jobOf(pixels);
    await expect(candidatesAt(job, working, pixels, true, {}, true)).rejects.toThrow();
  });
});

describe("the photograph probe with the stored data's size bounded (storedLosslessOf)", () => {
  const decide = async (pixels: Pixels, storedLossless: Working["storedLossless"]) => {
    const { job, working } = await jobOf(pixels);
    const kind: { photo?: boolean } = {};
    await candidatesAt(job, { ...working, storedLossless }, pixels, true, kind, true);
    return kind.photo;
  };

  it("tells photographs from graphics as the whole size does", async () => {
    const next = random(13);
    const flat = new Uint8Array(160 * 120 * 3).fill(200);
    const bands = Uint8Array.from({ length: 160 * 120 * 3 }, (_, i) => (Math.floor(i / 960) % 2 ? 30 : 220));
    const noise = Uint8Array.from({ length: 160 * 120 * 3 }, () => Math.floor(next() * 256));
    let asked = 0;
    for (const data of [photoPixels(160, 120, 3, 4), flat, bands, noise]) {
      const pixels: Pixels = { data, width: 160, height: 120, components: 3 };
      const whole = deflateSync(data, { level: LOSSLESS_LEVEL, memLevel: 9 }).length;
      const before = await decide(pixels, () => Promise.resolve(whole));
      const stored = storedLosslessOf({ kind: "samples", data, flate: false }, 0)!;
      const bounded = await decide(pixels, (least) => (asked++, stored(least)));
      expect(bounded).toBe(before);
    }
    // The stored size was asked for (the probe's JPEG small enough for it to decide).
    expect(asked).toBeGreaterThan(0);
  });
});

describe("both", () => {
  const later = <T>(ms: number, value: T, fail = false) =>
    new Promise<T>((resolve, reject) =>
      setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms),
    );

  it("gives both values in order", async () => {
    expect(await both(later(20, "a"), later(5, 1))).toEqual(["a", 1]);
  });

  it("reports a failure only once the other branch has settled, the first branch's first", async () => {
    let settled = false;
    const slow = later(40, "slow").then((v) => ((settled = true), v));
    await expect(both(later(1, "fast", true), slow)).rejects.toThrow("fast");
    expect(settled).toBe(true);
    settled = false;
    const slowFail = later(40, "second", true).finally(() => (settled = true));
    await expect(both(later(1, "first", true), slowFail)).rejects.toThrow("first");
    expect(settled).toBe(true);
    await expect(both(later(1, "ok"), later(5, "late", true))).rejects.toThrow("late");
  });
});
