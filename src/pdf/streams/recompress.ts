// Lossless stream work: every stream decodes to exactly the same bytes afterwards.
//
// - unfiltered streams get Flate;
// - chains of general filters without parameters (ASCIIHex, ASCII85, LZW, RunLength, Flate) become
//   one Flate at the highest level;
// - a Flate stream with a predictor is re-deflated, its predicted data and /DecodeParms kept;
// - the samples of 8- and 16-bit images behind general filters are also tried with a PNG
//   predictor chosen row by row (as PNG encoders do): photographs, scans and gradients stored
//   as plain Flate often shrink by a quarter. The samples, and so the pixels, stay the same.
// - JPEGs (DCTDecode, possibly behind general filters) get Huffman tables made for them (codecs/jpeg.ts):
//   the same coefficients, so the same pixels, in 5 to 20 % fewer bytes. The ICC profile a JPEG
//   embeds is dropped when the image's colour space is ICCBased (readers use that one).
// A result replaces the stream only when it is smaller. Streams we cannot decode in full (damaged
// data, more than `maxDecoded` bytes) are left as they are. XMP metadata is compressed too, except
// in PDF/A files (the standard wants it readable as it is).
import { constants, createDeflate, deflate as deflateOnPool } from "node:zlib";
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import {
  decodeFilters,
  decodeParmsOf,
  deflate,
  filtersOf,
  hasNoPredictor,
  inflate,
  inflatedBytes,
  isGeneralFilter,
  N,
  numberOf,
  unpredict,
} from "./filters.ts";
import type { FlateDecoding } from "./filters.ts";
import { pngPredictRows } from "./png.ts";
import { codedBytesAtLeast, optimiseJpeg, optimisedJpegSizeAtLeast, withoutIccProfile } from "../codecs/jpeg.ts";

/** Default ceiling on what one stream may decode to (the caller sets one from the input's size). */
const MAX_DECODED = 128 * 1024 * 1024;
/** What a /Filter /FlateDecode entry costs in the dictionary. */
const FILTER_ENTRY_BYTES = 20;
/** What /DecodeParms << /Predictor 15 /Colors 3 /BitsPerComponent 8 /Columns 1234 >> costs. */
const PREDICTOR_ENTRY_BYTES = 80;
/** Images with fewer sample bytes than this are not worth a predictor. */
const MIN_PREDICTOR_BYTES = 4096;
/** JPEGs smaller than this are not worth new Huffman tables. */
const MIN_JPEG_BYTES = 2048;
/** Data above this size is probed before it is deflated (see `deflateBest`). */
const PROBE_ABOVE = 512 * 1024;
const PROBE_BYTES = 256 * 1024;
/** How far ahead of the largest size asked `deflateInBackground` runs: this times it. */
const AHEAD = 2;
/**
 * The lossless bar deflates large data at this level first (level 9 took 0.83 s on scan_2400dpi's
 * 11 MB of samples, where level 6 took 0.08 s for 17 % more bytes)...
 */
const QUICK_LEVEL = 6;
/**
 * ...and takes level 9's encoding to be at least this share of level 6's: the two differ only in
 * how hard zlib looks for matches (on the corpus's large images level 9 came to 0.86-1.0 of level 6).
 */
const LEVEL_9_SHARE = 0.5;

export interface StreamReport {
  streams: number;
  recompressed: number;
  bytesBefore: number;
  bytesAfter: number;
}

export interface StreamOptions {
  /** Streams to leave alone (images just re-encoded). */
  skip?: ReadonlySet<PDFRawStream>;
  /** Leave XMP metadata unfiltered (PDF/A). */
  plainMetadata?: boolean;
  /** Streams that would decode to more bytes than this are left as they are. */
  maxDecoded?: number;
}

/** How an image's samples are laid out, when a PNG predictor can be applied to them. */
interface Layout {
  colors: number;
  bitsPerComponent: 8 | 16;
  columns: number;
  rowBytes: number;
  rows: number;
}

