// Lossless JPEG optimisation: the same DCT coefficients, coded with Huffman tables made for this
// image instead of the generic ones of the standard (what `jpegtran -optimize` does). Scanners and
// cameras nearly always use the generic tables; their JPEGs shrink by 5 to 20 %, and every
// decoder draws exactly the same pixels (the coefficients do not change, only their codes).
//
// Only baseline and extended sequential Huffman JPEGs (SOF0, SOF1) are rewritten; progressive,
// lossless, arithmetic-coded and hierarchical ones, and anything we do not read in full, come
// back undefined (the stream stays as it is). The result is decoded again and compared, symbol
// by symbol (through a hash: nothing per symbol is kept, memory stays at the size of the output),
// with the original before it is used.

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
const DHT = 0xc4;
const DRI = 0xdd;
const RST0 = 0xd0;

interface HuffmanTable {
  /** code length (1..16) → number of codes */
  counts: Uint8Array;
  symbols: Uint8Array;
  /** Decoding: for each length, the largest code (-1: none) and where its symbols start. */
  maxCode: Int32Array;
  valueOffset: Int32Array;
  /** Encoding: code and length of each symbol (length 0: not in the table). */
  codes: Uint16Array;
  lengths: Uint8Array;
  /** Decoding codes of up to LOOKAHEAD bits at once: length << 8 | symbol, 0 when longer. */
  lookahead: Uint16Array;
}

const LOOKAHEAD = 9;

function buildTable(counts: Uint8Array, symbols: Uint8Array): HuffmanTable | undefined {
  const maxCode = new Int32Array(18).fill(-1);
  const valueOffset = new Int32Array(18);
  const codes = new Uint16Array(256);
  const lengths = new Uint8Array(256);
  let code = 0;
  let k = 0;
  for (let length = 1; length <= 16; length++) {
    const count = counts[length - 1]!;
    valueOffset[length] = k - code;
    for (let i = 0; i < count; i++) {
      if (k >= symbols.length) return undefined;
      const symbol = symbols[k++]!;
      codes[symbol] = code;
      lengths[symbol] = length;
      code++;
    }
    if (count > 0) maxCode[length] = code - 1;
    if (code > 1 << length) return undefined; // over-subscribed
    code <<= 1;
  }
  const lookahead = new Uint16Array(1 << LOOKAHEAD);
  for (let symbol = 0; symbol < 256; symbol++) {
    const length = lengths[symbol]!;
    if (length === 0 || length > LOOKAHEAD) continue;
    const first = codes[symbol]! << (LOOKAHEAD - length);
    lookahead.fill((length << 8) | symbol, first, first + (1 << (LOOKAHEAD - length)));
  }
  return { counts, symbols, maxCode, valueOffset, codes, lengths, lookahead };
}

interface Component {
  id: number;
  h: number;
  v: number;
}

interface Frame {
  width: number;
  height: number;
  components: Component[];
  hMax: number;
  vMax: number;
}

interface Scan {
  /** Index into frame.components, DC table, AC table (0..3) of each component of the scan. */
  components: { index: number; dc: number; ac: number }[];
  /** Offset of the entropy-coded data and of the marker that ends it. */
  start: number;
  end: number;
  restartInterval: number;
  /** Segments to write before this scan's SOS (everything but DHT), and the SOS segment itself. */
  before: Uint8Array[];
  header: Uint8Array;
  dc: (HuffmanTable | undefined)[];
  ac: (HuffmanTable | undefined)[];
}

interface Parsed {
  frame: Frame;
  scans: Scan[];
  /** Segments after the last scan (before EOI). */
  after: Uint8Array[];
}

const u16 = (data: Uint8Array, at: number) => (data[at]! << 8) | data[at + 1]!;

/** Where the entropy-coded data starting at `at` ends: the first marker other than RSTn. */
function entropyEnd(data: Uint8Array, at: number): number {
  for (let i = at; i + 1 < data.length; i++) {
    if (data[i] !== 0xff) continue;
    const next = data[i + 1]!;
    if (next === 0 || (next >= RST0 && next <= RST0 + 7) || next === 0xff) continue;
    return i;
  }
  return data.length;
}

