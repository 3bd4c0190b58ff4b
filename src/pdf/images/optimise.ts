// Image XObjects: downsample to the resolution at which the pages draw them, and re-encode as JPEG
// (photographs) or PNG-predicted Flate (line art, flat colour, soft masks), keeping whichever of the
// old and the new data is smaller. Graphics (RGB images JPEG does not suit) are also tried as a
// palette of at most 256 colours (libimagequant), kept when smaller and above the quality floor.
//
// - Where each image is drawn comes from the content streams (content/placement.ts); large inline images
//   become XObjects first (inline.ts). An image the pages were not seen to draw keeps the old
//   longest-side rule.
// - Every lossy result is drawn as a renderer would draw it at 100 dpi and compared with the
//   original (quality.ts): below the profile's floor, the next larger size is tried, and failing
//   all, the image stays as it is. Sharp text and line art so keep the pixels they need, and
//   photographs go down to the profile's resolution.
// - Recoded: 8-bit images (16-bit ones are reduced to 8) in DeviceGray/RGB/CMYK, CalGray/CalRGB,
//   Lab, ICCBased (N = 1, 3, 4), Separation and DeviceN of 1, 3 or 4 components, behind JPEG
//   (DCTDecode, possibly wrapped in lossless filters) or lossless filters with or without
//   predictors; Indexed images of any depth (expanded to their base space when that wins); soft
//   masks (lossless, resized by their images' placement); /Decode arrays kept in force; RGB images
//   of grays stored as gray. Left alone here: stencil masks, colour-key masking, 1-, 2- and 4-bit
//   non-Indexed images, JBIG2, CCITT and JPEG 2000, and any image whose data does not agree with
//   its dictionary. (1-bit images are re-coded losslessly by bitonal-images.ts, in every profile.)
// - Page images of scanned text are also tried as layers (layers.ts): a text mask over a
//   background, the image turned into a form that draws them.
import { Readable } from "node:stream";
import { createInflate } from "node:zlib";
import {
  PDFArray,
  PDFBool,
  PDFContext,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFObjectParser,
  PDFRawStream,
} from "@cantoo/pdf-lib";
import type { PDFObject } from "@cantoo/pdf-lib";
import {
  adobeInverts,
  decodeJpeg,
  encodeJpeg,
  encodeLossless,
  encodePalette,
  MAX_IMAGE_PIXELS,
  readJpegHeader,
  release,
  resample,
} from "./codecs.ts";
import type { Components, JpegEffort, JpegHeader, Pixels, Size } from "./codecs.ts";
import { colourOf } from "./colour.ts";
import type { Colour, DirectColour } from "./colour.ts";
import {
  decodeFilters,
  decodeParmsOf,
  deflate,
  filtersOf,
  isGeneralFilter,
  N,
  numberOf,
  readPredictorParms,
  unpngRow,
  untiffRow,
} from "../streams/filters.ts";
import { convertInlineImages, MIN_INLINE_BYTES } from "./inline.ts";
import { decodeJpx } from "./jpx.ts";
import { findImagePlacements } from "../content/placement.ts";
import type { Placement, Placements } from "../content/placement.ts";
import type { ImageSettings } from "../profiles.ts";
import { forEachBounded } from "../bounded-jobs.ts";
import type { JobBounds } from "../bounded-jobs.ts";
import { layeredEncoding, writeLayered } from "./layers.ts";
import type { LayeredEncoding } from "./layers.ts";
import { QualityCheck } from "./quality.ts";
import { createRecodeWorkers, WorkerUnavailable } from "./recode-workers.ts";
import type { RecodeWorkers } from "./recode-workers.ts";
import { losslessBar } from "../streams/recompress.ts";

export { MAX_IMAGE_PIXELS };

const ColorTransform = PDFName.of("ColorTransform");

/** Below this, an image is not worth the work. */
const MIN_PIXELS = 32 * 32;
/** A JPEG kept at its size is not re-encoded below this. */
const MIN_JPEG_BYTES = 4 * 1024;
/** Images stored in fewer bytes are not worth the work. */
const MIN_STORED_BYTES = 512;
/**
 * A JPEG kept at its size is not re-encoded when it was made at a quality at most ours plus this
 * (mozjpeg still takes some 20 % off a JPEG of about our quality, and the quality check guards).
 */
const JPEG_QUALITY_MARGIN = -10;
/** Decoded samples held in memory at once, at most; larger Flate images are reduced as they inflate. */
const MAX_DECODED_BYTES = 48 * 1024 * 1024;
/** zlib level of lossless candidates (9 is much slower on photographs for little gain). */
const LOSSLESS_LEVEL = 6;
/** Images larger than four times this are told photograph or line art on a copy of this size. */
const PROBE_PIXELS = 1_000_000;
/**
 * What the lossless pass makes of a stored JPEG larger than this is not worked out (counting the
 * symbols for new Huffman tables takes some 30 ms of JavaScript per megabyte: losslessBar)
 * for a candidate smaller than NEAR_LOSSLESS of it: new tables save 5 to 20 % (the downsampled
 * pages of a scan come to 10 to 30 %).
 */
const MAX_BAR_JPEG_BYTES = 512 * 1024;
/**
 * Nor for a JPEG candidate of an image of more samples than this (Flate at level 9 with a
 * predictor chosen row by row takes seconds on a photograph of ten megabytes, and the JPEG is a
 * small fraction of that).
 */
const MAX_BAR_SAMPLE_BYTES = 1024 * 1024;
const NEAR_LOSSLESS = 0.75;

const sampleBytesOf = (info: ImageInfo) =>
  Math.ceil((info.width * componentsOf(info.colour) * info.bpc) / 8) * info.height;
/** When an image fails the quality check at one size, the next size tried is this much larger. */
const SIZE_STEP = 1.25;
/** Downsampled sizes tried at most (then the image's own). */
const MAX_SIZES = 8;
/** Layers (layers.ts) are tried on images covering at least this share of their page... */
const LAYERED_MIN_PAGE_SHARE = 0.5;
/** ...of at least this many pixels, at a resolution at least this. */
const LAYERED_MIN_PIXELS = 1_000_000;
const LAYERED_MIN_PPI = 150;
/**
 * Layers smaller than this share of the stored image are taken without working out the usual
 * candidates (those come to 20-35 % of a 300 dpi scan in balanced: more would rarely be smaller).
 */
const LAYERED_CLEAR_SHARE = 0.2;
/** An RGB image whose channels differ by at most this is stored as gray. */
const GRAY_TOLERANCE = 2;

export interface ImageReport {
  images: number;
  recoded: number;
  /** Of the recoded: how many were downsampled. */
  downsampled: number;
  /** Inline images turned into image XObjects (then treated like the others). */
  inlineConverted: number;
  /** Of the recoded: page images of scanned text split into a text mask and a background (layers.ts). */
  layered: number;
  /** Worker threads started for the JPEG images (0: the main thread did it all)... */
  threads: number;
  /** ...and the images sent to them (recoded on the main thread after all if a thread died). */
  offThread: number;
  bytesBefore: number;
  bytesAfter: number;
}

interface ImageInfo {
  width: number;
  height: number;
  bpc: number;
  colour: Colour;
  /** The /Decode array, when there is one. */
  decode: number[] | undefined;
}