const COLORS: Record<string, number> = {
  DeviceGray: 1,
  CalGray: 1,
  Indexed: 1,
  Separation: 1,
  DeviceRGB: 3,
  CalRGB: 3,
  Lab: 3,
  DeviceCMYK: 4,
};

function colorsOf(space: PDFObject | undefined, context: PDFContext): number | undefined {
  const cs = space === undefined ? undefined : context.lookup(space);
  if (cs instanceof PDFName) return COLORS[cs.decodeText()];
  if (!(cs instanceof PDFArray) || cs.size() < 1) return undefined;
  const family = cs.lookup(0);
  if (!(family instanceof PDFName)) return undefined;
  const name = family.decodeText();
  if (name === "ICCBased") {
    const profile = cs.lookup(1);
    const n = profile instanceof PDFRawStream ? numberOf(profile.dict.lookup(N.N)) : undefined;
    return n !== undefined && Number.isInteger(n) && n >= 1 && n <= 32 ? n : undefined;
  }
  if (name === "DeviceN") {
    const names = cs.lookup(1);
    return names instanceof PDFArray && names.size() >= 1 && names.size() <= 32 ? names.size() : undefined;
  }
  return COLORS[name];
}

/** The bytes an image's samples take, when its dictionary says (undefined: not an image, or unknown). */
function sampleBytes(dict: PDFDict): number | undefined {
  if (dict.lookup(N.Subtype) !== N.Image) return undefined;
  const bpc = dict.has(N.ImageMask) ? 1 : numberOf(dict.lookup(N.BitsPerComponent));
  const width = numberOf(dict.lookup(N.Width));
  const height = numberOf(dict.lookup(N.Height));
  const colors = dict.has(N.ImageMask) ? 1 : colorsOf(dict.get(N.ColorSpace), dict.context);
  if (!bpc || !width || !height || !colors) return undefined;
  return Math.ceil((width * colors * bpc) / 8) * height;
}

function layoutOf(stream: PDFRawStream): Layout | undefined {
  const { dict } = stream;
  if (dict.lookup(N.Subtype) !== N.Image || dict.has(N.ImageMask)) return undefined;
  const bpc = numberOf(dict.lookup(N.BitsPerComponent));
  const width = numberOf(dict.lookup(N.Width));
  const height = numberOf(dict.lookup(N.Height));
  if ((bpc !== 8 && bpc !== 16) || !width || !height || !Number.isInteger(width) || !Number.isInteger(height)) {
    return undefined;
  }
  if (width < 1 || height < 1) return undefined;
  const colors = colorsOf(dict.get(N.ColorSpace), dict.context);
  if (!colors) return undefined;
  const rowBytes = (width * colors * bpc) / 8;
  return { colors, bitsPerComponent: bpc, columns: width, rowBytes, rows: height };
}

/**
 * PNG prediction, the filter of each row chosen by the smallest sum of absolute differences
 * (the heuristic of libpng): `rows` rows of `rowBytes` bytes become rows of 1 + rowBytes. With
 * `from` and `to`: those rows only, the same bytes as in the whole.
 */
export function pngPredict(samples: Uint8Array, layout: Layout, from = 0, to = layout.rows): Uint8Array {
  const bpp = Math.max(1, (layout.colors * layout.bitsPerComponent) / 8);
  return pngPredictRows(samples, layout.rowBytes, bpp, from, to);
}

/** A /DecodeParms dictionary for data written with PNG predictors (15: chosen row by row) in `layout`. */
function pngPredictorDecodeParms(context: PDFContext, layout: Layout): PDFDict {
  const parms = PDFDict.withContext(context);
  parms.set(N.Predictor, PDFNumber.of(15));
  parms.set(N.Colors, PDFNumber.of(layout.colors));
  parms.set(N.BitsPerComponent, PDFNumber.of(layout.bitsPerComponent));
  parms.set(N.Columns, PDFNumber.of(layout.columns));
  return parms;
}

/** Where the probe's sample of data of this length starts (the middle PROBE_BYTES). */
const sampleStart = (length: number) => Math.max(0, Math.floor((length - PROBE_BYTES) / 2));