const SOF0 = 0xc0;
const SOF1 = 0xc1;

/** A baseline or extended sequential frame header's body (after its length), if this codec takes it. */
function frameOf(body: Uint8Array): Frame | undefined {
  if (body.length < 6) return undefined;
  const count = body[5]!;
  if (body.length < 6 + count * 3 || count < 1 || count > 4) return undefined;
  const components: Component[] = [];
  for (let i = 0; i < count; i++) {
    const sampling = body[6 + i * 3 + 1]!;
    const h = sampling >> 4;
    const v = sampling & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4) return undefined;
    components.push({ id: body[6 + i * 3]!, h, v });
  }
  const height = u16(body, 1);
  const width = u16(body, 3);
  if (height === 0 || width === 0) return undefined; // height 0: set later by DNL
  return {
    width,
    height,
    components,
    hMax: Math.max(...components.map((c) => c.h)),
    vMax: Math.max(...components.map((c) => c.v)),
  };
}

/** The blocks of one component: what a scan of that component alone codes. */
const componentBlocks = (frame: Frame, c: Component) =>
  Math.ceil(Math.ceil((frame.width * c.h) / frame.hMax) / 8) *
  Math.ceil(Math.ceil((frame.height * c.v) / frame.vMax) / 8);

function parse(data: Uint8Array): Parsed | undefined {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== SOI) return undefined;
  let at = 2;
  let frame: Frame | undefined;
  const dc: (HuffmanTable | undefined)[] = [undefined, undefined, undefined, undefined];
  const ac: (HuffmanTable | undefined)[] = [undefined, undefined, undefined, undefined];
  let restartInterval = 0;
  let pending: Uint8Array[] = [];
  const scans: Scan[] = [];
  for (;;) {
    // Fill bytes (0xFF) may precede a marker.
    while (at < data.length && data[at] === 0xff && data[at + 1] === 0xff) at++;
    if (at + 1 >= data.length || data[at] !== 0xff) return undefined;
    const marker = data[at + 1]!;
    if (marker === EOI) break;
    if (marker === SOI || (marker >= RST0 && marker <= RST0 + 7) || marker === 0x01) return undefined;
    if (at + 4 > data.length) return undefined;
    const length = u16(data, at + 2);
    const end = at + 2 + length;
    if (length < 2 || end > data.length) return undefined;
    const segment = data.subarray(at, end);
    const body = data.subarray(at + 4, end);
    if (marker === SOF0 || marker === SOF1) {
      if (frame) return undefined;
      frame = frameOf(body);
      if (!frame) return undefined;
      pending.push(segment);
    } else if ((marker >= 0xc2 && marker <= 0xcf && marker !== DHT && marker !== 0xc8) || marker === 0xdc) {
      return undefined; // progressive, lossless, hierarchical, arithmetic; DNL
    } else if (marker === DHT) {
      let p = 0;
      while (p < body.length) {
        const tc = body[p]! >> 4;
        const th = body[p]! & 15;
        if (tc > 1 || th > 3 || p + 17 > body.length) return undefined;
        const counts = body.slice(p + 1, p + 17);
        const total = counts.reduce((sum, c) => sum + c, 0);
        if (p + 17 + total > body.length) return undefined;
        const table = buildTable(counts, body.slice(p + 17, p + 17 + total));
        if (!table) return undefined;
        (tc === 0 ? dc : ac)[th] = table;
        p += 17 + total;
      }
    } else if (marker === DRI) {
      if (body.length < 2) return undefined;
      restartInterval = u16(body, 0);
      pending.push(segment);
    } else if (marker === SOS) {
      if (!frame || body.length < 1) return undefined;
      const count = body[0]!;
      if (body.length < 1 + count * 2 + 3 || count < 1 || count > 4) return undefined;
      const components: Scan["components"] = [];
      for (let i = 0; i < count; i++) {
        const id = body[1 + i * 2]!;
        const index = frame.components.findIndex((c) => c.id === id);
        const tables = body[2 + i * 2]!;
        if (index < 0 || tables >> 4 > 3 || (tables & 15) > 3) return undefined;
        components.push({ index, dc: tables >> 4, ac: tables & 15 });
      }
      // Baseline/sequential: the spectral selection is the whole block, no successive approximation.
      const ss = body[1 + count * 2]!;
      const se = body[2 + count * 2]!;
      const approximation = body[3 + count * 2]!;
      if (ss !== 0 || se !== 63 || approximation !== 0) return undefined;
      const start = end;
      const stop = entropyEnd(data, start);
      scans.push({
        components,
        start,
        end: stop,
        restartInterval,
        before: pending,
        header: segment,
        dc: [...dc],
        ac: [...ac],
      });
      pending = [];
      at = stop;
      continue;
    } else {
      pending.push(segment); // APPn, COM, DQT, …
    }
    at = end;
  }
  if (!frame || scans.length === 0) return undefined;
  return { frame, scans, after: pending };
}

