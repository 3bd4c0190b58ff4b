// The image pass (src/pdf/images/optimise.ts and the rooms it calls): downsampling to the resolution
// the pages need, the image forms it recodes (checked by rendering before and after with pdftoppm),
// what it must leave alone, graphics of few colours and the profiles' order. Every PDF here is
// generated in code (../helpers/images.ts).
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFRef } from "@cantoo/pdf-lib";
import { compressPdf, PROFILE_SETTINGS } from "../../../src/pdf/index.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { optimiseImages } from "../../../src/pdf/images/optimise.ts";
import { decodeJpeg, encodeJpeg, encodeLossless, encodePalette, release } from "../../../src/pdf/images/codecs.ts";
import { imageStreams, jpegOf, lineArtPixels, photoPixels } from "../fixtures.ts";
import {
  encoder,
  image,
  pageWith,
  draw,
  compressed,
  imageDict,
  text,
  render,
  compare,
  expectLooksAlike,
  rendering,
  smoothPhoto,
  cmykOf,
  indexedPhoto,
  pngUp,
} from "../helpers/images.ts";

describe("downsampling to the resolution the pages need", () => {
  it("brings a photograph drawn small down to the profile's resolution, as a JPEG", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    // 2400 x 1600 drawn at 240 x 160 pt: 720 ppi.
    const ref = image(doc, await smoothPhoto(2400, 1600, 3, 5), {
      Width: 2400,
      Height: 1600,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
    });
    pageWith(doc, draw("Im", 240, 160, 100, 400), { Im: ref });
    for (const profile of ["balanced", "extreme"] as const) {
      const { output } = await compressed(doc, profile);
      const stream = await imageDict(output, ref);
      const ppi = PROFILE_SETTINGS[profile].images!.targetPpi;
      const width = Number(text(stream.dict.get(PDFName.of("Width"))));
      // The target, or a step or two above it when the quality check asked for more.
      expect(width).toBeGreaterThanOrEqual(Math.round((240 / 72) * ppi));
      expect(width).toBeLessThanOrEqual(Math.round((240 / 72) * ppi * 1.25 ** 2) + 1);
      expect(text(stream.dict.get(PDFName.of("Filter")))).toBe("/DCTDecode");
      expect((await sharp(stream.contents).metadata()).width).toBe(width);
    }
  });

  it("keeps the size of an image drawn large enough to need its pixels", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    // 1400 x 1000 drawn at 500 x 357 pt: 202 ppi, under balanced's 150 ppi x 1.5.
    const ref = image(doc, await smoothPhoto(1400, 1000, 3, 6), {
      Width: 1400,
      Height: 1000,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
    });
    pageWith(doc, draw("Im", 500, 357, 50, 50), { Im: ref });
    const { output } = await compressed(doc, "balanced");
    const stream = await imageDict(output, ref);
    expect(text(stream.dict.get(PDFName.of("Width")))).toBe("1400");
  });

  it("goes by the largest placement of an image drawn on several pages", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const ref = image(doc, await smoothPhoto(1800, 1200, 3, 7), {
      Width: 1800,
      Height: 1200,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
    });
    pageWith(doc, draw("Im", 90, 60), { Im: ref }); // 1440 ppi
    pageWith(doc, draw("Im", 540, 360), { Im: ref }); // 240 ppi
    const { output } = await compressed(doc, "balanced");
    const width = Number(text((await imageDict(output, ref)).dict.get(PDFName.of("Width"))));
    expect(width).toBeGreaterThanOrEqual(1125); // 150 ppi over 540 pt
  });

  it("keeps the longest-side rule for an image the pages were not seen to draw", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const ref = image(doc, await smoothPhoto(2600, 1300, 3, 20), {
      Width: 2600,
      Height: 1300,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
    });
    pageWith(doc, "", { Unused: ref }); // in the resources, never drawn
    const { output } = await compressed(doc, "balanced");
    const width = Number(text((await imageDict(output, ref)).dict.get(PDFName.of("Width"))));
    expect(width).toBe(PROFILE_SETTINGS.balanced.images!.maxSide);
  });

  rendering("keeps scanned text sharp enough: fine strokes are not brought to the photo resolution", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    // One-pixel strokes at 600 ppi (text-like), drawn over the whole page.
    const [w, h] = [1700, 1100];
    const strokes = new Uint8Array(w * h).fill(255);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) if (x % 9 === 0 || (y % 13 === 0 && x % 50 < 30)) strokes[y * w + x] = 0;
    const ref = image(doc, strokes, { Width: w, Height: h, ColorSpace: "DeviceGray", BitsPerComponent: 8 });
    pageWith(doc, draw("Im", 204, 132, 100, 400), { Im: ref });
    const { input, output } = await compressed(doc, "balanced");
    expect(output.length).toBeLessThanOrEqual(input.length);
    const result = compare(render(input, 1, 100), render(output, 1, 100));
    expect(result.ssim).toBeGreaterThan(0.95);
  });
});