/** How well a candidate's sample deflates at the default level (compressed / raw). */
function sampleRatio(candidate: Candidate): number {
  const sample = candidate.sample();
  return sample.length === 0 ? 1 : deflate(sample, 6).length / sample.length;
}

/** A new encoding: data, its filter, and the /DecodeParms to go with it ("keep": the stream's own). */
interface Encoding {
  data: Uint8Array;
  filter: PDFName;
  parms: PDFDict | "keep" | undefined;
}

const costOf = (encoding: Encoding) =>
  encoding.data.length + (encoding.parms instanceof PDFDict ? PREDICTOR_ENTRY_BYTES : 0);

/**
 * Data to deflate, with the /DecodeParms that go with it ("keep": the stream's own), worked out
 * when needed: the probe's sample of it (see `probed`) costs far less than the whole.
 */
interface Candidate {
  length: number;
  bytes: () => Uint8Array;
  /** `bytes()` from sampleStart(length), PROBE_BYTES of them at most. */
  sample: () => Uint8Array;
  parms: PDFDict | "keep" | undefined;
}

function asIs(data: Uint8Array, parms: Candidate["parms"]): Candidate {
  const start = sampleStart(data.length);
  return { length: data.length, bytes: () => data, sample: () => data.subarray(start, start + PROBE_BYTES), parms };
}

/**
 * The image's samples, PNG-predicted, when it is an image we can lay out. Only the rows of the
 * probe's sample are predicted for it: most large images are scans and photographs, which deflate
 * better as they are, and predicting a 4000 x 2864 scan takes 140 ms.
 */
function predicted(samples: Uint8Array, stream: PDFRawStream): Candidate | undefined {
  const layout = layoutOf(stream);
  if (!layout || samples.length !== layout.rowBytes * layout.rows || samples.length < MIN_PREDICTOR_BYTES) {
    return undefined;
  }
  const row = layout.rowBytes + 1;
  const length = layout.rows * row;
  let whole: Uint8Array | undefined;
  const bytes = () => (whole ??= pngPredict(samples, layout));
  const sample = () => {
    const start = sampleStart(length);
    const end = Math.min(length, start + PROBE_BYTES);
    const from = Math.floor(start / row);
    const rows = pngPredict(samples, layout, from, Math.ceil(end / row));
    return rows.subarray(start - from * row, end - from * row);
  };
  return { length, bytes, sample, parms: pngPredictorDecodeParms(stream.dict.context, layout) };
}

/**
 * The candidates worth deflating in full. Large data is probed first: a sample of each is deflated
 * at the default level, only the best is kept, and none when even that sample does not shrink
 * (noise, or data compressed some other way).
 */
function probed(candidates: (Candidate | undefined)[]): Candidate[] {
  const pool = candidates.filter((candidate): candidate is Candidate => candidate !== undefined);
  if (!pool.some((candidate) => candidate.length > PROBE_ABOVE)) return pool;
  const ratios = pool.map(sampleRatio);
  const best = ratios.indexOf(Math.min(...ratios));
  return ratios[best]! > 0.995 ? [] : [pool[best]!];
}

/** The smallest Flate encoding of the candidates `probed` kept. */
function deflateBest(pool: Candidate[]): Encoding | undefined {
  let result: Encoding | undefined;
  for (const { bytes, parms } of pool) {
    const encoding: Encoding = { data: deflate(bytes()), filter: N.FlateDecode, parms };
    if (!result || costOf(encoding) < costOf(result)) result = encoding;
  }
  return result;
}

/** Whether an image's colour space is ICCBased: it carries the profile readers use for it. */
function hasIccColourSpace(dict: PDFDict): boolean {
  const cs = dict.lookup(N.ColorSpace);
  return (
    cs instanceof PDFArray && cs.size() >= 2 && cs.lookup(0) === N.ICCBased && cs.lookup(1) instanceof PDFRawStream
  );
}

