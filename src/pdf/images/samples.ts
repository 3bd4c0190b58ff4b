// Reading an image XObject for the image pass (optimise.ts): whether we may recode it (describe),
// and its data as a JPEG or as 8-bit samples, filters, predictors, palettes and 16 bits undone
// (sourceOf, pixelsOf); very large Flate images reduced as they inflate.
import { Readable } from "node:stream";
import { createInflate } from "node:zlib";
import { PDFArray, PDFBool, PDFName, PDFNumber } from "@cantoo/pdf-lib";
import type { PDFObject, PDFContext, PDFDict, PDFRawStream } from "@cantoo/pdf-lib";
import { MAX_IMAGE_PIXELS, readJpegHeader } from "./codecs.ts";
import type { Components, JpegHeader, Pixels } from "./codecs.ts";
import { colourOf } from "../shared/colour.ts";
import type { Colour } from "../shared/colour.ts";
import {
  decodeFilters,
  decodeFlate,
  decodeParmsOf,
  filtersOf,
  isGeneralFilter,
  N,
  numberOf,
  readPredictorParms,
  unpngRow,
  untiffRow,
} from "../streams/filters.ts";
import type { FlateDecoding } from "../streams/filters.ts";
import { decodeJpx } from "../codecs/jpx.ts";
import { addRow, scratch } from "./kernels.ts";

const ColorTransform = PDFName.of("ColorTransform");

/** Below this, an image is not worth the work. */
export const MIN_PIXELS = 32 * 32;

/** Decoded samples held in memory at once, at most; larger Flate images are reduced as they inflate. */
export const MAX_DECODED_BYTES = 48 * 1024 * 1024;

export interface ImageInfo {
  width: number;
  height: number;
  bpc: number;
  colour: Colour;
  /** The /Decode array, when there is one. */
  decode: number[] | undefined;
}

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

export const componentsOf = (colour: Colour): number => (colour.kind === "indexed" ? 1 : colour.components);

export const pixelComponents = (colour: Colour): number =>
  colour.kind === "indexed" ? colour.base.components : colour.components;

const isSupported = (n: number): n is Components => n === 1 || n === 3 || n === 4;

