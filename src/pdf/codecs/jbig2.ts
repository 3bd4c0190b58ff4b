// JBIG2 generic region coding (ITU-T T.88), lossless, for bi-tonal images: the MQ arithmetic
// coder (Annex E) and the generic region of template 0 with its default adaptive pixels and
// typical prediction (6.2.5), written as PDF's embedded stream (/JBIG2Decode without
// /JBIG2Globals: a page information segment and one immediate lossless generic region segment).
// No maintained JavaScript library writes JBIG2; this is the coder jbig2enc (agl/jbig2enc) uses in
// its generic mode, which readers (pdf.js, poppler, MuPDF, Acrobat) decode. Symbol coding (text
// regions) is left out: it is lossy unless every matched symbol is exact, and far more code.
// The per-pixel loops of the encoder and of the decoder of that region (context and MQ coding)
// are WebAssembly (assembly/jbig2.ts); the general decoder, the tables it reads and the segments
// around the coded data are here.
//
// The decoder reads back what the encoder writes, and any other embedded stream made only of
// generic regions (arithmetic, any template and adaptive pixels, typical prediction); streams with
// symbol dictionaries, text, halftone or refinement regions, or MMR coding, are not read.
//
// Bitmaps are packed rows, most significant bit first, each row starting on a byte; in a JBIG2
// bitmap 1 is black. /JBIG2Decode's output is the bitmap inverted (1 white), as a DeviceGray
// image's samples are: `encodeJbig2` takes, and `decodeJbig2` gives, those samples.
import { JBIG2_WASM } from "./jbig2-wasm.ts";

/** Packed 1-bit rows, most significant bit first, `Math.ceil(width / 8)` bytes a row. */
export interface Bits {
  data: Uint8Array;
  width: number;
  height: number;
}

export const rowBytesOf = (width: number) => (width + 7) >> 3;

// Table E.1: Qe, and the next state after an MPS and after an LPS; states 0-46 with MPS 0,
// 47-93 the same with MPS 1 (a switch moves an LPS to the other half). Exported for the
// encoder's test, whose plain coder reads them as the standard lays them out.
export const QE = [
  0x5601, 0x3401, 0x1801, 0x0ac1, 0x0521, 0x0221, 0x5601, 0x5401, 0x4801, 0x3801, 0x3001, 0x2401, 0x1c01, 0x1601,
  0x5601, 0x5401, 0x5101, 0x4801, 0x3801, 0x3401, 0x3001, 0x2801, 0x2401, 0x2201, 0x1c01, 0x1801, 0x1601, 0x1401,
  0x1201, 0x1101, 0x0ac1, 0x09c1, 0x08a1, 0x0521, 0x0441, 0x02a1, 0x0221, 0x0141, 0x0111, 0x0085, 0x0049, 0x0025,
  0x0015, 0x0009, 0x0005, 0x0001, 0x5601,
];
export const NMPS = [
  1, 2, 3, 4, 5, 38, 7, 8, 9, 10, 11, 12, 13, 29, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
  32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 45, 46,
];
export const NLPS = [
  1, 6, 9, 12, 29, 33, 6, 14, 14, 14, 17, 18, 20, 21, 14, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 23, 24, 25, 26, 27,
  28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 46,
];
export const SWITCH = [0, 6, 14];
const STATES = 47;

/** Per state (0-93): Qe, the next state after an MPS, after an LPS, and the MPS (0 or 1). */
const qeOf = new Uint16Array(2 * STATES);
const mpsNext = new Uint8Array(2 * STATES);
const lpsNext = new Uint8Array(2 * STATES);
const mpsOf = new Uint8Array(2 * STATES);
for (let half = 0; half < 2; half++) {
  for (let i = 0; i < STATES; i++) {
    const s = half * STATES + i;
    qeOf[s] = QE[i]!;
    mpsOf[s] = half;
    mpsNext[s] = half * STATES + NMPS[i]!;
    const other = SWITCH.includes(i) ? 1 - half : half;
    lpsNext[s] = other * STATES + NLPS[i]!;
  }
}

