// A check of what a recoded image will look like on screen. The image is drawn, as a PDF renderer
// draws it, at the size the pages give it at 100 dpi (a screen), before and after; the two
// renderings must stay structurally similar (SSIM) above a floor.
//
// Renderers resample images to the device grid with simple filters, and those filters are where
// resampled text and line art lose most: an image at 150 ppi shown at 100 dpi aliases where the
// 300 ppi original did not. The drawing here is poppler's (Splash, as used by pdftoppm): box
// averages over whole source pixels when shrinking, bilinear from the pixel's corner when
// enlarging; it matches pdftoppm's output to an SSIM of 0.999 for gray images. The device size of
// an image depends on where it sits on the grid (it can be a pixel wider or narrower), so both
// sizes are drawn and the worse counts.
import { grayOfCmyk, grayOfRgb } from "../shared/colour.ts";
import type { Pixels } from "./codecs.ts";
import { addRow, emitRow, enlargeGray, luminanceOfPixels, luminanceRow, scratch, ssimOfDrawings } from "./kernels.ts";
import type { Placement } from "../shared/placement.ts";

/** The screen resolution the check draws at, in dpi. */
const DPI = 100;
/** Source rows are copied to the kernels' memory this many bytes at a time, at most (whole rows). */
const SOURCE_BLOCK_BYTES = 256 * 1024;
/** Images drawn smaller than this many device pixels are not worth checking. */
const MIN_DEVICE_PIXELS = 24 * 24;
/** SSIM windows are 2 x 2 cells of this many pixels square. */
const CELL = 4;
/** At the first device size, a candidate this far above the floor is taken without the other. */
const CLEAR_MARGIN = 0.02;
/**
 * The sample of rows a candidate is first compared on: bands of 16 device rows (three rows of
 * SSIM windows), one in four, evenly down the page image.
 */
const SAMPLE: RowSample = { band: 16, every: 4 };
/** Drawings lower than this are compared whole (a sample of them would be a few bands). */
const MIN_SAMPLED_HEIGHT = 256;
/**
 * A sample this far above the floor passes the candidate, one this far below fails it (a failing
 * candidate costs no whole drawing: the next size is tried); nearer, the whole drawing decides.
 */
const SAMPLE_MARGIN = 0.01;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

/**
 * Pixels the check reads row by row, made as they are read: `rows(from, to, into)` writes rows
 * [from, to) to `into` (`width` x `components` bytes a row). A candidate drawn on a sample of its
 * rows (most are) is then only made on those rows, and never held whole.
 */
export interface RowSource {
  width: number;
  height: number;
  components: 1 | 3 | 4;
  rows(from: number, to: number, into: Uint8Array): void;
}

/** What the check draws: pixels, or a source of their rows. */
export type Drawable = Pixels | RowSource;

/** Rows [from, to) of an image into `into`. */
function copyRows(image: Drawable, from: number, to: number, into: Uint8Array): void {
  if ("rows" in image) image.rows(from, to, into);
  else {
    const rowBytes = image.width * image.components;
    into.set(image.data.subarray(from * rowBytes, to * rowBytes));
  }
}

/** The pixels of a drawable (made whole, for a source of rows). */
function pixelsOf(image: Drawable): Pixels {
  if (!("rows" in image)) return image;
  const { width, height, components } = image;
  const data = new Uint8Array(width * height * components);
  image.rows(0, height, data);
  return { data, width, height, components };
}

/** Luminance as renderers compute gray (0.3 R + 0.59 G + 0.11 B; CMYK through 1 - min(1, K + ...)). */
export function luminance(pixels: Pixels): Uint8Array {
  const { width, height } = pixels;
  if (pixels.components === 1) return pixels.data.subarray(0, width * height);
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) rowLuminance(pixels, y, out.subarray(y * width, (y + 1) * width));
  return out;
}