type Replacement = {
  data: Uint8Array;
  filter: PDFName;
  size: Size;
  /** Columns and colours of PNG predictors on the data, when it has them. */
  predictor?: { colors: number; columns: number };
  /** The colour space to write (an Indexed image expanded to its base space). */
  colour?: DirectColour;
  /** The /Decode to write; null removes it. */
  decode?: number[] | null;
  /** The data are indices into these colours of `base` (an Indexed colour space), of `bits` bits. */
  indexed?: { base: DirectColour; palette: Uint8Array; bits: number };
  /** The image becomes a form of layers instead (layers.ts); the other fields describe nothing. */
  layered?: LayeredEncoding;
};

const numbersIn = (object: PDFObject | undefined): number[] | undefined => {
  if (!(object instanceof PDFArray)) return undefined;
  const values: number[] = [];
  for (let i = 0; i < object.size(); i++) {
    const item = object.lookup(i);
    if (!(item instanceof PDFNumber)) return undefined;
    values.push(item.asNumber());
  }
  return values;
};

const componentsOf = (colour: Colour): number => (colour.kind === "indexed" ? 1 : colour.components);
const pixelComponents = (colour: Colour): number =>
  colour.kind === "indexed" ? colour.base.components : colour.components;
const isSupported = (n: number): n is Components => n === 1 || n === 3 || n === 4;

/** The image's geometry and colour when we may recode it, else undefined. */
function describe(dict: PDFDict, context: PDFContext): ImageInfo | undefined {
  if (dict.lookup(N.ImageMask) === PDFBool.True) return undefined;
  if (dict.lookup(N.Mask) instanceof PDFArray || dict.has(N.SMaskInData)) return undefined;
  const width = numberOf(dict.lookup(N.Width));
  const height = numberOf(dict.lookup(N.Height));
  const bpc = numberOf(dict.lookup(N.BitsPerComponent));
  if (!width || !height || !Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    return undefined;
  }
  if (width * height < MIN_PIXELS || width * height > MAX_IMAGE_PIXELS) return undefined;
  const colour = colourOf(dict.get(N.ColorSpace), context);
  if (!colour || !isSupported(pixelComponents(colour))) return undefined;
  if (colour.kind === "indexed" ? ![1, 2, 4, 8].includes(bpc ?? 0) : bpc !== 8 && bpc !== 16) return undefined;
  const decode = dict.has(N.Decode) ? numbersIn(dict.lookup(N.Decode)) : undefined;
  if (dict.has(N.Decode) && decode?.length !== 2 * componentsOf(colour)) return undefined;
  return { width, height, bpc: bpc!, colour, decode };
}

/**
 * How many times finer than `ppi` the pages draw an image, along its less oversampled axis
 * (undefined when it is not known where they draw it, or drawn too small to say).
 */
function oversampling(info: Size, placement: Placement | undefined, ppi: number): number | undefined {
  const wantWidth = placement ? (placement.width / 72) * ppi : 0;
  const wantHeight = placement ? (placement.height / 72) * ppi : 0;
  if (!placement || (wantWidth < 1 && wantHeight < 1)) return undefined;
  return Math.min(info.width / Math.max(wantWidth, 1e-9), info.height / Math.max(wantHeight, 1e-9));
}

/** The widest an image may stay under the settings' `maxPpi` (Infinity without one, or unplaced). */
function capWidth(info: Size, placement: Placement | undefined, settings: ImageSettings): number {
  const ratio = settings.maxPpi === undefined ? undefined : oversampling(info, placement, settings.maxPpi);
  // Rounded as targetSize rounds: an image downsampled to the cap is not above it.
  return ratio === undefined || !(ratio > 1) ? Infinity : Math.max(1, Math.round(info.width / ratio));
}

/** Where the pixels should go: the target size, or undefined to keep the image's own. */
function targetSize(info: Size, placement: Placement | undefined, settings: ImageSettings): Size | undefined {
  let scale: number;
  const ratio = oversampling(info, placement, settings.targetPpi);
  if (ratio !== undefined) {
    // Above maxPpi an image is downsampled however little finer than the target it is.
    const aboveCap = capWidth(info, placement, settings) < info.width;
    if (!(ratio > settings.downsampleThreshold) && !aboveCap) return undefined;
    scale = 1 / ratio;
  } else {
    const longest = Math.max(info.width, info.height);
    if (longest <= settings.maxSide) return undefined;
    scale = settings.maxSide / longest;
  }
  return {
    width: Math.max(1, Math.round(info.width * scale)),
    height: Math.max(1, Math.round(info.height * scale)),
  };
}

/** What a Decode array reads as when samples are stored inverted (255 - v). */
const flipped = (decode: number[]) => decode.flatMap((_, i) => (i % 2 === 0 ? [decode[i + 1]!, decode[i]!] : []));

/** Unpacks 1-, 2-, 4- or 8-bit indices, maps them through /Decode, and looks them up in the palette. */
function expandIndexed(samples: Uint8Array, info: ImageInfo): Pixels | undefined {
  const colour = info.colour;
  if (colour.kind !== "indexed") return undefined;
  const n = colour.base.components as Components;
  const { width, height, bpc } = info;
  const rowBytes = Math.ceil((width * bpc) / 8);
  if (samples.length < rowBytes * height) return undefined;
  const max = (1 << bpc) - 1;
  const table = new Uint8Array(256);
  for (let v = 0; v <= max; v++) {
    const mapped = info.decode ? info.decode[0]! + (v * (info.decode[1]! - info.decode[0]!)) / max : v;
    table[v] = Math.min(colour.hival, Math.max(0, Math.round(mapped)));
  }
  const out = new Uint8Array(width * height * n);
  const palette = colour.palette;
  const perByte = 8 / bpc;
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes;
    for (let x = 0; x < width; x++) {
      let index: number;
      if (bpc === 8) index = samples[row + x]!;
      else {
        const byte = samples[row + Math.floor(x / perByte)]!;
        index = (byte >> (8 - bpc * ((x % perByte) + 1))) & max;
      }
      const entry = table[index]! * n;
      const at = (y * width + x) * n;
      for (let c = 0; c < n; c++) out[at + c] = palette[entry + c]!;
    }
  }
  return { data: out, width, height, components: n };
}

/** 16-bit samples to 8 (their high bytes); /Decode keeps its meaning. */
function to8Bit(samples: Uint8Array, count: number): Uint8Array {
  const out = new Uint8Array(count);
  for (let i = 0; i < count; i++) out[i] = samples[2 * i]!;
  return out;
}

/** Adds a row's samples into the sums of their column blocks (`blockOf`: a sample's sum). */
function accumulate(row: Uint8Array, sums: Uint32Array, blockOf: Int32Array): void {
  for (let i = 0; i < blockOf.length; i++) {
    const b = blockOf[i]!;
    sums[b] = sums[b]! + row[i]!;
  }
}

/**
 * Inflates a large 8-bit Flate image row by row and averages `factor` x `factor` blocks as it
 * goes, so that only the reduced image is ever held. Undefined when the data is short or damaged.
 */
