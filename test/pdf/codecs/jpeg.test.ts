// JPEG (src/pdf/codecs/jpeg.ts and the encoder settings of src/pdf/images/codecs.ts): the encoder's
// effort, the lossless bar of a JPEG, ICC profiles inside JPEG data and Huffman optimisation.
import { execFileSync } from "node:child_process";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import { encodeJpeg, readJpegHeader, resample } from "../../../src/pdf/images/codecs.ts";
import { optimiseJpeg, optimisedJpegSizeAtLeast, withoutIccProfile } from "../../../src/pdf/codecs/jpeg.ts";
import { luminance, ssim } from "../../../src/pdf/images/quality.ts";
import { jpegOf, photoPixels } from "../fixtures.ts";
import { image, pageWith, draw, compressed, text } from "../helpers/images.ts";

describe("JPEG encoder effort", () => {
  it.each([1, 3, 4] as const)(
    "resampling while encoding (%i components) writes the JPEG of the resampled pixels, byte for byte",
    async (components) => {
      // CMYK: a photograph four bytes to a pixel (any bytes will do for the comparison)
      const pixels = components === 4 ? photoPixels(301 * 4, 211, 1, 5) : photoPixels(301, 211, components, 5);
      const size = { width: 150, height: 105 };
      const direct = await encodeJpeg(
        { data: pixels, width: 301, height: 211, components },
        {
          quality: 75,
          effort: "fast",
          size,
        },
      );
      const resampled = await resample({ data: pixels, width: 301, height: 211, components }, size);
      const twoPasses = await encodeJpeg(resampled, { quality: 75, effort: "fast" });
      expect(Buffer.compare(direct, twoPasses)).toBe(0);
      expect(readJpegHeader(direct)).toMatchObject(size);
    },
  );

  it("the fast setting writes a baseline JPEG as close to the pixels as mozjpeg's full setting, in more bytes", async () => {
    const [width, height] = [480, 360];
    const pixels = { data: photoPixels(width, height, 3), width, height, components: 3 as const };
    const best = await encodeJpeg(pixels, { quality: 75, effort: "best" });
    const fast = await encodeJpeg(pixels, { quality: 75, effort: "fast" });
    for (const jpeg of [best, fast]) {
      expect(readJpegHeader(jpeg)).toMatchObject({ width, height, components: 3, precision: 8 });
    }
    // SOF2 (progressive) from mozjpeg's full setting, SOF0 (baseline: one scan) from the fast one
    const frame = (jpeg: Uint8Array, marker: number) => Buffer.from(jpeg).includes(Buffer.from([0xff, marker]));
    expect(frame(best, 0xc2)).toBe(true);
    expect(frame(fast, 0xc0)).toBe(true);
    expect(frame(fast, 0xc2)).toBe(false);
    expect(fast.length).toBeGreaterThan(best.length);
    const gray = async (jpeg: Uint8Array) => luminance({ ...pixels, data: await sharp(jpeg).raw().toBuffer() });
    const original = luminance(pixels);
    const [fastSsim, bestSsim] = [
      ssim(await gray(fast), original, width, height),
      ssim(await gray(best), original, width, height),
    ];
    // Without trellis quantisation the encoder keeps more detail for its extra bytes, never less.
    expect(fastSsim).toBeGreaterThanOrEqual(bestSsim - 0.002);
  });
});

describe("the lossless bar of a JPEG", () => {
  it("is a lower bound of what new Huffman tables make of it, within a few bytes in a thousand", async () => {
    for (const [width, height, seed] of [
      [320, 240, 1],
      [500, 700, 2],
    ] as const) {
      const jpeg = await jpegOf(photoPixels(width, height, 3, seed), width, height, 3, 90);
      const optimised = optimiseJpeg(jpeg)?.length ?? jpeg.length;
      const bound = optimisedJpegSizeAtLeast(jpeg)!;
      expect(bound).toBeLessThanOrEqual(optimised);
      expect(bound).toBeGreaterThan(optimised * 0.99);
    }
    expect(optimisedJpegSizeAtLeast(new Uint8Array([0xff, 0xd8, 0xff, 0xd9]))).toBeUndefined();
  });
});

