// Reading and writing stream data: the standard lossless filters, with hard limits on what a
// stream may expand to (a few kilobytes of Flate can claim gigabytes).
import { constants, deflateSync, inflateSync } from "node:zlib";
import { decodePDFRawStream, PDFArray, PDFDict, PDFName, PDFNull, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFObject } from "@cantoo/pdf-lib";
import { ascii85Decode } from "./ascii85.ts";
import { pngFilterRows, unpngRows } from "./png.ts";

export const N = {
  BitsPerComponent: PDFName.of("BitsPerComponent"),
  Colors: PDFName.of("Colors"),
  ColorSpace: PDFName.of("ColorSpace"),
  Columns: PDFName.of("Columns"),
  Contents: PDFName.of("Contents"),
  Decode: PDFName.of("Decode"),
  DecodeParms: PDFName.of("DecodeParms"),
  DCTDecode: PDFName.of("DCTDecode"),
  DeviceGray: PDFName.of("DeviceGray"),
  DeviceRGB: PDFName.of("DeviceRGB"),
  DL: PDFName.of("DL"),
  EarlyChange: PDFName.of("EarlyChange"),
  F: PDFName.of("F"),
  Filter: PDFName.of("Filter"),
  FlateDecode: PDFName.of("FlateDecode"),
  Height: PDFName.of("Height"),
  ICCBased: PDFName.of("ICCBased"),
  Image: PDFName.of("Image"),
  ImageMask: PDFName.of("ImageMask"),
  Length: PDFName.of("Length"),
  Mask: PDFName.of("Mask"),
  Matte: PDFName.of("Matte"),
  Metadata: PDFName.of("Metadata"),
  N: PDFName.of("N"),
  ObjStm: PDFName.of("ObjStm"),
  Predictor: PDFName.of("Predictor"),
  SMask: PDFName.of("SMask"),
  SMaskInData: PDFName.of("SMaskInData"),
  Subtype: PDFName.of("Subtype"),
  Type: PDFName.of("Type"),
  Width: PDFName.of("Width"),
  XRef: PDFName.of("XRef"),
} as const;

/** Filters that only reshape bytes (no image semantics); we can decode all of them. */
const GENERAL_FILTERS = new Set(["FlateDecode", "LZWDecode", "ASCII85Decode", "ASCIIHexDecode", "RunLengthDecode"]);
/** The most ASCII85 and ASCIIHex data decoded (ASCIIHex goes through pdf-lib's decoder). */
const MAX_JS_DECODER_INPUT = 64 * 1024 * 1024;

/** The stream's filters, outermost first; undefined when /Filter is malformed. */
export function filtersOf(dict: PDFDict): string[] | undefined {
  const filter = dict.lookup(N.Filter);
  if (filter === undefined || filter === PDFNull) return [];
  if (filter instanceof PDFName) return [filter.decodeText()];
  if (filter instanceof PDFArray) {
    const names: string[] = [];
    for (let i = 0; i < filter.size(); i++) {
      const name = filter.lookup(i);
      if (!(name instanceof PDFName)) return undefined;
      names.push(name.decodeText());
    }
    return names;
  }
  return undefined;
}

/** The /DecodeParms of each filter (undefined where there are none); undefined when malformed. */
export function decodeParmsOf(dict: PDFDict, count: number): (PDFDict | undefined)[] | undefined {
  const parms = dict.lookup(N.DecodeParms);
  if (parms === undefined || parms === PDFNull) return new Array<undefined>(count).fill(undefined);
  if (parms instanceof PDFDict) return count === 1 ? [parms] : undefined;
  if (parms instanceof PDFArray) {
    if (parms.size() !== count) return undefined;
    const list: (PDFDict | undefined)[] = [];
    for (let i = 0; i < count; i++) {
      const item = parms.lookup(i);
      if (item === undefined || item === PDFNull) list.push(undefined);
      else if (item instanceof PDFDict) list.push(item);
      else return undefined;
    }
    return list;
  }
  return undefined;
}