async function reduceWhileInflating(
  contents: Uint8Array,
  parms: PDFDict | undefined,
  width: number,
  height: number,
  n: Components,
  factor: number,
): Promise<Pixels | undefined> {
  const p = readPredictorParms(parms);
  const png = p.predictor >= 10;
  if (png || p.predictor === 2) {
    if (p.colors !== n || p.columns !== width || p.bpc !== 8) return undefined;
  } else if (p.predictor !== 1) return undefined;
  const rowBytes = width * n;
  const stride = rowBytes + (png ? 1 : 0);
  const outWidth = Math.ceil(width / factor);
  const outHeight = Math.ceil(height / factor);
  const out = new Uint8Array(outWidth * outHeight * n);
  const sums = new Uint32Array(outWidth * n);
  const pending = new Uint8Array(stride);
  let previous = new Uint8Array(rowBytes);
  let current = new Uint8Array(rowBytes);
  let filled = 0;
  let y = 0;
  let rowsInBlock = 0;

  /** Undoes the row's predictor into `current`; a row without one is used as it is. */
  const unfilter = (row: Uint8Array): Uint8Array | undefined => {
    if (!png) {
      if (p.predictor !== 2) return row;
      current.set(row.subarray(0, rowBytes));
      untiffRow(current, n);
      return current;
    }
    return unpngRow(row[0]!, row, 1, previous, current, n) ? current : undefined;
  };
  const blockOf = new Int32Array(rowBytes);
  for (let i = 0; i < rowBytes; i++) blockOf[i] = Math.floor(i / n / factor) * n + (i % n);
  const flush = () => {
    const at = Math.floor((y - 1) / factor) * outWidth * n;
    const full = 1 / (factor * rowsInBlock);
    const lastColumns = width - (outWidth - 1) * factor;
    for (let i = 0, end = outWidth * n; i < end; i++) {
      const scale = i < end - n ? full : 1 / (lastColumns * rowsInBlock);
      out[at + i] = Math.round(sums[i]! * scale);
    }
    sums.fill(0);
    rowsInBlock = 0;
  };

  const inflater = Readable.from([contents]).pipe(
    createInflate({
      finishFlush: 2 /* Z_SYNC_FLUSH */,
      chunkSize: Math.min(4 * 1024 * 1024, Math.max(64 * 1024, stride * 16)),
    }),
  );
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < chunk.length && y < height) {
        let row: Uint8Array;
        if (filled === 0 && chunk.length - offset >= stride) {
          row = chunk.subarray(offset, offset + stride);
          offset += stride;
        } else {
          const take = Math.min(stride - filled, chunk.length - offset);
          pending.set(chunk.subarray(offset, offset + take), filled);
          filled += take;
          offset += take;
          if (filled < stride) break;
          filled = 0;
          row = pending;
        }
        const samples = unfilter(row);
        if (!samples) return undefined;
        accumulate(samples, sums, blockOf);
        if (samples === current) [previous, current] = [current, previous];
        y++;
        rowsInBlock++;
        if (rowsInBlock === factor || y === height) flush();
      }
      if (y >= height) break;
    }
  } catch {
    return undefined;
  } finally {
    inflater.destroy();
  }
  return y >= height ? { data: out, width: outWidth, height: outHeight, components: n } : undefined;
}

type Source =
  | { kind: "jpeg"; data: Uint8Array; header: JpegHeader }
  // flate: the stored stream is itself the size a lossless candidate must beat (a Flate image, or
  // a JPX, which the stream pass leaves as it is); otherwise the samples are deflated to find it.
  | { kind: "samples"; data: Uint8Array; flate: boolean }
  | { kind: "large-flate"; parms: PDFDict | undefined };

/** The image's data as a JPEG or as samples (filters and predictors undone), when we can get at it. */
function sourceOf(stream: PDFRawStream, info: ImageInfo): Source | undefined {
  const filters = filtersOf(stream.dict);
  const parms = filters && decodeParmsOf(stream.dict, filters.length);
  if (!filters || !parms || stream.dict.has(N.F)) return undefined;
  const n = pixelComponents(info.colour);
  if (filters.at(-1) === "DCTDecode") {
    const outer = filters.slice(0, -1);
    if (info.colour.kind === "indexed" || info.bpc !== 8) return undefined;
    if (outer.some((name) => !isGeneralFilter(name))) return undefined;
    const limit = info.width * info.height * n + 1024 * 1024;
    const data = decodeFilters(stream.contents, outer, parms.slice(0, -1), stream.dict, limit, { predictors: true });
    const header = data && readJpegHeader(data);
    if (!header || header.precision !== 8 || header.components !== n) return undefined;
    // /ColorTransform overrides the JPEG's own choice, unless an Adobe marker makes it (then the
    // marker rules, for readers and for libjpeg alike); we would have to reproduce it.
    const dct = parms.at(-1);
    if (dct?.has(ColorTransform) && !header.adobe && n !== 1) return undefined;
    if (header.width !== info.width || header.height !== info.height) return undefined;
    return { kind: "jpeg", data, header };
  }
  if (filters.some((name) => !isGeneralFilter(name))) return undefined;
  const expected = Math.ceil((info.width * componentsOf(info.colour) * info.bpc) / 8) * info.height;
  if (expected > MAX_DECODED_BYTES) {
    const single = filters.length === 1 && filters[0] === "FlateDecode";
    return single && info.bpc === 8 && info.colour.kind === "direct"
      ? { kind: "large-flate", parms: parms[0] }
      : undefined;
  }
  const data = decodeFilters(stream.contents, filters, parms, stream.dict, expected + 4096, {
    predictors: true,
    tolerant: true,
  });
  if (!data || data.length < expected) return undefined;
  return {
    kind: "samples",
    data: data.subarray(0, expected),
    flate: filters.length === 1 && filters[0] === "FlateDecode",
  };
}

/**
 * A JPEG 2000 image's samples (./jpx.ts), taken as a lossless filter's would be: recoded when that
 * is smaller at the profile's floor, else the JPX stays (its stored size is the lossless bar, as a
 * Flate image's is). Only when the dictionary states the colour space and 8 bits and the codestream
 * agrees; a JPX's own colour space, a Decode array or a mask in the data keep it as it is.
 */
async function jpxSourceOf(stream: PDFRawStream, info: ImageInfo): Promise<Source | undefined> {
  const filters = filtersOf(stream.dict);
  if (filters?.length !== 1 || filters[0] !== "JPXDecode" || stream.dict.has(N.F)) return undefined;
  if (info.colour.kind !== "direct" || info.bpc !== 8 || info.decode) return undefined;
  const expected = { width: info.width, height: info.height, components: info.colour.components };
  const data = await decodeJpx(stream.contents, expected, MAX_DECODED_BYTES);
  return data && { kind: "samples", data, flate: true };
}

/** The image's pixels, 8-bit, in its own (or, for Indexed, its base) colour space. */
function pixelsOf(samples: Uint8Array, info: ImageInfo): Pixels | undefined {
  if (info.colour.kind === "indexed") return expandIndexed(samples, info);
  const n = info.colour.components as Components;
  const count = info.width * info.height * n;
  const data = info.bpc === 16 ? to8Bit(samples, count) : samples.subarray(0, count);
  return { data, width: info.width, height: info.height, components: n };
}

interface Job {
  stream: PDFRawStream;
  info: ImageInfo;
  /** A soft mask: lossless unless it already was a JPEG. */
  mask: boolean;
  /** The image has a mask of its own (/SMask or /Mask): it is not split into layers. */
  masked: boolean;
  /** Where the pages draw it largest, when known. */
  placement: Placement | undefined;
  /** The size to downsample to, when it is to be downsampled. */
  target: Size | undefined;
  settings: ImageSettings;
  /** How hard the JPEG encoder works on this document's images (see `effortFor`). */
  effort: JpegEffort;
}

const scaled = (size: Size, factor: number): Size => ({
  width: Math.round(size.width * factor),
  height: Math.round(size.height * factor),
});

/** `size` scaled to about `pixels` pixels. */
function scaledTo(size: Size, pixels: number): Size {
  const scale = Math.sqrt(pixels / (size.width * size.height));
  return { width: Math.max(1, Math.round(size.width * scale)), height: Math.max(1, Math.round(size.height * scale)) };
}

