// Mixed raster content for page images of scanned text: a text mask at the image's own
// resolution (bi-tonal, coded losslessly by ./bitonal.ts), painted in one colour over a background
// at a fraction of the resolution with the text taken out (JPEG). Readers compose the two with
// the PDF's own means: the image becomes a form that draws the background image (or fills the
// page image's square with the paper's colour when the background is flat) and then the mask as
// a stencil (/ImageMask) in the text's colour. (The Internet Archive's archive-pdf-tools and
// DjVu split pages the same way; their foreground layer of colours is left out here: text of
// several colours is not taken out.)
//
// Segmentation (`segment`): the paper's level is the brightest common luminance, the ink's the
// darkest common one, and a pixel is text where it is darker than half-way. Blocks of the page
// where many pixels lie between paper and ink (photographs, shading, gradients) are pictures:
// no text is taken from them, and they stay in the background as they are drawn. The
// background is the page averaged over blocks of `factor` x `factor` pixels leaving out text
// pixels and their neighbours, and a block that is all text takes its neighbours' colour.
import { PDFName, PDFNumber } from "@cantoo/pdf-lib";
import type { PDFContext, PDFRawStream, PDFRef } from "@cantoo/pdf-lib";
import { decodeJpeg, encodeJpeg, release } from "./codecs.ts";
import type { JpegEffort, Pixels } from "./codecs.ts";
import { encodeBitonal } from "./bitonal.ts";
import type { BitonalEffort, BitonalEncoding } from "./bitonal.ts";
import { rowBytesOf } from "../codecs/jbig2.ts";
import { kernels, scratch } from "./kernels.ts";
import { luminance } from "./quality.ts";
import type { RowSource } from "./quality.ts";
import type { Bits } from "../codecs/jbig2.ts";

/** Source rows are copied to the kernels' memory this many bytes at a time, at most (whole rows). */
const SOURCE_BLOCK_BYTES = 256 * 1024;
/** Blocks the picture test looks at, in pixels square. */
const BLOCK = 32;
/** A block with more than this fraction of its pixels between paper and ink is a picture. */
const PICTURE_MID_SHARE = 0.3;
/** Pictures covering less than this share of the page's blocks do not hold its background's resolution. */
const MIN_PICTURE_SHARE = 0.01;
/** A block beside a picture is part of it unless more than this share of it is paper. */
const PAPER_SHARE = 0.5;
/** Paper and ink must differ by at least this much luminance for there to be text to take. */
const MIN_CONTRAST = 96;

export interface Segmentation {
  /** The mask's samples (1 bit, 0 where there is text), as an /ImageMask stencil paints them. */
  mask: Bits;
  /** Pixels of text in the mask. */
  ink: number;
  /** Blocks taken as pictures (their pixels stay in the background), of how many. */
  pictures: number;
  blocks: number;
  /** The text's colour, in the image's components. */
  colour: number[];
}

export interface Background {
  /** The page without its text, reduced by `factor` on each axis. */
  pixels: Pixels;
  factor: number;
  /** Its colour when it is one colour (within a few levels): then it is drawn as a fill. */
  flat: number[] | undefined;
}

/** The luminance at which a share `q` of the pixels is darker. */
function percentile(histogram: Uint32Array, total: number, q: number): number {
  let seen = 0;
  for (let v = 0; v < 256; v++) {
    seen += histogram[v]!;
    if (seen >= total * q) return v;
  }
  return 255;
}

/**
 * Splits a page image (1 or 3 components) into text, its colour and a background reduced by
 * `factor`; undefined when there is no text to take (no contrast, or nothing dark outside
 * pictures). A few simple loops over the pixels: luminance and its histogram; the mask with,
 * per block, its share of middle tones and its text's colour; the background (on a sample).
 */