export function numberOf(object: PDFObject | undefined): number | undefined {
  return object instanceof PDFNumber ? object.asNumber() : undefined;
}

/** The largest output chunk `inflate` asks zlib for. */
const MAX_INFLATE_CHUNK = 1024 * 1024;

/**
 * zlib inflate with a ceiling on the output; undefined for damaged data or too much output.
 * `tolerant` accepts data that stops without zlib's end marker (as readers do: some producers
 * only sync-flush), giving what it decodes to. `sized`: the ceiling is the output's size give or
 * take a little (an image's samples), so the output is inflated into one buffer of it.
 */
export function inflate(
  data: Uint8Array,
  maxOutputLength: number,
  tolerant = false,
  sized = false,
): Uint8Array | undefined {
  try {
    return inflateSync(data, {
      maxOutputLength: Math.max(1, maxOutputLength),
      // Output chunks of about four times the input (zlib's 16 KiB by default): each chunk costs a
      // buffer and a turn of Node's loop, and joining them a copy. A 2400 dpi scan's 11 MB of
      // samples inflated in 43 ms in 16 KiB chunks, 10 in 640 KiB ones. Sized, one chunk a byte
      // larger than the ceiling (zlib's output is then never joined, and the last call does not
      // find it full): that scan's first inflate in a fresh process took 72-97 ms of CPU in 640
      // KiB chunks, most of it the join's copy into fresh pages, and 31-36 ms in one; its whole
      // job, at load 15, 491 -> 483 ms (medians of 6, within the noise).
      chunkSize: sized
        ? Math.max(constants.Z_MIN_CHUNK, maxOutputLength + 1)
        : Math.min(MAX_INFLATE_CHUNK, Math.max(constants.Z_DEFAULT_CHUNK, data.length * 4)),
      ...(tolerant ? { finishFlush: constants.Z_SYNC_FLUSH } : {}),
    });
  } catch {
    return undefined;
  }
}

/** zlib deflate, at the highest level unless told otherwise. */
export function deflate(data: Uint8Array, level: number = constants.Z_BEST_COMPRESSION): Uint8Array {
  return deflateSync(data, { level, memLevel: 9 });
}

/** Whether the predictor parameters mean "no predictor". */
export function hasNoPredictor(parms: PDFDict | undefined): boolean {
  return parms === undefined || (numberOf(parms.lookup(N.Predictor)) ?? 1) === 1;
}

/**
 * Decodes a stream's data through all its filters. Returns undefined when a filter is not one of
 * the general ones, a parameter is one we do not apply, the data is damaged, or the output would
 * exceed `maxOutput` bytes. Predictors are applied only with `predictors: true`; `tolerant`: see
 * `inflate`.
 */
export function decodeStreamData(
  stream: PDFRawStream,
  maxOutput: number,
  options: { predictors?: boolean; tolerant?: boolean } = {},
): Uint8Array | undefined {
  const filters = filtersOf(stream.dict);
  const parms = filters && decodeParmsOf(stream.dict, filters.length);
  if (!filters || !parms) return undefined;
  return decodeFilters(stream.contents, filters, parms, stream.dict, maxOutput, options);
}

/**
 * `decodeStreamData` for an explicit list of filters and their parameters. `sized`: `maxOutput` is
 * the output's size give or take a little (an image's samples), and a last Flate is inflated into
 * one buffer of it (`inflate`): inline_image_large's ASCII85 and Flate photograph, 2.4 MB, took
 * 17-22 ms of CPU in 1 MiB chunks and their join, 14.5 ms so.
 */