const DEVICE_GRAY: DirectColour = {
  kind: "direct",
  components: 1,
  ranges: [0, 1],
  object: N.DeviceGray,
  rgbLike: true,
};

/** One channel of an RGB image whose three channels differ nowhere by more than `tolerance`. */
function grayOf(pixels: Pixels, tolerance: number): Pixels | undefined {
  if (pixels.components !== 3) return undefined;
  const { data } = pixels;
  const count = pixels.width * pixels.height;
  for (let i = 0; i < data.length; i += 3) {
    const g = data[i + 1]!;
    if (Math.abs(data[i]! - g) > tolerance || Math.abs(data[i + 2]! - g) > tolerance) return undefined;
  }
  const gray = new Uint8Array(count);
  for (let p = 0, i = 0; p < count; p++, i += 3) gray[p] = Math.round((data[i]! + data[i + 1]! + data[i + 2]!) / 3);
  return { data: gray, width: pixels.width, height: pixels.height, components: 1 };
}

/** The pixels the recoding starts from: the image's own, or a reduced copy of a very large one. */
interface Working {
  pixels: Pixels;
  /** The pixels are a reduced copy (any output from them is a downsampling). */
  reduced: boolean;
  /** The colour space and /Decode to write when they change (Indexed expanded, RGB of grays). */
  recoloured: Pick<Replacement, "colour" | "decode">;
  /** The source was a JPEG (its recodings stay JPEG). */
  jpeg: JpegHeader | undefined;
  /** What the stored data costs as a lossless encoding of these pixels, when it is one. */
  storedLossless: number | undefined;
  /** The pixels' buffer was made for this image (not a view of the document's data): release it after. */
  owned: boolean;
}

/** Decodes the image, reducing very large ones on the way. */
async function workingPixels(job: Job, source: Source): Promise<Working | undefined> {
  const { info, target, stream } = job;
  const n = pixelComponents(info.colour) as Components;
  const large = info.width * info.height * n > MAX_DECODED_BYTES;
  let reduceTo: Size | undefined;
  if (large) {
    // Reduced by a whole factor (at least halved), to no less than a step above the target.
    if (!target) return undefined;
    const ratio = Math.min(info.width / target.width, info.height / target.height);
    const factor = Math.max(2, Math.floor(ratio / SIZE_STEP));
    reduceTo = { width: Math.ceil(info.width / factor), height: Math.ceil(info.height / factor) };
    if (reduceTo.width * reduceTo.height * n > 2 * MAX_DECODED_BYTES) return undefined;
  }
  if (source.kind === "jpeg") {
    // A JPEG is decoded once, whole: every size tried is resampled from it, and the quality check
    // draws it. (libvips's shrink-on-load does not apply below a 3x reduction, and decoding twice,
    // reduced for the candidates and whole for the check, cost more than decoding once.) A very
    // large one is decoded reduced, and checked against that.
    const pixels = await decodeJpeg(source.data, n, reduceTo);
    return {
      pixels,
      reduced: reduceTo !== undefined,
      recoloured: {},
      jpeg: source.header,
      storedLossless: undefined,
      owned: true,
    };
  }
  let pixels: Pixels | undefined;
  if (source.kind === "large-flate") {
    if (!reduceTo) return undefined;
    const factor = Math.floor(Math.min(info.width / reduceTo.width, info.height / reduceTo.height));
    if (factor < 2) return undefined;
    pixels = await reduceWhileInflating(stream.contents, source.parms, info.width, info.height, n, factor);
  } else {
    pixels = pixelsOf(source.data, info);
  }
  if (!pixels) return undefined;
  const indexed = info.colour.kind === "indexed";
  // Samples used as decoded are a view of the filters' output, which may be the stream's own data.
  let owned = source.kind === "large-flate" || indexed || info.bpc === 16;
  const base = info.colour.kind === "indexed" ? info.colour.base : info.colour;
  let recoloured: Working["recoloured"] = indexed ? { colour: base, decode: null } : {};
  if (base.rgbLike && base.components === 3 && !info.decode) {
    const gray = grayOf(pixels, GRAY_TOLERANCE);
    if (gray) {
      if (owned) release(pixels.data);
      pixels = gray;
      owned = true;
      recoloured = { colour: DEVICE_GRAY, decode: null };
    }
  }
  let storedLossless: number | undefined;
  if (source.kind === "samples") {
    storedLossless = source.flate ? stream.contents.length : deflate(source.data, LOSSLESS_LEVEL).length;
  }
  return { pixels, reduced: source.kind === "large-flate", recoloured, jpeg: undefined, storedLossless, owned };
}

/** A candidate encoding, with the pixels a reader will decode from it. */
interface Candidate {
  replacement: Replacement;
  decoded: Pixels;
  /** The decoded pixels are exactly the image's (lossless, not resampled). */
  exact: boolean;
}

/** A JPEG of `output`, or of `output` resampled to `size` (in the same pass) when given. */
async function jpegCandidate(job: Job, working: Working, output: Pixels, size?: Size): Promise<Candidate> {
  const { info, settings } = job;
  const quality = job.mask ? Math.max(settings.jpegQuality, 85) : settings.jpegQuality;
  const data = await encodeJpeg(output, { quality, effort: job.effort, ...(size ? { size } : {}) });
  const n = output.components;
  // libvips writes 4-component JPEGs Adobe-inverted; so does the stored JPEG when it has the marker.
  const inverted = n === 4 && adobeInverts(working.jpeg?.adobe ?? false);
  const ranges = working.recoloured.colour?.ranges ?? (info.colour as DirectColour).ranges;
  const decode = inverted ? flipped(working.recoloured.decode === null ? ranges : (info.decode ?? ranges)) : undefined;
  return {
    replacement: {
      data,
      filter: N.DCTDecode,
      size: size ?? { width: output.width, height: output.height },
      ...working.recoloured,
      ...(decode ? { decode } : {}),
    },
    decoded: await decodeJpeg(data, n),
    exact: false,
  };
}

async function losslessCandidate(working: Working, output: Pixels, exact: boolean): Promise<Candidate> {
  const lossless = await encodeLossless(output, LOSSLESS_LEVEL);
  return {
    replacement: {
      data: lossless.data,
      filter: N.FlateDecode,
      size: { width: output.width, height: output.height },
      ...(lossless.predicted ? { predictor: { colors: output.components, columns: output.width } } : {}),
      ...working.recoloured,
    },
    decoded: output,
    exact,
  };
}

/**
 * The colour space a palette of `working`'s pixels would index: an RGB-like one of three
 * components whose samples are the pixels as they are (no /Decode to carry over).
 */
function paletteBase(job: Job, working: Working): DirectColour | undefined {
  const colour = working.recoloured.colour ?? job.info.colour;
  if (colour.kind !== "direct" || colour.components !== 3 || !colour.rgbLike) return undefined;
  if (job.info.decode && working.recoloured.decode !== null) return undefined;
  return colour;
}

/**
 * `output` quantised to a palette of at most 256 colours (libimagequant, through sharp), written
 * as Indexed over the image's own colour space: a graphic of few colours in a fraction of its
 * lossless size. Lossy (unless it had 256 colours or fewer), so only where the quality check can
 * judge it; never for photographs (JPEG's), masks or JPEG sources.
 */