class BitReader {
  private readonly data: Uint8Array;
  private at: number;
  private readonly end: number;
  /**
   * The last bits read, `bits` of them unconsumed at the bottom. Kept to 24 bits (read ahead while
   * 16 or fewer are left: codes and extra bits are 16 at most), so that it stays a small integer:
   * a 32-bit buffer went over V8's small integers and made a heap number per byte read, some
   * tens of megabytes of garbage over a scan's pages.
   */
  private buffer = 0;
  private bits = 0;
  /** Zero bits added past a marker or the end (decoders do the same); reading them is an error. */
  private padding = 0;
  /** A code that is in no table. */
  private invalid = false;
  constructor(data: Uint8Array, start: number, end: number) {
    this.data = data;
    this.at = start;
    this.end = end;
  }
  private fill(): void {
    while (this.bits <= 16) {
      let byte = 0;
      if (this.padding === 0 && this.at < this.end) {
        byte = this.data[this.at]!;
        if (byte !== 0xff) this.at++;
        else if (this.data[this.at + 1] === 0) this.at += 2;
        else {
          byte = 0;
          this.padding += 8;
        }
      } else {
        this.padding += 8;
      }
      this.buffer = ((this.buffer << 8) | byte) & 0xffffff;
      this.bits += 8;
    }
  }
  /** Whether what was read so far was all data (no padding, no bad code). */
  get intact(): boolean {
    return !this.invalid && this.padding <= this.bits;
  }
  bit(): number {
    if (this.bits === 0) this.fill();
    this.bits--;
    return (this.buffer >>> this.bits) & 1;
  }
  read(count: number): number {
    if (count === 0) return 0;
    if (this.bits < count) this.fill();
    this.bits -= count;
    return (this.buffer >>> this.bits) & ((1 << count) - 1);
  }
  decode(table: HuffmanTable): number {
    if (this.bits < LOOKAHEAD) this.fill();
    const entry = table.lookahead[(this.buffer >>> (this.bits - LOOKAHEAD)) & ((1 << LOOKAHEAD) - 1)]!;
    if (entry !== 0) {
      this.bits -= entry >> 8;
      return entry & 0xff;
    }
    let code = 0;
    for (let length = 1; length <= 16; length++) {
      code = (code << 1) | this.bit();
      if (code <= table.maxCode[length]!) return table.symbols[code + table.valueOffset[length]!]!;
    }
    this.invalid = true;
    return 0;
  }
  /**
   * At a restart: the rest of the current byte is padding, then an RSTn marker must follow.
   * False when it does not.
   */
  restart(): boolean {
    // Whole bytes still buffered were read ahead: only the marker may come after the padding.
    if (this.bits - this.padding >= 8) return false;
    this.bits = 0;
    this.buffer = 0;
    this.padding = 0;
    if (this.at + 1 < this.end && this.data[this.at] === 0xff) {
      const marker = this.data[this.at + 1]!;
      if (marker >= RST0 && marker <= RST0 + 7) {
        this.at += 2;
        return true;
      }
    }
    return false;
  }
}

