// The JBIG2 generic region encoder's and decoder's per-pixel loops (../jbig2.ts: template 0,
// default adaptive pixels, typical prediction; the MQ coder and decoder of T.88 Annex E), in
// AssemblyScript compiled to WebAssembly. In JavaScript the encoder was 43-53 % of a bi-tonal
// scan's CPU (some 32 million text-line pixels on scan_hl1396_18p_ccitt, each formed into its
// context and coded one at a time), the decoder the largest part of a JBIG2 scan's (the decoder's
// part is at the end of this file).
//
// The arithmetic is the JavaScript coder's it replaced, symbol for symbol (i32 registers, as
// JavaScript's bitwise operators kept them; white runs in an all-white context coded at once), so
// the bytes are the same: test/pdf/codecs/jbig2-wasm.test.ts compares them with a plain definition
// written there, one pixel at a time, on generated bitmaps.
//
// The caller (../jbig2.ts) drives it: `begin` lays out the coder's memory after the static data
// and says where rows go; `encodeRows` codes that many rows copied there (a band at a time, so
// the input in this memory stays small, and so that V8, which swaps in its optimised code for a
// WebAssembly function at a call, not inside a running one, runs the later bands optimised);
// `finish` flushes the coder and gives the length of the coded data at `output()`. The output
// lies last and grows the memory as it needs (the caller reads the memory's buffer afresh after).
//
// Built by `npm run generate` (asc, pinned in package.json) into ../jbig2-wasm.ts;
// `npm run generate:check` fails when that is stale.

/**
 * Per MQ state (0-46 with MPS 0, 47-93 the same with MPS 1; Table E.1): Qe in the low 16 bits,
 * the MPS in bit 16, the next state after an MPS in bits 17-23, after an LPS in bits 24-30. Each
 * context holds its state's entry, so that coding a symbol reads one word.
 */
const TABLE = memory.data<u32>([
  0x30025601, 0x06043401, 0x09061801, 0x0c080ac1, 0x1d0a0521, 0x214c0221, 0x350e5601, 0x0e105401, 0x0e124801,
  0x0e143801, 0x11163001, 0x12182401, 0x141a1c01, 0x153a1601, 0x3d1e5601, 0x0e205401, 0x0f225101, 0x10244801,
  0x11263801, 0x12283401, 0x132a3001, 0x132c2801, 0x142e2401, 0x15302201, 0x16321c01, 0x17341801, 0x18361601,
  0x19381401, 0x1a3a1201, 0x1b3c1101, 0x1c3e0ac1, 0x1d4009c1, 0x1e4208a1, 0x1f440521, 0x20460441, 0x214802a1,
  0x224a0221, 0x234c0141, 0x244e0111, 0x25500085, 0x26520049, 0x27540025, 0x28560015, 0x29580009, 0x2a5a0005,
  0x2b5a0001, 0x2e5c5601, 0x01615601, 0x35633401, 0x38651801, 0x3b670ac1, 0x4c690521, 0x50ab0221, 0x066d5601,
  0x3d6f5401, 0x3d714801, 0x3d733801, 0x40753001, 0x41772401, 0x43791c01, 0x44991601, 0x0e7d5601, 0x3d7f5401,
  0x3e815101, 0x3f834801, 0x40853801, 0x41873401, 0x42893001, 0x428b2801, 0x438d2401, 0x448f2201, 0x45911c01,
  0x46931801, 0x47951601, 0x48971401, 0x49991201, 0x4a9b1101, 0x4b9d0ac1, 0x4c9f09c1, 0x4da108a1, 0x4ea30521,
  0x4fa50441, 0x50a702a1, 0x51a90221, 0x52ab0141, 0x53ad0111, 0x54af0085, 0x55b10049, 0x56b30025, 0x57b50015,
  0x58b70009, 0x59b90005, 0x5ab90001, 0x5dbb5601,
]);
/** The context of typical prediction's SLTP bit, template 0 (6.2.5.7). */
const TPGD_CONTEXT = 0x9b25;
/** Contexts of template 0: 16 bits, a state's entry (u32) each. */
const CONTEXTS = 1 << 16;