async function paletteCandidate(job: Job, working: Working, output: Pixels): Promise<Candidate | undefined> {
  const base = paletteBase(job, working);
  if (!base || job.settings.paletteQuality === undefined) return undefined;
  const encoded = await encodePalette(output, job.settings.paletteQuality);
  if (!encoded) return undefined;
  return {
    replacement: {
      data: encoded.data,
      filter: N.FlateDecode,
      size: { width: output.width, height: output.height },
      predictor: { colors: 1, columns: output.width },
      decode: null,
      indexed: { base, palette: encoded.palette, bits: encoded.bitsPerComponent },
    },
    decoded: encoded.decoded,
    exact: false,
  };
}

/** Lossless, and beside it a palette when the check can judge one: smallest first. */
async function graphicCandidates(
  job: Job,
  working: Working,
  output: Pixels,
  lossless: Candidate,
  checked: boolean,
): Promise<Candidate[]> {
  const palette = checked && !job.mask ? await paletteCandidate(job, working, output) : undefined;
  const candidates = palette ? [palette, lossless] : [lossless];
  return candidates.sort((a, b) => a.replacement.data.length - b.replacement.data.length);
}

/**
 * The encodings of `output` (the working pixels at one size) that the profile wants, smallest
 * first: JPEG for photographs; lossless for line art, flat colour and masks, and a palette beside
 * it for graphics the quality check can judge. Photographs are told apart by how JPEG compares
 * with a lossless encoding of the same pixels (on a smaller copy of very large ones), once per
 * image: `kind` remembers the answer for the other sizes.
 */
async function candidatesAt(
  job: Job,
  working: Working,
  output: Pixels,
  atOwnSize: boolean,
  kind: { photo?: boolean },
  checked: boolean,
): Promise<Candidate[]> {
  const { settings, info } = job;
  const exact = atOwnSize && !working.reduced;
  if (working.jpeg) return [await jpegCandidate(job, working, output)];
  // Indexed images keep their indices (already lossless) unless they are downsampled.
  const indexedKept = info.colour.kind === "indexed" && exact;
  if (job.mask || output.width * output.height < MIN_PIXELS) kind.photo = false;
  if (kind.photo === false) {
    if (indexedKept) return [];
    return graphicCandidates(job, working, output, await losslessCandidate(working, output, exact), checked);
  }
  if (kind.photo === true) return [await jpegCandidate(job, working, output)];
  const large = output.width * output.height > PROBE_PIXELS * 4;
  const probe = large ? await resample(output, scaledTo(output, PROBE_PIXELS)) : output;
  const probeJpeg = await encodeJpeg(probe, { quality: settings.jpegQuality, effort: job.effort });
  const probeLossless = await losslessCandidate(working, probe, exact && !large);
  if (large) release(probe.data);
  let reference = probeLossless.replacement.data.length;
  if (exact && !large && working.storedLossless !== undefined) reference = Math.min(reference, working.storedLossless);
  kind.photo = probeJpeg.length <= reference * settings.losslessToJpegRatio;
  if (kind.photo) return [await jpegCandidate(job, working, output)];
  if (indexedKept) return [];
  const lossless = large ? await losslessCandidate(working, output, exact) : probeLossless;
  return graphicCandidates(job, working, output, lossless, checked);
}

/**
 * The downsampled sizes to try, smallest first: the target, then steps of SIZE_STEP while the
 * image stays finer than a step by the profile's threshold. Images the pages were not seen to
 * draw have only their target (there is nothing to check a larger one against).
 */
function ladderOf(job: Job): Size[] {
  if (!job.target || !job.placement) return job.target ? [job.target] : [];
  const sizes: Size[] = [];
  const limit = Math.min(
    job.info.width / job.settings.downsampleThreshold,
    capWidth(job.info, job.placement, job.settings),
  );
  for (let size = job.target; size.width <= limit && sizes.length < MAX_SIZES; size = scaled(size, SIZE_STEP)) {
    sizes.push(size);
  }
  return sizes;
}

/** Whether re-encoding a JPEG at its own size is worth trying (it was made at a higher quality). */
function reencodesAtOwnSize(job: Job, header: JpegHeader): boolean {
  if (job.stream.contents.length < MIN_JPEG_BYTES) return false;
  return header.quality === undefined || header.quality > job.settings.jpegQuality + JPEG_QUALITY_MARGIN;
}

/** Sizes to try, as resample targets (undefined: the working pixels as they are). */
function sizesToTry(job: Job, working: Working): (Size | undefined)[] {
  const { width, height } = working.pixels;
  const sizes: (Size | undefined)[] = ladderOf(job).filter((s) => s.width < width && s.height <= height);
  // The working pixels themselves: the image's own size, or the largest reduction decoded (not
  // above maxPpi).
  const capped = width > capWidth(job.info, job.placement, job.settings);
  if (!capped && (working.reduced || !working.jpeg || reencodesAtOwnSize(job, working.jpeg))) sizes.push(undefined);
  return sizes;
}

/**
 * Tries the sizes in turn, and at each its candidates smallest first; the first candidate that is
 * smaller and passes the check wins.
 */
async function firstAcceptable(
  job: Job,
  working: Working,
  sizes: (Size | undefined)[],
  check: QualityCheck | undefined,
  kind: { photo?: boolean },
): Promise<Replacement | null | undefined> {
  const stored = job.stream.contents.length;
  /**
   * Whether a size is at least what the lossless stream pass would store the image in (worked out
   * when needed, and only as far as needed; for a JPEG, a bound a few bytes in a thousand below it).
   */
  let bar: ((size: number) => Promise<boolean>) | undefined;
  for (const [tried, size] of sizes.entries()) {
    const own = size === undefined;
    const downsampled = !own || working.reduced;
    // A JPEG's first size is resampled and encoded in one pass: nothing looks at its resampled
    // pixels (the first size is not checked before its candidate), and handing them to JavaScript
    // and back cost a copy of a quarter of the page image and a pipeline of its own.
    const direct = working.jpeg !== undefined && tried === 0 && !own;
    const output = direct ? working.pixels : await resample(working.pixels, size);
    let candidates: Candidate[] = [];
    try {
      // Once an image has failed a size, a size whose resampled pixels already fall below the
      // floor will not pass with JPEG's loss added: its encoding and decoding are skipped. The
      // first size is encoded straight away: most images pass it, and the check of their
      // candidate covers it. Lossless candidates are checked once, below: their decoded pixels
      // are these.
      const lossy = working.jpeg !== undefined || kind.photo === true;
      if (check && tried > 0 && downsampled && lossy && !check.passes(output)) continue;
      candidates = direct
        ? [await jpegCandidate(job, working, working.pixels, size)]
        : await candidatesAt(job, working, output, own, kind, check !== undefined);
      const limit = !downsampled && working.jpeg ? stored * (1 - job.settings.minJpegSaving) : stored;
      for (const [index, candidate] of candidates.entries()) {
        const bytes = candidate.replacement.data.length;
        // A larger size will not be smaller: give up (null). A larger candidate is not either.
        if (bytes >= limit) {
          if (index === 0) return null;
          break;
        }
        // Nor larger than the lossless profile stores the image (its stream pass, which this
        // profile's would run on the image left as it is): a stronger profile is never larger.
        const lossless = candidate.replacement.filter === N.FlateDecode;
        const work = working.jpeg
          ? stored <= MAX_BAR_JPEG_BYTES
          : lossless || sampleBytesOf(job.info) <= MAX_BAR_SAMPLE_BYTES;
        const worked = work || bytes >= NEAR_LOSSLESS * stored;
        if (worked && (await (bar ??= losslessBar(job.stream, MAX_DECODED_BYTES))(bytes))) {
          if (index === 0) return null;
          break;
        }
        if (candidate.exact || !check || check.passes(candidate.decoded)) return candidate.replacement;
      }
    } finally {
      // Resampled and decoded pixels are sharp's buffers, made for this size only.
      const mine = (pixels: Pixels) => pixels !== working.pixels && pixels !== output;
      release(
        output === working.pixels ? undefined : output.data,
        ...candidates.map((candidate) => (mine(candidate.decoded) ? candidate.decoded.data : undefined)),
      );
    }
  }
  return undefined;
}