describe("image forms recoded with the right pixels", () => {
  rendering("CMYK samples become a CMYK JPEG that renders in the same colours", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const ref = image(doc, cmykOf(await smoothPhoto(1200, 900, 3, 8)), {
      Width: 1200,
      Height: 900,
      ColorSpace: "DeviceCMYK",
      BitsPerComponent: 8,
    });
    pageWith(doc, draw("Im", 400, 300, 100, 300), { Im: ref });
    const { input, output } = await compressed(doc, "balanced");
    const stream = await imageDict(output, ref);
    expect(text(stream.dict.get(PDFName.of("Filter")))).toBe("/DCTDecode");
    expect((await sharp(stream.contents).metadata()).channels).toBe(4);
    expect(output.length).toBeLessThan(input.length / 4);
    expectLooksAlike(input, output);
  });

  rendering("a CMYK JPEG with an Adobe marker and an inverting /Decode keeps its colours", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    // sharp writes Adobe-inverted CMYK; PDF producers pair such JPEGs with /Decode [1 0 ...].
    const jpeg = await sharp(await smoothPhoto(1600, 1200, 3, 9), { raw: { width: 1600, height: 1200, channels: 3 } })
      .toColourspace("cmyk")
      .jpeg({ quality: 95 })
      .toBuffer();
    const ref = image(
      doc,
      jpeg,
      {
        Width: 1600,
        Height: 1200,
        ColorSpace: "DeviceCMYK",
        BitsPerComponent: 8,
        Filter: "DCTDecode",
        Decode: [1, 0, 1, 0, 1, 0, 1, 0],
      },
      false,
    );
    pageWith(doc, draw("Im", 300, 225, 100, 300), { Im: ref });
    const { input, output } = await compressed(doc, "balanced");
    const stream = await imageDict(output, ref);
    expect(Number(text(stream.dict.get(PDFName.of("Width"))))).toBeLessThan(1600);
    expectLooksAlike(input, output);
  });

  rendering(
    "an Indexed photograph is expanded to its base space when JPEG wins; flat Indexed art stays Indexed",
    async () => {
      const doc = await PDFDocument.create({ updateMetadata: false });
      const [indices, palette] = indexedPhoto(1000, 700);
      const photoRef = image(doc, indices, {
        Width: 1000,
        Height: 700,
        ColorSpace: ["Indexed", "DeviceRGB", 215, PDFHexString.of(Buffer.from(palette).toString("hex"))],
        BitsPerComponent: 8,
      });
      // Four colours, 2 bits per index, big flat areas.
      const [aw, ah] = [800, 600];
      const art = new Uint8Array((aw / 4) * ah);
      for (let y = 0; y < ah; y++)
        for (let b = 0; b < aw / 4; b++) art[y * (aw / 4) + b] = ((Math.floor(y / 60) + Math.floor(b / 25)) % 4) * 0x55;
      const artRef = image(doc, art, {
        Width: aw,
        Height: ah,
        ColorSpace: ["Indexed", "DeviceRGB", 3, PDFHexString.of("ff0000" + "00ff00" + "0000ff" + "ffffff")],
        BitsPerComponent: 2,
      });
      pageWith(doc, draw("Photo", 400, 280, 50, 450) + draw("Art", 400, 300, 50, 50), { Photo: photoRef, Art: artRef });
      const { input, output } = await compressed(doc, "balanced");
      const photo = await imageDict(output, photoRef);
      expect(text(photo.dict.get(PDFName.of("Filter")))).toBe("/DCTDecode");
      expect(text(photo.dict.get(PDFName.of("ColorSpace")))).toBe("/DeviceRGB");
      const kept = await imageDict(output, artRef);
      expect(text(kept.dict.get(PDFName.of("ColorSpace")))).toContain("/Indexed");
      expectLooksAlike(input, output);
    },
  );

  rendering("Flate with PNG predictors, 16-bit samples and gray /Decode [1 0] come out right", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const rgb = await smoothPhoto(900, 600, 3, 11);
    const predicted = image(doc, pngUp(rgb, 900 * 3), {
      Width: 900,
      Height: 600,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      DecodeParms: { Predictor: 12, Colors: 3, Columns: 900, BitsPerComponent: 8 },
    });
    const wide = new Uint8Array(600 * 400 * 3 * 2);
    const narrow = await smoothPhoto(600, 400, 3, 12);
    for (let i = 0; i < narrow.length; i++) wide.set([narrow[i]!, 0x80], i * 2);
    const sixteen = image(doc, wide, { Width: 600, Height: 400, ColorSpace: "DeviceRGB", BitsPerComponent: 16 });
    const inverted = image(doc, await smoothPhoto(800, 500, 1, 13), {
      Width: 800,
      Height: 500,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
      Decode: [1, 0],
    });
    pageWith(doc, draw("P", 300, 200, 20, 550) + draw("S", 300, 200, 20, 300) + draw("D", 300, 187, 20, 50), {
      P: predicted,
      S: sixteen,
      D: inverted,
    });
    const { input, output } = await compressed(doc, "balanced");
    for (const ref of [predicted, sixteen, inverted]) {
      const stream = await imageDict(output, ref);
      expect(text(stream.dict.get(PDFName.of("BitsPerComponent")))).toBe("8");
    }
    expect(text((await imageDict(output, inverted)).dict.get(PDFName.of("Decode")))).toBe("[ 1 0 ]");
    expectLooksAlike(input, output);
  });

  rendering("a soft-masked image is downsampled, its mask with it unless that makes it larger; lossless", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const [w, h] = [2000, 1400];
    const alpha = new Uint8Array(w * h);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) alpha[y * w + x] = Math.hypot(x - w / 2, y - h / 2) < 600 ? 255 : 0;
    const mask = image(doc, alpha, { Width: w, Height: h, ColorSpace: "DeviceGray", BitsPerComponent: 8 });
    const ref = image(doc, await smoothPhoto(w, h, 3, 14), {
      Width: w,
      Height: h,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      SMask: mask,
    });
    pageWith(doc, "0 0.5 0 rg 0 0 612 792 re f\n" + draw("Im", 300, 210, 150, 300), { Im: ref });
    const { input, output } = await compressed(doc, "balanced");
    const image2 = await imageDict(output, ref);
    const mask2 = await imageDict(output, mask);
    expect(Number(text(image2.dict.get(PDFName.of("Width"))))).toBeLessThan(w);
    // A hard-edged mask stores smaller at its own size than resampled (its edges gain gray levels):
    // it stays as the lossless profile stores it, which a reader scales to the image.
    expect(Number(text(mask2.dict.get(PDFName.of("Width"))))).toBeLessThanOrEqual(w);
    const losslessMask = await imageDict((await compressed(doc, "lossless")).output, mask);
    expect(mask2.contents.length).toBeLessThanOrEqual(losslessMask.contents.length);
    expect(text(mask2.dict.get(PDFName.of("Filter")))).toBe("/FlateDecode");
    expect(image2.dict.get(PDFName.of("SMask"))).toBe(mask);
    expectLooksAlike(input, output);
  });

  rendering("a large inline image becomes an image XObject; a small one stays inline", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const big = await smoothPhoto(600, 400, 3, 15);
    const small = new Uint8Array(8 * 8).fill(90);
    const content = new Uint8Array([
      ...encoder.encode("q 300 0 0 200 50 400 cm BI /W 600 /H 400 /BPC 8 /CS /RGB /F /Fl ID "),
      ...deflateSync(big),
      ...encoder.encode("\nEI Q q 50 0 0 50 400 100 cm BI /W 8 /H 8 /BPC 8 /CS /G ID "),
      ...small,
      ...encoder.encode("\nEI Q"),
    ]);
    pageWith(doc, content, {});
    const { input, output } = await compressed(doc, "balanced");
    expect(output.length).toBeLessThan(input.length / 2);
    const after = await PDFDocument.load(output, { updateMetadata: false });
    const resources = after.getPage(0).node.lookup(PDFName.of("Resources"), PDFDict);
    expect(resources.lookup(PDFName.of("XObject"), PDFDict).keys()).toHaveLength(1);
    const images = [...(await imageStreams(output)).values()];
    expect(images.map((i) => i.width)).toEqual([600]);
    expectLooksAlike(input, output);
  });

  it("stores an RGB image of grays as DeviceGray", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const gray = await smoothPhoto(1000, 800, 1, 16);
    const rgb = new Uint8Array(gray.length * 3);
    for (let i = 0; i < gray.length; i++) rgb.fill(gray[i]!, i * 3, i * 3 + 3);
    const ref = image(doc, rgb, { Width: 1000, Height: 800, ColorSpace: "DeviceRGB", BitsPerComponent: 8 });
    pageWith(doc, draw("Im", 500, 400, 50, 50), { Im: ref });
    const { output } = await compressed(doc, "balanced");
    const stream = await imageDict(output, ref);
    expect(text(stream.dict.get(PDFName.of("ColorSpace")))).toBe("/DeviceGray");
  });
});