// The region being coded, and where its buffers lie.
let width = 0;
let rowBytes = 0;
/** Rows are `rowBytes` and two 0 bytes, so that reading past a row's end gives 0. */
let stride: usize = 0;
let y = 0;
let states: usize = 0;
let zero: usize = 0;
/** The last three rows, row y in ring slot y % 3. */
let ring: usize = 0;
let input: usize = 0;
let out: usize = 0;
let length = 0;
// The coder's registers (E.2): A, C, CT, B, whether B holds a byte yet; and typical prediction's LTP.
let regA = 0;
let regC = 0;
let regCt = 0;
let regB = 0;
let started = false;
let ltp = 0;

const align16 = (at: usize): usize => (at + 15) & ~(<usize>15);

/** Grows the memory so that it reaches `end`, and returns its end. */
function reach(end: usize): usize {
  const have = (<usize>memory.size()) << 16;
  if (end <= have) return have;
  const pages = <i32>((end - have + 0xffff) >> 16);
  // At least half again what there is, so that a growing output grows it a few times only.
  const more = max(pages, memory.size() >> 1);
  if (memory.grow(more) < 0) unreachable();
  return (<usize>memory.size()) << 16;
}

/**
 * Lays out the contexts' states and the rows (the row before the first, then three in a ring,
 * `stride` apart) after the static data: every context in state 0, the rows 0. Returns where the
 * rows end.
 */
function layOut(): usize {
  states = align16(__heap_base);
  zero = states + (CONTEXTS << 2);
  ring = zero + stride;
  const end = align16(ring + 3 * stride);
  reach(end);
  const initial = <u64>load<u32>(TABLE);
  for (let at = states; at < zero; at += 8) store<u64>(at, initial | (initial << 32));
  memory.fill(zero, 0, end - zero);
  return end;
}

/**
 * Starts a region of `w` x `h` pixels whose rows come `band` at a time; returns where each band's
 * rows go (packed, `Math.ceil(w / 8)` bytes a row, bits past the width 0).
 */
export function begin(w: i32, h: i32, band: i32): usize {
  width = w;
  rowBytes = (w + 7) >> 3;
  stride = <usize>(rowBytes + 2);
  y = 0;
  input = layOut();
  out = align16(input + <usize>band * <usize>rowBytes);
  reach(out + 0x10000);
  length = 0;
  regA = 0x8000;
  regC = 0;
  regCt = 12;
  regB = 0;
  started = false;
  ltp = 0;
  return input;
}

/**
 * Inverts the `count` rows last placed at the input (samples, 0 black, made the bitmap coded, 1
 * black: ../jbig2.ts `encodeJbig2`), eight bytes at a time, and clears each row's bits past the
 * width. In JavaScript this was a copy of the page and a pass over it, a tenth of a CCITT scan's CPU.
 */
export function invertRows(count: i32): void {
  const end = input + <usize>count * <usize>rowBytes;
  let at = input;
  for (; at + 8 <= end; at += 8) store<u64>(at, ~load<u64>(at));
  for (; at < end; at++) store<u8>(at, ~load<u8>(at));
  const bits = width & 7;
  if (bits === 0) return;
  const last: i32 = (0xff << (8 - bits)) & 0xff;
  for (let row = input + <usize>rowBytes - 1; row < end; row += <usize>rowBytes) {
    store<u8>(row, (<i32>load<u8>(row)) & last);
  }
}

/** Appends a byte to the output. */
function put(value: i32): void {
  const p = out + <usize>length;
  reach(p + 1);
  store<u8>(p, value);
  length++;
}

/** BYTEOUT (E.2.8), with its bit stuffing after 0xFF. */
function byteOut(): void {
  let stuffed = regB === 0xff;
  if (!stuffed && regC >= 0x8000000) {
    regB++;
    if (regB === 0xff) {
      regC &= 0x7ffffff;
      stuffed = true;
    }
  }
  if (started) put(regB);
  started = true;
  if (stuffed) {
    regB = regC >>> 20;
    regC &= 0xfffff;
    regCt = 7;
  } else {
    regB = regC >>> 19;
    regC &= 0x7ffff;
    regCt = 8;
  }
}

/**
 * ENCODE (E.2.2-E.2.5): `bit` in the context whose state's entry is at `at`, CODEMPS and CODELPS
 * with their conditional exchanges, then RENORME (E.2.6) where A fell below 0x8000.
 */