/**
 * The image at `size`, the largest under the caller's maxPpi, whatever the quality floor and the
 * size it was stored in say: the smallest candidate there.
 */
async function atCap(job: Job, working: Working, size: Size): Promise<Replacement | undefined> {
  const output = await resample(working.pixels, size);
  let candidates: Candidate[] = [];
  try {
    candidates = await candidatesAt(job, working, output, false, {}, false);
    const smallest = (best: Candidate | undefined, candidate: Candidate) =>
      best && best.replacement.data.length <= candidate.replacement.data.length ? best : candidate;
    return candidates.reduce<Candidate | undefined>(smallest, undefined)?.replacement;
  } finally {
    const mine = (pixels: Pixels) => pixels !== working.pixels && pixels !== output;
    release(
      output === working.pixels ? undefined : output.data,
      ...candidates.map((candidate) => (mine(candidate.decoded) ? candidate.decoded.data : undefined)),
    );
  }
}

/**
 * The image's replacement; null when no candidate came out smaller than what it is stored in,
 * undefined when none was tried or none held the quality floor.
 */
async function recode(job: Job, source: Source): Promise<Replacement | null | undefined> {
  const { settings, stream, placement } = job;
  if (stream.contents.length < MIN_STORED_BYTES) return undefined;
  // Re-encoding a JPEG at its size gains little, and loses quality, unless it was made finer.
  if (source.kind === "jpeg" && !job.target && !reencodesAtOwnSize(job, source.header)) return undefined;
  const working = await workingPixels(job, source);
  if (!working) return undefined;
  try {
    const check = placement && new QualityCheck(working.pixels, placement, imageFloor(settings, placement));
    const layered = check && layersWanted(job, working) ? await layeredCandidate(job, working, check) : undefined;
    // Far below what one image would take: the usual candidates are not worked out.
    if (layered && bytesOf(layered) < stream.contents.length * LAYERED_CLEAR_SHARE) return layered;
    const sizes = sizesToTry(job, working);
    const usual = await firstAcceptable(job, working, sizes, check, {});
    if (layered && (!usual || bytesOf(layered) < usual.data.length)) return layered;
    // Above maxPpi, the caller's cap wins over the quality floor: the largest size under it.
    const largest = sizes.at(-1);
    const aboveCap = capWidth(job.info, placement, settings) < job.info.width;
    if (usual || !aboveCap || !largest) return usual;
    return (await atCap(job, working, largest)) ?? usual;
  } finally {
    if (working.owned) release(working.pixels.data);
  }
}

/**
 * Layers are tried on images that fill most of a page at a scanner's resolution, in a colour
 * space drawn as gray or RGB, as they are (not a reduced copy), without masks of their own.
 */
function layersWanted(job: Job, working: Working): boolean {
  const { settings, placement, info } = job;
  if (!settings.layers || job.mask || working.reduced || !placement) return false;
  if (placement.pageShare < LAYERED_MIN_PAGE_SHARE) return false;
  if (job.masked || info.decode) return false;
  const colour = working.recoloured.colour ?? (info.colour.kind === "indexed" ? info.colour.base : info.colour);
  if (!colour.rgbLike || (colour.components !== 1 && colour.components !== 3)) return false;
  const { width, height } = working.pixels;
  return width * height >= LAYERED_MIN_PIXELS && width / (placement.width / 72) >= LAYERED_MIN_PPI;
}

/** The image as layers, when the page as composed holds the floor. */
async function layeredCandidate(job: Job, working: Working, check: QualityCheck): Promise<Replacement | undefined> {
  const layers = job.settings.layers!;
  const ppi = working.pixels.width / (job.placement!.width / 72);
  const factors = [...new Set(layers.backgroundPpi.map((target) => Math.max(2, Math.round(ppi / target))))];
  const layered = await layeredEncoding(working.pixels, {
    factors: factors.sort((a, b) => b - a),
    jpegQuality: job.settings.jpegQuality,
    bitonalFirst: layers.bitonalFirst,
    effort: job.effort,
    jpegEffort: job.effort,
    passes: (composed) => check.passes(composed),
  });
  if (!layered) return undefined;
  return { data: new Uint8Array(0), filter: N.FlateDecode, size: job.info, layered };
}

/** What a replacement stores: its data, or its layers with their form (some two hundred bytes more). */
const bytesOf = (replacement: Replacement) =>
  replacement.layered ? replacement.layered.bytes + 200 : replacement.data.length;

/** Writes the replacement into the stream; returns the streams it added (a layered image's). */
function replace(stream: PDFRawStream, replacement: Replacement, context: PDFContext): PDFRawStream[] {
  if (replacement.layered) return writeLayered(stream, replacement.layered, context);
  const { dict } = stream;
  const { indexed } = replacement;
  const bits = indexed?.bits ?? 8;
  dict.set(N.Filter, replacement.filter);
  if (replacement.predictor) {
    dict.set(
      N.DecodeParms,
      context.obj({
        Predictor: 15,
        Colors: replacement.predictor.colors,
        BitsPerComponent: bits,
        Columns: replacement.predictor.columns,
      }),
    );
  } else dict.delete(N.DecodeParms);
  dict.delete(N.DL);
  dict.set(N.Width, PDFNumber.of(replacement.size.width));
  dict.set(N.Height, PDFNumber.of(replacement.size.height));
  dict.set(N.BitsPerComponent, PDFNumber.of(bits));
  if (indexed) {
    const hival = indexed.palette.length / indexed.base.components - 1;
    const lookup = PDFHexString.of(Buffer.from(indexed.palette).toString("hex"));
    dict.set(N.ColorSpace, context.obj([PDFName.of("Indexed"), indexed.base.object, hival, lookup]));
  } else if (replacement.colour) dict.set(N.ColorSpace, replacement.colour.object);
  if (replacement.decode === null) dict.delete(N.Decode);
  else if (replacement.decode) dict.set(N.Decode, context.obj(replacement.decode));
  dict.set(N.Length, PDFNumber.of(replacement.data.length));
  stream.updateContents(replacement.data);
  return [];
}

const lookupStream = (context: PDFContext, value: PDFObject | undefined) => {
  const object = value === undefined ? undefined : context.lookup(value);
  return object instanceof PDFRawStream ? object : undefined;
};

const union = (a: Placement | undefined, b: Placement | undefined): Placement | undefined =>
  a && b
    ? {
        width: Math.max(a.width, b.width),
        height: Math.max(a.height, b.height),
        pageShare: Math.max(a.pageShare, b.pageShare),
      }
    : (a ?? b);

/**
 * The similarity an image must keep so that its page keeps `settings.minSsim`: a page's SSIM is
 * about the area-weighted mean of its parts, and parts without images do not change.
 */
function imageFloor(settings: ImageSettings, placement: Placement): number {
  const share = Math.min(1, Math.max(placement.pageShare, 1e-6));
  return Math.max(settings.minImageSsim, 1 - (1 - settings.minSsim) / share);
}