export function segment(pixels: Pixels): Segmentation | undefined {
  const { width, height, data } = pixels;
  const n = pixels.components;
  if (n !== 1 && n !== 3) return undefined;
  // The rows go through the kernels' memory a block at a time (their luminance a row at a time):
  // no full-size luminance copy is made. The mask (an eighth of a byte a pixel) and the blocks'
  // counts stay there until the end.
  const rowBytes = rowBytesOf(width);
  const bw = Math.ceil(width / BLOCK);
  const bh = Math.ceil(height / BLOCK);
  const memory = scratch.reset();
  const blockRows = Math.max(1, Math.floor(SOURCE_BLOCK_BYTES / (width * n)));
  const source = memory.take(blockRows * width * n);
  const lumRow = memory.take(width);
  const histogramAt = memory.take(256 * 4);
  const maskAt = memory.take(rowBytes * height);
  const midsAt = memory.take(bw * bh * 4);
  const inksAt = memory.take(bw * bh * 4);
  const coresAt = memory.take(bw * bh * 4);
  const sumsAt = memory.take(bw * bh * n * 4);
  const heap = memory.heap;
  heap.fill(0, histogramAt, histogramAt + 256 * 4);
  heap.fill(0xff, maskAt, maskAt + rowBytes * height);
  heap.fill(0, midsAt, sumsAt + bw * bh * n * 4);
  /**
   * Calls `row` on every `step`-th row (its address in the kernels' memory): copied in a block of
   * rows at a time when every row is wanted, else one row at a time.
   */
  const eachRow = (step: number, row: (y: number, at: number) => void) => {
    const rowLength = width * n;
    if (step > 1) {
      for (let y = 0; y < height; y += step) {
        heap.set(data.subarray(y * rowLength, (y + 1) * rowLength), source);
        row(y, source);
      }
      return;
    }
    for (let y = 0; y < height; y += blockRows) {
      const rows = Math.min(blockRows, height - y);
      heap.set(data.subarray(y * rowLength, (y + rows) * rowLength), source);
      for (let r = 0; r < rows; r++) row(y + r, source + r * rowLength);
    }
  };
  // The levels of paper and ink, from every fourth row (a page has thousands).
  eachRow(4, (_, at) => {
    kernels.luminanceRow(at, n, width, lumRow);
    kernels.histogramRow(lumRow, width, histogramAt);
  });
  const histogram = new Uint32Array(heap.buffer, histogramAt, 256);
  const counted = Math.ceil(height / 4) * width;
  // Paper: the most common luminance in the brighter half; ink: a low percentile.
  let paper = 255;
  let most = -1;
  for (let v = 128; v < 256; v++) {
    if (histogram[v]! > most) {
      most = histogram[v]!;
      paper = v;
    }
  }
  const inkLevel = percentile(histogram, counted, 0.01);
  if (paper - inkLevel < MIN_CONTRAST) return undefined;
  const threshold = (paper + inkLevel) >> 1;
  const light = paper - Math.max(24, (paper - inkLevel) >> 3);
  const core = (inkLevel + threshold) >> 1;

  // What each luminance is: the text's core up to `core`, text up to `threshold`, a middle tone
  // below `light`, else paper or light. Per block: middle tones, text pixels, and the sums of the
  // text's darker half (segmentRow).
  eachRow(1, (y, at) => {
    kernels.luminanceRow(at, n, width, lumRow);
    const blocks = ((y / BLOCK) | 0) * bw;
    const maskRow = maskAt + y * rowBytes;
    kernels.segmentRow(at, n, lumRow, width, core, threshold, light, maskRow, blocks, midsAt, inksAt, coresAt, sumsAt);
  });
  const mask = heap.slice(maskAt, maskAt + rowBytes * height);
  const mids = new Uint32Array(heap.buffer.slice(midsAt, midsAt + bw * bh * 4));
  const inks = new Uint32Array(heap.buffer.slice(inksAt, inksAt + bw * bh * 4));
  const cores = new Uint32Array(heap.buffer.slice(coresAt, coresAt + bw * bh * 4));
  const coreSums = new Uint32Array(heap.buffer.slice(sumsAt, sumsAt + bw * bh * n * 4));
  // Pictures: blocks with many middle tones, spreading into the blocks beside them that are
  // mostly not paper (a photograph's dark and light areas), then grown by a block on every side.
  // No text is taken from them (their bytes of the mask are cleared: blocks are whole bytes wide).
  const seeds = new Uint8Array(bw * bh);
  const queue: number[] = [];
  const pixelsIn = blockAreas(width, height, bw, bh);
  for (let b = 0; b < bw * bh; b++) {
    if (mids[b]! > pixelsIn[b]! * PICTURE_MID_SHARE) {
      seeds[b] = 1;
      queue.push(b);
    }
  }
  while (queue.length > 0) {
    const b = queue.pop()!;
    const bx = b % bw;
    const by = (b / bw) | 0;
    for (const [x, y] of [
      [bx - 1, by],
      [bx + 1, by],
      [bx, by - 1],
      [bx, by + 1],
    ] as const) {
      if (x < 0 || y < 0 || x >= bw || y >= bh) continue;
      const near = y * bw + x;
      // Paper is what is neither middle tone nor text.
      if (seeds[near] || pixelsIn[near]! - mids[near]! - inks[near]! > pixelsIn[near]! * PAPER_SHARE) continue;
      seeds[near] = 1;
      queue.push(near);
    }
  }
  const picture = new Uint8Array(bw * bh);
  for (let b = 0; b < bw * bh; b++) {
    if (!seeds[b]) continue;
    const bx = b % bw;
    const by = (b / bw) | 0;
    for (let y = Math.max(0, by - 1); y <= Math.min(bh - 1, by + 1); y++) {
      for (let x = Math.max(0, bx - 1); x <= Math.min(bw - 1, bx + 1); x++) picture[y * bw + x] = 1;
    }
  }
  let ink = 0;
  let coreCount = 0;
  let pictures = 0;
  const sums = new Array<number>(n).fill(0);
  for (let b = 0; b < bw * bh; b++) {
    if (picture[b]) {
      pictures++;
      if (inks[b] === 0) continue;
      const from = (b % bw) * (BLOCK / 8);
      const to = Math.min(rowBytes, from + BLOCK / 8);
      const by = (b / bw) | 0;
      for (let y = by * BLOCK; y < Math.min(height, (by + 1) * BLOCK); y++) {
        mask.fill(0xff, y * rowBytes + from, y * rowBytes + to);
      }
      continue;
    }
    ink += inks[b]!;
    coreCount += cores[b]!;
    for (let c = 0; c < n; c++) sums[c]! += coreSums[b * n + c]!;
  }
  if (ink === 0 || coreCount === 0) return undefined;
  const colour = sums.map((s) => Math.round(s / coreCount));
  return { mask: { data: mask, width, height }, ink, pictures, blocks: bw * bh, colour };
}