function encode(at: usize, bit: i32): void {
  const entry = load<u32>(at);
  const qe = <i32>(entry & 0xffff);
  regA -= qe;
  if (bit === <i32>((entry >> 16) & 1)) {
    if (regA & 0x8000) {
      regC += qe;
      return;
    }
    if (regA < qe) regA = qe;
    else regC += qe;
    store<u32>(at, load<u32>(TABLE + ((<usize>((entry >> 17) & 0x7f)) << 2)));
  } else {
    if (regA < qe) regC += qe;
    else regA = qe;
    store<u32>(at, load<u32>(TABLE + ((<usize>(entry >> 24)) << 2)));
  }
  do {
    regA <<= 1;
    regC <<= 1;
    if (--regCt === 0) byteOut();
  } while ((regA & 0x8000) === 0);
}

/** Whether `n` bytes at `p` and at `q` are the same. */
function equal(p: usize, q: usize, n: i32): bool {
  let i = 0;
  for (; i + 8 <= n; i += 8) if (load<u64>(p + <usize>i) !== load<u64>(q + <usize>i)) return false;
  for (; i < n; i++) if (load<u8>(p + <usize>i) !== load<u8>(q + <usize>i)) return false;
  return true;
}

/** 64 bits of a row from bit `p` on, the first the most significant (rows are read past their end). */
function bitsFrom(row: usize, p: i32): u64 {
  const shift = <u64>(p & 7);
  return bswap<u64>(load<u64>(row + <usize>(p >> 3))) << shift;
}

/**
 * The first pixel k from `x` on that is black, or after which the context takes in a black pixel
 * of the rows above (k + 3 of row y-2, k + 4 of row y-1); `width` if none. From a pixel in context
 * 0, the pixels up to it are 0s in context 0. 56 pixels a step (a load's top 56 bits are whole).
 */
function zeroRun(x: i32, row0: usize, row1: usize, row2: usize): i32 {
  const end = width;
  for (; x < end; x += 56) {
    const ink = (bitsFrom(row0, x) | bitsFrom(row1, x + 4) | bitsFrom(row2, x + 3)) & ~(<u64>0xff);
    if (ink !== 0) return min(x + <i32>clz(ink), end);
  }
  return end;
}

/**
 * The window on rows y-2 and y-1 at pixel `x`: the two bytes of row y-2 from byte x >> 3 in bits
 * 16-31 and of row y-1 in bits 0-15, shifted left by x & 7, so that pixel x + 3 of row y-2 is bit
 * 28 and x + 4 of row y-1 bit 11 (`codeRow` shifts it once a pixel, up to the next byte: row y-1's
 * bits shifted into row y-2's half stay below bit 24). Read at fixed bits, shifted once, the window
 * and the row's own byte (bit 7) take fewer operations and registers than bits read at shifts
 * worked out from x: scan_hl1396_18p_ccitt's 18 pages 198-214 -> 182-196 ms in TurboFan, 210-222
 * -> 185-189 in Liftoff (with `states` read once a row).
 */
function windowAt(x: i32, row1: usize, row2: usize): i32 {
  const at = <usize>(x >> 3);
  const two = ((<i32>load<u8>(row2 + at)) << 24) | ((<i32>load<u8>(row2 + at, 1)) << 16);
  return (two | ((<i32>load<u8>(row1 + at)) << 8) | (<i32>load<u8>(row1 + at, 1))) << (x & 7);
}

/** Codes the next `count` rows, copied to `begin`'s address. */
export function encodeRows(count: i32): void {
  const rb = rowBytes;
  for (let k = 0; k < count; k++, y++) {
    const row0 = ring + <usize>(y % 3) * stride;
    memory.copy(row0, input + <usize>k * <usize>rb, <usize>rb);
    const row1 = y >= 1 ? ring + <usize>((y + 2) % 3) * stride : zero;
    const row2 = y >= 2 ? ring + <usize>((y + 1) % 3) * stride : zero;
    // Typical prediction's bit first (SLTP in its own context), then the row unless it repeats.
    const same = y > 0 && equal(row0, row1, rb) ? 1 : 0;
    encode(states + ((<usize>TPGD_CONTEXT) << 2), same ^ ltp);
    ltp = same;
    if (!same) codeRow(row0, row1, row2);
  }
}

/**
 * Codes the pixels of row y (`row0`, rows y-1 and y-2 above it): `encode`'s steps with A, C and CT
 * local, RENORME's shifts made at once up to the next byte out. Through `encode` (a call, its
 * registers through globals, a shift at a time), the fifth of the symbols that renormalise (4.6 of
 * scan_hl1396_18p_ccitt's 23.3 million pixels coded one by one) took a fifth of the encoder's time:
 * its 18 pages 260-310 -> 205-235 ms of CPU (TurboFan) and 260-275 -> 205-265 (Liftoff).
 */
