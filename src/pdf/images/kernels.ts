// The quality check's inner loops and the layers' segmentation and background (layers.ts),
// compiled to WebAssembly with SIMD (assembly/check.ts, built by `npm run generate` into
// check-wasm.ts), and the memory they work in. The module is instantiated once per process,
// synchronously, when the engine loads (a few milliseconds, in the warm process before any job).
//
// Memory: each operation lays out its buffers afresh from the start of the module's memory
// (`scratch`), copies its inputs in and its results out. The memory grows to the largest
// operation's need and stays: a page image's rows pass through one row at a time, so that is a
// few drawings' worth (a megabyte or two for an A4 page at 100 dpi), not the image.
import { CHECK_WASM } from "./check-wasm.ts";

interface CheckKernels {
  memory: WebAssembly.Memory;
  luminanceRow(src: number, components: number, width: number, dst: number): void;
  addRow(gray: number, width: number, sums: number): void;
  emitRow(sums: number, width: number, cuts: number, dw: number, reciprocals: number, out: number): void;
  ssim(a: number, b: number, width: number, height: number, cells: number, c1: number, c2: number): number;
  enlarge(
    src: number,
    sw: number,
    sh: number,
    dw: number,
    dh: number,
    x0s: number,
    wxs: number,
    y0s: number,
    wys: number,
    rowA: number,
    rowB: number,
    out: number,
  ): void;
  histogramRow(lum: number, width: number, histogram: number): void;
  segmentRow(
    src: number,
    components: number,
    lum: number,
    width: number,
    coreTop: number,
    textTop: number,
    light: number,
    maskRow: number,
    blocks: number,
    mids: number,
    inks: number,
    cores: number,
    sums: number,
  ): void;
  grownRow(mask: number, rowBytes: number, height: number, y: number, tmp: number, out: number): void;
  backgroundRow(
    src: number,
    components: number,
    width: number,
    stride: number,
    grown: number,
    columns: number,
    sums: number,
    counts: number,
  ): void;
  backgroundCopyRow(
    src: number,
    components: number,
    width: number,
    stride: number,
    grown: number,
    out: number,
    known: number,
  ): void;
  backgroundEmit(
    sums: number,
    counts: number,
    ow: number,
    components: number,
    out: number,
    known: number,
    halves: number,
  ): void;
}

/** The kernels as they are (layers.ts drives the segmentation's and the background's). */
export const kernels = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(CHECK_WASM, "base64")))
  .exports as unknown as CheckKernels;

const PAGE = 64 * 1024;
/** Buffers start on 16 bytes, the width of a SIMD load. */
const ALIGN = 16;

/**
 * Buffers in the kernels' memory for one operation, laid out from the start: `reset`, then `take`
 * each buffer (growing the memory as needed), then read and write through `heap` (taken after the
 * last `take`: growing the memory replaces its buffer).
 */
class Scratch {
  private top = ALIGN;

  reset(): this {
    this.top = ALIGN;
    return this;
  }

  /** The address of `bytes` more bytes. */
  take(bytes: number): number {
    const at = this.top;
    this.top = Math.ceil((at + bytes) / ALIGN) * ALIGN;
    const { memory } = kernels;
    const short = this.top - memory.buffer.byteLength;
    if (short > 0) memory.grow(Math.ceil(short / PAGE));
    return at;
  }

  get heap(): Uint8Array {
    return new Uint8Array(kernels.memory.buffer);
  }

  /** Copies `values` into a new buffer of i32 and returns its address. */
  int32s(values: Int32Array | Uint32Array): number {
    const at = this.take(values.length * 4);
    new Int32Array(kernels.memory.buffer, at, values.length).set(values);
    return at;
  }

  /** Copies `values` into a new buffer of f64 and returns its address. */
  float64s(values: Float64Array): number {
    const at = this.take(values.length * 8);
    new Float64Array(kernels.memory.buffer, at, values.length).set(values);
    return at;
  }
}

/** The one scratch layout of this process (operations run one at a time on the main thread). */
export const scratch = new Scratch();