/** The image's geometry and colour when we may recode it, else undefined. */
export function describe(dict: PDFDict, context: PDFContext): ImageInfo | undefined {
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

/**
 * The sums of a block row's column blocks (`factor` pixels of `n` samples across, the last one
 * narrower when the row is not a multiple) from the sums of its columns (`columns`, a sample's).
 */
function blockSums(columns: Uint32Array, sums: Uint32Array, n: number, factor: number): void {
  const span = n * factor;
  const rowBytes = columns.length;
  if (n === 3) {
    // RGB, the large pages' usual case, with its three sums in locals.
    for (let start = 0, o = 0; start < rowBytes; start += span, o += 3) {
      const end = Math.min(start + span, rowBytes);
      let r = 0;
      let g = 0;
      let b = 0;
      for (let i = start; i < end; i += 3) {
        r += columns[i]!;
        g += columns[i + 1]!;
        b += columns[i + 2]!;
      }
      sums[o] = r;
      sums[o + 1] = g;
      sums[o + 2] = b;
    }
    return;
  }
  for (let start = 0, o = 0; start < rowBytes; start += span, o += n) {
    const end = Math.min(start + span, rowBytes);
    for (let c = 0; c < n; c++) {
      let sum = 0;
      for (let i = start + c; i < end; i += n) sum += columns[i]!;
      sums[o + c] = sum;
    }
  }
}

/** Whether every RGB pixel of `rgb` has its red and blue within `tolerance` of its green. */
export function isGrayWithin(rgb: Uint8Array, tolerance: number): boolean {
  for (let i = 0; i < rgb.length; i += 3) {
    const g = rgb[i + 1]!;
    if (Math.abs(rgb[i]! - g) > tolerance || Math.abs(rgb[i + 2]! - g) > tolerance) return false;
  }
  return true;
}

/** Writes the RGB pixels of `rgb` as gray (each the mean of its three, rounded) into `gray` from `at`. */
export function writeGray(rgb: Uint8Array, gray: Uint8Array, at = 0): void {
  for (let i = 0, o = at; i < rgb.length; i += 3, o++) gray[o] = Math.round((rgb[i]! + rgb[i + 1]! + rgb[i + 2]!) / 3);
}

/** Whether the image's predictor is one reduceWhileInflating undoes (8-bit, `n` samples a pixel). */
function predictorFits(p: ReturnType<typeof readPredictorParms>, width: number, n: Components): boolean {
  if (p.predictor >= 10 || p.predictor === 2) return p.colors === n && p.columns === width && p.bpc === 8;
  return p.predictor === 1;
}

/**
 * Writes a block row's averages (`sums` of `rows` rows of `factor` columns each, the last column
 * block narrower when `width` is not a multiple) into `into` at `at`, and clears the sums.
 */
function writeAverages(
  sums: Uint32Array,
  into: Uint8Array,
  at: number,
  { width, n, factor, rows }: { width: number; n: number; factor: number; rows: number },
): void {
  const outWidth = Math.ceil(width / factor);
  const full = 1 / (factor * rows);
  const lastColumns = width - (outWidth - 1) * factor;
  for (let i = 0, end = outWidth * n; i < end; i++) {
    const scale = i < end - n ? full : 1 / (lastColumns * rows);
    into[at + i] = Math.round(sums[i]! * scale);
  }
  sums.fill(0);
}

/**
 * A block row's column sums (a u32 a sample), added a row at a time by the kernels (addRow, 16
 * samples at a time): in the kernels' memory while a chunk's rows are added, here between chunks
 * (at each await the kernels' memory is another image's: the quality check's, the layers').
 * Summing each sample into its block's sum in JavaScript was most of the reduction's time:
 * scan_multipage_6p's 9000 x 9000 page, reduced alone in a fresh lean process, 1,290-1,530 ->
 * 860-1,090 ms of CPU; its whole job 3,420 -> 2,923 ms (medians of 5, alternated, load 10-11).
 */
class ColumnSums {
  private readonly rowBytes: number;
  private readonly saved: Uint32Array;
  private row = 0;
  private at = 0;
  private heap: Uint8Array = new Uint8Array(0);
  private live: Uint32Array = new Uint32Array(0);

  constructor(rowBytes: number) {
    this.rowBytes = rowBytes;
    this.saved = new Uint32Array(rowBytes);
  }

  /** Before a chunk's rows: the sums into the kernels' memory. */
  open(): void {
    const layout = scratch.reset();
    this.row = layout.take(this.rowBytes);
    this.at = layout.take(this.rowBytes * 4);
    this.heap = layout.heap;
    this.live = new Uint32Array(this.heap.buffer, this.at, this.rowBytes);
    this.live.set(this.saved);
  }

  /** Adds a row of `rowBytes` samples (between open and close). */
  add(samples: Uint8Array): void {
    this.heap.set(samples, this.row);
    addRow(this.row, this.rowBytes, this.at);
  }

  /** Writes the block sums (blockSums) into `sums`, and clears the column sums for the next block row. */
  take(sums: Uint32Array, n: number, factor: number): void {
    blockSums(this.live, sums, n, factor);
    this.live.fill(0);
  }

  /** After a chunk's rows: the sums out of the kernels' memory. */
  close(): void {
    this.saved.set(this.live);
  }
}

/** What a gray reduction answers on its first row that is not gray. */
const NOT_GRAY = Symbol("not gray");

/**
 * Inflates a large 8-bit Flate image row by row and averages `factor` x `factor` blocks as it
 * goes, so that only the reduced image is ever held. Undefined when the data is short or damaged.
 *
 * With `grayTolerance`, an RGB image whose reduced pixels all have red and blue within it of their
 * green comes back gray (one component: each pixel the mean of its three, rounded), as it would be
 * made gray from the RGB reduction afterwards, without that RGB copy: it is reduced into a gray
 * buffer a third of its size, and inflated again into RGB from the start at its first row that is
 * not gray (docs/engine.md, "Memory": the corpus's 9000 x 9000 page held 61 MB of RGB and 20 of
 * gray at once).
 */
export async function reduceWhileInflating(
  contents: Uint8Array,
  parms: PDFDict | undefined,
  width: number,
  height: number,
  n: Components,
  factor: number,
  grayTolerance?: number,
): Promise<Pixels | undefined> {
  const image: Reduction = { contents, parms, width, height, n, factor };
  if (grayTolerance !== undefined && n === 3) {
    const gray = await reduceRows(image, grayTolerance);
    if (gray !== NOT_GRAY) return gray;
  }
  const reduced = await reduceRows(image, undefined);
  return reduced === NOT_GRAY ? undefined : reduced;
}

/** What reduceWhileInflating reduces: the stored data, its size and samples a pixel, and by how much. */
interface Reduction {
  contents: Uint8Array;
  parms: PDFDict | undefined;
  width: number;
  height: number;
  n: Components;
  factor: number;
}

/** reduceWhileInflating's pass: into gray when `grayTolerance` is given, NOT_GRAY at a row that is not. */
async function reduceRows(
  { contents, parms, width, height, n, factor }: Reduction,
  grayTolerance: number | undefined,
): Promise<Pixels | typeof NOT_GRAY | undefined> {
  const p = readPredictorParms(parms);
  const png = p.predictor >= 10;
  if (!predictorFits(p, width, n)) return undefined;
  const rowBytes = width * n;
  const stride = rowBytes + (png ? 1 : 0);
  const outWidth = Math.ceil(width / factor);
  const outHeight = Math.ceil(height / factor);
  const out = new Uint8Array(outWidth * outHeight * (grayTolerance === undefined ? n : 1));
  // A gray reduction's row in RGB, before it is checked and written gray.
  const rgbRow = grayTolerance === undefined ? undefined : new Uint8Array(outWidth * n);
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
  const columns = new ColumnSums(rowBytes);
  /** Writes the block's row of averages; false when a gray reduction's row is not gray. */
  const flush = (): boolean => {
    const outY = Math.floor((y - 1) / factor);
    columns.take(sums, n, factor);
    writeAverages(sums, rgbRow ?? out, rgbRow ? 0 : outY * outWidth * n, { width, n, factor, rows: rowsInBlock });
    rowsInBlock = 0;
    if (!rgbRow) return true;
    if (!isGrayWithin(rgbRow, grayTolerance!)) return false;
    writeGray(rgbRow, out, outY * outWidth);
    return true;
  };

  const inflater = Readable.from([contents]).pipe(
    createInflate({ finishFlush: 2 /* Z_SYNC_FLUSH */, chunkSize: Math.min(4 << 20, Math.max(64 << 10, stride * 16)) }),
  );
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      columns.open();
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
        columns.add(samples);
        if (samples === current) [previous, current] = [current, previous];
        y++;
        rowsInBlock++;
        if ((rowsInBlock === factor || y === height) && !flush()) return NOT_GRAY;
      }
      columns.close();
      if (y >= height) break;
    }
  } catch {
    return undefined;
  } finally {
    inflater.destroy();
  }
  if (y < height) return undefined;
  return { data: out, width: outWidth, height: outHeight, components: rgbRow ? 1 : n };
}