describe("ICC profiles inside JPEG data", () => {
  const hasProfile = (jpeg: Uint8Array) => Buffer.from(jpeg).includes("ICC_PROFILE\0", 0, "latin1");
  /** A 300 x 200 photograph as a JPEG that embeds sRGB's ICC profile (as cameras and Photoshop do). */
  const jpegWithProfile = () =>
    sharp(photoPixels(300, 200, 3), { raw: { width: 300, height: 200, channels: 3 } })
      .withIccProfile("srgb")
      .jpeg({ quality: 92 })
      .toBuffer();
  const pixels = async (jpeg: Uint8Array) => (await sharp(jpeg, { ignoreIcc: true }).raw().toBuffer()).toString("hex");

  it("drops the profile's segments and nothing else: the same pixels", async () => {
    const jpeg = await jpegWithProfile();
    expect(hasProfile(jpeg)).toBe(true);
    const stripped = withoutIccProfile(jpeg)!;
    expect(hasProfile(stripped)).toBe(false);
    expect(stripped.length).toBeLessThan(jpeg.length - 400);
    expect(await pixels(stripped)).toBe(await pixels(jpeg));
    expect(withoutIccProfile(stripped)).toBeUndefined(); // none left
    expect(withoutIccProfile(jpeg.subarray(0, 40))).toBeUndefined(); // cut short
  });

  it("is removed in every profile when the image's colour space is ICCBased, and kept otherwise", async () => {
    const jpeg = await jpegWithProfile();
    const doc = await PDFDocument.create({ updateMetadata: false });
    // Any bytes stand for the profile: the engine never reads it.
    const profile = doc.context.register(doc.context.flateStream(new Uint8Array(600).fill(7), { N: 3 }));
    const dict = { Width: 300, Height: 200, BitsPerComponent: 8, Filter: "DCTDecode" };
    const icc = image(doc, jpeg, { ...dict, ColorSpace: doc.context.obj([PDFName.of("ICCBased"), profile]) }, false);
    const device = image(doc, jpeg, { ...dict, ColorSpace: "DeviceRGB", Interpolate: true }, false);
    // Drawn at their own resolution, so that no profile downsamples them.
    pageWith(doc, draw("A", 300, 200, 0, 0) + draw("B", 300, 200, 0, 300), { A: icc, B: device });
    for (const profileName of ["lossless", "balanced", "extreme"] as const) {
      const { output } = await compressed(doc, profileName);
      const out = await PDFDocument.load(output, { updateMetadata: false });
      const images = out.context
        .enumerateIndirectObjects()
        .map(([, object]) => object)
        .filter(
          (o): o is PDFRawStream =>
            o instanceof PDFRawStream && o.dict.get(PDFName.of("Subtype")) === PDFName.of("Image"),
        );
      const byColourSpace = (icc: boolean) =>
        images.find((o) => o.dict.lookup(PDFName.of("ColorSpace")) instanceof PDFName !== icc)!;
      const withIcc = byColourSpace(true);
      const withDevice = byColourSpace(false);
      expect(text(withIcc.dict.get(PDFName.of("Filter")))).toBe("/DCTDecode");
      expect(hasProfile(withIcc.contents)).toBe(false);
      if (profileName === "lossless") {
        expect(await pixels(withIcc.contents)).toBe(await pixels(jpeg));
        expect(hasProfile(withDevice.contents)).toBe(true);
      }
    }
  });
});

describe("JPEG Huffman optimisation", () => {
  const pixels = (channels: 1 | 3) => photoPixels(640, 480, channels, 31);
  const jpeg = async (channels: 1 | 3, options: Parameters<ReturnType<typeof sharp>["jpeg"]>[0]) =>
    new Uint8Array(
      await (
        channels === 1
          ? sharp(pixels(1), { raw: { width: 640, height: 480, channels: 1 } }).toColourspace("b-w")
          : sharp(pixels(3), { raw: { width: 640, height: 480, channels: 3 } })
      )
        .jpeg(options)
        .toBuffer(),
    );
  const decode = (data: Uint8Array) => sharp(data).raw().toBuffer();

  it("re-codes baseline JPEGs (grey, 4:2:0 and 4:4:4 colour) to the very same pixels", async () => {
    for (const [channels, subsampling] of [
      [1, "4:4:4"],
      [3, "4:2:0"],
      [3, "4:4:4"],
    ] as const) {
      const generic = await jpeg(channels, { quality: 85, optimiseCoding: false, chromaSubsampling: subsampling });
      const optimised = optimiseJpeg(generic);
      expect(optimised).toBeDefined();
      expect(optimised!.length).toBeLessThan(generic.length);
      expect((await decode(optimised!)).equals(await decode(generic))).toBe(true);
    }
  });

  it("leaves progressive, truncated and damaged JPEGs alone, without throwing", async () => {
    expect(optimiseJpeg(await jpeg(3, { quality: 85, progressive: true }))).toBeUndefined();
    const generic = await jpeg(3, { quality: 85, optimiseCoding: false });
    expect(optimiseJpeg(generic.subarray(0, Math.floor(generic.length * 0.6)))).toBeUndefined();
    const damaged = Uint8Array.from(generic);
    for (let i = Math.floor(damaged.length / 2); i < damaged.length - 2; i += 97) damaged[i] = 0xff;
    expect(() => optimiseJpeg(damaged)).not.toThrow();
    expect(optimiseJpeg(new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0, 2]))).toBeUndefined();
    expect(optimiseJpeg(new Uint8Array(0))).toBeUndefined();
  });

  it("keeps restart markers (cjpeg -restart, when libjpeg's tools are installed)", async (context) => {
    let withRestarts: Uint8Array;
    try {
      const ppm = Buffer.concat([Buffer.from("P6\n640 480\n255\n", "latin1"), Buffer.from(pixels(3))]);
      withRestarts = execFileSync("cjpeg", ["-restart", "1", "-quality", "85"], { input: ppm });
    } catch {
      console.log("engine-structure.test.ts: cjpeg is not installed; restart markers are not tested.");
      context.skip();
      return;
    }
    const optimised = optimiseJpeg(withRestarts);
    expect(optimised).toBeDefined();
    expect((await decode(optimised!)).equals(await decode(withRestarts))).toBe(true);
    const markers = (data: Uint8Array) => data.filter((b, i) => b === 0xff && (data[i + 1]! & 0xf8) === 0xd0).length;
    expect(markers(optimised!)).toBe(markers(withRestarts));
  });
});
