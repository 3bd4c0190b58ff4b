// The lossless bar (streams/recompress.ts: losslessBar), which a stronger profile's image must stay under: it
// answers from the part of the encoding deflated so far when that is enough, and gives the same
// answer as the whole encoding would, the one the stream pass stores.
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import { codedBytesAtLeast, optimiseJpeg } from "../../../src/pdf/codecs/jpeg.ts";
import { deflate } from "../../../src/pdf/streams/filters.ts";
import {
  deflateInBackground,
  losslessBar,
  pngPredict,
  recompressStreams,
} from "../../../src/pdf/streams/recompress.ts";
import { lineArtPixels, photoPixels } from "../fixtures.ts";

/** A photograph's samples with flat runs between: deflates to a fifth or so, at level 9 slowly. */
function samples(width: number, height: number, seed: number): Uint8Array {
  const photo = photoPixels(width, height, 1, seed);
  for (let y = 0; y < height; y += 3) photo.fill(255, y * width, y * width + (width >> 1));
  return photo;
}

/** A fresh document with one stream; `image`: an 8-bit gray image of these samples, unfiltered. */
async function withStream(data: Uint8Array, image?: { width: number; height: number }) {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const dict = image
    ? {
        Type: "XObject",
        Subtype: "Image",
        Width: image.width,
        Height: image.height,
        ColorSpace: "DeviceGray",
        BitsPerComponent: 8,
      }
    : {};
  // A copy: the bar's and the stream pass's encodings are kept by the stream's data.
  const stream = PDFRawStream.of(doc.context.obj(dict), data.slice());
  doc.context.register(stream);
  return { context: doc.context, stream };
}

/** What the stream pass stores the stream in, worked out on a document of its own. */
async function storedByStreamPass(data: Uint8Array, image?: { width: number; height: number }): Promise<number> {
  const { context, stream } = await withStream(data, image);
  recompressStreams(context);
  return stream.contents.length;
}