/**
 * The JPEG a DCTDecode stream holds (its general filters undone), without its embedded ICC
 * profile when the image's colour space carries one; undefined when it is not one we rewrite.
 */
function storedJpeg(
  stream: PDFRawStream,
  filters: string[],
  parms: (PDFDict | undefined)[],
  maxDecoded: number,
): { jpeg: Uint8Array; stripped: boolean } | undefined {
  const outer = filters.slice(0, -1);
  if (parms.slice(0, -1).some((parm) => parm !== undefined)) return undefined;
  const jpeg =
    outer.length === 0 ? stream.contents : decodeFilters(stream.contents, outer, [], stream.dict, maxDecoded);
  if (!jpeg || jpeg.length < MIN_JPEG_BYTES) return undefined;
  const stripped = hasIccColourSpace(stream.dict) ? withoutIccProfile(jpeg) : undefined;
  return { jpeg: stripped ?? jpeg, stripped: stripped !== undefined };
}

/**
 * A JPEG (behind general filters or not) with optimal Huffman tables, as a plain DCTDecode
 * stream; without its embedded ICC profile when the image's colour space carries one. Not tried
 * when it could not be smaller than the stream (a near-blank page's JPEG behind Flate: 2 KB for a
 * JPEG whose blocks alone take more, 0.15 s of decoding and coding for nothing).
 */
function optimisedJpeg(
  stream: PDFRawStream,
  filters: string[],
  parms: (PDFDict | undefined)[],
  maxDecoded: number,
): Encoding | undefined {
  const stored = storedJpeg(stream, filters, parms, maxDecoded);
  if (!stored || codedBytesAtLeast(stored.jpeg) >= stream.contents.length) return undefined;
  const optimised = optimiseJpeg(stored.jpeg) ?? (stored.stripped ? stored.jpeg : undefined);
  if (!optimised) return undefined;
  const parm = parms.at(-1);
  return { data: optimised, filter: N.DCTDecode, parms: filters.length === 1 ? "keep" : parm };
}

const isJpegStream = (filters: readonly string[]): boolean =>
  filters.at(-1) === "DCTDecode" && filters.slice(0, -1).every(isGeneralFilter);

/**
 * The stream's lossless re-encoding when it needs no Flate of ours (a JPEG's, or none), else the
 * candidates to deflate (`probed`): `recompress` without its costly part.
 */
function plan(stream: PDFRawStream, maxDecoded: number, decoded?: FlateDecoding): Encoding | undefined | Candidate[] {
  const { dict, contents } = stream;
  const filters = filtersOf(dict);
  const parms = filters && decodeParmsOf(dict, filters.length);
  if (!filters || !parms) return undefined;
  if (isJpegStream(filters)) return optimisedJpeg(stream, filters, parms, maxDecoded);
  // An image too large to decode within the ceiling is not even tried.
  if ((sampleBytes(dict) ?? 0) > maxDecoded) return undefined;
  const flate = filters.length === 1 && filters[0] === "FlateDecode";
  // What the caller decoded already: the inflate below would give it (whole, within the ceiling).
  const known = flate && decoded?.contents === contents ? decoded : undefined;
  if (known && known.length > maxDecoded) return undefined;
  if (flate && !hasNoPredictor(parms[0])) {
    if (known?.png) return probed([inflatedOf(known), predicted(known.samples, stream)]);
    const data = inflate(contents, maxDecoded);
    if (!data) return undefined;
    const samples = unpredict(data, parms[0]!);
    return probed([asIs(data, "keep"), samples && predicted(samples, stream)]);
  }
  if (!parms.every((parm) => parm === undefined)) return undefined;
  if (filters.length === 0 && dict.has(N.DecodeParms)) return undefined;
  const data =
    filters.length === 0
      ? contents
      : known && !known.png
        ? known.samples
        : decodeFilters(contents, filters, parms, dict, maxDecoded);
  if (!data) return undefined;
  return probed([asIs(data, undefined), predicted(data, stream)]);
}