describe("what the image pass leaves alone", () => {
  async function mixedPdf() {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const jpeg = await jpegOf(photoPixels(1600, 1200, 3, 17), 1600, 1200, 3);
    const refs = [
      image(
        doc,
        jpeg,
        { Width: 1600, Height: 1200, ColorSpace: "DeviceRGB", BitsPerComponent: 8, Filter: "DCTDecode" },
        false,
      ),
      image(doc, lineArtPixels(800, 600), { Width: 800, Height: 600, ColorSpace: "DeviceRGB", BitsPerComponent: 8 }),
      image(doc, cmykOf(photoPixels(700, 500, 3, 18)), {
        Width: 700,
        Height: 500,
        ColorSpace: "DeviceCMYK",
        BitsPerComponent: 8,
      }),
    ];
    const content =
      draw("A", 200, 150, 10, 10) +
      draw("B", 200, 150, 220, 10) +
      draw("C", 200, 143, 10, 200) +
      "q 100 0 0 100 300 300 cm BI /W 80 /H 80 /BPC 8 /CS /G ID " +
      "x".repeat(6400) +
      "\nEI Q";
    pageWith(doc, content, { A: refs[0]!, B: refs[1]!, C: refs[2]! });
    return doc.save({ useObjectStreams: false });
  }

  it("lossless keeps every image's samples and pixels, and inline images inline", async () => {
    const input = await mixedPdf();
    const { output } = await compressPdf(input, "lossless");
    expect(output.length).toBeLessThanOrEqual(input.length);
    const samples = async (bytes: Uint8Array) => {
      const doc = await PDFDocument.load(bytes, { updateMetadata: false });
      const found = new Map<number, { filter: string; data: Uint8Array }>();
      for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
        if (!(object instanceof PDFRawStream) || object.dict.lookup(PDFName.of("Subtype")) !== PDFName.of("Image"))
          continue;
        const filter = text(object.dict.lookup(PDFName.of("Filter")));
        const data =
          filter === "/DCTDecode" ? object.contents : decodeStreamData(object, 1 << 26, { predictors: true });
        found.set(ref.objectNumber, { filter, data: data! });
      }
      return found;
    };
    const before = await samples(input);
    const after = await samples(output);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    // The image pass does not run in lossless; the stream pass may re-code a JPEG's Huffman
    // tables (same coefficients), so JPEGs are compared by their pixels.
    const pixels = async (jpeg: Uint8Array) => sharp(jpeg).raw().toBuffer();
    for (const [number, image] of before) {
      const kept = after.get(number)!;
      if (image.filter === "/DCTDecode") {
        expect(kept.filter).toBe("/DCTDecode");
        expect((await pixels(kept.data)).equals(await pixels(image.data))).toBe(true);
      } else {
        expect(Buffer.from(kept.data).equals(Buffer.from(image.data))).toBe(true);
      }
    }
    const doc = await PDFDocument.load(output, { updateMetadata: false });
    const contents = doc.context.lookup(doc.getPage(0).node.get(PDFName.of("Contents")));
    expect(contents).toBeInstanceOf(PDFRawStream);
    expect(Buffer.from(decodeStreamData(contents as PDFRawStream, 1 << 20)!).includes("BI /W 80")).toBe(true);
  });

  it("never returns more bytes than it was given, run after run", async () => {
    let bytes: Uint8Array = await mixedPdf();
    for (const profile of ["balanced", "extreme", "extreme", "balanced"] as const) {
      const { output } = await compressPdf(bytes, profile);
      expect(output.length).toBeLessThanOrEqual(bytes.length);
      bytes = output;
    }
  });

  it("does not re-encode a JPEG already at the profile's quality", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const jpeg = await sharp(photoPixels(800, 600, 3, 19), { raw: { width: 800, height: 600, channels: 3 } })
      .jpeg({ quality: 60 })
      .toBuffer();
    const ref = image(
      doc,
      jpeg,
      { Width: 800, Height: 600, ColorSpace: "DeviceRGB", BitsPerComponent: 8, Filter: "DCTDecode" },
      false,
    );
    pageWith(doc, draw("Im", 500, 375, 50, 50), { Im: ref });
    const { output } = await compressed(doc, "balanced");
    expect(Buffer.from((await imageDict(output, ref)).contents).equals(jpeg)).toBe(true);
  });
});

