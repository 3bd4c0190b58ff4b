// Pixel work through sharp (libvips, mozjpeg, libpng): decoding JPEGs, resampling raw samples,
// encoding JPEG and PNG-predicted Flate, for images of 1 (gray), 3 (RGB-like) and 4 (CMYK-like)
// components. No colour conversion ever happens: components go through as they are.
import sharp from "sharp";
import type { JpegOptions as SharpJpegOptions, Sharp } from "sharp";
import { deflate } from "../streams/filters.ts";

/** sharp refuses inputs above this many pixels; we skip such images before decoding them. */
export const MAX_IMAGE_PIXELS = 100_000_000;

export type Components = 1 | 3 | 4;

export interface Size {
  width: number;
  height: number;
}

export interface Pixels {
  data: Uint8Array;
  width: number;
  height: number;
  components: Components;
}

export interface JpegHeader {
  width: number;
  height: number;
  components: number;
  precision: number;
  /** An Adobe APP14 marker is present: libjpeg-based readers invert 4-component data. */
  adobe: boolean;
  /** The IJG quality (1-100) its first quantisation table corresponds to, when it has one. */
  quality: number | undefined;
}

/** The IJG (Annex K) luminance table, in zigzag order as DQT stores it. */
const STANDARD_LUMINANCE = [
  16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58, 51, 61,
  60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103, 62, 77, 113, 121,
  112, 100, 120, 92, 101, 103, 99,
];

/** Estimates the IJG quality of an 8-bit quantisation table (64 entries, zigzag order). */
function qualityOf(table: number[]): number {
  let scale = 0;
  for (let i = 0; i < 64; i++) scale += (table[i]! * 100) / STANDARD_LUMINANCE[i]!;
  scale /= 64;
  const quality = scale <= 100 ? (200 - scale) / 2 : 5000 / scale;
  return Math.max(1, Math.min(100, Math.round(quality)));
}

const inputOptions = { limitInputPixels: MAX_IMAGE_PIXELS, ignoreIcc: true } as const;

/** Reads a JPEG's frame header and whether it has an Adobe marker; undefined if it is not a JPEG. */
export function readJpegHeader(data: Uint8Array): JpegHeader | undefined {
  if (data[0] !== 0xff || data[1] !== 0xd8) return undefined;
  let adobe = false;
  let quality: number | undefined;
  let pos = 2;
  while (pos + 4 <= data.length) {
    if (data[pos] !== 0xff) return undefined;
    const marker = data[pos + 1]!;
    if (marker === 0xff) {
      pos++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      pos += 2;
      continue;
    }
    const length = (data[pos + 2]! << 8) | data[pos + 3]!;
    if (length < 2 || pos + 2 + length > data.length) return undefined;
    const body = pos + 4;
    if (marker === 0xee && length >= 7 && String.fromCharCode(...data.subarray(body, body + 5)) === "Adobe")
      adobe = true;
    // The first table of the first DQT segment, if 8-bit (usually luminance's).
    if (marker === 0xdb && quality === undefined && length >= 67 && data[body]! >> 4 === 0) {
      quality = qualityOf([...data.subarray(body + 1, body + 65)]);
    }
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame && length >= 8) {
      const precision = data[body]!;
      const height = (data[body + 1]! << 8) | data[body + 2]!;
      const width = (data[body + 3]! << 8) | data[body + 4]!;
      const components = data[body + 5]!;
      // Keep looking for an Adobe marker between the frame and the scan.
      let scan = pos + 2 + length;
      while (scan + 4 <= data.length && data[scan] === 0xff && data[scan + 1] !== 0xda) {
        const len = (data[scan + 2]! << 8) | data[scan + 3]!;
        if (data[scan + 1] === 0xee && String.fromCharCode(...data.subarray(scan + 4, scan + 9)) === "Adobe")
          adobe = true;
        scan += 2 + len;
      }
      return { width, height, components, precision, adobe, quality };
    }
    if (marker === 0xda) return undefined;
    pos += 2 + length;
  }
  return undefined;
}

/** A minimal uncompressed little-endian TIFF of 8-bit CMYK samples: sharp's only way to take CMYK in. */
function cmykTiff(pixels: Pixels): Uint8Array {
  const { data, width, height } = pixels;
  const entries: [number, number, number, number][] = [];
  const count = 10;
  const bitsAt = 8 + 2 + count * 12 + 4;
  const dataAt = bitsAt + 8;
  entries.push(
    [256, 4, 1, width],
    [257, 4, 1, height],
    [258, 3, 4, bitsAt],
    [259, 3, 1, 1],
    [262, 3, 1, 5], // separated (CMYK)
    [273, 4, 1, dataAt],
    [277, 3, 1, 4],
    [278, 4, 1, height],
    [279, 4, 1, data.length],
    [284, 3, 1, 1],
  );
  const out = Buffer.alloc(dataAt + data.length);
  out.write("II", 0, "latin1");
  out.writeUInt16LE(42, 2);
  out.writeUInt32LE(8, 4);
  out.writeUInt16LE(count, 8);
  entries.forEach(([tag, type, n, value], i) => {
    const at = 10 + i * 12;
    out.writeUInt16LE(tag, at);
    out.writeUInt16LE(type, at + 2);
    out.writeUInt32LE(n, at + 4);
    if (type === 3 && n === 1) out.writeUInt16LE(value, at + 8);
    else out.writeUInt32LE(value, at + 8);
  });
  for (let i = 0; i < 4; i++) out.writeUInt16LE(8, bitsAt + i * 2);
  out.set(data, dataAt);
  return out;
}