/**
 * The inflated data of a decoding with predictors, as `asIs` of it would be: rebuilt from its
 * samples when wanted (only the probe's rows for the probe).
 */
function inflatedOf(decoded: FlateDecoding): Candidate {
  const { length } = decoded;
  let whole: Uint8Array | undefined;
  const start = sampleStart(length);
  return {
    length,
    bytes: () => (whole ??= inflatedBytes(decoded)),
    sample: () => whole?.subarray(start, start + PROBE_BYTES) ?? inflatedBytes(decoded, start, start + PROBE_BYTES),
    parms: "keep",
  };
}

function recompress(stream: PDFRawStream, maxDecoded: number): Encoding | undefined {
  const planned = plan(stream, maxDecoded);
  return Array.isArray(planned) ? deflateBest(planned) : planned;
}

/**
 * Encodings already worked out for a stream's data (by `losslessBar`), so that the stream pass
 * does not work them out again; keyed by the data, which a replaced stream no longer has.
 */
const encodings = new WeakMap<Uint8Array, Encoding | null>();

function recompressOnce(stream: PDFRawStream, maxDecoded: number): Encoding | undefined {
  let encoded = encodings.get(stream.contents);
  if (encoded === undefined) encodings.set(stream.contents, (encoded = recompress(stream, maxDecoded) ?? null));
  return encoded ?? undefined;
}

/**
 * `deflate` (the highest level) of data a pass stores as a plain Flate stream (no /DecodeParms,
 * not an image): the stream pass would inflate it and deflate the same data the same way, for
 * the same bytes, and keep the stream as it is; it is told so and does not (fonts/subset.ts:
 * subset and converted font programs, each deflated twice at the highest level before).
 */
export function deflateAsStored(data: Uint8Array): Uint8Array {
  const stored = deflate(data);
  encodings.set(stored, null);
  return stored;
}

/** What the stream is stored in after `recompressStreams`, given its re-encoding. */
const storedSize = (stream: PDFRawStream, encoded: Encoding | null | undefined) =>
  encoded ? Math.min(encoded.data.length, stream.contents.length) : stream.contents.length;

/**
 * `deflate` (filters.ts: the highest level, memLevel 9) on the libuv thread pool, its output
 * counted as it comes: `longerThan(n)` answers as soon as more than n bytes have come out (so the
 * whole encoding is longer) or the encoding is whole, `whole` once it is. zlib is handed the whole
 * data with Z_FINISH and 16 KiB of room at a time, the calls deflateSync makes, so the bytes are
 * the ones `deflate` returns. It runs at most `AHEAD` times the largest size asked ahead of the
 * questions (the next one is most often a little larger), then waits for one.
 */
export function deflateInBackground(data: Uint8Array, level: number = constants.Z_BEST_COMPRESSION) {
  const zlib = createDeflate({ level, memLevel: 9, flush: constants.Z_FINISH });
  const chunks: Buffer[] = [];
  let length = 0;
  let whole: Uint8Array | undefined;
  let failed = false;
  let asked = 0;
  const waiting: { size: number; answer: (longer: boolean | undefined) => void }[] = [];
  const settle = () => {
    for (const question of [...waiting]) {
      const answer = failed ? undefined : length > question.size ? true : whole ? false : null;
      if (answer === null) continue;
      waiting.splice(waiting.indexOf(question), 1);
      question.answer(answer);
    }
    if (waiting.length === 0 && length > AHEAD * asked) zlib.pause();
  };
  zlib.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
    settle();
  });
  zlib.on("end", () => {
    whole = Buffer.concat(chunks, length);
    chunks.length = 0;
    settle();
  });
  zlib.on("error", () => {
    failed = true;
    settle();
  });
  // Closed before its end (close() below): a question still waiting is answered undefined, not left.
  zlib.on("close", () => {
    if (whole) return;
    failed = true;
    settle();
  });
  zlib.end(data);
  return {
    /** Whether the whole encoding is longer than `size` bytes (undefined: zlib failed). */
    longerThan(size: number): Promise<boolean | undefined> {
      asked = Math.max(asked, size);
      return new Promise((answer) => {
        waiting.push({ size, answer });
        settle();
        if (waiting.length > 0) zlib.resume();
      });
    },
    whole: () => whole,
    /** Stops the encoding and frees zlib's state: its answers are no longer wanted. */
    close: () => zlib.close(),
  };
}