function codeRow(row0: usize, row1: usize, row2: usize): void {
  let a = regA;
  let c = regC;
  let ct = regCt;
  // The next pixel's context: 5 pixels of row y-2 (bits 11-15), 7 of row y-1 (4-10), 4 of row
  // y (0-3), each row's leftmost the most significant.
  let next = (((<i32>load<u8>(row2)) >> 5) << 11) | (((<i32>load<u8>(row1)) >> 4) << 4);
  let w = windowAt(0, row1, row2);
  let w0 = <i32>load<u8>(row0);
  const end = width;
  // A global is a load each time it is read, in the loop as well.
  const contexts = states;
  // Pixels before `white` are 0s in context 0 (`zeroRun`, found from a pixel in context 0). Found
  // from a byte where the three rows were white up to 3 pixels before the next byte with ink, such
  // runs left 10 of the 32 million pixels scan_hl1396_18p_ccitt coded one by one in context 0 as 0s
  // (the gaps in text lines).
  let white = 0;
  for (let x = 0; x < end; x++) {
    if (next === 0) {
      // A run of 0s in context 0 while context 0's MPS is 0: each symbol that leaves A at or
      // above 0x8000 only takes Qe from A and adds it to C, so those are coded at once.
      const entry = load<u32>(contexts);
      if ((entry & 0x10000) === 0) {
        if (x >= white) white = zeroRun(x, row0, row1, row2);
        if (x < white) {
          const qe = <i32>(entry & 0xffff);
          const n = min((a - 0x8000) / qe, white - x);
          if (n > 0) {
            a -= n * qe;
            c += n * qe;
            x += n;
            if (x >= end) break;
            w = windowAt(x, row1, row2);
            w0 = (<i32>load<u8>(row0 + <usize>(x >> 3))) << (x & 7);
          }
        }
      }
    }
    // The row's byte from pixel x in bits 7 and up.
    const bit = (w0 >> 7) & 1;
    const at = contexts + ((<usize>next) << 2);
    // Each row's pixels one to the left, and in: bit x+3 of row y-2 and x+4 of row y-1 (bits 28
    // and 11 of the window), and this pixel.
    next = ((next << 1) & 0xf7ee) | ((w >> 17) & 0x800) | ((w >> 7) & 0x10) | bit;
    w <<= 1;
    w0 <<= 1;
    if ((x & 7) === 7) {
      w = windowAt(x + 1, row1, row2);
      w0 = <i32>load<u8>(row0 + <usize>((x >> 3) + 1));
    }
    // CODEMPS and CODELPS (E.2.3-E.2.5): an MPS that leaves A at or above 0x8000 (most of them)
    // takes Qe from A and adds it to C, nothing more.
    const entry = load<u32>(at);
    const qe = <i32>(entry & 0xffff);
    a -= qe;
    if (bit === <i32>((entry >> 16) & 1)) {
      if ((a & 0x8000) !== 0) {
        c += qe;
        continue;
      }
      if (a < qe) a = qe;
      else c += qe;
      store<u32>(at, load<u32>(TABLE + ((<usize>((entry >> 17) & 0x7f)) << 2)));
    } else {
      if (a < qe) c += qe;
      else a = qe;
      store<u32>(at, load<u32>(TABLE + ((<usize>(entry >> 24)) << 2)));
    }
    // RENORME: A and C shifted until A reaches 0x8000, a byte out whenever CT runs out.
    let shift = <i32>clz(a) - 16;
    while (shift >= ct) {
      a <<= ct;
      c <<= ct;
      shift -= ct;
      regC = c;
      regCt = 0;
      byteOut();
      c = regC;
      ct = regCt;
    }
    a <<= shift;
    c <<= shift;
    ct -= shift;
  }
  regA = a;
  regC = c;
  regCt = ct;
}

/** FLUSH (E.2.9): SETBITS, two bytes out, then the marker 0xFFAC. Returns the coded data's length. */
export function finish(): i32 {
  const top = regC + regA;
  regC |= 0xffff;
  if (regC >= top) regC -= 0x8000;
  regC <<= regCt;
  byteOut();
  regC <<= regCt;
  byteOut();
  put(regB);
  if (regB !== 0xff) put(0xff);
  put(0xac);
  return length;
}