/** One row's luminance, into `out` (a row of gray pixels is its own). */
function rowLuminance(pixels: Pixels, y: number, out: Uint8Array): Uint8Array {
  const { data, components, width } = pixels;
  let i = y * width * components;
  if (components === 1) return data.subarray(i, i + width);
  if (components === 3) {
    for (let x = 0; x < width; x++, i += 3) out[x] = grayOfRgb(data[i]!, data[i + 1]!, data[i + 2]!);
  } else {
    for (let x = 0; x < width; x++, i += 4) out[x] = grayOfCmyk(data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!);
  }
  return out;
}

/** Splash's runs of whole source pixels per device pixel, along one axis: `device` runs over `source`. */
function runs(source: number, device: number): Uint32Array {
  const steps = new Uint32Array(device);
  const p = Math.floor(source / device);
  const q = source % device;
  for (let d = 0, t = 0; d < device; d++) {
    t += q;
    steps[d] = p + (t >= device ? 1 : 0);
    if (t >= device) t -= device;
  }
  return steps;
}

/**
 * Device rows drawn for an estimate: bands of `band` rows, one in `every`, spread evenly down the
 * image (drawn rows are stacked, band after band).
 */
export interface RowSample {
  band: number;
  every: number;
  /** The rows the sample leaves out instead (drawn to complete a sampled drawing). */
  rest?: boolean;
}

const keeps = (sample: RowSample | undefined, y: number) =>
  sample === undefined || (Math.floor(y / sample.band) % sample.every === 0) !== (sample.rest === true);

/** The rows of a drawing `height` rows high that a sample keeps. */
export function sampledHeight(height: number, sample: RowSample | undefined): number {
  if (!sample) return height;
  const { band, every } = sample;
  const whole = Math.floor(height / (band * every));
  const kept = whole * band + Math.min(band, height - whole * band * every);
  return sample.rest ? height - kept : kept;
}

/** The rows a sample leaves out. */
const restOf = (sample: RowSample): RowSample => ({ band: sample.band, every: sample.every, rest: true });

/**
 * The whole drawing from a sample's rows and the rest's (as `drawLuminanceAt` draws them with
 * `sample` and with `restOf(sample)`), rows back in their places.
 */
export function joinSample(sampled: Uint8Array, rest: Uint8Array, dw: number, dh: number, sample: RowSample) {
  const out = new Uint8Array(dw * dh);
  let fromSample = 0;
  let fromRest = 0;
  for (let y = 0; y < dh; y += sample.band) {
    const rows = Math.min(sample.band, dh - y) * dw;
    if (keeps({ band: sample.band, every: sample.every }, y)) {
      out.set(sampled.subarray(fromSample, fromSample + rows), y * dw);
      fromSample += rows;
    } else {
      out.set(rest.subarray(fromRest, fromRest + rows), y * dw);
      fromRest += rows;
    }
  }
  return out;
}

/** One device size being drawn by `shrinkLuminance`: its buffers are in the kernels' memory. */
interface Shrinking {
  dw: number;
  /** Where the device rows drawn go (stacked: a sample's rows only), and how many there are. */
  out: number;
  rows: number;
  /** The u32 sums of the source columns over the device row in progress. */
  sums: number;
  /** Where each device pixel's run of source columns starts (and, last, where the row ends): i32. */
  cuts: number;
  ySteps: Uint32Array;
  /** 1 / (source pixels of each device pixel), f64, by the height of the device row's run. */
  reciprocals: Map<number, number>;
  y: number;
  rowsLeft: number;
  /** Whether device row `y` is drawn (in the sample), and the row of `out` it goes to. */
  keep: boolean;
  outY: number;
}

/**
 * The reciprocals of a device row's pixel areas, a hair above the exact ones, so that a sum
 * exactly half-way between two values rounds up as Math.round would; sums up to 2^31 are far from
 * the next value.
 */
function reciprocalsOf(xSteps: Uint32Array, yStep: number): Float64Array {
  const reciprocals = new Float64Array(xSteps.length);
  for (let x = 0; x < xSteps.length; x++) reciprocals[x] = (1 + 1e-12) / (xSteps[x]! * yStep);
  return reciprocals;
}

