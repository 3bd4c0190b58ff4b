// The image pass: where images are drawn, downsampling to the resolution the pages need, the image
// forms it recodes (checked by rendering before and after with pdftoppm), and what it must leave
// alone. Every PDF here is generated in code.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFRef } from "@cantoo/pdf-lib";
import { scanContent, Op } from "../../../src/pdf/shared/syntax.ts";
import type { InlineImage } from "../../../src/pdf/shared/syntax.ts";
import { compressPdf, PROFILE_SETTINGS } from "../../../src/pdf/index.ts";
import type { CompressionProfile } from "../../../src/pdf/index.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { findImagePlacements } from "../../../src/pdf/shared/placement.ts";
import { optimiseImages } from "../../../src/pdf/images/optimise.ts";
import {
  decodeJpeg,
  encodeJpeg,
  encodeLossless,
  encodePalette,
  readJpegHeader,
  release,
  resample,
} from "../../../src/pdf/images/codecs.ts";
import { optimiseJpeg, optimisedJpegSizeAtLeast, withoutIccProfile } from "../../../src/pdf/codecs/jpeg.ts";
import {
  drawAt,
  drawLuminanceAt,
  joinSample,
  luminance,
  QualityCheck,
  sampledHeight,
  ssim,
} from "../../../src/pdf/images/quality.ts";
import { imageStreams, jpegOf, lineArtPixels, photoPixels } from "../fixtures.ts";