/** Where the coded data lie (`finish` gives their length). */
export function output(): usize {
  return out;
}

// The decoder (../jbig2.ts `decodeTemplate0`): the same region (template 0, default adaptive
// pixels, typical prediction when the segment says so), read back from its coded data by the MQ
// decoder of E.3 in the form of its registers Chigh and Clow, as the JavaScript decoder it replaced
// read it, symbol for symbol. A region is coded or decoded whole, one at a time, so the decoder
// lays its buffers out in the encoder's places and keeps its state in the encoder's globals where
// they mean the same (width, y, states, zero, ring, A, CT, LTP): `input` holds the coded data and
// `out` a band of decoded rows, a byte a pixel (1 black), `width` bytes a row.
// test/pdf/codecs/jbig2-wasm-decode.test.ts compares the pixels with a plain decoder written there
// (each pixel's context read from the bitmap, DECODE one symbol at a time) on the encoder's output
// for generated bitmaps, on random bytes with typical prediction and without, and on the corpus's.

// The decoder's own registers (E.3): Chigh and Clow, and where the next byte is read.
let regChigh = 0;
let regClow = 0;
let bp: usize = 0;
let typical = false;

/**
 * Starts decoding a region `w` pixels wide from `length` bytes of coded data, with typical
 * prediction (`tpgdon` not 0) or without, whose rows come out `band` at a time; returns where the
 * coded data go. Rows are `w` bytes and at least 16 bytes of 0 (reading past a row's end gives 0);
 * bytes past the coded data read as 0xFF, as the JavaScript decoder read them.
 */
export function beginDecode(w: i32, length: i32, tpgdon: i32, band: i32): usize {
  width = w;
  stride = <usize>((w + 31) & ~15);
  y = 0;
  typical = tpgdon !== 0;
  ltp = 0;
  out = layOut();
  input = align16(out + <usize>band * <usize>w);
  reach(input + <usize>length + 2);
  store<u16>(input + <usize>length, 0xffff);
  return input;
}

/** BYTEIN (E.3.4): a 0xFF followed by more than 0x8F is a marker, read as 1 bits. */
function byteIn(): void {
  const byte = <i32>load<u8>(bp);
  const next = <i32>load<u8>(bp, 1);
  if (byte === 0xff && next > 0x8f) {
    regClow += 0xff00;
    regCt = 8;
  } else {
    bp++;
    regClow += next << (byte === 0xff ? 9 : 8);
    regCt = byte === 0xff ? 7 : 8;
  }
  if (regClow > 0xffff) {
    regChigh += regClow >> 16;
    regClow &= 0xffff;
  }
}

/** INITDEC (E.3.5). */
function initDecoder(): void {
  bp = input;
  regChigh = <i32>load<u8>(bp);
  regClow = 0;
  regCt = 0;
  byteIn();
  regChigh = ((regChigh << 7) & 0xffff) | ((regClow >> 9) & 0x7f);
  regClow = (regClow << 7) & 0xffff;
  regCt -= 7;
  regA = 0x8000;
}

/**
 * DECODE (E.3.2): a bit in the context whose state's entry is at `at`, with the conditional
 * exchanges, then RENORMD (E.3.3) where A fell below 0x8000.
 */
function decode(at: usize): i32 {
  const entry = load<u32>(at);
  const qe = <i32>(entry & 0xffff);
  let bit = <i32>((entry >> 16) & 1);
  let a = regA - qe;
  // Whether the LPS comes out: LPS_EXCHANGE and MPS_EXCHANGE.
  let lps = false;
  if (regChigh < qe) {
    lps = a >= qe;
    a = qe;
  } else {
    regChigh -= qe;
    if (a & 0x8000) {
      regA = a;
      return bit;
    }
    lps = a < qe;
  }
  if (lps) {
    bit ^= 1;
    store<u32>(at, load<u32>(TABLE + ((<usize>(entry >> 24)) << 2)));
  } else store<u32>(at, load<u32>(TABLE + ((<usize>((entry >> 17) & 0x7f)) << 2)));
  do {
    if (regCt === 0) byteIn();
    a <<= 1;
    regChigh = ((regChigh << 1) & 0xffff) | ((regClow >> 15) & 1);
    regClow = (regClow << 1) & 0xffff;
    regCt--;
  } while ((a & 0x8000) === 0);
  regA = a;
  return bit;
}