/**
 * Shrinks by averaging whole source pixels, as many as fall to each device pixel (Splash's way),
 * to one or more device sizes no larger than the source, taking the luminance as it goes. Each
 * source row is copied into the kernels' memory once, its luminance taken there, and added to
 * each drawing's column sums; when a device row's last source row is in, each device pixel sums
 * its run of columns. A full-size page image is read once, whatever the number of sizes, and no
 * full-size gray copy of it is made.
 */
function shrinkLuminance(
  image: Drawable,
  sizes: readonly (readonly [number, number])[],
  sample?: RowSample,
): Uint8Array[] {
  const { width: sw, height: sh, components } = image;
  const rowBytes = sw * components;
  const memory = scratch.reset();
  // Source rows are copied in blocks (a copy per row made a view object per row, some 3,500 of
  // them per page image: enough garbage to double the collector's runs on a scan).
  const blockRows = Math.max(1, Math.floor(SOURCE_BLOCK_BYTES / rowBytes));
  const block = memory.take(blockRows * rowBytes);
  let blockStart = 0;
  let blockEnd = 0;
  const luminances = components === 1 ? 0 : memory.take(sw);
  const drawings: Shrinking[] = sizes.map(([dw, dh]) => {
    const xSteps = runs(sw, dw);
    const cuts = new Int32Array(dw + 1);
    for (let x = 0; x < dw; x++) cuts[x + 1] = cuts[x]! + xSteps[x]!;
    const ySteps = runs(sh, dh);
    // Runs are of two heights at most: sh / dh rounded down, and up. (Not a Set of the runs: that
    // made an iterator result per device row, tens of megabytes of garbage over a scan.)
    const reciprocals = new Map<number, number>();
    for (const yStep of [Math.floor(sh / dh), Math.ceil(sh / dh)]) {
      if (!reciprocals.has(yStep)) reciprocals.set(yStep, memory.float64s(reciprocalsOf(xSteps, yStep)));
    }
    const rows = sampledHeight(dh, sample);
    return {
      dw,
      out: memory.take(dw * rows),
      rows,
      sums: memory.take(sw * 4),
      cuts: memory.int32s(cuts),
      ySteps,
      reciprocals,
      y: 0,
      rowsLeft: ySteps[0]!,
      keep: keeps(sample, 0),
      outY: 0,
    };
  });
  // The source rows some drawing keeps (the others are not read).
  const wanted = new Uint8Array(sh);
  for (const d of drawings) {
    for (let y = 0, sy = 0; y < d.ySteps.length; sy += d.ySteps[y]!, y++) {
      if (keeps(sample, y)) wanted.fill(1, sy, sy + d.ySteps[y]!);
    }
  }
  let heap = memory.heap;
  for (const d of drawings) heap.fill(0, d.sums, d.sums + sw * 4);
  // The loops over the drawings are indexed: for-of made an iterator result per source row and
  // drawing (this loop runs before V8 optimises it, and is left before long).
  for (let sy = 0; sy < sh; sy++) {
    let gray = luminances;
    if (wanted[sy]) {
      if (sy >= blockEnd) {
        // A block of the rows wanted from here (a source of rows makes no more than that).
        blockStart = sy;
        blockEnd = sy + 1;
        while (blockEnd < sh && blockEnd - blockStart < blockRows && wanted[blockEnd]) blockEnd++;
        copyRows(image, blockStart, blockEnd, heap.subarray(block, block + (blockEnd - blockStart) * rowBytes));
      }
      const row = block + (sy - blockStart) * rowBytes;
      // A gray row is its own luminance.
      if (components === 1) gray = row;
      else luminanceRow(row, components, sw, gray);
    }
    for (let i = 0; i < drawings.length; i++) {
      const d = drawings[i]!;
      if (d.keep) addRow(gray, sw, d.sums);
      if (--d.rowsLeft > 0) continue;
      if (d.keep) emitRow(d.sums, sw, d.cuts, d.dw, d.reciprocals.get(d.ySteps[d.y]!)!, d.out + d.outY++ * d.dw);
      d.y++;
      d.rowsLeft = d.ySteps[d.y] ?? 0;
      d.keep = keeps(sample, d.y);
    }
  }
  heap = memory.heap;
  return drawings.map((d) => heap.slice(d.out, d.out + d.dw * d.rows));
}

