// PDFs built by hand for the image tests (content streams written out, images registered with exact
// dictionaries), rendering with pdftoppm and comparing renderings, and pixels to draw.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, expect, it } from "vitest";
import { PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFRef } from "@cantoo/pdf-lib";
import { compressPdf } from "../../../src/pdf/index.ts";
import type { CompressionProfile } from "../../../src/pdf/index.ts";
import { luminance, ssim } from "../../../src/pdf/images/quality.ts";
import { photoPixels } from "../fixtures.ts";

export const encoder = new TextEncoder();
export const hasPdftoppm = spawnSync("pdftoppm", ["-v"]).status === 0;
const work = mkdtempSync(path.join(os.tmpdir(), "engine-images-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// Building PDFs by hand: content streams written out, images registered with exact dictionaries.

export type ImageDict = Record<string, unknown>;

export function image(doc: PDFDocument, data: Uint8Array, dict: ImageDict, deflate = true): PDFRef {
  const stream = deflate
    ? doc.context.flateStream(data, { Type: "XObject", Subtype: "Image", ...dict })
    : doc.context.stream(data, { Type: "XObject", Subtype: "Image", ...dict });
  return doc.context.register(stream);
}

/** A page whose content is `content`, with the given XObjects as resources. */
export function pageWith(
  doc: PDFDocument,
  content: string | Uint8Array,
  xobjects: Record<string, PDFRef>,
  size = [612, 792],
) {
  const page = doc.addPage(size as [number, number]);
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  const stream = doc.context.register(doc.context.flateStream(bytes));
  page.node.set(PDFName.of("Contents"), stream);
  page.node.set(PDFName.of("Resources"), doc.context.obj({ XObject: xobjects }));
  return page;
}

export const draw = (name: string, w: number, h: number, x = 0, y = 0) =>
  `q ${w} 0 0 ${h} ${x} ${y} cm /${name} Do Q\n`;

export async function compressed(doc: PDFDocument, profile: CompressionProfile = "balanced") {
  const input = await doc.save({ useObjectStreams: false });
  const { output } = await compressPdf(input, profile);
  return { input, output };
}

export async function imageDict(bytes: Uint8Array, ref: PDFRef): Promise<PDFRawStream> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const stream = doc.context.lookup(ref);
  expect(stream).toBeInstanceOf(PDFRawStream);
  return stream as PDFRawStream;
}

export const text = (object: unknown) => String(object).replace(/\s+/g, " ");

// ---------------------------------------------------------------------------------------------
// Rendering with pdftoppm.

export interface Raster {
  width: number;
  height: number;
  data: Uint8Array;
}

let renders = 0;
export function render(bytes: Uint8Array, page = 1, dpi = 72): Raster {
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
export function compare(a: Raster, b: Raster): { ssim: number; meanShift: number } {
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
export function expectLooksAlike(before: Uint8Array, after: Uint8Array, minSsim = 0.9) {
  const result = compare(render(before), render(after));
  expect(result.meanShift).toBeLessThan(4);
  expect(result.ssim).toBeGreaterThan(minSsim);
}

export const rendering = it.skipIf(!hasPdftoppm);
if (!hasPdftoppm) console.warn("engine-images: pdftoppm (poppler-utils) not found; the rendering tests are skipped");

// ---------------------------------------------------------------------------------------------
// Pixels.

/**
 * A photograph without the fixtures' heavy sensor noise: recoding noise costs more SSIM than a
 * real photograph loses, and the quality check would rightly refuse it.
 */
export async function smoothPhoto(width: number, height: number, channels: 1 | 3, seed: number): Promise<Uint8Array> {
  const image = sharp(photoPixels(width, height, channels, seed), { raw: { width, height, channels } }).blur(1.5);
  return new Uint8Array(await (channels === 1 ? image.toColourspace("b-w") : image).raw().toBuffer());
}

export function cmykOf(rgb: Uint8Array): Uint8Array {
  const out = new Uint8Array((rgb.length / 3) * 4);
  for (let p = 0, i = 0; i < rgb.length; p += 4, i += 3) {
    const [c, m, y] = [255 - rgb[i]!, 255 - rgb[i + 1]!, 255 - rgb[i + 2]!];
    const k = Math.min(c, m, y);
    out.set([c - k, m - k, y - k, k], p);
  }
  return out;
}

/** A photograph reduced to a 6 x 6 x 6 palette: [indices, palette]. */
export function indexedPhoto(width: number, height: number): [Uint8Array, Uint8Array] {
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
export function pngUp(samples: Uint8Array, rowLength: number): Uint8Array {
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