/**
 * A stream's lossless bar: whether a size is at least what the stream would be stored in after
 * `recompressStreams` (its own size when that keeps it), the bar a stronger profile's image must
 * stay under. Worked out only as far as the questions need: large data (the one candidate `probed`
 * keeps) is deflated on the thread pool while the caller goes on, and a size is answered as soon as
 * more bytes than it have come out, which proves the whole encoding longer: a downsampled
 * candidate of a scan is most often a fraction of it. Level 6 is asked first (QUICK_LEVEL): a size
 * under half of what it has made is answered without level 9. scan_2400dpi's five candidates (14
 * to 56 KB, against 136 KB) waited 0.55 s for level 9's first 40 KB; level 6 answers them in some
 * 40 ms. The whole encoding, once worked out, is kept for the stream pass. A JPEG's bar is a bound
 * (`jpegBound`).
 */
export function losslessBar(
  stream: PDFRawStream,
  maxDecoded = MAX_DECODED,
  decoded?: FlateDecoding,
): (size: number) => Promise<boolean> {
  const own = stream.contents.length;
  /** What the stream is stored in, once known (for a JPEG: the bound). */
  let stored: number | undefined;
  /**
   * Else the candidate deflated in the background: at QUICK_LEVEL first, at level 9 once a size
   * asked is not far enough below the quick encoding to be sure of the answer.
   */
  let background:
    | {
        candidate: Candidate;
        quick: ReturnType<typeof deflateInBackground> | undefined;
        deflating?: ReturnType<typeof deflateInBackground>;
      }
    | undefined;
  const keep = (encoded: Encoding | undefined) => {
    encodings.set(stream.contents, encoded ?? null);
    return storedSize(stream, encoded);
  };
  /** Works out what is cheap to: all but the deflate of large data. */
  const start = () => {
    const cached = encodings.get(stream.contents);
    stored = cached === undefined ? jpegBound(stream, maxDecoded) : storedSize(stream, cached);
    if (stored !== undefined) return;
    const planned = plan(stream, maxDecoded, decoded);
    if (!Array.isArray(planned)) stored = keep(planned);
    else if (planned.length === 1 && planned[0]!.length > PROBE_ABOVE) {
      background = { candidate: planned[0]!, quick: deflateInBackground(planned[0]!.bytes(), QUICK_LEVEL) };
    } else stored = keep(deflateBest(planned));
  };
  return async (size) => {
    if (size >= own) return true;
    if (stored === undefined && !background) start();
    if (stored === undefined && background) {
      // Level 9 comes to at least LEVEL_9_SHARE of the quick level's bytes: a size below that share
      // of what the quick level has made so far is below level 9's whole encoding.
      if (background.quick && (await background.quick.longerThan(size / LEVEL_9_SHARE))) return false;
      // Level 9 answers from here on: the quick encoding would otherwise run on ahead for nothing.
      background.quick?.close();
      background.quick = undefined;
      const { candidate } = background;
      const deflating = (background.deflating ??= deflateInBackground(candidate.bytes()));
      const longer = await deflating.longerThan(size);
      const whole = deflating.whole();
      if (whole) stored = keep({ data: whole, filter: N.FlateDecode, parms: candidate.parms });
      // zlib failed on the thread pool (it does not): deflated here instead.
      else if (longer === undefined) stored = keep(deflateBest([candidate]));
      // More bytes than `size` came out: the whole encoding, and the stream (larger still), are longer.
      else return !longer;
    }
    return size >= stored!;
  };
}

/**
 * For a JPEG stream (undefined for others), at most what `recompressStreams` stores it in, and close
 * to it (within the bytes its coded data stuffs after 0xFF, some 0.3 %), for a bar that need not be
 * exact: its new Huffman tables are worked out and its coded bits counted in one pass, instead of
 * written and checked in three.
 */