class BitWriter {
  private chunks: Uint8Array[] = [];
  private out: Uint8Array;
  private length = 0;
  private buffer = 0;
  private bits = 0;
  constructor(expected: number) {
    this.out = new Uint8Array(Math.max(1024, expected));
  }
  private byte(value: number): void {
    if (this.length === this.out.length) {
      this.chunks.push(this.out);
      this.out = new Uint8Array(this.out.length * 2);
      this.length = 0;
    }
    this.out[this.length++] = value;
  }
  write(value: number, count: number): void {
    this.buffer = ((this.buffer << count) | (value & ((1 << count) - 1))) >>> 0;
    this.bits += count;
    while (this.bits >= 8) {
      const byte = (this.buffer >>> (this.bits - 8)) & 0xff;
      this.byte(byte);
      if (byte === 0xff) this.byte(0);
      this.bits -= 8;
    }
    this.buffer &= (1 << this.bits) - 1;
  }
  /** Pads the last byte with 1 bits (as the standard says). */
  flush(): void {
    if (this.bits > 0) this.write((1 << (8 - this.bits)) - 1, 8 - this.bits);
  }
  marker(code: number): void {
    this.byte(0xff);
    this.byte(code);
  }
  bytes(data: Uint8Array): void {
    for (const value of data) this.byte(value);
  }
  result(): Uint8Array {
    const total = this.chunks.reduce((sum, chunk) => sum + chunk.length, 0) + this.length;
    const result = new Uint8Array(total);
    let at = 0;
    for (const chunk of this.chunks) {
      result.set(chunk, at);
      at += chunk.length;
    }
    result.set(this.out.subarray(0, this.length), at);
    return result;
  }
}

/** What is done with each decoded symbol: slot 0-3 DC tables, 4-7 AC tables; value; extra bits. */
interface Sink {
  symbol(slot: number, value: number, extra: number): void;
  restart(): void;
}

/** Two 32-bit hashes of the symbols, to compare two codings of the same data without storing them. */
class Hasher implements Sink {
  a = 0x811c9dc5;
  b = 0x12345678;
  symbol(slot: number, value: number, extra: number): void {
    this.mix((slot << 24) | (value << 16) | extra);
  }
  restart(): void {
    this.mix(0x0f000000);
  }
  private mix(word: number): void {
    this.a = Math.imul(this.a ^ word, 0x01000193);
    this.b = Math.imul(this.b ^ word, 0x5bd1e995) ^ (this.b >>> 15);
  }
  equals(other: Hasher): boolean {
    return this.a === other.a && this.b === other.b;
  }
}

class Counter extends Hasher {
  readonly frequencies = Array.from({ length: 8 }, () => new Uint32Array(256));
  override symbol(slot: number, value: number, extra: number): void {
    this.frequencies[slot]![value]!++;
    super.symbol(slot, value, extra);
  }
}

class Encoder implements Sink {
  private readonly writer: BitWriter;
  private readonly tables: (HuffmanTable | undefined)[];
  private restarts = 0;
  /** A symbol had no code in the new tables (cannot happen, but is checked). */
  missing = false;
  constructor(writer: BitWriter, tables: (HuffmanTable | undefined)[]) {
    this.writer = writer;
    this.tables = tables;
  }
  symbol(slot: number, value: number, extra: number): void {
    const table = this.tables[slot];
    const length = table ? table.lengths[value]! : 0;
    if (length === 0) {
      this.missing = true;
      return;
    }
    this.writer.write(table!.codes[value]!, length);
    const extraLength = slot < 4 ? value : value & 15;
    if (extraLength > 0) this.writer.write(extra, extraLength);
  }
  restart(): void {
    this.writer.flush();
    this.writer.marker(RST0 + (this.restarts++ & 7));
  }
}