/** The pixels in each block (those at the right and bottom edges may be cut). */
function blockAreas(width: number, height: number, bw: number, bh: number): Uint32Array {
  const areas = new Uint32Array(bw * bh);
  for (let b = 0; b < areas.length; b++) {
    areas[b] = Math.min(BLOCK, width - (b % bw) * BLOCK) * Math.min(BLOCK, height - Math.floor(b / bw) * BLOCK);
  }
  return areas;
}

/**
 * The kernel's grownRow (text grown by a pixel on every side: JPEG and readers smear a text
 * pixel's colour into its neighbours) works in a row of the mask's width and this many bytes more.
 */
const GROWN_TMP_EXTRA = 18;

/** Every second pixel of every second row goes into the background's averages. */
const BACKGROUND_STRIDE = 2;

/**
 * The page averaged over blocks of `factor` pixels, text (the segmentation's `mask`) and its
 * neighbours left out (on a sample: every BACKGROUND_STRIDE-th pixel and row); blocks of nothing
 * but text are filled from their neighbours (rings inward). Also whether it is flat.
 */
export function backgroundOf(pixels: Pixels, factor: number, mask: Bits): Background {
  const { width, height, data } = pixels;
  const n = pixels.components;
  const ow = Math.ceil(width / factor);
  const oh = Math.ceil(height / factor);
  const rowBytes = rowBytesOf(width);
  // The sampled rows go through the kernels' memory one at a time (the rows between are not
  // copied), each with its row of grown text, worked out from the mask there; the sums and counts
  // are those of one row of blocks, emitted when its last sampled row is in.
  const memory = scratch.reset();
  const rowLength = width * n;
  const source = memory.take(rowLength);
  const maskAt = memory.take(mask.data.length);
  const tmpAt = memory.take(rowBytes + GROWN_TMP_EXTRA);
  const grownAt = memory.take(rowBytes);
  const columnsAt = memory.take(width * 4);
  const sumsAt = memory.take(ow * n * 4);
  const countsAt = memory.take(ow * 4);
  const outAt = memory.take(ow * oh * n);
  const knownAt = memory.take(ow * oh);
  // 1 / (2 x count) for every count of samples a block can have (backgroundEmit).
  const mostSamples = Math.ceil(factor / BACKGROUND_STRIDE) ** 2;
  const halvesAt = memory.take((mostSamples + 1) * 8);
  const heap = memory.heap;
  const halves = new Float64Array(heap.buffer, halvesAt, mostSamples + 1);
  for (let count = 1; count <= mostSamples; count++) halves[count] = 1 / (2 * count);
  heap.set(mask.data, maskAt);
  const columns = new Int32Array(heap.buffer, columnsAt, width);
  for (let x = 0; x < width; x++) columns[x] = (x / factor) | 0;
  heap.fill(0, sumsAt, countsAt + ow * 4);
  heap.fill(0, outAt, knownAt + ow * oh);
  // Blocks of one sample each (the sampling step's size): copied, not averaged.
  const oneSample = factor === BACKGROUND_STRIDE;
  for (let oy = 0; oy < oh; oy++) {
    const last = Math.min(height, (oy + 1) * factor);
    // Rows of this row of blocks on the sampling grid (every BACKGROUND_STRIDE-th from the top).
    for (let y = Math.ceil((oy * factor) / BACKGROUND_STRIDE) * BACKGROUND_STRIDE; y < last; y += BACKGROUND_STRIDE) {
      heap.set(data.subarray(y * rowLength, (y + 1) * rowLength), source);
      kernels.grownRow(maskAt, rowBytes, height, y, tmpAt, grownAt);
      if (oneSample) {
        kernels.backgroundCopyRow(source, n, width, BACKGROUND_STRIDE, grownAt, outAt + oy * ow * n, knownAt + oy * ow);
      } else kernels.backgroundRow(source, n, width, BACKGROUND_STRIDE, grownAt, columnsAt, sumsAt, countsAt);
    }
    if (!oneSample) kernels.backgroundEmit(sumsAt, countsAt, ow, n, outAt + oy * ow * n, knownAt + oy * ow, halvesAt);
  }
  const out = heap.slice(outAt, outAt + ow * oh * n);
  const known = heap.slice(knownAt, knownAt + ow * oh);
  // Most pages have no block of nothing but text: one search tells.
  let missing = 0;
  if (known.indexOf(0) >= 0) for (let o = 0; o < ow * oh; o++) if (!known[o]) missing++;
  if (missing === ow * oh) {
    out.fill(255);
    missing = 0;
    known.fill(1);
  }
  if (missing > 0) fillHoles(out, known, ow, oh, n);
  return { pixels: { data: out, width: ow, height: oh, components: n }, factor, flat: flatColour(out, n) };
}

