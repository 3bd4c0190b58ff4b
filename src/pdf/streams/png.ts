// PNG predictors in WebAssembly (assembly/png.ts, built by `npm run generate` into png-wasm.ts):
// undoing them (filters.ts: a Flate stream's rows), applying given types again (inflatedBytes) and
// predicting samples (recompress.ts: pngPredict). The module is instantiated once per process,
// synchronously, when the engine loads; warmUp (../warm-up.ts) runs each function once.
//
// Rows pass through its memory a band at a time (BAND_BYTES), so that the memory, which stays at
// its largest, is a megabyte or two and not a scan's samples.
import { PNG_WASM } from "./png-wasm.ts";

interface PngKernels {
  memory: WebAssembly.Memory;
  heapBase(): number;
  unpng(data: number, rows: number, length: number, bpp: number, out: number, types: number): number;
  filter(samples: number, types: number, rows: number, length: number, bpp: number, out: number): void;
  predict(samples: number, rows: number, length: number, bpp: number, out: number): void;
}

const png = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(PNG_WASM, "base64")))
  .exports as unknown as PngKernels;

const PAGE = 64 * 1024;
/** Rows a call of the module takes, in bytes at most (one row at least). */
const BAND_BYTES = 1024 * 1024;

const bandOf = (length: number) => Math.max(1, Math.floor(BAND_BYTES / (length + 1)));
/** Buffers start on 16 bytes, with 16 bytes of room after the one before (unfilterPixels reads and writes past a row). */
const aligned = (address: number) => Math.ceil(address / 16) * 16 + 16;

/** The module's memory, grown to `end` bytes at least (growing replaces its buffer: read it after). */
function heapTo(end: number): Uint8Array {
  const short = end - png.memory.buffer.byteLength;
  if (short > 0) png.memory.grow(Math.ceil(short / PAGE));
  return new Uint8Array(png.memory.buffer);
}

/**
 * PNG-predicted rows (each its type byte, then `length` bytes) undone: the samples, and each
 * row's type; undefined when a row's type is not PNG's (0-4), or there is no whole row. Rows
 * past the last whole one are left out.
 */
export function unpngRows(
  data: Uint8Array,
  length: number,
  bpp: number,
): { samples: Uint8Array; types: Uint8Array } | undefined {
  // /Columns comes from the file: a row longer than the data is damage, not an allocation to try.
  if (length + 1 > data.length) return undefined;
  const stride = length + 1;
  const rows = Math.floor(data.length / stride);
  const samples = new Uint8Array(rows * length);
  const types = new Uint8Array(rows);
  const band = bandOf(length);
  // The decoded rows after the row above them; the band's data; its types.
  const out = png.heapBase();
  const input = aligned(out + (band + 1) * length);
  const typesAt = aligned(input + band * stride);
  const heap = heapTo(typesAt + band);
  heap.fill(0, out, out + length);
  for (let r = 0; r < rows; r += band) {
    const n = Math.min(band, rows - r);
    heap.set(data.subarray(r * stride, (r + n) * stride), input);
    if (png.unpng(input, n, length, bpp, out, typesAt) < n) return undefined;
    samples.set(heap.subarray(out + length, out + (n + 1) * length), r * length);
    types.set(heap.subarray(typesAt, typesAt + n), r);
    // The band's last row is the row above the next band's first.
    heap.copyWithin(out, out + n * length, out + (n + 1) * length);
  }
  return { samples, types };
}

/**
 * Rows [from, to) of `samples` (`length` bytes each) through `call`, a band at a time: each band
 * is copied after the row above its first (zeros above the first row), and `call` writes it, each
 * row a type byte and `length` bytes, at `out`; the result is those rows. `call` has `band` bytes
 * of its own at `spare`.
 */
function throughBands(
  samples: Uint8Array,
  length: number,
  from: number,
  to: number,
  call: (input: number, first: number, rows: number, out: number, spare: number) => void,
): Uint8Array {
  const stride = length + 1;
  const result = new Uint8Array((to - from) * stride);
  const band = bandOf(length);
  const input = png.heapBase();
  const out = aligned(input + (band + 1) * length);
  const spare = aligned(out + band * stride);
  const heap = heapTo(spare + band);
  for (let r = from; r < to; r += band) {
    const n = Math.min(band, to - r);
    if (r > 0) heap.set(samples.subarray((r - 1) * length, (r + n) * length), input);
    else {
      heap.fill(0, input, input + length);
      heap.set(samples.subarray(0, n * length), input + length);
    }
    call(input, r, n, out, spare);
    result.set(heap.subarray(out, out + n * stride), (r - from) * stride);
  }
  return result;
}

/** Rows [from, to) of `samples` under their PNG types (`types`, one a row, 0-4), each a type byte then the row. */
export function pngFilterRows(
  samples: Uint8Array,
  types: Uint8Array,
  length: number,
  bpp: number,
  from: number,
  to: number,
): Uint8Array {
  return throughBands(samples, length, from, to, (input, first, rows, out, spare) => {
    new Uint8Array(png.memory.buffer).set(types.subarray(first, first + rows), spare);
    png.filter(input, spare, rows, length, bpp, out);
  });
}

/**
 * Rows [from, to) of `samples` PNG-predicted, the type of each row chosen by the smallest sum of
 * absolute differences (libpng's heuristic): a type byte, then the row under it.
 */
export function pngPredictRows(samples: Uint8Array, length: number, bpp: number, from: number, to: number): Uint8Array {
  return throughBands(samples, length, from, to, (input, _first, rows, out) => {
    png.predict(input, rows, length, bpp, out);
  });
}

/**
 * Runs each of the module's functions once on a few rows (warmUp, ../warm-up.ts): V8 compiles a
 * WebAssembly function at its first call, and that is then before a job.
 */
export function warmUpPng(): void {
  const samples = new Uint8Array(4 * 6).map((_, i) => (i * 37) & 0xff);
  const predicted = pngPredictRows(samples, 6, 3, 0, 4);
  const undone = unpngRows(predicted, 6, 3);
  if (undone) pngFilterRows(undone.samples, undone.types, 6, 3, 0, 4);
}