function fromPixels(pixels: Pixels): Sharp {
  if (pixels.components === 4) return sharp(cmykTiff(pixels), inputOptions).pipelineColourspace("cmyk");
  const { width, height, components } = pixels;
  return sharp(pixels.data, { ...inputOptions, raw: { width, height, channels: components } });
}

function fromJpeg(jpeg: Uint8Array, components: Components): Sharp {
  const image = sharp(jpeg, inputOptions);
  return components === 4 ? image.pipelineColourspace("cmyk") : image;
}

/** Fixes the output's components: 1 stays gray, 3 stays three, 4 stays CMYK. */
function inComponents(image: Sharp, components: Components): Sharp {
  return image.toColourspace(components === 1 ? "b-w" : components === 3 ? "srgb" : "cmyk");
}

/**
 * Resampling is Mitchell-Netravali's cubic: on 300 dpi scans brought to 150 ppi it keeps more of
 * the page's similarity at 100 dpi than Lanczos 3 (half as many pages fall below balanced's floor,
 * each of which then costs a larger size or two), with less ringing, and the JPEGs come out some
 * 6 % smaller.
 */
const resized = (image: Sharp, width: number, height: number, size?: Size) =>
  size && (size.width !== width || size.height !== height)
    ? image.resize(size.width, size.height, { fit: "fill", kernel: "mitchell" })
    : image;

/** Raw samples, resampled to `size` when given. */
export async function resample(pixels: Pixels, size?: Size): Promise<Pixels> {
  if (!size || (size.width === pixels.width && size.height === pixels.height)) return pixels;
  const { data, info } = await inComponents(
    resized(fromPixels(pixels), pixels.width, pixels.height, size),
    pixels.components,
  )
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== pixels.components || info.width !== size.width || info.height !== size.height) {
    throw new Error("sharp changed the number of components");
  }
  return { data, width: info.width, height: info.height, components: pixels.components };
}

/** Below this, a buffer is left to the garbage collector. */
const RELEASE_MIN_BYTES = 64 * 1024;

/**
 * Frees the memory of pixel buffers the caller made and no longer needs, now rather than when the
 * garbage collector next runs: a decoded page image is tens of megabytes held outside the
 * JavaScript heap, behind an object of a few bytes, and the collector lets several such dead
 * buffers pile up before it runs (two or three A4 scans at 300 ppi, 27 MB each). Detaching the
 * buffer (ArrayBuffer transfer) frees it at once. Only whole buffers are released (not views into
 * a larger one, which may be shared), and only ones the caller owns: never a stream's data.
 */
export function release(...arrays: (Uint8Array | undefined)[]): void {
  for (const array of arrays) {
    if (!array || array.byteLength < RELEASE_MIN_BYTES || array.byteOffset !== 0) continue;
    const buffer = array.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
    if (buffer.byteLength !== array.byteLength || typeof buffer.transfer !== "function") continue;
    buffer.transfer(0);
  }
}

/**
 * Decodes a JPEG to raw samples, resampled to `size` when given (shrinking while decoding). Four
 * components come out as libvips reads them: inverted from the stored data when the JPEG has an
 * Adobe marker (see `adobeInverts`).
 */
export async function decodeJpeg(jpeg: Uint8Array, components: Components, size?: Size): Promise<Pixels> {
  const header = size && readJpegHeader(jpeg);
  const image = header
    ? resized(fromJpeg(jpeg, components), header.width, header.height, size)
    : fromJpeg(jpeg, components);
  const { data, info } = await inComponents(image, components).raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== components) throw new Error("unexpected JPEG components");
  return { data, width: info.width, height: info.height, components };
}

/**
 * How hard the JPEG encoder works. "best" is mozjpeg's full setting (trellis quantisation,
 * overshoot deringing, progressive scans chosen by trial). "fast" keeps mozjpeg's quantisation
 * tables and Huffman tables made for the image, in one baseline scan, without trellis
 * quantisation: on a 300 dpi scan brought to 150 ppi (1240 x 1754) it encodes in about 20 ms
 * where the full setting takes 210 ms and progressive scans 36 ms, for a file some 15 % larger
 * than the full setting's (4 % larger than progressive), with the same SSIM at 100 dpi.
 */
export type JpegEffort = "best" | "fast";

export interface JpegOptions {
  quality: number;
  /** "4:2:0" (default) or "4:4:4". */
  chromaSubsampling?: string;
  /** Default "best". */
  effort?: JpegEffort;
  /** Resample to this size first, in the same pass (as `resample` does). */
  size?: Size;
}