const encoder = new TextEncoder();
const hasPdftoppm = spawnSync("pdftoppm", ["-v"]).status === 0;
const work = mkdtempSync(path.join(os.tmpdir(), "engine-images-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// Building PDFs by hand: content streams written out, images registered with exact dictionaries.

type ImageDict = Record<string, unknown>;

function image(doc: PDFDocument, data: Uint8Array, dict: ImageDict, deflate = true): PDFRef {
  const stream = deflate
    ? doc.context.flateStream(data, { Type: "XObject", Subtype: "Image", ...dict })
    : doc.context.stream(data, { Type: "XObject", Subtype: "Image", ...dict });
  return doc.context.register(stream);
}

/** A page whose content is `content`, with the given XObjects as resources. */
function pageWith(doc: PDFDocument, content: string | Uint8Array, xobjects: Record<string, PDFRef>, size = [612, 792]) {
  const page = doc.addPage(size as [number, number]);
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  const stream = doc.context.register(doc.context.flateStream(bytes));
  page.node.set(PDFName.of("Contents"), stream);
  page.node.set(PDFName.of("Resources"), doc.context.obj({ XObject: xobjects }));
  return page;
}

const draw = (name: string, w: number, h: number, x = 0, y = 0) => `q ${w} 0 0 ${h} ${x} ${y} cm /${name} Do Q\n`;

async function compressed(doc: PDFDocument, profile: CompressionProfile = "balanced") {
  const input = await doc.save({ useObjectStreams: false });
  const { output } = await compressPdf(input, profile);
  return { input, output };
}

async function imageDict(bytes: Uint8Array, ref: PDFRef): Promise<PDFRawStream> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const stream = doc.context.lookup(ref);
  expect(stream).toBeInstanceOf(PDFRawStream);
  return stream as PDFRawStream;
}

const text = (object: unknown) => String(object).replace(/\s+/g, " ");

// ---------------------------------------------------------------------------------------------
// Rendering with pdftoppm.

interface Raster {
  width: number;
  height: number;
  data: Uint8Array;
}

let renders = 0;
function render(bytes: Uint8Array, page = 1, dpi = 72): Raster {
  const file = path.join(work, `r${renders++}.pdf`);
  writeFileSync(file, bytes);
  const ppm = execFileSync("pdftoppm", ["-r", String(dpi), "-f", String(page), "-l", String(page), file], {
    maxBuffer: 1 << 28,
  });
  const header = ppm.toString("latin1", 0, 64).split(/\s+/);
  const [width, height] = [Number(header[1]), Number(header[2])];
  const data = ppm.subarray(ppm.length - width * height * 3);
  return { width, height, data };
}

/** SSIM of the two renderings' luminance, and the largest difference of any channel's mean. */
function compare(a: Raster, b: Raster): { ssim: number; meanShift: number } {
  expect([b.width, b.height]).toEqual([a.width, a.height]);
  const gray = (r: Raster) => luminance({ data: r.data, width: r.width, height: r.height, components: 3 });
  const means = (r: Raster) => {
    const sums = [0, 0, 0];
    for (let i = 0; i < r.data.length; i++) sums[i % 3]! += r.data[i]!;
    return sums.map((s) => s / (r.width * r.height));
  };
  const [ma, mb] = [means(a), means(b)];
  return {
    ssim: ssim(gray(a), gray(b), a.width, a.height),
    meanShift: Math.max(...ma.map((m, i) => Math.abs(m - mb[i]!))),
  };
}

/** Renders page 1 of both and expects them to look alike (same colours, similar structure). */
function expectLooksAlike(before: Uint8Array, after: Uint8Array, minSsim = 0.9) {
  const result = compare(render(before), render(after));
  expect(result.meanShift).toBeLessThan(4);
  expect(result.ssim).toBeGreaterThan(minSsim);
}

const rendering = it.skipIf(!hasPdftoppm);
if (!hasPdftoppm) console.warn("engine-images: pdftoppm (poppler-utils) not found; the rendering tests are skipped");

// ---------------------------------------------------------------------------------------------
// Pixels.

/**
 * A photograph without the fixtures' heavy sensor noise: recoding noise costs more SSIM than a
 * real photograph loses, and the quality check would rightly refuse it.
 */
async function smoothPhoto(width: number, height: number, channels: 1 | 3, seed: number): Promise<Uint8Array> {
  const image = sharp(photoPixels(width, height, channels, seed), { raw: { width, height, channels } }).blur(1.5);
  return new Uint8Array(await (channels === 1 ? image.toColourspace("b-w") : image).raw().toBuffer());
}

function cmykOf(rgb: Uint8Array): Uint8Array {
  const out = new Uint8Array((rgb.length / 3) * 4);
  for (let p = 0, i = 0; i < rgb.length; p += 4, i += 3) {
    const [c, m, y] = [255 - rgb[i]!, 255 - rgb[i + 1]!, 255 - rgb[i + 2]!];
    const k = Math.min(c, m, y);
    out.set([c - k, m - k, y - k, k], p);
  }
  return out;
}

/** A photograph reduced to a 6 x 6 x 6 palette: [indices, palette]. */
function indexedPhoto(width: number, height: number): [Uint8Array, Uint8Array] {
  const rgb = photoPixels(width, height, 3, 21);
  const palette = new Uint8Array(216 * 3);
  for (let i = 0; i < 216; i++)
    palette.set([Math.floor(i / 36) * 51, (Math.floor(i / 6) % 6) * 51, (i % 6) * 51], i * 3);
  const indices = new Uint8Array(width * height);
  for (let p = 0; p < indices.length; p++) {
    const [r, g, b] = [rgb[p * 3]!, rgb[p * 3 + 1]!, rgb[p * 3 + 2]!].map((v) => Math.round(v / 51));
    indices[p] = r! * 36 + g! * 6 + b!;
  }
  return [indices, palette];
}

/** PNG "Up" predictor rows (type 2) over 8-bit samples. */
function pngUp(samples: Uint8Array, rowLength: number): Uint8Array {
  const rows = samples.length / rowLength;
  const out = new Uint8Array(rows * (rowLength + 1));
  for (let r = 0; r < rows; r++) {
    out[r * (rowLength + 1)] = 2;
    for (let i = 0; i < rowLength; i++) {
      const up = r > 0 ? samples[(r - 1) * rowLength + i]! : 0;
      out[r * (rowLength + 1) + 1 + i] = (samples[r * rowLength + i]! - up) & 0xff;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

describe("content streams", () => {
  it("reports q, Q, cm, Do and gs with their operands, and nothing from strings or comments", () => {
    const seen: string[] = [];
    const content = encoder.encode(
      "% a comment with 1 0 0 1 0 0 cm\n" +
        "q 2 0 0 3 4 5 cm BT (text with \\( cm and \\) Do (inside)) Tj <414243> Tj ET\n" +
        "/Span <</ActualText (x) /MCID 3>> BDC [(a) 1 (b)] TJ EMC /GS1 gs /Im1 Do Q",
    );
    expect(
      scanContent(content, {
        operator: (op, operands) => {
          if ([Op.q, Op.Q, Op.cm, Op.Do, Op.gs].includes(op)) seen.push(`${op}:${operands.join(",")}`);
        },
      }),
    ).toBe(true);
    expect(seen).toEqual([`${Op.q}:`, `${Op.cm}:2,0,0,3,4,5`, `${Op.gs}:GS1`, `${Op.Do}:Im1`, `${Op.Q}:`]);
  });

  it("skips inline images whole, binary data with EI, Q and cm bytes inside included", () => {
    // 4 x 4 gray samples that spell out operators and an early "EI".
    const samples = encoder.encode(" EI Q 1 0 0 cm  ");
    const head = encoder.encode("q 10 0 0 10 0 0 cm BI /W 4 /H 4 /BPC 8 /CS /G ID ");
    const tail = encoder.encode("\nEI Q q 5 0 0 5 0 0 cm /Im Do Q");
    const content = new Uint8Array([...head, ...samples, ...tail]);
    const inline: InlineImage[] = [];
    const ops: number[] = [];
    scanContent(content, { inlineImage: (image) => inline.push(image), operator: (op) => ops.push(op) });
    expect(inline).toHaveLength(1);
    expect(Buffer.from(inline[0]!.data).equals(Buffer.from(samples))).toBe(true);
    expect(inline[0]!.dict.get("W")).toBe(4);
    expect(ops.filter((op) => op === Op.Do)).toHaveLength(1);
    expect(ops.filter((op) => op === Op.cm)).toHaveLength(2);
  });

  it("finds where images are drawn: nested q/Q, forms with their matrix, the largest placement", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const im = image(doc, new Uint8Array(100 * 50), {
      Width: 100,
      Height: 50,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const other = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    // A form that draws `im` at its unit square scaled by its own matrix (x3).
    const form = doc.context.register(
      doc.context.flateStream(encoder.encode("q 10 0 0 20 0 0 cm /Im Do Q"), {
        Type: "XObject",
        Subtype: "Form",
        BBox: [0, 0, 100, 100],
        Matrix: [3, 0, 0, 3, 0, 0],
        Resources: { XObject: { Im: im } },
      }),
    );
    // Page 1: `im` at 72 x 36 inside two levels of q; the form drawn scaled by 2 (im: 60 x 120 at x2 = 120 x 240... see below).
    pageWith(
      doc,
      "q 2 0 0 2 0 0 cm q 36 0 0 18 0 0 cm /Im Do Q Q\n" + // 72 x 36
        "q 2 0 0 2 100 100 cm /Fm Do Q\n" + // form: 10x20 x3 x2 = 60 x 120
        "BI /W 2 /H 2 /BPC 8 /CS /G ID \x00EI\x00\x00\nEI\n" +
        "q 0 50 -25 0 300 300 cm /Other Do Q", // rotated: width edge 50, height edge 25
      { Im: im, Fm: form, Other: other },
    );
    // Page 2: `im` small.
    pageWith(doc, draw("Im", 10, 5), { Im: im });
    const { images, complete } = findImagePlacements(doc.context);
    expect(complete).toBe(true);
    const placed = (ref: PDFRef) => images.get(doc.context.lookup(ref) as PDFRawStream);
    expect(placed(im)).toMatchObject({ width: 72, height: 120 });
    expect(placed(other)!.width).toBeCloseTo(50);
    expect(placed(other)!.height).toBeCloseTo(25);
  });

  it("tells how much of its page images cover", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const a = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const b = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    pageWith(doc, draw("A", 300, 396) + draw("B", 100, 100, 400, 400), { A: a, B: b }, [600, 792]);
    const { images } = findImagePlacements(doc.context);
    const share = (300 * 396 + 100 * 100) / (600 * 792);
    expect(images.get(doc.context.lookup(a) as PDFRawStream)!.pageShare).toBeCloseTo(share, 6);
    expect(images.get(doc.context.lookup(b) as PDFRawStream)!.pageShare).toBeCloseTo(share, 6);
  });

  it("counts annotation appearances, fitted to their rectangle", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const im = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const appearance = doc.context.register(
      doc.context.flateStream(encoder.encode(draw("Im", 10, 10)), {
        Type: "XObject",
        Subtype: "Form",
        BBox: [0, 0, 10, 10],
        Resources: { XObject: { Im: im } },
      }),
    );
    const page = pageWith(doc, "", {});
    const annot = doc.context.obj({
      Type: "Annot",
      Subtype: "Stamp",
      Rect: [100, 100, 300, 150],
      AP: { N: appearance },
    });
    page.node.set(PDFName.of("Annots"), doc.context.obj([doc.context.register(annot)]));
    const { images } = findImagePlacements(doc.context);
    expect(images.get(doc.context.lookup(im) as PDFRawStream)).toMatchObject({ width: 200, height: 50 });
  });
});

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