/**
 * The mean colour of a background whose blocks all lie within FLAT_TOLERANCE of it on every
 * component, else undefined. Two blocks further apart than twice that cannot both be near one
 * mean: most backgrounds are told so within their first rows, before any mean is taken.
 */
function flatColour(out: Uint8Array, n: number): number[] | undefined {
  const low = out.slice(0, n);
  const high = out.slice(0, n);
  for (let i = n; i < out.length; i++) {
    const c = i % n;
    const v = out[i]!;
    if (v < low[c]!) low[c] = v;
    else if (v > high[c]!) high[c] = v;
    if (high[c]! - low[c]! > 2 * FLAT_TOLERANCE) return undefined;
  }
  const mean = sumsOf(out, n).map((sum) => Math.round(sum / (out.length / n)));
  for (let i = 0; i < out.length; i++) if (Math.abs(out[i]! - mean[i % n]!) > FLAT_TOLERANCE) return undefined;
  return mean;
}

/**
 * Fills the blocks of a background that had nothing but text: along each row, from the known
 * blocks on either side (their mean between two); rows with none, from the nearest row above or
 * below. Linear in the blocks.
 */
function fillHoles(out: Uint8Array, known: Uint8Array, ow: number, oh: number, n: number): void {
  const rowKnown = new Uint8Array(oh);
  for (let y = 0; y < oh; y++) {
    const row = y * ow;
    let last = -1;
    const fill = (from: number, to: number, a: number, b: number) => {
      for (let x = from; x < to; x++) {
        for (let c = 0; c < n; c++)
          out[(row + x) * n + c] = (out[(row + a) * n + c]! + out[(row + b) * n + c]! + 1) >> 1;
      }
    };
    for (let x = 0; x < ow; x++) {
      if (!known[row + x]) continue;
      if (x > last + 1) fill(last + 1, x, last < 0 ? x : last, x);
      last = x;
    }
    if (last < 0) continue;
    rowKnown[y] = 1;
    if (last < ow - 1) fill(last + 1, ow, last, last);
  }
  for (let pass = 0; pass < 2; pass++) {
    // Downwards, then upwards: an unknown row copies the row before it.
    for (let i = 1; i < oh; i++) {
      const y = pass === 0 ? i : oh - 1 - i;
      const from = pass === 0 ? y - 1 : y + 1;
      if (rowKnown[y] || !rowKnown[from]) continue;
      out.copyWithin(y * ow * n, from * ow * n, (from + 1) * ow * n);
      rowKnown[y] = 1;
    }
  }
}

