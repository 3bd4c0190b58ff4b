// PNG predictors both ways: pngFilterRow (png-plain.ts, as the decoding below rebuilds
// its inflated rows) undoes what unpngRow does, on random rows of every filter, odd widths and
// every pixel size, and pngPredict's output comes back whole through it; and a Flate stream
// decoded once for the image pass and the lossless bar (decodeFlate, inflatedBytes, losslessBar's
// `decoded`): the same samples, inflated bytes and answers as decoding it again, and no reuse where
// decoding again would not give the same (damaged predictors, data cut short, rows not whole,
// another stream's data, a ceiling between the samples and the inflated data).
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PDFContext, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import { decodeFilters, decodeFlate, inflatedBytes, unpngRow } from "../../../src/pdf/streams/filters.ts";
import { losslessBar, pngPredict, recompressStreams } from "../../../src/pdf/streams/recompress.ts";
import { photoPixels } from "../fixtures.ts";
import { pngFilterRow } from "./png-plain.ts";

/** A small deterministic generator (the same bytes every run). */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const bytesOf = (length: number, next: () => number) => Uint8Array.from({ length }, () => Math.floor(next() * 256));

/** Rows of random PNG filter bytes (0-4, or `types`) and random data: `rows` x (1 + rowLength). */
function predictedRows(rows: number, rowLength: number, next: () => number, types = [0, 1, 2, 3, 4]): Uint8Array {
  const data = bytesOf(rows * (rowLength + 1), next);
  for (let r = 0; r < rows; r++) data[r * (rowLength + 1)] = types[Math.floor(next() * types.length)]!;
  return data;
}

function parmsOf(context: PDFContext, entries: Record<string, number>): PDFDict {
  const parms = PDFDict.withContext(context);
  for (const [key, value] of Object.entries(entries)) parms.set(PDFName.of(key), PDFNumber.of(value));
  return parms;
}

const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  a !== undefined && b !== undefined && Buffer.from(a).equals(Buffer.from(b));

describe("PNG rows undone", () => {
  it("refuse a filter type PNG does not define", () => {
    const row = new Uint8Array(6);
    expect(unpngRow(5, new Uint8Array(7), 1, new Uint8Array(6), row, 3)).toBe(false);
    expect(unpngRow(255, new Uint8Array(7), 1, new Uint8Array(6), row, 3)).toBe(false);
  });

  it("as the filter applied to them again gives the rows back (pngFilterRow undoes unpngRow)", () => {
    const next = random(7);
    for (const bpp of [1, 3, 4, 6]) {
      for (const length of [1, bpp, 2 * bpp + 1, 50]) {
        for (let type = 0; type < 5; type++) {
          const data = bytesOf(length, next);
          const previous = bytesOf(length, next);
          const row = new Uint8Array(length);
          unpngRow(type, data, 0, previous, row, bpp);
          const again = new Uint8Array(length + 2);
          pngFilterRow(type, row, previous, bpp, again, 2);
          expect(same(again.subarray(2), data)).toBe(true);
        }
      }
    }
  });
});

describe("PNG prediction chosen row by row", () => {
  it("is undone back to the samples, rows rebuilt from its filters being its own bytes", () => {
    const next = random(3);
    const context = PDFContext.create();
    for (const [width, height, colors, bits] of [
      [1, 5, 1, 8],
      [2, 3, 3, 8],
      [37, 11, 3, 8],
      [64, 9, 4, 8],
      [33, 7, 1, 16],
      [101, 13, 3, 16],
    ] as const) {
      const rowBytes = (width * colors * bits) / 8;
      const layout = { colors, bitsPerComponent: bits, columns: width, rowBytes, rows: height };
      const parms = parmsOf(context, { Predictor: 15, Colors: colors, BitsPerComponent: bits, Columns: width });
      const noise = bytesOf(rowBytes * height, next);
      for (const samples of [photoPixels(rowBytes, height, 1, width), noise, new Uint8Array(rowBytes * height)]) {
        const predicted = pngPredict(samples, layout);
        const decoding = decodeFlate(deflateSync(predicted), parms, 1 << 20)!;
        expect([width, colors, bits, same(decoding.samples, samples)]).toEqual([width, colors, bits, true]);
        expect(same(inflatedBytes(decoding), predicted)).toBe(true);
      }
    }
  });
});