/** Decodes the scan's entropy-coded data into `out`; false if it does not decode in full. */
function decodeScan(data: Uint8Array, frame: Frame, scan: Scan, out: Sink): boolean {
  const reader = new BitReader(data, scan.start, scan.end);
  const single = scan.components.length === 1;
  const blocks: { dc: HuffmanTable; ac: HuffmanTable; dcSlot: number; acSlot: number; count: number }[] = [];
  for (const { index, dc, ac } of scan.components) {
    const dcTable = scan.dc[dc];
    const acTable = scan.ac[ac];
    if (!dcTable || !acTable) return false;
    const c = frame.components[index]!;
    blocks.push({ dc: dcTable, ac: acTable, dcSlot: dc, acSlot: 4 + ac, count: single ? 1 : c.h * c.v });
  }
  let mcus: number;
  if (single) {
    mcus = componentBlocks(frame, frame.components[scan.components[0]!.index]!);
  } else {
    mcus = Math.ceil(frame.width / (8 * frame.hMax)) * Math.ceil(frame.height / (8 * frame.vMax));
  }
  for (let mcu = 0; mcu < mcus; mcu++) {
    if (scan.restartInterval > 0 && mcu > 0 && mcu % scan.restartInterval === 0) {
      if (!reader.restart()) return false;
      out.restart();
    }
    // Indexed, not for-of: an iterator per MCU was most of this function's garbage.
    for (let b = 0; b < blocks.length; b++) {
      const { dc, ac, dcSlot, acSlot, count } = blocks[b]!;
      for (let n = 0; n < count; n++) {
        const size = reader.decode(dc);
        if (size > 16) return false;
        out.symbol(dcSlot, size, reader.read(size));
        for (let k = 1; k < 64;) {
          const rs = reader.decode(ac);
          const s = rs & 15;
          out.symbol(acSlot, rs, reader.read(s));
          if (s === 0) {
            if (rs !== 0xf0) break;
            k += 16;
          } else {
            k += (rs >> 4) + 1;
          }
          if (k > 64) return false;
        }
      }
      if (!reader.intact) return false;
    }
  }
  return reader.intact;
}

/** Optimal code lengths for the frequencies (ISO 10918-1 K.2, as libjpeg does it). */
function optimalTable(frequencies: Uint32Array): { counts: Uint8Array; symbols: Uint8Array } {
  const freq = new Float64Array(257);
  for (let i = 0; i < 256; i++) freq[i] = frequencies[i]!;
  freq[256] = 1; // a reserved code point: no code is all ones
  const codeSize = new Int32Array(257);
  const others = new Int32Array(257).fill(-1);
  for (;;) {
    let c1 = -1;
    let v = Infinity;
    for (let i = 0; i <= 256; i++) {
      if (freq[i]! > 0 && freq[i]! <= v) {
        v = freq[i]!;
        c1 = i;
      }
    }
    let c2 = -1;
    v = Infinity;
    for (let i = 0; i <= 256; i++) {
      if (freq[i]! > 0 && freq[i]! <= v && i !== c1) {
        v = freq[i]!;
        c2 = i;
      }
    }
    if (c2 < 0) break;
    freq[c1] = freq[c1]! + freq[c2]!;
    freq[c2] = 0;
    codeSize[c1]!++;
    while (others[c1]! >= 0) {
      c1 = others[c1]!;
      codeSize[c1]!++;
    }
    others[c1] = c2;
    codeSize[c2]!++;
    while (others[c2]! >= 0) {
      c2 = others[c2]!;
      codeSize[c2]!++;
    }
  }
  const bits = new Int32Array(33);
  for (let i = 0; i <= 256; i++) if (codeSize[i]) bits[codeSize[i]!]!++;
  for (let i = 32; i > 16; i--) {
    while (bits[i]! > 0) {
      let j = i - 2;
      while (bits[j] === 0) j--;
      bits[i] = bits[i]! - 2;
      bits[i - 1]!++;
      bits[j + 1] = bits[j + 1]! + 2;
      bits[j]!--;
    }
  }
  let i = 16;
  while (bits[i] === 0) i--;
  bits[i]!--; // drop the reserved code point
  const counts = new Uint8Array(16);
  for (let length = 1; length <= 16; length++) counts[length - 1] = bits[length]!;
  const symbols: number[] = [];
  for (let length = 1; length <= 32; length++) {
    for (let s = 0; s < 256; s++) if (codeSize[s] === length) symbols.push(s);
  }
  return { counts, symbols: Uint8Array.from(symbols) };
}