/** The sums of each of the `n` components of interleaved samples (gray or RGB: what layers take). */
function sumsOf(samples: Uint8Array, n: number): number[] {
  if (n !== 1 && n !== 3) throw new RangeError("sumsOf: 1 or 3 components");
  if (n === 1) {
    let sum = 0;
    for (let i = 0; i < samples.length; i++) sum += samples[i]!;
    return [sum];
  }
  let a = 0;
  let b = 0;
  let c = 0;
  for (let i = 0; i + 2 < samples.length; i += 3) {
    a += samples[i]!;
    b += samples[i + 1]!;
    c += samples[i + 2]!;
  }
  return [a, b, c];
}

/** A background whose blocks all lie within this of their mean is drawn as one colour. */
const FLAT_TOLERANCE = 6;

/**
 * The page as a reader draws the layers, in luminance at the image's resolution: the background
 * enlarged (each block's value over its pixels; readers interpolate, and the check draws at a
 * third of the resolution, where the difference is small) under the text in its colour.
 */
export function composeLuminance(seg: Segmentation, background: Background): RowSource {
  const { mask, colour } = seg;
  const { factor, flat } = background;
  const { width, height } = mask;
  const rowBytes = rowBytesOf(width);
  const single = (c: number[]) => (c.length === 1 ? c[0]! : (77 * c[0]! + 151 * c[1]! + 28 * c[2]! + 128) >> 8);
  const bgLum = flat ? undefined : luminance(background.pixels);
  const inkLum = single(colour);
  const row = new Uint8Array(width).fill(flat ? single(flat) : 0);
  const bw = background.pixels.width;
  /** The background row block `by` gives the row: each block's value over its `factor` pixels. */
  let rowOf = -1;
  const backgroundRow = (by: number) => {
    if (!bgLum || rowOf === by) return;
    rowOf = by;
    const from = by * bw;
    for (let bx = 0, x = 0; bx < bw; bx++) {
      const value = bgLum[from + bx]!;
      for (const end = Math.min(x + factor, width); x < end; x++) row[x] = value;
    }
  };
  // Made row by row as the check reads them (most of a page only on the sample it draws first).
  const rows = (from: number, to: number, into: Uint8Array) => {
    for (let y = from; y < to; y++) {
      backgroundRow((y / factor) | 0);
      const at = (y - from) * width;
      into.set(row, at);
      const maskRow = y * rowBytes;
      for (let i = 0; i < rowBytes; i++) {
        const byte = mask.data[maskRow + i]!;
        if (byte === 0xff) continue;
        for (let bit = 0; bit < 8; bit++) {
          const x = i * 8 + bit;
          if (x < width && !(byte & (0x80 >> bit))) into[at + x] = inkLum;
        }
      }
    }
  };
  return { width, height, components: 1, rows };
}