describe("deflating in the background", () => {
  it("makes the bytes the stream pass's deflate makes", async () => {
    const data = samples(1200, 900, 1);
    const deflating = deflateInBackground(data);
    expect(await deflating.longerThan(Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(Buffer.from(deflating.whole()!).equals(Buffer.from(deflate(data)))).toBe(true);
  });

  it("answers a size far below the encoding's before the encoding is done, and every size right", async () => {
    const data = samples(2000, 1500, 2);
    const length = deflate(data).length;
    const deflating = deflateInBackground(data);
    expect(await deflating.longerThan(1000)).toBe(true);
    expect(deflating.whole()).toBeUndefined();
    expect(await deflating.longerThan(length - 1)).toBe(true);
    expect(await deflating.longerThan(length)).toBe(false);
    expect(deflating.whole()!.length).toBe(length);
  });

  it("closed before its end, answers a question left waiting with undefined, and never ends", async () => {
    const data = samples(2000, 1500, 2);
    const deflating = deflateInBackground(data);
    expect(await deflating.longerThan(1000)).toBe(true);
    const waiting = deflating.longerThan(Number.MAX_SAFE_INTEGER);
    deflating.close();
    expect(await waiting).toBeUndefined();
    expect(deflating.whole()).toBeUndefined();
  });
});

describe("the lossless bar", () => {
  const cases = [
    // no layout: the data as it is
    { name: "a stream of data", data: samples(1000, 800, 3), image: undefined },
    // an image: as it is, or PNG-predicted, whichever the probe chooses
    { name: "a photograph's samples", data: samples(1000, 800, 4), image: { width: 1000, height: 800 } },
    { name: "line art", data: lineArtPixels(600, 500).subarray(0, 1200 * 500), image: { width: 1200, height: 500 } },
  ];

  it.each(cases)("of $name gives the answers of the whole encoding, asked smallest first", async ({ data, image }) => {
    const stored = await storedByStreamPass(data, image);
    expect(stored).toBeLessThan(data.length);
    const sizes = [stored >> 3, stored >> 1, stored - 1, stored, stored + 1, data.length - 1, data.length];
    const { stream } = await withStream(data, image);
    const bar = losslessBar(stream);
    for (const size of sizes) expect([size, await bar(size)]).toEqual([size, size >= stored]);
  });

  it.each(cases)("of $name answers a size alone as the whole encoding would", async ({ data, image }) => {
    const stored = await storedByStreamPass(data, image);
    for (const size of [1, stored >> 2, stored - 1, stored, stored + 1]) {
      const { stream } = await withStream(data, image);
      expect([size, await losslessBar(stream)(size)]).toEqual([size, size >= stored]);
    }
  });

  it("answered early, leaves the stream pass to encode the stream as it would have", async () => {
    const data = samples(1000, 800, 5);
    const stored = await storedByStreamPass(data);
    const { context, stream } = await withStream(data);
    expect(await losslessBar(stream)(stored >> 2)).toBe(false);
    recompressStreams(context);
    expect(stream.contents.length).toBe(stored);
  });

  it("answered in full, hands the stream pass that encoding", async () => {
    const data = samples(1000, 800, 6);
    const stored = await storedByStreamPass(data);
    const { context, stream } = await withStream(data);
    expect(await losslessBar(stream)(data.length - 1)).toBe(true);
    recompressStreams(context);
    expect(stream.contents.length).toBe(stored);
  });
});

describe("PNG prediction of some rows", () => {
  it("is those rows of the whole prediction", () => {
    const [width, height] = [300, 40];
    const data = photoPixels(width, height, 3, 7);
    const layout = { colors: 3, bitsPerComponent: 8 as const, columns: width, rowBytes: width * 3, rows: height };
    const whole = pngPredict(data, layout);
    const row = layout.rowBytes + 1;
    expect(Buffer.from(pngPredict(data, layout, 7, 19)).equals(Buffer.from(whole.subarray(7 * row, 19 * row)))).toBe(
      true,
    );
    expect(Buffer.from(pngPredict(data, layout, 0, 1)).equals(Buffer.from(whole.subarray(0, row)))).toBe(true);
  });
});

describe("JPEGs behind Flate", () => {
  /** A JPEG with the standard's generic Huffman tables, as scanners write them. */
  const jpegOf = async (pixels: Uint8Array, size: number, channels: 1 | 3, chromaSubsampling: string) =>
    new Uint8Array(
      await sharp(pixels, { raw: { width: size, height: size, channels } })
        .jpeg({ quality: 90, optimiseCoding: false, chromaSubsampling })
        .toBuffer(),
    );
  const blank = (size: number, channels: 1 | 3) => new Uint8Array(size * size * channels).fill(250);

  /** A stream of `jpeg` behind Flate, after the stream pass: its filters and size. */
  async function afterStreamPass(jpeg: Uint8Array, size: number) {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const dict = doc.context.obj({
      Type: "XObject",
      Subtype: "Image",
      Width: size,
      Height: size,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      Filter: ["FlateDecode", "DCTDecode"],
    });
    const stream = PDFRawStream.of(dict, deflate(jpeg));
    doc.context.register(stream);
    const before = stream.contents.length;
    const bar = await losslessBar(stream)(before - 1);
    recompressStreams(doc.context);
    return { before, after: stream.contents.length, filter: String(stream.dict.get(PDFName.of("Filter"))), bar };
  }

  it("bounds what new Huffman tables make from below", async () => {
    for (const [channels, subsampling] of [
      [3, "4:2:0"],
      [3, "4:4:4"],
      [1, "4:4:4"],
    ] as const) {
      for (const pixels of [blank(640, channels), photoPixels(640, 640, channels, 3)]) {
        const jpeg = await jpegOf(pixels, 640, channels, subsampling);
        const optimised = optimiseJpeg(jpeg);
        expect(optimised).toBeDefined();
        expect(codedBytesAtLeast(jpeg)).toBeGreaterThan(0);
        expect(codedBytesAtLeast(jpeg)).toBeLessThanOrEqual(optimised!.length);
      }
    }
    expect(codedBytesAtLeast(new Uint8Array([0xff, 0xd8, 0xff, 0xd9, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe(0);
  });

  it("leaves a near-blank page's JPEG that Flate holds in fewer bytes than its blocks as it is", async () => {
    const jpeg = await jpegOf(blank(1600, 3), 1600, 3, "4:2:0");
    const { before, after, filter, bar } = await afterStreamPass(jpeg, 1600);
    expect(before).toBeLessThan(codedBytesAtLeast(jpeg));
    expect([after, filter, bar]).toEqual([before, "[ /FlateDecode /DCTDecode ]", false]);
  });

  it("still gives a photograph's JPEG behind Flate new tables, as a plain JPEG", async () => {
    const jpeg = await jpegOf(photoPixels(640, 640, 3, 5), 640, 3, "4:2:0");
    const { before, after, filter } = await afterStreamPass(jpeg, 640);
    expect(after).toBeLessThan(before);
    expect(filter).toBe("/DCTDecode");
  });
});
