// The Group 4 decoder's loop (../g4.ts `decodeG4`: T.6's coding of a row against the one above,
// T.4's code tables), in AssemblyScript compiled to WebAssembly. In JavaScript it was 15-20 % of
// scan_hl1396_18p_ccitt's job: in the lean engine processes (--optimize-for-size) V8 inlined
// little of it, and each code went through a reader object's methods and typed arrays' checks.
//
// The caller (../g4.ts) drives it: it writes the code tables once (`tables`), `begin` lays out a
// stream's buffers after them and says where its coded data go, and `decodeRows` decodes that many
// rows into a band of packed rows at `output()` (a band at a time, so that the memory stays small
// and V8, which swaps in its optimised code for a WebAssembly function at a call, runs a page's
// later bands optimised). The rows are those of the JavaScript decoder it replaced, bit for bit,
// and so is what it refuses: test/pdf/codecs/g4-wasm.test.ts compares them with that decoder
// (kept there) on libtiff's G4 of drawings, on byte-aligned streams, and on damaged and random data.
//
// Built by `npm run generate` (asc, pinned in package.json) into ../g4-wasm.ts;
// `npm run generate:check` fails when that is stale.

/** Bits a code is looked up by: the longest code (T.4's make-up codes) has 13. */
const PEEK = 13;
const MASK = (1 << PEEK) - 1;
/**
 * The white runs', black runs' and modes' tables, in that order, 2^13 u32 each: the next 13 bits
 * to (code length << 16) | (value + 8), 0 where no code starts (../g4.ts `tableOf` writes them).
 */
const TABLES = memory.data(3 << (PEEK + 2));
const WHITE = TABLES;
const BLACK = TABLES + (1 << (PEEK + 2));
const MODES = TABLES + (2 << (PEEK + 2));
/** The modes' values (T.4 Table 4): pass and horizontal; vertical ones are -3 to 3. */
const PASS = 100;
const HORIZONTAL = 101;

// The stream being decoded: its rows' width in pixels, its coded data's length in bits, and the
// reading position.
let width = 0;
let bitLength = 0;
let position = 0;
/** Whether each row's code begins on a byte (EncodedByteAlign), and whether rows are inverted (BlackIs1). */
let byteAlign = false;
let blackIs1 = false;
/** Changing elements of the row above and of this one, i32 each (see `decodeRows`). */
let above: usize = 0;
let current: usize = 0;
/** Where the coded data lie, and the band of decoded rows. */
let input: usize = 0;
let out: usize = 0;

const align16 = (at: usize): usize => (at + 15) & ~(<usize>15);

/** Where `decodeG4` writes the three tables. */
export function tables(): usize {
  return TABLES;
}

/**
 * Starts a stream of `length` bytes whose rows are `w` pixels wide and come out `band` at a time,
 * each beginning on a byte when `align` is not 0, inverted when `invert` is not 0 (BlackIs1);
 * returns where the coded data go (followed by 0s, as the lookups read up to 3 bytes past them).
 */
export function begin(w: i32, length: i32, band: i32, align: i32, invert: i32): usize {
  width = w;
  const rowBytes = (w + 7) >> 3;
  const elements = (<usize>(w + 8)) << 2;
  above = align16(__heap_base);
  current = above + elements;
  input = current + elements;
  out = align16(input + <usize>length + 8);
  const end = out + <usize>band * <usize>rowBytes;
  const have = (<usize>memory.size()) << 16;
  if (end > have && memory.grow(<i32>((end - have + 0xffff) >> 16)) < 0) unreachable();
  // The row above the first is white: no changing element before `width`.
  for (let at = above; at < current; at += 4) store<i32>(at, w);
  store<u64>(input + <usize>length, 0);
  bitLength = length << 3;
  position = 0;
  byteAlign = align !== 0;
  blackIs1 = invert !== 0;
  return input;
}

/** Where `decodeRows` puts the rows. */
export function output(): usize {
  return out;
}

/** The table entry of the code at the reading position (0 for none), which it passes. */
function code(table: usize): i32 {
  if (position >= bitLength) return 0;
  const at = input + <usize>(position >> 3);
  const bits =
    (((<i32>load<u8>(at)) << 16) | ((<i32>load<u8>(at, 1)) << 8) | (<i32>load<u8>(at, 2))) >> (11 - (position & 7));
  const entry = load<i32>(table + ((<usize>(bits & MASK)) << 2));
  position += entry >> 16;
  return entry;
}