export interface LayeredOptions {
  /** Background reductions to try, smallest background first. */
  factors: number[];
  jpegQuality: number;
  /** Try the page as text on its paper's colour alone (no background image) first. */
  bitonalFirst: boolean;
  effort: BitonalEffort;
  jpegEffort: JpegEffort;
  /** Whether the page as composed holds the floor. */
  passes: (composed: RowSource) => boolean;
  /**
   * The page as it will be drawn, once its background is written as JPEG (`passes` saw the
   * background before): for the report's measurement. Not called for a flat background.
   */
  written?: (composed: RowSource) => void;
}

export interface LayeredEncoding {
  mask: BitonalEncoding & { width: number; height: number };
  /** The text's colour and the flat background's, in gray (1) or RGB (3) 0-255. */
  ink: number[];
  /** A background image (JPEG), or a colour to fill with. */
  background: { jpeg: Uint8Array; width: number; height: number; components: 1 | 3 } | { fill: number[] };
  bytes: number;
}

/** A background of colours whose components differ by at most this is gray. */
const GRAY_TOLERANCE = 10;

/** RGB colours (or pixels) whose components stay within GRAY_TOLERANCE of each other, as gray. */
function grayIfNeutral(pixels: Pixels): Pixels {
  if (pixels.components !== 3) return pixels;
  const { data } = pixels;
  for (let i = 0; i < data.length; i += 3) {
    const g = data[i + 1]!;
    if (Math.abs(data[i]! - g) > GRAY_TOLERANCE || Math.abs(data[i + 2]! - g) > GRAY_TOLERANCE) return pixels;
  }
  const gray = new Uint8Array(pixels.width * pixels.height);
  for (let p = 0, i = 0; p < gray.length; p++, i += 3) {
    gray[p] = (77 * data[i]! + 151 * data[i + 1]! + 28 * data[i + 2]! + 128) >> 8;
  }
  return { data: gray, width: pixels.width, height: pixels.height, components: 1 };
}

const neutral = (c: number[]) =>
  c.length === 1 || (Math.abs(c[0]! - c[1]!) <= GRAY_TOLERANCE && Math.abs(c[2]! - c[1]!) <= GRAY_TOLERANCE);
const asGray = (c: number[]) => (c.length === 1 ? c : [(77 * c[0]! + 151 * c[1]! + 28 * c[2]! + 128) >> 8]);

/**
 * The page image as layers (text mask, its colour, background), at the first background
 * reduction whose composition holds the floor; undefined when there is no text to take or none
 * holds it.
 */
export async function layeredEncoding(pixels: Pixels, options: LayeredOptions): Promise<LayeredEncoding | undefined> {
  const seg = segment(pixels);
  if (!seg) return undefined;
  try {
    return await layersOf(pixels, seg, options);
  } finally {
    // The page's mask goes now rather than at the collector's next full run (an eighth of a byte
    // a pixel: on a long scan it would otherwise start one about every page).
    release(seg.mask.data);
  }
}

async function layersOf(
  pixels: Pixels,
  seg: Segmentation,
  options: LayeredOptions,
): Promise<LayeredEncoding | undefined> {
  // Pictures stay at the finest background resolution offered (that of the usual candidates);
  // a few blocks (a scanner's shadow at the edge, a speck) are not a picture.
  const pictured = seg.pictures > seg.blocks * MIN_PICTURE_SHARE;
  const factors = pictured ? options.factors.slice(-1) : options.factors;
  let mask: LayeredEncoding["mask"] | undefined;
  for (const factor of factors) {
    const background = backgroundOf(pixels, factor, seg.mask);
    // The text on the paper's colour alone, when asked for, then the background as it is. Never
    // over a picture: the check weighs a photograph by its share of the page only.
    const tries: Background[] = [];
    if (background.flat) tries.push(background);
    else {
      if (options.bitonalFirst && seg.pictures === 0) tries.push({ ...background, flat: meanOf(background.pixels) });
      tries.push(background);
    }
    for (const layer of tries) {
      if (!options.passes(composeLuminance(seg, layer))) continue;
      mask ??= await maskEncoding(seg.mask, options.effort);
      if (!mask) return undefined;
      const ink = neutral(seg.colour) ? asGray(seg.colour) : seg.colour;
      if (layer.flat) {
        const colour = neutral(layer.flat) && ink.length === 1 ? asGray(layer.flat) : layer.flat;
        return { mask, ink, background: { fill: colour }, bytes: mask.data.length };
      }
      const image = grayIfNeutral(layer.pixels);
      const jpeg = await encodeJpeg(image, { quality: options.jpegQuality, effort: options.jpegEffort });
      if (options.written) {
        const decoded = await decodeJpeg(jpeg, image.components);
        options.written(composeLuminance(seg, { ...layer, pixels: decoded }));
        release(decoded.data);
      }
      return {
        mask,
        ink,
        background: { jpeg, width: image.width, height: image.height, components: image.components as 1 | 3 },
        bytes: mask.data.length + jpeg.length,
      };
    }
  }
  return undefined;
}