export type Source =
  | { kind: "jpeg"; data: Uint8Array; header: JpegHeader }
  // flate: the stored stream is itself the size a lossless candidate must beat (a Flate image, or
  // a JPX, which the stream pass leaves as it is); otherwise the samples are deflated to find it.
  // decoding: the stream's Flate data as the lossless bar decodes it, when it was decoded so.
  | { kind: "samples"; data: Uint8Array; flate: boolean; decoding?: FlateDecoding }
  | { kind: "large-flate"; parms: PDFDict | undefined };

/** The image's data as a JPEG or as samples (filters and predictors undone), when we can get at it. */
export function sourceOf(stream: PDFRawStream, info: ImageInfo): Source | undefined {
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
  const flate = filters.length === 1 && filters[0] === "FlateDecode";
  // Decoded as the lossless bar would decode it (whole: without tolerance), when it can be: the
  // bar then takes it as it is (streams/recompress.ts). Else as before.
  const decoding = flate ? decodeFlate(stream.contents, parms[0], expected + 4096) : undefined;
  const data =
    decoding?.samples ??
    decodeFilters(stream.contents, filters, parms, stream.dict, expected + 4096, {
      predictors: true,
      tolerant: true,
      sized: true,
    });
  if (!data || data.length < expected) return undefined;
  return { kind: "samples", data: data.subarray(0, expected), flate, ...(decoding ? { decoding } : {}) };
}

/**
 * A JPEG 2000 image's samples (codecs/jpx.ts), taken as a lossless filter's would be: recoded when that
 * is smaller at the profile's floor, else the JPX stays (its stored size is the lossless bar, as a
 * Flate image's is). Only when the dictionary states the colour space and 8 bits and the codestream
 * agrees; a JPX's own colour space, a Decode array or a mask in the data keep it as it is.
 */
export async function jpxSourceOf(stream: PDFRawStream, info: ImageInfo): Promise<Source | undefined> {
  const filters = filtersOf(stream.dict);
  if (filters?.length !== 1 || filters[0] !== "JPXDecode" || stream.dict.has(N.F)) return undefined;
  if (info.colour.kind !== "direct" || info.bpc !== 8 || info.decode) return undefined;
  const expected = { width: info.width, height: info.height, components: info.colour.components };
  const data = await decodeJpx(stream.contents, expected, MAX_DECODED_BYTES);
  return data && { kind: "samples", data, flate: true };
}

/** The image's pixels, 8-bit, in its own (or, for Indexed, its base) colour space. */
export function pixelsOf(samples: Uint8Array, info: ImageInfo): Pixels | undefined {
  if (info.colour.kind === "indexed") return expandIndexed(samples, info);
  const n = info.colour.components as Components;
  const count = info.width * info.height * n;
  const data = info.bpc === 16 ? to8Bit(samples, count) : samples.subarray(0, count);
  return { data, width: info.width, height: info.height, components: n };
}