interface Jbig2Coder {
  memory: WebAssembly.Memory;
  begin(width: number, height: number, band: number): number;
  encodeRows(count: number): void;
  finish(): number;
  output(): number;
  invertRows(count: number): void;
  beginDecode(width: number, length: number, tpgdon: number, band: number): number;
  decodeRows(count: number): number;
}

/**
 * The encoder's and the decoder's loops (assembly/jbig2.ts, built by `npm run generate` into
 * jbig2-wasm.ts), instantiated once per thread, synchronously, when this module loads (as the
 * quality check's kernels are: images/kernels.ts). A region is coded or decoded whole, in one
 * call of this module, so the two share the instance and its memory.
 */
const coder = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(JBIG2_WASM, "base64")))
  .exports as unknown as Jbig2Coder;

/**
 * Rows go into the encoder's memory, and come out of the decoder's, this many bytes at a time, at
 * most (whole rows, one at least).
 */
const BAND_BYTES = 64 * 1024;

/**
 * The arithmetic-coded data of a generic region (template 0, default adaptive pixels, typical
 * prediction) of a JBIG2 bitmap (1 black). Bits past each row's width must be 0; with `inverse`, the
 * bitmap coded is the inverse of `bitmap` (samples, 0 black), those bits cleared in the coder's memory.
 *
 * The coder runs once per pixel (some nine million on an A4 page at 300 dpi), in WebAssembly
 * (assembly/jbig2.ts): the rows are copied into its memory a band at a time, and runs of white
 * pixels in an all-white context are coded at once there, as the JavaScript coder did.
 */
export function encodeGenericRegion(bitmap: Bits, inverse = false): Uint8Array {
  const { data, width, height } = bitmap;
  const rowBytes = rowBytesOf(width);
  const band = Math.max(1, Math.floor(BAND_BYTES / Math.max(1, rowBytes)));
  const input = coder.begin(width, height, band);
  for (let y = 0; y < height; y += band) {
    const rows = Math.min(band, height - y);
    // The memory's buffer afresh each time: the coder grows it as its output needs.
    new Uint8Array(coder.memory.buffer).set(data.subarray(y * rowBytes, (y + rows) * rowBytes), input);
    if (inverse) coder.invertRows(rows);
    coder.encodeRows(rows);
  }
  const length = coder.finish();
  return new Uint8Array(coder.memory.buffer, coder.output(), length).slice();
}

const u32 = (value: number) => [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];

/** A segment header (7.2): number, type, no referred-to segments, page 1, data length. */
const segmentHeader = (number: number, type: number, length: number) => [...u32(number), type, 0, 1, ...u32(length)];

const PAGE_INFORMATION = 48;
const IMMEDIATE_LOSSLESS_GENERIC_REGION = 39;
/** Template 0's default adaptive pixels (6.2.5.4), as the region segment stores them. */
const DEFAULT_AT = [3, -1, -3, -1, 2, -2, -2, -2];
/**
 * An embedded JBIG2 stream (/JBIG2Decode, no globals) of a 1-bit image: `samples` are the PDF
 * image's (0 black, as DeviceGray draws them), so the bitmap coded is their inverse.
 */
export function encodeJbig2(samples: Bits): Uint8Array {
  const { width, height } = samples;
  // Inverted a band at a time in the coder's memory (no copy of the page is made here).
  const coded = encodeGenericRegion(samples, true);
  const pageInfo = [...u32(width), ...u32(height), 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0];
  const region = [...u32(width), ...u32(height), ...u32(0), ...u32(0), 0, 0x08, ...DEFAULT_AT.map((v) => v & 0xff)];
  const head = [
    ...segmentHeader(0, PAGE_INFORMATION, pageInfo.length),
    ...pageInfo,
    ...segmentHeader(1, IMMEDIATE_LOSSLESS_GENERIC_REGION, region.length + coded.length),
    ...region,
  ];
  const out = new Uint8Array(head.length + coded.length);
  out.set(head);
  out.set(coded, head.length);
  return out;
}