function dhtSegment(entries: { tc: number; th: number; counts: Uint8Array; symbols: Uint8Array }[]): Uint8Array {
  const length = 2 + entries.reduce((sum, e) => sum + 17 + e.symbols.length, 0);
  const out = new Uint8Array(2 + length);
  out[0] = 0xff;
  out[1] = DHT;
  out[2] = length >> 8;
  out[3] = length & 0xff;
  let at = 4;
  for (const { tc, th, counts, symbols } of entries) {
    out[at++] = (tc << 4) | th;
    out.set(counts, at);
    at += 16;
    out.set(symbols, at);
    at += symbols.length;
  }
  return out;
}

/**
 * The JPEG with optimal Huffman tables, or undefined when it is not one we rewrite, does not
 * decode in full, or would not get smaller.
 */
export function optimiseJpeg(data: Uint8Array): Uint8Array | undefined {
  const parsed = parse(data);
  if (!parsed) return undefined;
  const { frame } = parsed;
  const writer = new BitWriter(data.length);
  writer.bytes(data.subarray(0, 2));
  const hashes: Hasher[] = [];
  for (const scan of parsed.scans) {
    // 1. The frequencies of the symbols of each table this scan uses.
    const counter = new Counter();
    if (!decodeScan(data, frame, scan, counter)) return undefined;
    hashes.push(counter);
    const tables: (HuffmanTable | undefined)[] = new Array<undefined>(8).fill(undefined);
    const entries: { tc: number; th: number; counts: Uint8Array; symbols: Uint8Array }[] = [];
    const slots = new Set(scan.components.flatMap(({ dc, ac }) => [dc, 4 + ac]));
    for (const slot of slots) {
      const optimal = optimalTable(counter.frequencies[slot]!);
      const table = buildTable(optimal.counts, optimal.symbols);
      if (!table) return undefined;
      tables[slot] = table;
      entries.push({ tc: slot < 4 ? 0 : 1, th: slot & 3, ...optimal });
    }
    // 2. The segments before the scan, the new tables, the scan header, and the data coded anew.
    for (const segment of scan.before) writer.bytes(segment);
    writer.bytes(dhtSegment(entries));
    writer.bytes(scan.header);
    const encoder = new Encoder(writer, tables);
    if (!decodeScan(data, frame, scan, encoder) || encoder.missing) return undefined;
    writer.flush();
  }
  for (const segment of parsed.after) writer.bytes(segment);
  writer.marker(EOI);
  const result = writer.result();
  if (result.length >= data.length) return undefined;
  // 3. The new file must decode to the very same symbols.
  const again = parse(result);
  if (!again || again.scans.length !== parsed.scans.length) return undefined;
  for (let i = 0; i < again.scans.length; i++) {
    const hasher = new Hasher();
    if (!decodeScan(result, again.frame, again.scans[i]!, hasher) || !hasher.equals(hashes[i]!)) return undefined;
  }
  return result;
}

/** Counts symbols, extra bits and restarts: what the size of a scan coded anew depends on. */
class SizeCounter extends Counter {
  extraBits = 0;
  restarts = 0;
  override symbol(slot: number, value: number, _extra: number): void {
    this.frequencies[slot]![value]!++;
    this.extraBits += slot < 4 ? value : value & 15;
  }
  override restart(): void {
    this.restarts++;
  }
}

/**
 * A lower bound of what `optimiseJpeg` makes of the JPEG (its size when that would not be smaller),
 * in one decoding pass instead of three: the segments, the new tables and the coded bits, without
 * the stuffed bytes and the padding at restarts. Undefined when it is not a JPEG `optimiseJpeg`
 * rewrites.
 */