const grayPixels = (data: Uint8Array, width: number, height: number): Pixels => ({
  data,
  width,
  height,
  components: 1,
});

/** Shrinks gray samples as Splash does (see `shrinkLuminance`). */
const shrink = (src: Uint8Array, sw: number, sh: number, dw: number, dh: number) =>
  shrinkLuminance(grayPixels(src, sw, sh), [[dw, dh]])[0]!;

/**
 * Draws pixels' luminance at device sizes, each as `drawAt` draws `luminance(pixels)`; sizes no
 * larger than the source are drawn in one pass. With a sample, only its rows are drawn (sizes
 * must then all be shrinking).
 */
export function drawLuminanceAt(
  pixels: Drawable,
  sizes: readonly (readonly [number, number])[],
  sample?: RowSample,
): Uint8Array[] {
  const { width: sw, height: sh } = pixels;
  const shrinking = sizes.filter(([dw, dh]) => dw <= sw && dh <= sh);
  if (sample && shrinking.length < sizes.length) throw new RangeError("only shrinking drawings are sampled");
  const shrunk = shrinking.length > 0 ? shrinkLuminance(pixels, shrinking, sample) : [];
  let gray: Uint8Array | undefined;
  return sizes.map(([dw, dh]) => {
    if (dw <= sw && dh <= sh) return shrunk.shift()!;
    if (!gray) {
      const whole = pixelsOf(pixels);
      gray = whole.components === 1 ? luminance(whole) : luminanceOfPixels(whole.data, whole.components, sw * sh);
    }
    return drawAt(gray, sw, sh, dw, dh);
  });
}

/**
 * Draws gray samples at a device size, with the renderer's filters (axis by axis when mixed):
 * shrinking as `shrinkLuminance`, enlarging bilinearly from the pixel's corner (`enlargeGray`).
 */
export function drawAt(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  if (dw <= sw && dh <= sh) return shrink(src, sw, sh, dw, dh);
  if (dw >= sw && dh >= sh) return enlargeGray(src, sw, sh, dw, dh);
  const across = dw <= sw ? shrink(src, sw, sh, dw, sh) : enlargeGray(src, sw, sh, dw, sh);
  return dh <= sh ? shrink(across, dw, sh, dw, dh) : enlargeGray(across, dw, sh, dw, dh);
}

/**
 * Mean SSIM over 8 x 8 windows (uniform weights) placed every 4 pixels: sums over 4 x 4 cells,
 * then windows of 2 x 2 cells. Linear time, little memory. (Computed by the kernels: check.ts.)
 */
export function ssim(a: Uint8Array, b: Uint8Array, width: number, height: number): number {
  const cw = Math.floor(width / CELL);
  const ch = Math.floor(height / CELL);
  if (cw < 2 || ch < 2) {
    let same = 0;
    for (let i = 0; i < a.length; i++) if (Math.abs(a[i]! - b[i]!) <= 2) same++;
    return a.length === 0 ? 1 : same / a.length;
  }
  return ssimOfDrawings(a, b, width, height, C1, C2);
}

/**
 * The worst SSIM of a candidate's drawings against the original's over the device sizes, stopping
 * at the first size that decides: below the floor, or clear of it by CLEAR_MARGIN.
 */
function worstSimilarity(
  references: readonly Uint8Array[],
  drawn: readonly Uint8Array[],
  sizes: readonly (readonly [number, number])[],
  floor: number,
): number {
  let worst = 1;
  for (let i = 0; i < sizes.length; i++) {
    const [dw, dh] = sizes[i]!;
    worst = Math.min(worst, ssim(references[i]!, drawn[i]!, dw, dh));
    if (worst < floor || worst >= floor + CLEAR_MARGIN) return worst;
  }
  return worst;
}