/** The MQ decoder (E.3, in the form of the registers Chigh and Clow), over `data` from `start` to `end`. */
class MqDecoder {
  private chigh: number;
  private clow = 0;
  private a = 0x8000;
  private ct = 0;
  private bp: number;
  private readonly data: Uint8Array;
  private readonly end: number;
  constructor(data: Uint8Array, start: number, end: number) {
    this.data = data;
    this.end = end;
    this.bp = start;
    this.chigh = this.byteAt(start);
    this.byteIn();
    this.chigh = ((this.chigh << 7) & 0xffff) | ((this.clow >> 9) & 0x7f);
    this.clow = (this.clow << 7) & 0xffff;
    this.ct -= 7;
  }
  private byteAt(i: number): number {
    return i < this.end ? this.data[i]! : 0xff;
  }
  /** BYTEIN (E.3.4): a 0xFF followed by more than 0x8F is a marker, read as 1 bits. */
  private byteIn(): void {
    if (this.byteAt(this.bp) === 0xff) {
      if (this.byteAt(this.bp + 1) > 0x8f) {
        this.clow += 0xff00;
        this.ct = 8;
      } else {
        this.bp++;
        this.clow += this.byteAt(this.bp) << 9;
        this.ct = 7;
      }
    } else {
      this.bp++;
      this.clow += this.byteAt(this.bp) << 8;
      this.ct = 8;
    }
    if (this.clow > 0xffff) {
      this.chigh += this.clow >> 16;
      this.clow &= 0xffff;
    }
  }
  /** DECODE (E.3.2): one bit in the context whose state is `states[context]` (0-93). */
  decode(states: Uint8Array, context: number): number {
    const state = states[context]!;
    const qe = qeOf[state]!;
    const mps = mpsOf[state]!;
    let bit: number;
    let a = this.a - qe;
    if (this.chigh < qe) {
      // LPS_EXCHANGE
      if (a < qe) {
        bit = mps;
        states[context] = mpsNext[state]!;
      } else {
        bit = 1 - mps;
        states[context] = lpsNext[state]!;
      }
      a = qe;
    } else {
      this.chigh -= qe;
      if (a & 0x8000) {
        this.a = a;
        return mps;
      }
      // MPS_EXCHANGE
      if (a < qe) {
        bit = 1 - mps;
        states[context] = lpsNext[state]!;
      } else {
        bit = mps;
        states[context] = mpsNext[state]!;
      }
    }
    do {
      if (this.ct === 0) this.byteIn();
      a <<= 1;
      this.chigh = ((this.chigh << 1) & 0xffff) | ((this.clow >> 15) & 1);
      this.clow = (this.clow << 1) & 0xffff;
      this.ct--;
    } while ((a & 0x8000) === 0);
    this.a = a;
    return bit;
  }
}

/** The fixed pixels of each template (6.2.5.3), before the adaptive ones. */
const TEMPLATES: [number, number][][] = [
  [
    [-1, -2],
    [0, -2],
    [1, -2],
    [-2, -1],
    [-1, -1],
    [0, -1],
    [1, -1],
    [2, -1],
    [-4, 0],
    [-3, 0],
    [-2, 0],
    [-1, 0],
  ],
  [
    [-1, -2],
    [0, -2],
    [1, -2],
    [2, -2],
    [-2, -1],
    [-1, -1],
    [0, -1],
    [1, -1],
    [2, -1],
    [-3, 0],
    [-2, 0],
    [-1, 0],
  ],
  [
    [-1, -2],
    [0, -2],
    [1, -2],
    [-2, -1],
    [-1, -1],
    [0, -1],
    [1, -1],
    [-2, 0],
    [-1, 0],
  ],
  [
    [-3, -1],
    [-2, -1],
    [-1, -1],
    [0, -1],
    [1, -1],
    [-4, 0],
    [-3, 0],
    [-2, 0],
    [-1, 0],
  ],
];
const TPGD_CONTEXTS = [0x9b25, 0x0795, 0x00e5, 0x0195];

/**
 * `decodeGenericRegion` for template 0 with the default adaptive pixels (what our encoder and
 * jbig2enc write), in WebAssembly (assembly/jbig2.ts): the coded data are copied into its memory,
 * and the rows come out a band at a time (so that V8 runs a page's later bands on its optimised
 * code), one byte a pixel. There the context slides along three rows, as the encoder's does, the
 * MQ decoder's registers are local variables, and runs of white pixels in an all-white context
 * are decoded at once; the pixels are those of the JavaScript decoder it replaced, symbol for
 * symbol (test/pdf/codecs/jbig2-wasm-decode.test.ts checks them against a plain decoder).
 */