/** An image to recode, with what its recoding depends on besides the profile. */
interface ImageJob {
  stream: PDFRawStream;
  mask: boolean;
  placement: Placement | undefined;
  /** Keep its size (a soft mask with /Matte, or the image of one). */
  fixedSize: boolean;
}

/**
 * Pixels to encode (images at the size they would first be tried at) above which a document's
 * JPEGs are encoded with the "fast" effort: about twenty A4 pages at 150 ppi (the corpus's
 * documents stay below, the largest at 44 million). mozjpeg's trellis quantisation takes some
 * 15 % off each JPEG but multiplies its encoding time by about five: on a long scan that is most
 * of the engine's time, on a few pages a fraction of a second.
 */
const BEST_EFFORT_MAX_PIXELS = 48_000_000;

/**
 * How hard the JPEG encoder works on a document, from how many pixels its images would be
 * written with (their target sizes, or their own).
 */
function effortFor(jobs: readonly ImageJob[], context: PDFContext, settings: ImageSettings): JpegEffort {
  let pixels = 0;
  for (const job of jobs) {
    try {
      const info = describe(job.stream.dict, context);
      if (!info) continue;
      const size = (!job.fixedSize && targetSize(info, job.placement, settings)) || info;
      pixels += size.width * size.height;
    } catch {
      // Left alone when recoded: it costs nothing.
    }
  }
  return pixels > BEST_EFFORT_MAX_PIXELS ? "fast" : "best";
}

/**
 * About the most memory recoding an image holds at once: its stored data (a copy, when filters
 * are undone), its decoded samples (a very large one is decoded reduced, to at most twice
 * MAX_DECODED_BYTES), and a candidate with its encoding and decoding (a quarter of the samples or
 * less when downsampled, the whole when not: counted as half), and what layers add. An image we do not recode counts
 * as nothing: it is left alone without being decoded.
 */
function peakBytesOf(job: ImageJob, context: PDFContext, settings: ImageSettings): number {
  const { stream } = job;
  let info: ImageInfo | undefined;
  try {
    info = describe(stream.dict, context);
  } catch {
    return 0;
  }
  if (!info) return 0;
  const decoded = info.width * info.height * pixelComponents(info.colour);
  // Layers hold about two bytes a pixel more, the composition the check draws and the mask's gray
  // copy for libtiff (layers.ts: the luminance goes through the kernels' memory a row at a time);
  // counted as three, a margin for the mask, the grown text and the background.
  const layers = settings.layers && !job.mask && (job.placement?.pageShare ?? 0) >= LAYERED_MIN_PAGE_SHARE;
  const layered = layers && decoded <= MAX_DECODED_BYTES ? 3 * info.width * info.height : 0;
  return 1.5 * Math.min(decoded, 2 * MAX_DECODED_BYTES) + stream.contents.length + layered;
}

/**
 * Downsamples and re-encodes the document's image XObjects in place, per `settings`, several at a
 * time within `bounds`. Returns the streams it replaced (already optimally encoded: leave them out
 * of later passes) and a report.
 */
export async function optimiseImages(
  context: PDFContext,
  settings: ImageSettings,
  bounds: JobBounds,
): Promise<{ replaced: Set<PDFRawStream>; report: ImageReport }> {
  let placements: Placements;
  let inlineConverted = 0;
  try {
    placements = findImagePlacements(context, MIN_INLINE_BYTES);
    inlineConverted = convertInlineImages(context, placements);
  } catch {
    // Content we could not follow: no placements (images keep the longest-side rule), no inline conversion.
    placements = { images: new Map(), inline: new Map(), inlinePlaced: new Map(), complete: false };
  }
  const images = context
    .enumerateIndirectObjects()
    .map(([, object]) => object)
    .filter((o): o is PDFRawStream => o instanceof PDFRawStream && o.dict.lookup(N.Subtype) === N.Image);
  const replaced = new Set<PDFRawStream>();
  const report: ImageReport = {
    images: images.length,
    recoded: 0,
    downsampled: 0,
    inlineConverted,
    layered: 0,
    threads: 0,
    offThread: 0,
    bytesBefore: 0,
    bytesAfter: 0,
  };
  if (images.length === 0) return { replaced, report };

  // When some content could not be read, an image's largest placement may be missing: use none.
  const placed = placements.complete ? placements.images : new Map<PDFRawStream, Placement>();

  // Soft masks follow their images' placement; stencil masks and colour keys are left alone.
  const softMasks = new Map<
    PDFRawStream,
    { placement: Placement | undefined; matte: boolean; unplacedParent: boolean }
  >();
  const stencils = new Set<PDFRawStream>();
  const matteParents = new Set<PDFRawStream>();
  for (const image of images) {
    const smask = lookupStream(context, image.dict.get(N.SMask));
    if (smask) {
      const entry = softMasks.get(smask) ?? { placement: undefined, matte: false, unplacedParent: false };
      const placement = placed.get(image);
      entry.placement = union(entry.placement, placement);
      entry.unplacedParent ||= !placement;
      entry.matte ||= smask.dict.has(N.Matte);
      softMasks.set(smask, entry);
      if (smask.dict.has(N.Matte)) matteParents.add(image);
    }
    const mask = lookupStream(context, image.dict.get(N.Mask));
    if (mask) stencils.add(mask);
  }

  const process = async (stream: PDFRawStream, mask: boolean, placement: Placement | undefined, fixedSize: boolean) => {
    let info: ImageInfo | undefined;
    let replacement: Replacement | undefined;
    try {
      info = describe(stream.dict, context);
      const source = info && (sourceOf(stream, info) ?? (await jpxSourceOf(stream, info)));
      if (!info || !source) return;
      const image: ImageToRecode = { stream, info, mask, masked: hasMasks(stream.dict), placement, fixedSize };
      // To a thread that has room for it; else here, while they are busy.
      const toThread = workers?.hasRoom() && source.kind === "jpeg";
      const detached = toThread ? detachJpeg(image, source, settings, effort) : undefined;
      if (detached) report.offThread++;
      replacement = detached
        ? await recodeOffThread(workers!, detached, () => recodeImage(image, source, settings, effort))
        : await recodeImage(image, source, settings, effort);
    } catch {
      // sharp could not read it (damaged data, unusual JPEG), or the dictionary is not what it
      // seems: the image stays as it is.
      return;
    }
    if (!replacement) return;
    report.recoded++;
    if (replacement.layered) report.layered++;
    if (replacement.size.width !== info.width || replacement.size.height !== info.height) report.downsampled++;
    report.bytesBefore += stream.contents.length;
    report.bytesAfter += bytesOf(replacement);
    // A layered image's mask and background are as they should be too (mozjpeg's Huffman tables
    // are already optimal): the stream pass would only work them out again.
    for (const made of replace(stream, replacement, context)) replaced.add(made);
    replaced.add(stream);
  };

  // Every image is a job of its own (they share nothing but the report), run a few at a time.
  const jobs: ImageJob[] = [];
  for (const stream of images) {
    if (softMasks.has(stream) || stencils.has(stream)) continue;
    jobs.push({ stream, mask: false, placement: placed.get(stream), fixedSize: matteParents.has(stream) });
  }
  for (const [stream, entry] of softMasks) {
    if (stencils.has(stream)) continue;
    // A mask whose image is drawn somewhere we did not see keeps the longest-side rule; one also
    // drawn on its own counts that placement too.
    const placement = entry.unplacedParent ? undefined : union(entry.placement, placed.get(stream));
    jobs.push({ stream, mask: true, placement, fixedSize: entry.matte });
  }
  const effort = effortFor(jobs, context, settings);
  const workers = recodeWorkersFor(jobs, bounds);
  report.threads = workers?.threads ?? 0;
  try {
    await forEachBounded(
      jobs,
      (job) => peakBytesOf(job, context, settings),
      (job) => process(job.stream, job.mask, job.placement, job.fixedSize),
      bounds,
    );
  } finally {
    await workers?.close();
  }
  return { replaced, report };
}