/** Luminance of `width` pixels of 1, 3 or 4 components at `src`, a byte each, to `dst` (see check.ts). */
export const luminanceRow = (src: number, components: number, width: number, dst: number) =>
  kernels.luminanceRow(src, components, width, dst);

/** Adds `width` bytes at `gray` to the u32 column sums at `sums`. */
export const addRow = (gray: number, width: number, sums: number) => kernels.addRow(gray, width, sums);

/**
 * Writes a device row from the column sums: each device pixel's run of columns (i32 `cuts`) summed,
 * times its f64 reciprocal, rounded half up; then clears the `width` sums.
 */
export const emitRow = (sums: number, width: number, cuts: number, dw: number, reciprocals: number, out: number) =>
  kernels.emitRow(sums, width, cuts, dw, reciprocals, out);

/** Pixels' bytes passed through the kernels' memory this many at a time, at most (whole pixels). */
const LUMINANCE_BLOCK_BYTES = 256 * 1024;

/**
 * The luminance of `count` pixels of 1, 3 or 4 components (`data`, a byte each), as `luminanceRow`
 * takes it (quality.ts's `luminance`: the pixels of a block of rows are one long row to it).
 */
export function luminanceOfPixels(data: Uint8Array, components: number, count: number): Uint8Array {
  const out = new Uint8Array(count);
  const block = Math.max(1, Math.floor(LUMINANCE_BLOCK_BYTES / components));
  const at = scratch.reset();
  const src = at.take(block * components);
  const dst = at.take(block);
  const heap = at.heap;
  for (let from = 0; from < count; from += block) {
    const n = Math.min(block, count - from);
    heap.set(data.subarray(from * components, (from + n) * components), src);
    kernels.luminanceRow(src, components, n, dst);
    out.set(heap.subarray(dst, dst + n), from);
  }
  return out;
}

/** Where Splash's bilinear filter reads along one axis: source pixel (i32) and fraction (f64) of each device pixel. */
function bilinearSteps(source: number, device: number) {
  const scale = source / device;
  const starts = new Int32Array(device);
  const fractions = new Float64Array(device);
  for (let d = 0; d < device; d++) {
    const f = d * scale;
    starts[d] = Math.min(source - 1, Math.floor(f));
    fractions[d] = f - Math.floor(f);
  }
  return { starts, fractions };
}

/**
 * Gray bytes (`sw` x `sh`) enlarged to `dw` x `dh` by Splash's bilinear filter (quality.ts's
 * `drawAt`: source position x * (sw / dw), fractions truncated); each axis at least as large as
 * the source's.
 */
export function enlargeGray(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  const across = bilinearSteps(sw, dw);
  const down = bilinearSteps(sh, dh);
  const at = scratch.reset();
  const source = at.take(sw * sh);
  const x0s = at.int32s(across.starts);
  const wxs = at.float64s(across.fractions);
  const y0s = at.int32s(down.starts);
  const wys = at.float64s(down.fractions);
  const rowA = at.take(dw);
  const rowB = at.take(dw);
  const out = at.take(dw * dh);
  let heap = at.heap;
  heap.set(src.subarray(0, sw * sh), source);
  kernels.enlarge(source, sw, sh, dw, dh, x0s, wxs, y0s, wys, rowA, rowB, out);
  heap = at.heap;
  return heap.slice(out, out + dw * dh);
}

/**
 * Mean SSIM of two drawings over 8 x 8 windows every 4 pixels (quality.ts's `ssim`), at least
 * 8 x 8 pixels each.
 */
export function ssimOfDrawings(a: Uint8Array, b: Uint8Array, width: number, height: number, c1: number, c2: number) {
  const cells = Math.floor(width / 4) * Math.floor(height / 4);
  const at = scratch.reset();
  const pa = at.take(width * height);
  const pb = at.take(width * height);
  const sums = at.take(5 * 4 * cells);
  const heap = at.heap;
  heap.set(a.subarray(0, width * height), pa);
  heap.set(b.subarray(0, width * height), pb);
  return kernels.ssim(pa, pb, width, height, sums, c1, c2);
}