function jpegBound(stream: PDFRawStream, maxDecoded: number): number | undefined {
  const filters = filtersOf(stream.dict);
  const parms = filters && decodeParmsOf(stream.dict, filters.length);
  if (!filters || !parms || !isJpegStream(filters)) return undefined;
  const stored = storedJpeg(stream, filters, parms, maxDecoded);
  if (!stored || codedBytesAtLeast(stored.jpeg) >= stream.contents.length) return stream.contents.length;
  const size = optimisedJpegSizeAtLeast(stored.jpeg);
  if (size === undefined)
    return stored.stripped ? Math.min(stored.jpeg.length, stream.contents.length) : stream.contents.length;
  return Math.min(size, stream.contents.length);
}

/** Attachments being deflated on the thread pool (`deflateAttachmentsAhead`), and when they all have ended. */
export interface AttachmentsAhead {
  streams: ReadonlySet<PDFRawStream>;
  done: Promise<void>;
}

/**
 * `deflate` (the highest level, memLevel 9) of the whole data as one task of the libuv thread pool
 * (undefined if zlib failed): its output buffer holds the whole encoding, so zlib never waits for
 * the main thread to hand it the next one (in 16 KiB chunks, as `deflateInBackground` does, it
 * stalled whenever the main thread was busy). zlib's output does not depend on how its room is
 * handed out: the same bytes as `deflate`.
 */
function deflateWhole(data: Uint8Array): Promise<Uint8Array | undefined> {
  const room = data.length + (data.length >> 10) + 1024;
  return new Promise((resolve) => {
    deflateOnPool(data, { level: constants.Z_BEST_COMPRESSION, memLevel: 9, chunkSize: room }, (error, result) =>
      resolve(error ? undefined : result),
    );
  });
}

const EF = PDFName.of("EF");
const FS = PDFName.of("FS");
const NAMES = PDFName.of("Names");

/**
 * The streams of the document's attachments: the values of file specifications' /EF, the
 * specifications indirect objects, or direct in an annotation's /FS or a name tree's /Names.
 */
function attachmentStreams(context: PDFContext): Set<PDFRawStream> {
  const found = new Set<PDFRawStream>();
  const spec = (object: PDFObject | undefined) => {
    if (!(object instanceof PDFDict)) return;
    const ef = object.lookup(EF);
    if (!(ef instanceof PDFDict)) return;
    ef.values().forEach((value) => {
      const stream = context.lookup(value);
      if (stream instanceof PDFRawStream) found.add(stream);
    });
  };
  const objects = context.enumerateIndirectObjects();
  for (let i = 0; i < objects.length; i++) {
    const object = objects[i]![1];
    if (!(object instanceof PDFDict)) continue;
    spec(object);
    spec(object.get(FS));
    const names = object.get(NAMES);
    if (names instanceof PDFArray) for (let k = 1; k < names.size(); k += 2) spec(names.get(k));
  }
  return found;
}

/**
 * Starts deflating the large attachments (the file specifications' /EF streams) on the libuv
 * thread pool, for the stream pass's encoding of each to be ready when it comes: the passes in
 * between (fonts, images, content) leave attachments as they are, and the main thread runs them
 * meanwhile. The same plan and the same level-9 bytes as `recompress`, kept where
 * `recompressOnce` finds them. Resolves once each has ended (never rejects: one whose deflate
 * failed is left to the stream pass).
 */
