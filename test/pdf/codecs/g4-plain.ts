// The Group 4 decoder as it was in JavaScript (src/pdf/codecs/g4.ts before its loop went to
// WebAssembly, assembly/g4.ts), kept as the reference test/pdf/codecs/g4-wasm.test.ts compares the
// WebAssembly decoder with: the same rows, and the same streams refused.
import { g4Tables, HORIZONTAL, PASS, PEEK } from "../../../src/pdf/codecs/g4.ts";
import { rowBytesOf } from "../../../src/pdf/codecs/jbig2.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";

let tables: ReturnType<typeof g4Tables> | undefined;
const tablesOf = () => (tables ??= g4Tables());

class BitReader {
  position = 0;
  /** The stream and three zero bytes after it, which peek reads past its end. */
  private readonly data: Uint8Array;
  private readonly bitLength: number;
  constructor(data: Uint8Array) {
    this.data = new Uint8Array(data.length + 3);
    this.data.set(data);
    this.bitLength = data.length * 8;
  }
  peek(): number {
    const byte = this.position >> 3;
    const d = this.data;
    const word = (d[byte]! << 16) | (d[byte + 1]! << 8) | d[byte + 2]!;
    return (word >> (24 - PEEK - (this.position & 7))) & ((1 << PEEK) - 1);
  }
  /** The value of the code at the reading position, which it passes; undefined for no code. */
  code(table: Uint32Array): number | undefined {
    if (this.position >= this.bitLength) return undefined;
    const entry = table[this.peek()]!;
    if (entry === 0) return undefined;
    this.position += entry >> 16;
    return (entry & 0xffff) - 8;
  }
  /** A run: make-up codes, then a terminating one. */
  run(table: Uint32Array): number | undefined {
    let total = 0;
    for (;;) {
      const run = this.code(table);
      if (run === undefined) return undefined;
      total += run;
      if (run < 64) return total;
    }
  }
  align(): void {
    this.position = (this.position + 7) & ~7;
  }
}

/** Sets bits [from, to) of a row (1 bits: white where BlackIs1 is false, as PDF samples go). */
function fill(data: Uint8Array, row: number, from: number, to: number): void {
  if (from >= to) return;
  const first = row + (from >> 3);
  const last = row + ((to - 1) >> 3);
  const head = 0xff >> (from & 7);
  const tail = (0xff00 >> (((to - 1) & 7) + 1)) & 0xff;
  if (first === last) {
    data[first]! |= head & tail;
    return;
  }
  data[first]! |= head;
  if (last - first > 32) data.fill(0xff, first + 1, last);
  else for (let i = first + 1; i < last; i++) data[i] = 0xff;
  data[last]! |= tail;
}

/**
 * The samples of a Group 4 stream of `width` x `height` (0 for black unless blackIs1), each row
 * byte-aligned when `byteAlign`; undefined for data that is not such a stream.
 */
export function plainDecodeG4(data: Uint8Array, size: Bits, options: { byteAlign: boolean; blackIs1: boolean }) {
  const { width, height } = size;
  const { byteAlign, blackIs1 } = options;
  const { white, black, modes } = tablesOf();
  const rowBytes = rowBytesOf(width);
  const out = new Uint8Array(rowBytes * height);
  const bits = new BitReader(data);
  // Changing elements of the row above and of this one (positions where the colour changes, the
  // first to black; a row may end with one at `width`), then `width` at least twice.
  let above = new Int32Array(width + 4).fill(width);
  let current = new Int32Array(width + 4);
  for (let y = 0; y < height; y++) {
    if (byteAlign) bits.align();
    let count = 0;
    let a0 = -1;
    let colour = 0; // 0 white, 1 black
    let b = 0; // index in `above` from which b1 is looked for
    while (a0 < width) {
      // b1: the first changing element above, right of a0, to the colour opposite a0's.
      while (above[b]! <= a0 && above[b]! < width) b++;
      if ((b & 1) !== colour) b++;
      while (above[b]! <= a0 && above[b]! < width) b += 2;
      const b1 = above[b]!;
      const b2 = above[Math.min(b + 1, width + 3)]!;
      const mode = bits.code(modes);
      if (mode === undefined) return undefined;
      if (mode === PASS) {
        a0 = b2;
        continue;
      }
      if (mode === HORIZONTAL) {
        const first = bits.run(colour ? black : white);
        const second = first === undefined ? undefined : bits.run(colour ? white : black);
        if (second === undefined) return undefined;
        const a1 = Math.max(a0, 0) + first!;
        const a2 = a1 + second;
        if (a2 > width || count + 2 > width + 1) return undefined;
        current[count++] = a1;
        current[count++] = a2;
        a0 = a2;
        continue;
      }
      const a1 = b1 + mode;
      if (a1 < 0 || a1 > width || a1 < a0 || count > width) return undefined;
      current[count++] = a1;
      a0 = a1;
      colour ^= 1;
      if (b > 0) b--;
    }
    // The search for b1 and b2 in the next row stops at the first `width` and reads at most two
    // entries past it: three are enough (the rest of the row was a memset a row).
    current.fill(width, count, count + 3);
    // White runs are 1 bits: from the start to the first change, and from each black run's end.
    const row = y * rowBytes;
    let x = 0;
    for (let i = 0; i <= count; i += 2) {
      const end = i < count ? current[i]! : width;
      fill(out, row, x, end);
      x = i + 1 < count ? current[i + 1]! : width;
      if (x >= width) break;
    }
    [above, current] = [current, above];
  }
  if (blackIs1) for (let i = 0; i < out.length; i++) out[i] = ~out[i]! & 0xff;
  const decoded: Bits = { data: out, width, height };
  return decoded;
}