describe("release", () => {
  it("frees a whole pixel buffer at once, and leaves views, small buffers and what it was not given", async () => {
    const jpeg = await encodeJpeg(
      { data: photoPixels(600, 400, 3), width: 600, height: 400, components: 3 },
      { quality: 75 },
    );
    const decoded = await decodeJpeg(jpeg, 3);
    const other = await decodeJpeg(jpeg, 3);
    const view = other.data.subarray(0, 1000);
    const small = new Uint8Array(1024);
    expect(decoded.data.byteLength).toBe(600 * 400 * 3);
    release(decoded.data, view, small, undefined);
    expect(decoded.data.byteLength).toBe(0); // detached: its memory is gone
    expect(view.byteLength).toBe(1000);
    expect(other.data.byteLength).toBe(600 * 400 * 3);
    expect(small.byteLength).toBe(1024);
  });
});

/**
 * A seal-like graphic: rings and spokes of one ink on white, their edges anti-aliased (coverage
 * blends of the two colours), as a logo scanned or rendered for a letterhead.
 */
function sealPixels(size: number): Uint8Array {
  const out = new Uint8Array(size * size * 3);
  const centre = size / 2;
  const ink = [20, 70, 190];
  const rings: [number, number][] = [
    [0.47, 0.03],
    [0.4, 0.008],
    [0.25, 0.01],
  ];
  const coverage = (v: number) => Math.min(1, Math.max(0, v));
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x + 0.5 - centre, y + 0.5 - centre);
      let cover = 0;
      for (const [radius, width] of rings)
        cover = Math.max(cover, coverage((size * width) / 2 - Math.abs(d - radius * size) + 0.5));
      if (d < 0.22 * size) {
        const spoke = Math.abs(Math.sin(Math.atan2(y - centre, x - centre) * 6));
        cover = Math.max(cover, coverage(0.5 + (spoke - 0.9) * 20));
      }
      const i = (y * size + x) * 3;
      for (let c = 0; c < 3; c++) out[i + c] = Math.round(255 * (1 - cover) + ink[c]! * cover);
    }
  }
  return out;
}