export function deflateAttachmentsAhead(context: PDFContext, maxDecoded = MAX_DECODED): AttachmentsAhead {
  const waits: Promise<void>[] = [];
  const streams = new Set<PDFRawStream>();
  attachmentStreams(context).forEach((stream) => {
    const { contents } = stream;
    // Streams the stream pass leaves alone (metadata is no attachment), or has an encoding of already.
    if (leftAsTheyAre(stream, true) || encodings.has(contents)) return;
    let planned: ReturnType<typeof plan>;
    try {
      planned = plan(stream, maxDecoded);
    } catch {
      return; // the stream pass meets the same error
    }
    if (!Array.isArray(planned)) encodings.set(contents, planned ?? null);
    // Small data (several candidates, or none over the probe's size): deflated here, as the stream pass would.
    else if (planned.length !== 1 || planned[0]!.length <= PROBE_ABOVE) {
      encodings.set(contents, deflateBest(planned) ?? null);
    } else {
      const { bytes, parms } = planned[0]!;
      streams.add(stream);
      waits.push(
        deflateWhole(bytes()).then((data) => {
          if (data && !encodings.has(contents)) encodings.set(contents, { data, filter: N.FlateDecode, parms });
        }),
      );
    }
  });
  return { streams, done: Promise.all(waits).then(() => undefined) };
}

/** Re-encodes the document's streams losslessly where that makes them smaller. */
export function recompressStreams(context: PDFContext, options: StreamOptions = {}): StreamReport {
  return recompressStreamsBut(context, options).report;
}

/**
 * `recompressStreams`, with the streams `deflateAttachmentsAhead` deflates worked on last, once
 * their deflates have ended: the other streams' work (a JPEG's new Huffman tables, deflates of
 * their own) runs on the main thread meanwhile. The same encodings, so the same bytes.
 */
export async function recompressStreamsAfter(
  context: PDFContext,
  options: StreamOptions,
  ahead: AttachmentsAhead,
): Promise<StreamReport> {
  const { report, deferred } = recompressStreamsBut(context, options, ahead.streams);
  await ahead.done;
  for (const stream of deferred) recompressStream(stream, options, report);
  return report;
}

/** `recompressStreams`, but the streams in `later` are left and returned as they come in the document. */
function recompressStreamsBut(
  context: PDFContext,
  options: StreamOptions,
  later?: ReadonlySet<PDFRawStream>,
): { report: StreamReport; deferred: PDFRawStream[] } {
  const report: StreamReport = { streams: 0, recompressed: 0, bytesBefore: 0, bytesAfter: 0 };
  const deferred: PDFRawStream[] = [];
  for (const [, stream] of context.enumerateIndirectObjects()) {
    if (!(stream instanceof PDFRawStream) || options.skip?.has(stream)) continue;
    if (later?.has(stream)) deferred.push(stream);
    else recompressStream(stream, options, report);
  }
  return { report, deferred };
}

/**
 * Streams the stream pass leaves as they are: cross-reference and object streams (the writer
 * rewrites them), /F streams (their data lives in another file), and XMP metadata that must stay
 * plain.
 */
function leftAsTheyAre(stream: PDFRawStream, plainMetadata: boolean | undefined): boolean {
  const type = stream.dict.lookup(N.Type);
  return type === N.XRef || type === N.ObjStm || stream.dict.has(N.F) || (type === N.Metadata && !!plainMetadata);
}

function recompressStream(stream: PDFRawStream, options: StreamOptions, report: StreamReport): void {
  if (leftAsTheyAre(stream, options.plainMetadata)) return;
  report.streams++;
  const encoded = recompressOnce(stream, options.maxDecoded ?? MAX_DECODED);
  const before = stream.contents.length;
  const hadFilter = stream.dict.has(N.Filter);
  const hadParms = stream.dict.has(N.DecodeParms);
  if (!encoded) return;
  const overhead =
    (hadFilter ? 0 : FILTER_ENTRY_BYTES) + (encoded.parms instanceof PDFDict && !hadParms ? PREDICTOR_ENTRY_BYTES : 0);
  if (encoded.data.length + overhead >= before) return;
  stream.dict.set(N.Filter, encoded.filter);
  if (encoded.parms !== "keep") {
    if (encoded.parms) stream.dict.set(N.DecodeParms, encoded.parms);
    else stream.dict.delete(N.DecodeParms);
  }
  stream.updateContents(encoded.data);
  report.recompressed++;
  report.bytesBefore += before;
  report.bytesAfter += encoded.data.length;
}