async function maskEncoding(bits: Bits, effort: BitonalEffort): Promise<LayeredEncoding["mask"] | undefined> {
  const encoded = await encodeBitonal(bits, effort);
  return encoded && { ...encoded, width: bits.width, height: bits.height };
}

function meanOf(pixels: Pixels): number[] {
  const count = pixels.width * pixels.height;
  return sumsOf(pixels.data, pixels.components).map((s) => Math.round(s / count));
}

const num = (v: number) => (Math.round((v / 255) * 1000) / 1000).toString();
/** The operator setting a gray or RGB fill colour (0-255 components). */
const fillOf = (c: number[]) => (c.length === 1 ? `${num(c[0]!)} g` : `${c.map(num).join(" ")} rg`);

/** Entries of the image's dictionary that a form keeps (the others describe samples). */
const KEPT = new Set(["Type", "OC", "Metadata", "StructParent", "ID"]);

/**
 * Turns the image stream into a form drawing its layers over the same unit square: the
 * background (an image, or a fill of the paper's colour), then the text mask as a stencil in the
 * text's colour. Every place that draws the image (`Do`) now draws the form, unchanged.
 * Returns the new streams (the mask and the background).
 */
export function writeLayered(stream: PDFRawStream, layered: LayeredEncoding, context: PDFContext): PDFRawStream[] {
  const { mask, background, ink } = layered;
  const maskStream = context.stream(mask.data, {
    Type: "XObject",
    Subtype: "Image",
    Width: mask.width,
    Height: mask.height,
    ImageMask: true,
    BitsPerComponent: 1,
    Filter: mask.filter,
    ...(mask.filter === "CCITTFaxDecode" ? { DecodeParms: { K: -1, Columns: mask.width, Rows: mask.height } } : {}),
  });
  const made = [maskStream];
  const xobjects: Record<string, PDFRef> = { M: context.register(maskStream) };
  let content: string;
  if ("fill" in background) content = `${fillOf(background.fill)} 0 0 1 1 re f\n`;
  else {
    const image = context.stream(background.jpeg, {
      Type: "XObject",
      Subtype: "Image",
      Width: background.width,
      Height: background.height,
      BitsPerComponent: 8,
      ColorSpace: background.components === 1 ? "DeviceGray" : "DeviceRGB",
      Filter: "DCTDecode",
      Interpolate: true,
    });
    made.push(image);
    xobjects["B"] = context.register(image);
    content = "q /B Do Q\n";
  }
  content += `${fillOf(ink)} /M Do\n`;
  const { dict } = stream;
  for (const key of dict.keys()) if (!KEPT.has(key.asString().slice(1))) dict.delete(key);
  dict.set(PDFName.of("Type"), PDFName.of("XObject"));
  dict.set(PDFName.of("Subtype"), PDFName.of("Form"));
  dict.set(PDFName.of("BBox"), context.obj([0, 0, 1, 1]));
  dict.set(PDFName.of("Resources"), context.obj({ XObject: xobjects }));
  const bytes = new TextEncoder().encode(content);
  dict.set(PDFName.of("Length"), PDFNumber.of(bytes.length));
  stream.updateContents(bytes);
  return made;
}