/** An Indexed image's pixels: its indices (8 bits, PNG-predicted Flate) looked up in its palette. */
function indexedPixels(stream: PDFRawStream): Uint8Array {
  const colourSpace = stream.dict.lookup(PDFName.of("ColorSpace"));
  expect(text(colourSpace)).toMatch(/^\[ \/Indexed \/DeviceRGB \d+ </);
  const lookup = (colourSpace as unknown as { lookup(i: number): PDFHexString }).lookup(3).asBytes();
  const indices = decodeStreamData(stream, 1 << 26, { predictors: true })!;
  const rgb = new Uint8Array(indices.length * 3);
  for (let p = 0; p < indices.length; p++) rgb.set(lookup.subarray(indices[p]! * 3, indices[p]! * 3 + 3), p * 3);
  return rgb;
}

describe("graphics of few colours", () => {
  it("are quantised to a palette with exactly their colours when they have 256 or fewer", async () => {
    const pixels = { data: lineArtPixels(400, 300), width: 400, height: 300, components: 3 as const };
    const palette = await encodePalette(pixels, 90);
    expect(palette).toBeDefined();
    expect(palette!.palette.length / 3).toBeLessThanOrEqual(256);
    expect(Buffer.from(palette!.decoded.data).equals(Buffer.from(pixels.data))).toBe(true);
    expect(await encodePalette({ ...pixels, data: cmykOf(pixels.data), components: 4 }, 90)).toBeUndefined();
  });

  rendering("become a palette over their colour space in balanced and extreme, and look alike", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const size = 1024;
    const pixels = sealPixels(size);
    // Drawn at 416 pt: 177 ppi, too few to downsample in balanced; JPEG smears its edges for
    // more than half the bytes of its lossless encoding, so it is no photograph.
    const ref = image(doc, pixels, { Width: size, Height: size, ColorSpace: "DeviceRGB", BitsPerComponent: 8 });
    pageWith(doc, draw("Im", 416, 416, 100, 200), { Im: ref });
    const lossless = await encodeLossless({ data: pixels, width: size, height: size, components: 3 });
    const { input, output } = await compressed(doc, "balanced");
    const stream = await imageDict(output, ref);
    expect(text(stream.dict.get(PDFName.of("Width")))).toBe(String(size));
    expect(text(stream.dict.get(PDFName.of("BitsPerComponent")))).toBe("8");
    expect(text(stream.dict.lookup(PDFName.of("DecodeParms")))).toMatch(/\/Colors 1\b/);
    expect(stream.contents.length).toBeLessThan(lossless.data.length / 2);
    // The colours are the graphic's: every pixel near its original.
    const drawn = indexedPixels(stream);
    let worst = 0;
    let total = 0;
    for (let i = 0; i < drawn.length; i++) {
      const difference = Math.abs(drawn[i]! - pixels[i]!);
      worst = Math.max(worst, difference);
      total += difference;
    }
    expect(total / drawn.length).toBeLessThan(2);
    expect(worst).toBeLessThan(64);
    expectLooksAlike(input, output, PROFILE_SETTINGS.balanced.images!.minSsim);
    // extreme downsamples it to 72 ppi, as a palette or as whatever came out smaller there.
    const extreme = (await compressed(doc, "extreme")).output;
    expect((await imageDict(extreme, ref)).contents.length).toBeLessThan(stream.contents.length);
    expect(extreme.length).toBeLessThan(output.length);
  });

  it("stay lossless in the lossless profile", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const ref = image(doc, sealPixels(512), { Width: 512, Height: 512, ColorSpace: "DeviceRGB", BitsPerComponent: 8 });
    pageWith(doc, draw("Im", 208, 208, 100, 200), { Im: ref });
    const stream = await imageDict((await compressed(doc, "lossless")).output, ref);
    expect(text(stream.dict.get(PDFName.of("ColorSpace")))).toBe("/DeviceRGB");
    expect(
      Buffer.from(decodeStreamData(stream, 1 << 24, { predictors: true })!).equals(Buffer.from(sealPixels(512))),
    ).toBe(true);
  });
});