/** Compares recoded versions of one image with the original, as drawn at `placement`. */
export class QualityCheck {
  /** The image as it is now; its luminance is taken as it is drawn. */
  private readonly original: Pixels;
  private readonly placement: Placement;
  private readonly floor: number;
  /** The original drawn at the device sizes (once, at the first candidate that needs it). */
  private references: Uint8Array[] | undefined;
  /** The original's sampled rows at the device sizes (once, at the first candidate). */
  private sampledReferences: Uint8Array[] | undefined;

  constructor(original: Pixels, placement: Placement, floor: number) {
    this.original = original;
    this.placement = placement;
    this.floor = floor;
  }

  /** The image's possible device sizes at the check's resolution: rounded down, then up. */
  private deviceSizes(): [number, number][] {
    const w = (this.placement.width / 72) * DPI;
    const h = (this.placement.height / 72) * DPI;
    const low: [number, number] = [Math.max(1, Math.floor(w)), Math.max(1, Math.floor(h))];
    const high: [number, number] = [Math.max(1, Math.ceil(w)), Math.max(1, Math.ceil(h))];
    return low[0] === high[0] && low[1] === high[1] ? [low] : [low, high];
  }

  /** Whether both images can be compared on a sample of the rows (tall enough, and shrinking to every size). */
  private sampled(candidate: Drawable, sizes: [number, number][]): boolean {
    const shrinks = (p: Drawable) => sizes.every(([dw, dh]) => dw <= p.width && dh <= p.height);
    return sizes.every(([, dh]) => dh >= MIN_SAMPLED_HEIGHT) && shrinks(this.original) && shrinks(candidate);
  }

  /**
   * The worst SSIM of `candidate` against the original over the device sizes (1 if too small to
   * matter). Where both can be sampled, the sample of rows is compared first: a candidate clear
   * of the floor by SAMPLE_MARGIN there, above or below, is scored by the sample; any other is
   * compared whole, its drawing and the original's completed with the rows the sample left out.
   */
  similarity(candidate: Drawable): number {
    const sizes = this.deviceSizes();
    if (sizes.some(([dw, dh]) => dw * dh < MIN_DEVICE_PIXELS)) return 1;
    if (!this.sampled(candidate, sizes)) {
      // Both sizes are drawn in one pass over the pixels; comparing at the second costs little more.
      this.references ??= drawLuminanceAt(this.original, sizes);
      return worstSimilarity(this.references, drawLuminanceAt(candidate, sizes), sizes, this.floor);
    }
    this.sampledReferences ??= drawLuminanceAt(this.original, sizes, SAMPLE);
    const drawnSample = drawLuminanceAt(candidate, sizes, SAMPLE);
    const sampledSizes = sizes.map(([dw, dh]): [number, number] => [dw, sampledHeight(dh, SAMPLE)]);
    const estimate = worstSimilarity(this.sampledReferences, drawnSample, sampledSizes, this.floor + SAMPLE_MARGIN);
    if (estimate >= this.floor + SAMPLE_MARGIN || estimate < this.floor - SAMPLE_MARGIN) return estimate;
    const whole = (sampledRows: Uint8Array[], pixels: Drawable) => {
      const rest = drawLuminanceAt(pixels, sizes, restOf(SAMPLE));
      return sizes.map(([dw, dh], i) => joinSample(sampledRows[i]!, rest[i]!, dw, dh, SAMPLE));
    };
    this.references ??= whole(this.sampledReferences, this.original);
    return worstSimilarity(this.references, whole(drawnSample, candidate), sizes, this.floor);
  }

  passes(candidate: Drawable): boolean {
    return this.similarity(candidate) >= this.floor;
  }

  /** The candidate's similarity when it holds the floor, else undefined. */
  accepts(candidate: Drawable): number | undefined {
    const similarity = this.similarity(candidate);
    return similarity >= this.floor ? similarity : undefined;
  }
}