export function decodeFilters(
  input: Uint8Array,
  filters: readonly string[],
  parms: readonly (PDFDict | undefined)[],
  like: PDFDict,
  maxOutput: number,
  options: { predictors?: boolean; tolerant?: boolean; sized?: boolean } = {},
): Uint8Array | undefined {
  if (filters.some((name) => !GENERAL_FILTERS.has(name))) return undefined;
  let data = input;
  for (let i = 0; i < filters.length; i++) {
    const name = filters[i]!;
    const parm = parms[i];
    if (parm && !hasNoPredictor(parm) && !options.predictors) return undefined;
    if (parm && name !== "FlateDecode" && name !== "LZWDecode") return undefined;
    let out: Uint8Array | undefined;
    if (name === "FlateDecode")
      out = inflate(data, maxOutput, options.tolerant, options.sized && i === filters.length - 1);
    else if (name === "LZWDecode") out = lzwDecode(data, numberOf(parm?.lookup(N.EarlyChange)) ?? 1, maxOutput);
    else if (name === "RunLengthDecode") out = runLengthDecode(data, maxOutput);
    else if (data.length <= MAX_JS_DECODER_INPUT)
      out = name === "ASCII85Decode" ? ascii85Decode(data, maxOutput) : decodeWithPdfLib(like, name, data);
    if (!out || out.length > maxOutput) return undefined;
    if (parm && !hasNoPredictor(parm)) {
      out = unpredict(out, parm);
      if (!out) return undefined;
    }
    data = out;
  }
  return data;
}

export const isGeneralFilter = (name: string) => GENERAL_FILTERS.has(name);

function decodeWithPdfLib(like: PDFDict, filter: string, data: Uint8Array): Uint8Array | undefined {
  try {
    const dict = PDFDict.withContext(like.context);
    dict.set(N.Filter, PDFName.of(filter));
    return decodePDFRawStream(PDFRawStream.of(dict, data)).decode();
  } catch {
    return undefined;
  }
}