describe("profile order", () => {
  it("tries a weaker profile's settings on an image the stronger ones leave as it was", async () => {
    const build = async () => {
      const doc = await PDFDocument.create({ updateMetadata: false });
      // 900 x 600 drawn at 90 x 60 pt: 720 ppi.
      const ref = image(doc, await smoothPhoto(900, 600, 3, 5), {
        Width: 900,
        Height: 600,
        ColorSpace: "DeviceRGB",
        BitsPerComponent: 8,
      });
      pageWith(doc, draw("Im", 90, 60, 100, 400), { Im: ref });
      return { doc, ref };
    };
    const balanced = PROFILE_SETTINGS.balanced.images!;
    // A floor no lossy candidate reaches: under these settings alone the image stays as it is.
    const unreachable = { ...PROFILE_SETTINGS.extreme.images!, minSsim: 1, minImageSsim: 1, fallback: undefined };
    const pool = { concurrency: 1, memoryBudget: 256 * 1024 * 1024 };
    const alone = await build();
    const left = await optimiseImages(alone.doc.context, unreachable, pool);
    expect(left.report.recoded).toBe(0);
    const withFallback = await build();
    const fellBack = await optimiseImages(withFallback.doc.context, { ...unreachable, fallback: balanced }, pool);
    const reference = await build();
    const asBalanced = await optimiseImages(reference.doc.context, balanced, pool);
    expect(fellBack.report.recoded).toBe(1);
    expect(fellBack.report.bytesAfter).toBe(asBalanced.report.bytesAfter);
    const width = (doc: PDFDocument, ref: PDFRef) =>
      text((doc.context.lookup(ref) as PDFRawStream).dict.get(PDFName.of("Width")));
    expect(width(withFallback.doc, withFallback.ref)).toBe(width(reference.doc, reference.ref));
  });

  it("never stores an image larger than the lossless profile does: extreme <= balanced <= lossless", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    // Flat blocks of colour, stored without a filter: Flate takes them to almost nothing at their
    // own size, while a resampled copy gains soft edges that cost more.
    const [w, h] = [1200, 1200];
    const blocks = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) blocks.set([(x >> 7) * 40, (y >> 7) * 40, ((x ^ y) >> 7) * 30], (y * w + x) * 3);
    const ref = image(doc, blocks, { Width: w, Height: h, ColorSpace: "DeviceRGB", BitsPerComponent: 8 }, false);
    pageWith(doc, draw("Im", 300, 300, 100, 100), { Im: ref }); // 288 ppi
    const sizes = [];
    for (const profile of ["lossless", "balanced", "extreme"] as const) {
      sizes.push((await imageDict((await compressed(doc, profile)).output, ref)).contents.length);
    }
    expect(sizes[1]).toBeLessThanOrEqual(sizes[0]!);
    expect(sizes[2]).toBeLessThanOrEqual(sizes[1]!);
  });

  it("extreme falls back to balanced's image settings, balanced to q90 for images stored losslessly", () => {
    const balanced = PROFILE_SETTINGS.balanced.images!;
    expect(PROFILE_SETTINGS.extreme.images!.fallback).toBe(balanced);
    // The retry does not try layers again (they were tried first, and do not depend on JPEG quality).
    expect(balanced.fallback).toEqual({
      ...balanced,
      jpegQuality: 90,
      losslessSourcesOnly: true,
      fallback: undefined,
      layers: undefined,
    });
  });

  it("retries only images stored losslessly with settings for those", async () => {
    const build = async (jpeg: boolean) => {
      const doc = await PDFDocument.create({ updateMetadata: false });
      const pixels = await smoothPhoto(900, 600, 3, 5);
      const dict = { Width: 900, Height: 600, ColorSpace: "DeviceRGB", BitsPerComponent: 8 };
      const ref = jpeg
        ? image(doc, await jpegOf(pixels, 900, 600, 3, 95), { ...dict, Filter: "DCTDecode" }, false)
        : image(doc, pixels, dict);
      pageWith(doc, draw("Im", 90, 60, 100, 400), { Im: ref }); // 720 ppi
      return doc;
    };
    const balanced = PROFILE_SETTINGS.balanced.images!;
    // A first attempt no candidate survives, then balanced's settings for lossless sources only.
    const retry = { ...balanced, losslessSourcesOnly: true, fallback: undefined };
    const settings = { ...balanced, minSsim: 1, minImageSsim: 1, fallback: retry };
    const pool = { concurrency: 1, memoryBudget: 256 * 1024 * 1024 };
    const flate = await optimiseImages((await build(false)).context, settings, pool);
    expect(flate.report.recoded).toBe(1);
    const jpeg = await optimiseImages((await build(true)).context, settings, pool);
    expect(jpeg.report.recoded).toBe(0);
    // Without the restriction, the JPEG would have been recoded by the same settings.
    const unrestricted = { ...settings, fallback: { ...retry, losslessSourcesOnly: false } };
    expect((await optimiseImages((await build(true)).context, unrestricted, pool)).report.recoded).toBe(1);
  });
});