/** A JPEG image's recoding as a worker gets it: plain data (./recode-worker.ts). */
export interface DetachedRecode {
  /** The stream's stored bytes. */
  contents: Uint8Array;
  /** The JPEG inside them, when other filters wrap it. */
  jpeg: Uint8Array | undefined;
  header: JpegHeader;
  /** The stream's /Filter and /DecodeParms, as a dictionary in PDF syntax. */
  dict: string;
  info: Omit<ImageInfo, "colour"> & { colour: Omit<DirectColour, "object"> };
  mask: boolean;
  masked: boolean;
  placement: Placement | undefined;
  fixedSize: boolean;
  settings: ImageSettings;
  effort: JpegEffort;
}

/** A worker's replacement: that of a JPEG, whose colour space stays (its filter by name). */
export type DetachedReplacement = Omit<Replacement, "filter" | "colour" | "indexed"> & { filter: string };

/** An image of a document to recode, with what its recoding depends on besides the profile. */
interface ImageToRecode {
  stream: PDFRawStream;
  info: ImageInfo;
  mask: boolean;
  masked: boolean;
  placement: Placement | undefined;
  fixedSize: boolean;
}

const hasMasks = (dict: PDFDict) => dict.has(N.SMask) || dict.has(N.Mask);

/**
 * The image's replacement under the profile's settings, then those of the weaker profiles while
 * the image is left as it was. A retry at a higher JPEG quality only for an image stored
 * losslessly that failed on quality: where nothing came out smaller (null), more quality will not
 * either.
 */
async function recodeImage(
  image: ImageToRecode,
  source: Source,
  settings: ImageSettings,
  effort: JpegEffort,
): Promise<Replacement | undefined> {
  const { info, placement, fixedSize } = image;
  let outcome: Replacement | null | undefined;
  for (let tried: ImageSettings | undefined = settings; tried; tried = tried.fallback) {
    if (tried.losslessSourcesOnly && (source.kind === "jpeg" || outcome === null)) continue;
    const target = fixedSize ? undefined : targetSize(info, placement, tried);
    outcome = await recode({ ...image, target, settings: tried, effort }, source);
    if (outcome) return outcome;
  }
  return undefined;
}

// Off the main thread (./recode-workers.ts). A long scan is hundreds of JPEG page images, each
// some 300 ms of decoding, segmenting, checking and encoding, three quarters of it JavaScript and
// WebAssembly on one thread: an engine process so used one core of several. Its JPEG images are
// also recoded on worker threads (one per core beside the main thread), each handed an image's
// stored bytes and what its recoding depends on (plain data) while it has room for one
// (recode-workers.ts), and answering with the replacement the main thread writes.

/** JPEG images (their pixels) a document must have for worker threads to be worth starting. */
const WORKERS_MIN_PIXELS = 40_000_000;

function recodeWorkersFor(jobs: readonly ImageJob[], bounds: JobBounds): RecodeWorkers | undefined {
  // The main thread recodes too: of the jobs in flight, one is its own.
  const threads = Math.min(bounds.workerThreads ?? 0, bounds.concurrency - 1);
  if (threads < 1) return undefined;
  let pixels = 0;
  for (const { stream } of jobs) {
    try {
      if (filtersOf(stream.dict)?.at(-1) !== "DCTDecode") continue;
      pixels += (numberOf(stream.dict.lookup(N.Width)) ?? 0) * (numberOf(stream.dict.lookup(N.Height)) ?? 0);
    } catch {
      // A dictionary that is not what it seems: that image is left alone when recoded.
    }
  }
  return pixels >= WORKERS_MIN_PIXELS ? createRecodeWorkers(threads) : undefined;
}

/** The entries of an image's dictionary its recoding reads (its filters), written out, if they are direct. */
function filterEntries(dict: PDFDict): string | undefined {
  const entries: string[] = [];
  for (const key of [N.Filter, N.DecodeParms]) {
    const value = dict.lookup(key);
    if (value === undefined) continue;
    const text = value.toString();
    // A reference inside (rare) would need the document: such an image is recoded here.
    if (/\bR\b/.test(text)) return undefined;
    entries.push(`${key.toString()} ${text}`);
  }
  return `<< ${entries.join(" ")} >>`;
}

/** A JPEG image's recoding as plain data for a worker, or undefined when it must stay here. */
function detachJpeg(
  image: ImageToRecode,
  source: Extract<Source, { kind: "jpeg" }>,
  settings: ImageSettings,
  effort: JpegEffort,
): DetachedRecode | undefined {
  const { stream, info } = image;
  const dict = filterEntries(stream.dict);
  if (!dict || info.colour.kind !== "direct") return undefined;
  const { kind, components, ranges, rgbLike } = info.colour;
  return {
    contents: stream.contents,
    // The JPEG is most often the stream's data itself: it crosses once.
    jpeg: source.data === stream.contents ? undefined : source.data,
    header: source.header,
    dict,
    info: { ...info, colour: { kind, components, ranges, rgbLike } },
    mask: image.mask,
    masked: image.masked,
    placement: image.placement,
    fixedSize: image.fixedSize,
    settings,
    effort,
  };
}

/** A worker's replacement for the image; where no worker could take it, `here`'s. */
async function recodeOffThread(
  workers: RecodeWorkers,
  request: DetachedRecode,
  here: () => Promise<Replacement | undefined>,
): Promise<Replacement | undefined> {
  let recoded: DetachedReplacement | undefined;
  try {
    recoded = await workers.recode(request);
  } catch (error) {
    if (error instanceof WorkerUnavailable) return here();
    throw error;
  }
  if (!recoded) return undefined;
  const { filter, ...rest } = recoded;
  return { ...rest, filter: PDFName.of(filter) };
}

/** Runs in a worker (./recode-worker.ts): the image rebuilt from plain data, then recodeImage. */
export async function recodeDetached(request: DetachedRecode): Promise<DetachedReplacement | undefined> {
  const context = PDFContext.create();
  const dict = PDFObjectParser.forBytes(new TextEncoder().encode(request.dict), context).parseObject();
  if (!(dict instanceof PDFDict)) throw new TypeError("recodeDetached: the filters are not a dictionary");
  const stream = PDFRawStream.of(dict, request.contents);
  // The colour space object is only written when an image changes colour space, which a JPEG's
  // recoding does not (its working pixels are never recoloured): a name stands in for it.
  const info: ImageInfo = { ...request.info, colour: { ...request.info.colour, object: PDFName.of("DeviceRGB") } };
  const source: Source = { kind: "jpeg", data: request.jpeg ?? request.contents, header: request.header };
  const { mask, masked, placement, fixedSize } = request;
  const image: ImageToRecode = { stream, info, mask, masked, placement, fixedSize };
  const replacement = await recodeImage(image, source, request.settings, request.effort);
  if (!replacement) return undefined;
  const { filter, colour, indexed, ...rest } = replacement;
  if (colour || indexed) throw new Error("recodeDetached: a JPEG's recoding changed its colour space");
  return { ...rest, filter: filter.asString().slice(1) };
}