export function optimisedJpegSizeAtLeast(data: Uint8Array): number | undefined {
  const parsed = parse(data);
  if (!parsed) return undefined;
  let bytes = 4; // SOI, EOI
  for (const segment of parsed.after) bytes += segment.length;
  for (const scan of parsed.scans) {
    const counter = new SizeCounter();
    if (!decodeScan(data, parsed.frame, scan, counter)) return undefined;
    for (const segment of scan.before) bytes += segment.length;
    bytes += scan.header.length + 4; // the DHT marker and length
    let bits = counter.extraBits;
    const slots = new Set(scan.components.flatMap(({ dc, ac }) => [dc, 4 + ac]));
    for (const slot of slots) {
      const frequencies = counter.frequencies[slot]!;
      const { counts, symbols } = optimalTable(frequencies);
      bytes += 17 + symbols.length;
      let k = 0;
      for (let length = 1; length <= 16; length++) {
        for (let i = 0; i < counts[length - 1]!; i++) bits += frequencies[symbols[k++]!]! * length;
      }
    }
    bytes += Math.ceil(bits / 8) + 2 * counter.restarts;
  }
  return Math.min(bytes, data.length);
}

/**
 * At most the bytes of any JPEG `optimiseJpeg` can make of this one (or of the JPEG itself): each
 * block codes a DC symbol and at least one AC symbol, each of at least one bit, and every scan
 * codes at least the blocks of one component. Read from the segments up to the frame header alone
 * (no scan is walked); 0 (no bound) when that header is not one `optimiseJpeg` takes.
 */
export function codedBytesAtLeast(data: Uint8Array): number {
  let at = 2;
  for (;;) {
    while (at < data.length && data[at] === 0xff && data[at + 1] === 0xff) at++; // fill bytes
    if (at + 4 > data.length || data[at] !== 0xff) return 0;
    const marker = data[at + 1]!;
    const end = at + 2 + u16(data, at + 2);
    if (marker === SOS || marker === EOI || end > data.length) return 0;
    if (marker !== SOF0 && marker !== SOF1) {
      at = end;
      continue;
    }
    const frame = frameOf(data.subarray(at + 4, end));
    if (!frame) return 0;
    const blocks = Math.min(...frame.components.map((c) => componentBlocks(frame, c)));
    return Math.min(data.length, Math.ceil((2 * blocks) / 8));
  }
}

const APP2 = 0xe2;
/** "ICC_PROFILE\0": an APP2 segment holding (a chunk of) an embedded ICC profile. */
const ICC_SIGNATURE = [0x49, 0x43, 0x43, 0x5f, 0x50, 0x52, 0x4f, 0x46, 0x49, 0x4c, 0x45, 0x00];

/**
 * The JPEG without the ICC profile it embeds (its APP2 "ICC_PROFILE" segments), or undefined when
 * it embeds none or its segments cannot be followed up to the first scan. Nothing else changes:
 * the same markers, tables and coded data, so every decoder draws the same pixels. For an image
 * whose PDF colour space is ICCBased the profile is dead weight: a PDF reader takes the image's
 * colours from its /ColorSpace, never from the JPEG (cameras and Photoshop embed profiles of
 * several hundred kilobytes).
 */
export function withoutIccProfile(data: Uint8Array): Uint8Array | undefined {
  if (data[0] !== 0xff || data[1] !== SOI) return undefined;
  const kept: Uint8Array[] = [];
  let from = 0;
  let pos = 2;
  for (;;) {
    if (pos + 4 > data.length || data[pos] !== 0xff) return undefined;
    const marker = data[pos + 1]!;
    if (marker === 0xff) {
      pos++;
      continue;
    }
    if (marker === SOS) break; // the header is over: the rest is copied as it is
    if (marker === SOI || marker === EOI || marker === 0x01 || (marker >= RST0 && marker <= RST0 + 7)) {
      pos += 2;
      continue;
    }
    const length = (data[pos + 2]! << 8) | data[pos + 3]!;
    if (length < 2 || pos + 2 + length > data.length) return undefined;
    const isProfile =
      marker === APP2 &&
      length >= 2 + ICC_SIGNATURE.length &&
      ICC_SIGNATURE.every((byte, i) => data[pos + 4 + i] === byte);
    if (isProfile) {
      kept.push(data.subarray(from, pos));
      from = pos + 2 + length;
    }
    pos += 2 + length;
  }
  if (kept.length === 0) return undefined;
  kept.push(data.subarray(from));
  const out = new Uint8Array(kept.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of kept) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