/** A byte buffer that refuses to grow past a ceiling. */
class Output {
  private buffer: Uint8Array;
  length = 0;
  private readonly max: number;
  constructor(expected: number, max: number) {
    this.buffer = new Uint8Array(Math.min(Math.max(expected, 1024), max));
    this.max = max;
  }
  /** Reserves `count` bytes and returns where they start, or -1 past the ceiling. */
  reserve(count: number): number {
    const start = this.length;
    if (start + count > this.max) return -1;
    if (start + count > this.buffer.length) {
      const grown = new Uint8Array(Math.min(this.max, Math.max(start + count, this.buffer.length * 2)));
      grown.set(this.buffer.subarray(0, start));
      this.buffer = grown;
    }
    this.length += count;
    return start;
  }
  get bytes(): Uint8Array {
    return this.buffer;
  }
  result(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

/** RunLengthDecode, with a ceiling on the output. */
export function runLengthDecode(data: Uint8Array, maxOutput: number): Uint8Array | undefined {
  const out = new Output(data.length * 2, maxOutput);
  let i = 0;
  while (i < data.length) {
    const length = data[i++]!;
    if (length === 128) break;
    if (length < 128) {
      const at = out.reserve(length + 1);
      if (at < 0 || i + length + 1 > data.length) return undefined;
      out.bytes.set(data.subarray(i, i + length + 1), at);
      i += length + 1;
    } else {
      const at = out.reserve(257 - length);
      if (at < 0 || i >= data.length) return undefined;
      out.bytes.fill(data[i++]!, at, at + 257 - length);
    }
  }
  return out.result();
}

/** LZWDecode (9- to 12-bit codes, most significant bit first), with a ceiling on the output. */
export function lzwDecode(data: Uint8Array, earlyChange: number, maxOutput: number): Uint8Array | undefined {
  const prefix = new Int32Array(4096);
  const suffix = new Uint8Array(4096);
  const first = new Uint8Array(4096);
  const lengths = new Uint16Array(4096);
  for (let c = 0; c < 256; c++) {
    suffix[c] = c;
    first[c] = c;
    lengths[c] = 1;
  }
  const out = new Output(data.length * 3, maxOutput);
  let bitBuffer = 0;
  let bits = 0;
  let pos = 0;
  let width = 9;
  let next = 258;
  let previous = -1;
  for (;;) {
    while (bits < width && pos < data.length) {
      bitBuffer = ((bitBuffer << 8) | data[pos++]!) >>> 0;
      bits += 8;
    }
    if (bits < width) break;
    const code = (bitBuffer >>> (bits - width)) & ((1 << width) - 1);
    bits -= width;
    bitBuffer &= (1 << bits) - 1;
    if (code === 256) {
      width = 9;
      next = 258;
      previous = -1;
      continue;
    }
    if (code === 257) break;
    if (previous >= 0) {
      if (code > next || (code === next && next >= 4096)) return undefined;
      if (next < 4096) {
        prefix[next] = previous;
        suffix[next] = code === next ? first[previous]! : first[code]!;
        first[next] = first[previous]!;
        lengths[next] = lengths[previous]! + 1;
        next++;
      }
    } else if (code > 255) {
      return undefined;
    }
    const length = lengths[code]!;
    const at = out.reserve(length);
    if (at < 0) return undefined;
    for (let c = code, k = at + length - 1; k >= at; k--) {
      out.bytes[k] = suffix[c]!;
      c = prefix[c]!;
    }
    if (next + earlyChange >= 1 << width && width < 12) width++;
    previous = code;
  }
  return out.result();
}

/** The predictor parameters of a filter's /DecodeParms (PDF defaults where absent). */
export function readPredictorParms(parms: PDFDict | undefined): {
  predictor: number;
  colors: number;
  columns: number;
  bpc: number;
} {
  return {
    predictor: numberOf(parms?.lookup(N.Predictor)) ?? 1,
    colors: numberOf(parms?.lookup(N.Colors)) ?? 1,
    columns: numberOf(parms?.lookup(N.Columns)) ?? 1,
    bpc: numberOf(parms?.lookup(N.BitsPerComponent)) ?? 8,
  };
}

/** Undoes the TIFF predictor (2, 8-bit samples) of one row, in place. */
export function untiffRow(row: Uint8Array, bytesPerPixel: number): void {
  for (let i = bytesPerPixel; i < row.length; i++) row[i] = (row[i]! + row[i - bytesPerPixel]!) & 0xff;
}

/**
 * Undoes one row of PNG predictors (10-15): `type` is the row's filter byte, the row's data is
 * `data` from `at`, `previous` the row above decoded (zeros for the first), written to `row`
 * (whose length is the row's). False for a filter type PNG does not define.
 */
export function unpngRow(
  type: number,
  data: Uint8Array,
  at: number,
  previous: Uint8Array,
  row: Uint8Array,
  bytesPerPixel: number,
): boolean {
  const length = row.length;
  const bpp = bytesPerPixel;
  switch (type) {
    case 0:
      row.set(data.subarray(at, at + length));
      return true;
    case 1:
      for (let i = 0; i < length; i++) row[i] = (data[at + i]! + (i >= bpp ? row[i - bpp]! : 0)) & 0xff;
      return true;
    case 2:
      for (let i = 0; i < length; i++) row[i] = (data[at + i]! + previous[i]!) & 0xff;
      return true;
    case 3:
      for (let i = 0; i < length; i++) {
        row[i] = (data[at + i]! + (((i >= bpp ? row[i - bpp]! : 0) + previous[i]!) >> 1)) & 0xff;
      }
      return true;
    case 4:
      for (let i = 0; i < length; i++) {
        const left = i >= bpp ? row[i - bpp]! : 0;
        const up = previous[i]!;
        const upLeft = i >= bpp ? previous[i - bpp]! : 0;
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        row[i] = (data[at + i]! + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft)) & 0xff;
      }
      return true;
    default:
      return false;
  }
}

/** A predictor's rows (bytes a row, bytes a pixel), undefined for parameters we do not handle. */
function predictorLayout(
  parms: PDFDict | undefined,
): { predictor: number; bpc: number; rowLength: number; bytesPerPixel: number } | undefined {
  const { predictor, colors, bpc, columns } = readPredictorParms(parms);
  if (![1, 2, 4, 8, 16].includes(bpc) || colors < 1 || colors > 32 || columns < 1) return undefined;
  return {
    predictor,
    bpc,
    rowLength: Math.ceil((colors * bpc * columns) / 8),
    bytesPerPixel: Math.max(1, Math.ceil((colors * bpc) / 8)),
  };
}

/** Undoes a TIFF (2) or PNG (10-15) predictor; undefined for parameters we do not handle. */
export function unpredict(data: Uint8Array, parms: PDFDict): Uint8Array | undefined {
  const layout = predictorLayout(parms);
  if (!layout) return undefined;
  const { predictor, bpc, rowLength, bytesPerPixel } = layout;
  if (predictor === 1) return data;
  if (predictor === 2) {
    if (bpc !== 8) return undefined;
    const out = Uint8Array.from(data);
    for (let row = 0; row + rowLength <= out.length; row += rowLength) {
      untiffRow(out.subarray(row, row + rowLength), bytesPerPixel);
    }
    return out;
  }
  if (predictor < 10 || predictor > 15) return undefined;
  return unpngRows(data, rowLength, bytesPerPixel)?.samples;
}

/**
 * A stream of one Flate filter decoded whole (zlib's end reached: what `inflate` gives without
 * tolerance), for a later pass to take instead of decoding it again (the image pass's samples,
 * then the lossless bar's candidates: streams/recompress.ts). `samples` are the data with their
 * predictors undone: the inflated data itself without predictors; with PNG predictors, the
 * inflated data is not kept but rebuilt from the samples and each row's filter (`inflatedBytes`),
 * so that holding the decoding costs no more than the samples.
 */
export interface FlateDecoding {
  /** The stored data it was decoded from. */
  contents: Uint8Array;
  /** The inflated data's length. */
  length: number;
  samples: Uint8Array;
  png?: { types: Uint8Array; rowLength: number; bytesPerPixel: number };
}

/**
 * `decodeFilters(input, ["FlateDecode"], [parm], …, { predictors: true })`'s samples as a
 * FlateDecoding; undefined where that would be undefined, and also (the caller then decodes as
 * before) for data that does not reach zlib's end, predictors other than none and PNG's, and
 * predicted data that is not whole rows.
 */
export function decodeFlate(
  input: Uint8Array,
  parm: PDFDict | undefined,
  maxOutput: number,
): FlateDecoding | undefined {
  const data = inflate(input, maxOutput, false, true);
  if (!data || data.length > maxOutput) return undefined;
  if (hasNoPredictor(parm)) return { contents: input, length: data.length, samples: data };
  const layout = predictorLayout(parm);
  if (!layout || layout.predictor < 10 || layout.predictor > 15) return undefined;
  const { rowLength, bytesPerPixel } = layout;
  if (data.length % (rowLength + 1) !== 0) return undefined;
  const undone = unpngRows(data, rowLength, bytesPerPixel);
  if (!undone) return undefined;
  return {
    contents: input,
    length: data.length,
    samples: undone.samples,
    png: { types: undone.types, rowLength, bytesPerPixel },
  };
}

/** Bytes [from, to) of a decoding's inflated data (its samples, or their rows' PNG filters applied again). */
export function inflatedBytes(decoding: FlateDecoding, from = 0, to = decoding.length): Uint8Array {
  const { png, samples } = decoding;
  if (!png) return samples.subarray(from, to);
  const { types, rowLength, bytesPerPixel } = png;
  const stride = rowLength + 1;
  const first = Math.floor(from / stride);
  const end = Math.min(types.length, Math.ceil(to / stride));
  const out = pngFilterRows(samples, types, rowLength, bytesPerPixel, first, end);
  return out.subarray(from - first * stride, to - first * stride);
}