describe("a Flate stream decoded once", () => {
  const context = PDFContext.create();
  const rgb = (columns: number, predictor = 15) =>
    parmsOf(context, { Predictor: predictor, Colors: 3, BitsPerComponent: 8, Columns: columns });

  it("gives the samples decodeFilters gives, and its inflated bytes back, whole or in part", () => {
    const next = random(11);
    for (const columns of [1, 5, 64, 333]) {
      const rowLength = columns * 3;
      const inflated = predictedRows(17, rowLength, next);
      const stored = deflateSync(inflated);
      const parms = rgb(columns);
      const decoding = decodeFlate(stored, parms, 1 << 20)!;
      const before = decodeFilters(stored, ["FlateDecode"], [parms], parms, 1 << 20, {
        predictors: true,
        tolerant: true,
      });
      expect(same(decoding.samples, before)).toBe(true);
      expect(decoding.length).toBe(inflated.length);
      expect(same(inflatedBytes(decoding), inflated)).toBe(true);
      for (const [from, to] of [
        [0, 1],
        [5, 400],
        [rowLength + 1, 3 * (rowLength + 1)],
        [inflated.length - 3, inflated.length + 500],
      ] as const) {
        expect(same(inflatedBytes(decoding, from, to), inflated.subarray(from, to))).toBe(true);
      }
    }
  });

  it("without predictors is the inflated data itself", () => {
    const data = photoPixels(120, 30, 3, 1);
    const decoding = decodeFlate(deflateSync(data), undefined, 1 << 20)!;
    expect(decoding.png).toBeUndefined();
    expect(same(decoding.samples, data)).toBe(true);
    expect(same(inflatedBytes(decoding, 10, 20), data.subarray(10, 20))).toBe(true);
    const one = decodeFlate(deflateSync(data), parmsOf(context, { Predictor: 1 }), 1 << 20)!;
    expect(same(one.samples, data)).toBe(true);
  });

  it("is not made where decoding again would not give the same, and decodeFilters still decides", () => {
    const next = random(5);
    const inflated = predictedRows(10, 30, next);
    const stored = deflateSync(inflated);
    const decodedBefore = (input: Uint8Array, parms: PDFDict | undefined, max = 1 << 20) =>
      decodeFilters(input, ["FlateDecode"], [parms], rgb(10), max, { predictors: true, tolerant: true });
    const damaged = inflated.slice();
    damaged[4 * 31] = 9; // a filter type PNG does not define
    const cases: [string, Uint8Array, PDFDict | undefined, number][] = [
      ["cut short (no zlib end)", stored.subarray(0, stored.length - 6), rgb(10), 1 << 20],
      ["a damaged row filter", deflateSync(damaged), rgb(10), 1 << 20],
      ["rows not whole", deflateSync(inflated.subarray(0, inflated.length - 4)), rgb(10), 1 << 20],
      ["a TIFF predictor", stored, rgb(10, 2), 1 << 20],
      ["over the ceiling", stored, rgb(10), inflated.length - 1],
      ["not zlib", bytesOf(200, next), rgb(10), 1 << 20],
    ];
    for (const [name, input, parms, max] of cases) {
      expect([name, decodeFlate(input, parms, max)]).toEqual([name, undefined]);
      // The caller decodes as before: what sourceOf gave for these before.
      const before = decodedBefore(input, parms, max);
      if (name === "a damaged row filter" || name === "over the ceiling" || name === "not zlib") {
        expect([name, before]).toEqual([name, undefined]);
      }
    }
    // At the ceiling exactly, decoded (the ceiling is on what comes out).
    expect(decodeFlate(stored, rgb(10), inflated.length)?.length).toBe(inflated.length);
  });
});

describe("the lossless bar of a Flate image decoded by the image pass", () => {
  /** A document with one RGB image of these samples behind Flate (with PNG predictors when `predictor`). */
  async function image(width: number, height: number, seed: number, predictor: boolean) {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const samples = photoPixels(width * 3, height, 1, seed);
    for (let y = 0; y < height; y += 4) samples.fill(200, y * width * 3, y * width * 3 + width);
    const layout = { colors: 3, bitsPerComponent: 8 as const, columns: width, rowBytes: width * 3, rows: height };
    const data = predictor ? pngPredict(samples, layout) : samples;
    const dict = doc.context.obj({
      Type: "XObject",
      Subtype: "Image",
      Width: width,
      Height: height,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      Filter: "FlateDecode",
      ...(predictor ? { DecodeParms: { Predictor: 15, Colors: 3, BitsPerComponent: 8, Columns: width } } : {}),
    });
    const stream = PDFRawStream.of(dict, deflateSync(data, { level: 1 }));
    doc.context.register(stream);
    const parms = stream.dict.lookup(PDFName.of("DecodeParms"));
    return { context: doc.context, stream, parms: parms instanceof PDFDict ? parms : undefined };
  }

  // Small (one candidate deflated here) and large (probed, deflated in the background).
  const cases = [
    { name: "small, with predictors", width: 120, height: 90, predictor: true },
    { name: "small, without", width: 120, height: 90, predictor: false },
    { name: "large, with predictors", width: 400, height: 500, predictor: true },
    { name: "large, without", width: 400, height: 500, predictor: false },
  ];

  it.each(cases)("answers as decoding it again would, and the stream pass stores the same ($name)", async (c) => {
    const plain = await image(c.width, c.height, 3, c.predictor);
    recompressStreams(plain.context);
    const stored = plain.stream.contents.length;
    for (const size of [stored >> 2, stored - 1, stored, stored + 1]) {
      const again = await image(c.width, c.height, 3, c.predictor);
      const decoding = decodeFlate(again.stream.contents, again.parms, 1 << 24);
      expect(decoding).toBeDefined();
      expect([size, await losslessBar(again.stream, 1 << 24, decoding)(size)]).toEqual([size, size >= stored]);
      recompressStreams(again.context);
      expect(same(again.stream.contents, plain.stream.contents)).toBe(true);
    }
  });

  it("decodes again when the decoding is another stream's, or over its ceiling", async () => {
    const one = await image(120, 90, 3, true);
    const other = await image(120, 90, 4, true);
    const wrong = decodeFlate(other.stream.contents, other.parms, 1 << 24);
    const plain = await image(120, 90, 3, true);
    recompressStreams(plain.context);
    const stored = plain.stream.contents.length;
    expect(await losslessBar(one.stream, 1 << 24, wrong)(stored - 1)).toBe(false);
    expect(await losslessBar(one.stream, 1 << 24, wrong)(stored)).toBe(true);
    // A ceiling above the samples but below the inflated data (their rows' filter bytes): the
    // stream is left as it is, as inflating it again within the ceiling would fail.
    for (const ceiling of [120 * 90 * 3 + 1, 1000]) {
      const small = await image(120, 90, 3, true);
      const decoding = decodeFlate(small.stream.contents, small.parms, 1 << 24);
      const own = small.stream.contents.length;
      expect(await losslessBar(small.stream, ceiling, decoding)(own - 1)).toBe(false);
      expect(await losslessBar(small.stream, ceiling)(own - 1)).toBe(false);
    }
  });
});