function decodeTemplate0(data: Uint8Array, start: number, end: number, width: number, height: number, tpgdon: boolean) {
  const out = new Uint8Array(width * height);
  const length = Math.max(0, end - start);
  const band = Math.max(1, Math.floor(BAND_BYTES / Math.max(1, width)));
  const input = coder.beginDecode(width, length, tpgdon ? 1 : 0, band);
  new Uint8Array(coder.memory.buffer).set(data.subarray(start, start + length), input);
  for (let y = 0; y < height; y += band) {
    const rows = Math.min(band, height - y);
    const at = coder.decodeRows(rows);
    out.set(new Uint8Array(coder.memory.buffer, at, rows * width), y * width);
  }
  return out;
}

/**
 * Decodes an arithmetic generic region into a bitmap of one byte per pixel (1 black). The context
 * is the template's pixels with the adaptive ones, read top row first, left to right, the first
 * the most significant bit (as the standard numbers them).
 */
function decodeGenericRegion(
  data: Uint8Array,
  start: number,
  end: number,
  width: number,
  height: number,
  template: number,
  tpgdon: boolean,
  at: number[],
): Uint8Array {
  if (template === 0 && at.every((v, i) => v === DEFAULT_AT[i])) {
    return decodeTemplate0(data, start, end, width, height, tpgdon);
  }
  const decoder = new MqDecoder(data, start, end);
  const pixels = TEMPLATES[template]!.slice();
  for (let i = 0; i < (template === 0 ? 4 : 1); i++) pixels.push([at[2 * i]!, at[2 * i + 1]!]);
  pixels.sort((p, q) => p[1] - q[1] || p[0] - q[0]);
  // The standard's order for template 0 puts the adaptive pixels in the places its bit
  // numbering gives them (figure 3); sorted by row then column they fall where the default ones
  // lie, which is how readers number them too.
  const states = new Uint8Array(1 << pixels.length);
  const out = new Uint8Array(width * height);
  const n = pixels.length;
  const dx = Int32Array.from(pixels, (p) => p[0]);
  const dy = Int32Array.from(pixels, (p) => p[1]);
  let ltp = 0;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    if (tpgdon) {
      ltp ^= decoder.decode(states, TPGD_CONTEXTS[template]!);
      if (ltp) {
        if (y > 0) out.copyWithin(row, row - width, row);
        continue;
      }
    }
    for (let x = 0; x < width; x++) {
      let context = 0;
      for (let i = 0; i < n; i++) {
        const px = x + dx[i]!;
        const py = y + dy[i]!;
        const inside = px >= 0 && px < width && py >= 0 && (py < y || (py === y && px < x));
        context = (context << 1) | (inside ? out[py * width + px]! : 0);
      }
      out[row + x] = decoder.decode(states, context);
    }
  }
  return out;
}

/** A region's pixels onto the page's at (rx, ry) with its combination operator (7.4.6.2: or, and, xor, xnor, replace). */
function compose(
  page: Uint8Array,
  width: number,
  height: number,
  region: Uint8Array,
  { rx, ry, rw, rh, op }: { rx: number; ry: number; rw: number; rh: number; op: number },
): void {
  const columns = Math.max(0, Math.min(rw, width - rx));
  for (let y = 0; y < rh && ry + y < height; y++) {
    const to = (ry + y) * width + rx;
    const from = y * rw;
    if (op === 4) {
      page.set(region.subarray(from, from + columns), to);
      continue;
    }
    for (let x = 0; x < columns; x++) {
      const v = region[from + x]!;
      const old = page[to + x]!;
      page[to + x] = op === 0 ? old | v : op === 1 ? old & v : op === 2 ? old ^ v : op === 3 ? 1 - (old ^ v) : v;
    }
  }
}