const JPEG_EFFORT: Record<JpegEffort, SharpJpegOptions> = {
  best: { mozjpeg: true },
  fast: {
    quantisationTable: 3,
    progressive: false,
    optimiseCoding: true,
    trellisQuantisation: false,
    overshootDeringing: false,
    optimiseScans: false,
  },
};

async function jpegFrom(image: Sharp, components: Components, options: JpegOptions): Promise<Uint8Array> {
  return inComponents(image, components)
    .jpeg({
      ...JPEG_EFFORT[options.effort ?? "best"],
      quality: options.quality,
      chromaSubsampling: options.chromaSubsampling ?? "4:2:0",
    })
    .toBuffer();
}

/**
 * A JPEG of raw samples, resampled to `options.size` when given. Four components come out
 * Adobe-inverted (see `adobeInverts`).
 */
export function encodeJpeg(pixels: Pixels, options: JpegOptions): Promise<Uint8Array> {
  return jpegFrom(resized(fromPixels(pixels), pixels.width, pixels.height, options.size), pixels.components, options);
}

/**
 * libjpeg-based PDF readers take 4-component JPEG data as stored; libvips inverts it on reading
 * when an Adobe marker is present and always writes it inverted with one. So samples we hand to
 * libvips come out of a PDF reader inverted exactly when their source had no Adobe marker.
 */
export const adobeInverts = (sourceHadAdobeMarker: boolean) => !sourceHadAdobeMarker;

/** A PNG's chunks by type (IDAT's joined in order: Flate data with PNG predictors). */
function chunksOf(png: Uint8Array): Map<string, Uint8Array> {
  const chunks = new Map<string, Uint8Array>();
  const idat: Uint8Array[] = [];
  let pos = 8;
  while (pos + 12 <= png.length) {
    const length = ((png[pos]! << 24) | (png[pos + 1]! << 16) | (png[pos + 2]! << 8) | png[pos + 3]!) >>> 0;
    const type = String.fromCharCode(...png.subarray(pos + 4, pos + 8));
    const body = png.subarray(pos + 8, pos + 8 + length);
    if (type === "IDAT") idat.push(body);
    else if (!chunks.has(type)) chunks.set(type, body);
    if (type === "IEND") break;
    pos += 12 + length;
  }
  if (idat.length > 0) chunks.set("IDAT", Buffer.concat(idat));
  return chunks;
}

const idatOf = (png: Uint8Array) => chunksOf(png).get("IDAT");

export interface LosslessEncoding {
  data: Uint8Array;
  /** Whether the data carries PNG predictors (/DecodeParms << /Predictor 15 … >>). */
  predicted: boolean;
}

/** Flate of raw samples: PNG-predicted through libpng for gray and three components, plain otherwise. */
export async function encodeLossless(pixels: Pixels, level = 6): Promise<LosslessEncoding> {
  if (pixels.components === 4) return { data: deflate(pixels.data, level), predicted: false };
  const png = await inComponents(fromPixels(pixels), pixels.components)
    .png({ compressionLevel: level, adaptiveFiltering: true, palette: false, progressive: false })
    .toBuffer();
  const data = idatOf(png);
  if (!data) throw new Error("sharp wrote a PNG without image data");
  return { data, predicted: true };
}

export interface PaletteEncoding {
  /** Flate data of the indices, with PNG predictors (one colour per sample). */
  data: Uint8Array;
  /** Bits per index: 1, 2, 4 or 8. */
  bitsPerComponent: number;
  /** The colours, three bytes each, in index order. */
  palette: Uint8Array;
  /** What a reader draws from it: the palette's colours, pixel by pixel. */
  decoded: Pixels;
}

/**
 * Three-component pixels quantised to at most 256 colours by libimagequant (sharp's PNG palette),
 * as few as reach `quality` (0-100, its own measure), with Floyd-Steinberg dithering where colours
 * were merged. An image of 256 colours or fewer comes out with exactly its colours. Undefined when
 * libvips wrote something else than 8-bit-or-less indices with a palette and no transparency.
 */
export async function encodePalette(pixels: Pixels, quality: number, level = 9): Promise<PaletteEncoding | undefined> {
  if (pixels.components !== 3) return undefined;
  const png = await fromPixels(pixels).png({ palette: true, quality, compressionLevel: level }).toBuffer();
  const chunks = chunksOf(png);
  const header = chunks.get("IHDR");
  const palette = chunks.get("PLTE");
  const data = chunks.get("IDAT");
  // Colour type 3 (indexed); a tRNS chunk would be transparency the PDF image cannot carry.
  if (!header || header.length < 13 || header[9] !== 3 || !palette || !data || chunks.has("tRNS")) return undefined;
  const bitsPerComponent = header[8]!;
  if (![1, 2, 4, 8].includes(bitsPerComponent) || palette.length % 3 !== 0) return undefined;
  const { data: rgb, info } = await sharp(png, inputOptions)
    .removeAlpha()
    .toColourspace("srgb")
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3 || info.width !== pixels.width || info.height !== pixels.height) return undefined;
  return {
    data,
    bitsPerComponent,
    palette,
    decoded: { data: rgb, width: info.width, height: info.height, components: 3 },
  };
}