/**
 * The first pixel from `x` on after which a context would take in a black pixel of the rows above
 * (x + 3 of row y-2, x + 4 of row y-1), `width` if none: the pixels from an all-0 context up to
 * it keep that context while they decode as 0.
 */
function inkAbove(x: i32, row1: usize, row2: usize): i32 {
  const end = width;
  while (x + 8 <= end && (load<u64>(row2 + <usize>x, 3) | load<u64>(row1 + <usize>x, 4)) === 0) x += 8;
  while (x < end && ((<i32>load<u8>(row2 + <usize>x, 3)) | (<i32>load<u8>(row1 + <usize>x, 4))) === 0) x++;
  return x;
}

/**
 * Decodes the pixels of row y into `row0` (rows y-1 and y-2 above it). A and Chigh are local
 * here, and the symbols that leave A at or above 0x8000 as the MPS (most of them) are decoded
 * here; the rest by `decode`.
 */
function decodeRow(row0: usize, row1: usize, row2: usize): void {
  let a = regA;
  let chigh = regChigh;
  // The context as the encoder's: 5 pixels of row y-2 (bits 11-15), 7 of row y-1 (4-10), 4 of
  // row y (0-3), each row's leftmost the most significant; those left of the row are 0.
  let context =
    ((<i32>load<u8>(row2)) << 13) |
    ((<i32>load<u8>(row2, 1)) << 12) |
    ((<i32>load<u8>(row2, 2)) << 11) |
    ((<i32>load<u8>(row1)) << 7) |
    ((<i32>load<u8>(row1, 1)) << 6) |
    ((<i32>load<u8>(row1, 2)) << 5) |
    ((<i32>load<u8>(row1, 3)) << 4);
  const end = width;
  let ink = -1;
  for (let x = 0; x < end; x++) {
    if (context === 0) {
      // In context 0 whose MPS is 0, each symbol that leaves Chigh at or above 0 and A at or
      // above 0x8000 takes Qe from both and is a 0; those up to the next ink above, at once.
      const entry = load<u32>(states);
      if ((entry & 0x10000) === 0) {
        if (x > ink) ink = inkAbove(x, row1, row2);
        const qe = <i32>(entry & 0xffff);
        const n = min(ink - x, min((a - 0x8000) / qe, chigh / qe));
        if (n > 0) {
          memory.fill(row0 + <usize>x, 0, <usize>n);
          a -= n * qe;
          chigh -= n * qe;
          x += n;
          if (x >= end) break;
        }
      }
    }
    const at = states + ((<usize>context) << 2);
    const entry = load<u32>(at);
    const qe = <i32>(entry & 0xffff);
    let bit = <i32>((entry >> 16) & 1);
    if (chigh >= qe && ((a - qe) & 0x8000) !== 0) {
      a -= qe;
      chigh -= qe;
    } else {
      regA = a;
      regChigh = chigh;
      bit = decode(at);
      a = regA;
      chigh = regChigh;
    }
    store<u8>(row0 + <usize>x, <u8>bit);
    context =
      ((context << 1) & 0xf7ee) |
      ((<i32>load<u8>(row2 + <usize>x, 3)) << 11) |
      ((<i32>load<u8>(row1 + <usize>x, 4)) << 4) |
      bit;
  }
  regA = a;
  regChigh = chigh;
}

/**
 * Decodes the next `count` rows (the first call reads the coded data's first bytes: INITDEC);
 * returns where they lie, `width` bytes a row.
 */
export function decodeRows(count: i32): usize {
  if (y === 0) initDecoder();
  const w = <usize>width;
  for (let k = 0; k < count; k++, y++) {
    const row0 = ring + <usize>(y % 3) * stride;
    const row1 = y >= 1 ? ring + <usize>((y + 2) % 3) * stride : zero;
    const row2 = y >= 2 ? ring + <usize>((y + 1) % 3) * stride : zero;
    // Typical prediction (6.2.5.7): the SLTP bit in its own context; LTP 1 repeats the row above
    // (0s on the first row).
    if (typical) ltp ^= decode(states + ((<usize>TPGD_CONTEXT) << 2));
    if (typical && ltp !== 0) memory.copy(row0, row1, w);
    else decodeRow(row0, row1, row2);
    memory.copy(out + <usize>k * w, row0, w);
  }
  return out;
}