const readU32 = (data: Uint8Array, at: number) =>
  ((data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!) >>> 0;

/**
 * The samples (0 black) of an embedded JBIG2 stream made only of a page and generic regions
 * (arithmetic coded), undefined for anything else (globals, symbol or halftone coding, MMR,
 * refinement, a stripe of unknown height) or data that do not hold together.
 */
export function decodeJbig2(data: Uint8Array, width: number, height: number): Bits | undefined {
  let pos = 0;
  // The page's default pixel, once its information is read; its bitmap only once a region is drawn
  // on it (a region that is the whole of a blank page is the page: no page is made under it).
  let defaultPixel: number | undefined;
  let page: Uint8Array | undefined;
  const drawn = () => page ?? (page = new Uint8Array(width * height).fill(defaultPixel!));
  try {
    while (pos + 11 <= data.length) {
      const type = data[pos + 4]! & 0x3f;
      const pageSize4 = (data[pos + 4]! & 0x40) !== 0;
      const referred = data[pos + 5]! >> 5;
      let at = pos + 6;
      if (referred === 7) return undefined;
      const number = readU32(data, pos);
      const refSize = number <= 256 ? 1 : number <= 65536 ? 2 : 4;
      at += referred * refSize;
      at += pageSize4 ? 4 : 1;
      const length = readU32(data, at);
      at += 4;
      if (length === 0xffffffff || at + length > data.length) return undefined;
      const body = at;
      pos = at + length;
      if (type === PAGE_INFORMATION) {
        const pageWidth = readU32(data, body);
        const pageHeight = readU32(data, body + 4);
        if (pageHeight === 0xffffffff || pageWidth !== width || pageHeight !== height) return undefined;
        defaultPixel = (data[body + 16]! >> 2) & 1;
        page = undefined;
      } else if (type === 36 || type === 38 || type === 39) {
        if (defaultPixel === undefined) return undefined;
        const rw = readU32(data, body);
        const rh = readU32(data, body + 4);
        const rx = readU32(data, body + 8);
        const ry = readU32(data, body + 12);
        const op = data[body + 16]! & 7;
        const flags = data[body + 17]!;
        if (flags & 1) return undefined;
        const template = (flags >> 1) & 3;
        const tpgdon = (flags & 8) !== 0;
        const atCount = template === 0 ? 8 : 2;
        const atPixels = Array.from(data.subarray(body + 18, body + 18 + atCount), (v) => (v << 24) >> 24);
        const start = body + 18 + atCount;
        if (rw * rh > width * height * 4) return undefined;
        const region = decodeGenericRegion(data, start, pos, rw, rh, template, tpgdon, atPixels);
        // A region that is the whole of a blank page (what encoders write) or-ed, xor-ed or put
        // on it is the page: no pixel-by-pixel combination.
        const whole = !page && defaultPixel === 0 && rx === 0 && ry === 0 && rw === width && rh === height;
        if (whole && (op === 0 || op === 2 || op === 4)) page = region;
        else compose(drawn(), width, height, region, { rx, ry, rw, rh, op });
      } else if (type === 49 || type === 50 || type === 51 || type === 62) {
        // End of page, end of stripe, end of file, extension: nothing to draw.
      } else return undefined;
    }
  } catch {
    return undefined;
  }
  if (defaultPixel === undefined) return undefined;
  return { data: packWhite(drawn(), width, height), width, height };
}

/** Packed samples of a bitmap of a byte a pixel (1 black): 1 bits where it is white, eight pixels a byte. */
function packWhite(page: Uint8Array, width: number, height: number): Uint8Array {
  const rowBytes = rowBytesOf(width);
  const samples = new Uint8Array(rowBytes * height);
  const whole = width >> 3;
  for (let y = 0; y < height; y++) {
    let i = y * width;
    const row = y * rowBytes;
    for (let b = 0; b < whole; b++, i += 8) {
      const black =
        (page[i]! << 7) |
        (page[i + 1]! << 6) |
        (page[i + 2]! << 5) |
        (page[i + 3]! << 4) |
        (page[i + 4]! << 3) |
        (page[i + 5]! << 2) |
        (page[i + 6]! << 1) |
        page[i + 7]!;
      samples[row + b] = ~black & 0xff;
    }
    for (let x = whole * 8; x < width; x++, i++) if (!page[i]) samples[row + (x >> 3)]! |= 0x80 >> (x & 7);
  }
  return samples;
}
