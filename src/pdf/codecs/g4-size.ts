// The size of the CCITT Group 4 stream libtiff writes for bi-tonal samples, counted without
// writing it: T.6's coding of each row against the one above (2.2), with the modes libtiff
// chooses (tif_fax3.c, Fax3Encode2DRow: pass mode where b2 lies left of a1, vertical where a1 is
// within 3 of b1, else horizontal) and its runs' codes (putspan: make-up codes of 2560 while 2624
// or more is left, then one make-up code, then a terminating one), then the EOFB. Counting takes
// a few milliseconds of a 300 dpi page where libvips's G4 takes 25-50 (images/bitonal.ts).
import { BLACK_MAKEUP, BLACK_TERMINATING, EXTENDED_MAKEUP, WHITE_MAKEUP, WHITE_TERMINATING } from "./g4.ts";
import { rowBytesOf } from "./jbig2.ts";
import type { Bits } from "./jbig2.ts";

/** The lengths of a colour's codes: terminating runs 0-63, make-up runs 64 x k at [k] (k 1-40). */
interface RunCodes {
  terminating: Uint8Array;
  makeup: Uint8Array;
}

function runCodes(terminating: string, makeup: string): RunCodes {
  const lengths = (codes: string[]) => Uint8Array.from(codes, (code) => code.length);
  return {
    terminating: lengths(terminating.split(" ")),
    makeup: lengths(["", ...makeup.split(" "), ...EXTENDED_MAKEUP.split(" ")]),
  };
}

let codes: { white: RunCodes; black: RunCodes } | undefined;
const codesOf = () =>
  (codes ??= { white: runCodes(WHITE_TERMINATING, WHITE_MAKEUP), black: runCodes(BLACK_TERMINATING, BLACK_MAKEUP) });

/** The bits of a run of `span` pixels as libtiff codes it (putspan). */
function spanBits(span: number, codes: RunCodes): number {
  let bits = 0;
  for (; span >= 2624; span -= 2560) bits += codes.makeup[40]!;
  if (span >= 64) {
    bits += codes.makeup[span >> 6]!;
    span &= 63;
  }
  return bits + codes.terminating[span]!;
}

/** Vertical mode's code lengths for b1 - a1 from -3 to 3 (T.4 Table 4). */
const VERTICAL_BITS = [7, 6, 3, 1, 3, 6, 7];
const PASS_BITS = 4;
const HORIZONTAL_BITS = 3;
/** The end of the facsimile block: two EOLs of 12 bits. */
const EOFB_BITS = 24;

/**
 * The changing elements of a row (pixels of another colour than the pixel before them, the row
 * starting after a white one: a 1 bit in our samples) into `out`, then `width` three times (the
 * imaginary changes past the row's end); returns how many there are.
 */
function changesOf(data: Uint8Array, at: number, rowBytes: number, width: number, out: Int32Array): number {
  let n = 0;
  let before = 1;
  for (let i = 0; i < rowBytes; i++) {
    const byte = data[at + i]!;
    // Bits that differ from the bit before them, visited most significant first.
    let changed = (byte ^ ((byte >> 1) | (before << 7))) & 0xff;
    before = byte & 1;
    while (changed !== 0) {
      const bit = Math.clz32(changed) - 24;
      changed ^= 0x80 >> bit;
      const x = i * 8 + bit;
      if (x < width) out[n++] = x;
    }
  }
  out[n] = width;
  out[n + 1] = width;
  out[n + 2] = width;
  return n;
}

/**
 * The bits of one row's coding against the row above, from their changing elements (`cur`, `ref`,
 * each ended by `width`). Changes of even index turn a row black, odd ones white; a0 is -1 before
 * the row's first coding (white, and 0 in a run's length, as libtiff counts it).
 */
function rowBits(cur: Int32Array, ref: Int32Array, width: number, codes: { white: RunCodes; black: RunCodes }) {
  let bits = 0;
  let a0 = -1;
  let ia = 0;
  let jb = 0;
  for (;;) {
    // a1: the first change after a0; b1: the first change of the row above after a0 to a0's
    // opposite colour (a0 is black after an odd number of changes: b1's index then odd too).
    while (cur[ia]! <= a0) ia++;
    jb = Math.max(0, jb - 2);
    while (ref[jb]! <= a0) jb++;
    if ((jb & 1) !== (ia & 1)) jb++;
    const a1 = cur[ia]!;
    const b1 = ref[jb]!;
    const b2 = ref[jb + 1]!;
    if (b2 < a1) {
      bits += PASS_BITS;
      a0 = b2;
    } else if (b1 - a1 >= -3 && b1 - a1 <= 3) {
      bits += VERTICAL_BITS[b1 - a1 + 3]!;
      a0 = a1;
    } else {
      const a2 = cur[ia + 1]!;
      const from = Math.max(a0, 0);
      const white = a0 < 0 || (ia & 1) === 0;
      const [first, second] = white ? [codes.white, codes.black] : [codes.black, codes.white];
      bits += HORIZONTAL_BITS + spanBits(a1 - from, first) + spanBits(a2 - a1, second);
      a0 = a2;
    }
    if (a0 >= width) return bits;
  }
}

/**
 * The bytes of the G4 stream libtiff writes for `samples` (1 bits white, rows padded to bytes),
 * as encodeG4 (images/bitonal.ts) returns it: the rows' codes, the EOFB, padded to a byte. Past
 * `above` bytes the count stops, giving some size over `above`: the caller only asks whether the
 * G4 could be as small as its JBIG2, and on text the JBIG2 is the smaller (scan_2400dpi's mask and
 * scan_epson_6p_jpeg's six: 78-83 % of G4), so the count stops a fifth of the rows before the end.
 */
export function g4Size(samples: Bits, above = Infinity): number {
  const { width, height, data } = samples;
  const rowBytes = rowBytesOf(width);
  const all = codesOf();
  let cur = new Int32Array(width + 3);
  // The row above the first is white: no changes.
  let ref = new Int32Array(width + 3).fill(width);
  let bits = EOFB_BITS;
  for (let y = 0; y < height; y++) {
    changesOf(data, y * rowBytes, rowBytes, width, cur);
    bits += rowBits(cur, ref, width, all);
    if (bits > above * 8) return Math.ceil(bits / 8);
    [cur, ref] = [ref, cur];
  }
  return Math.ceil(bits / 8);
}