/** Sets bits [from, to) of the row at `row` (1 bits: white where BlackIs1 is false, as PDF samples go). */
function fill(row: usize, from: i32, to: i32): void {
  if (from >= to) return;
  const first = row + <usize>(from >> 3);
  const last = row + <usize>((to - 1) >> 3);
  const head = 0xff >> (from & 7);
  const tail = (0xff00 >> (((to - 1) & 7) + 1)) & 0xff;
  if (first === last) {
    store<u8>(first, (<i32>load<u8>(first)) | (head & tail));
    return;
  }
  store<u8>(first, (<i32>load<u8>(first)) | head);
  memory.fill(first + 1, 0xff, last - first - 1);
  store<u8>(last, (<i32>load<u8>(last)) | tail);
}

/**
 * Decodes the next `count` rows into `output()`, `Math.ceil(width / 8)` bytes each; returns 0, or -1 where the data
 * are not such a stream (the rows are then not all there).
 */
export function decodeRows(count: i32): i32 {
  const w = width;
  const rowBytes = (w + 7) >> 3;
  for (let k = 0; k < count; k++) {
    if (byteAlign) position = (position + 7) & ~7;
    let n = 0;
    let a0 = -1;
    let colour = 0; // 0 white, 1 black
    let b = 0; // index in `above` from which b1 is looked for
    while (a0 < w) {
      // b1: the first changing element above, right of a0, to the colour opposite a0's.
      while (load<i32>(above + ((<usize>b) << 2)) <= a0 && load<i32>(above + ((<usize>b) << 2)) < w) b++;
      if ((b & 1) !== colour) b++;
      while (load<i32>(above + ((<usize>b) << 2)) <= a0 && load<i32>(above + ((<usize>b) << 2)) < w) b += 2;
      const b1 = load<i32>(above + ((<usize>b) << 2));
      const entry = code(MODES);
      if (entry === 0) return -1;
      const mode = (entry & 0xffff) - 8;
      if (mode === PASS) {
        a0 = load<i32>(above + ((<usize>min(b + 1, w + 3)) << 2));
        continue;
      }
      if (mode === HORIZONTAL) {
        // Two runs, of a0's colour then the other: make-up codes, then a terminating one.
        let table = colour ? BLACK : WHITE;
        let end = max(a0, 0);
        let a1 = 0;
        for (let r = 0; r < 2; r++) {
          let run = 0;
          do {
            const e = code(table);
            if (e === 0) return -1;
            run = (e & 0xffff) - 8;
            end += run;
          } while (run >= 64);
          if (r === 0) {
            a1 = end;
            table = colour ? WHITE : BLACK;
          }
        }
        if (end > w || n + 2 > w + 1) return -1;
        store<i32>(current + ((<usize>n) << 2), a1);
        store<i32>(current + ((<usize>(n + 1)) << 2), end);
        n += 2;
        a0 = end;
        continue;
      }
      const a1 = b1 + mode;
      if (a1 < 0 || a1 > w || a1 < a0 || n > w) return -1;
      store<i32>(current + ((<usize>n) << 2), a1);
      n++;
      a0 = a1;
      colour ^= 1;
      if (b > 0) b--;
    }
    // The search for b1 and b2 in the next row stops at the first `width` and reads at most two
    // entries past it: three are enough.
    for (let i = n; i < n + 3; i++) store<i32>(current + ((<usize>i) << 2), w);
    // White runs are 1 bits: from the start to the first change, and from each black run's end.
    const row = out + <usize>k * <usize>rowBytes;
    memory.fill(row, 0, <usize>rowBytes);
    let x = 0;
    for (let i = 0; i <= n; i += 2) {
      const end = i < n ? load<i32>(current + ((<usize>i) << 2)) : w;
      fill(row, x, end);
      x = i + 1 < n ? load<i32>(current + ((<usize>(i + 1)) << 2)) : w;
      if (x >= w) break;
    }
    if (blackIs1) {
      const last = row + <usize>rowBytes;
      let at = row;
      for (; at + 8 <= last; at += 8) store<u64>(at, ~load<u64>(at));
      for (; at < last; at++) store<u8>(at, ~load<u8>(at));
    }
    const swap = above;
    above = current;
    current = swap;
  }
  return 0;
}
