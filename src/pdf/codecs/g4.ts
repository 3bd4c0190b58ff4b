// A decoder of CCITT Group 4 (ITU-T T.6) for the streams libtiff cannot read: PDF's
// /EncodedByteAlign true with /K -1 (each coded row begins on a byte boundary), which TIFF has no
// field for. Written from T.4 (the run-length code tables, 4.1.1-4.1.3; the mode codes, Table 4/T.4)
// and T.6 (2.2: the coding of a row against the one above). libtiff decodes every other CCITT
// stream (codecs/ccitt.ts), and checks this decoder in its tests (test/pdf/codecs/g4.test.ts).
// The rows are decoded in WebAssembly (assembly/g4.ts, built by `npm run generate` into g4-wasm.ts);
// the code tables are made here.
import { G4_WASM } from "./g4-wasm.ts";
import { rowBytesOf } from "./jbig2.ts";
import type { Bits } from "./jbig2.ts";

/** Codes of the terminating runs 0-63, in order (T.4 Table 2). */
export const WHITE_TERMINATING =
  "00110101 000111 0111 1000 1011 1100 1110 1111 10011 10100 00111 01000 001000 000011 110100 110101 " +
  "101010 101011 0100111 0001100 0001000 0010111 0000011 0000100 0101000 0101011 0010011 0100100 0011000 " +
  "00000010 00000011 00011010 00011011 00010010 00010011 00010100 00010101 00010110 00010111 00101000 " +
  "00101001 00101010 00101011 00101100 00101101 00000100 00000101 00001010 00001011 01010010 01010011 " +
  "01010100 01010101 00100100 00100101 01011000 01011001 01011010 01011011 01001010 01001011 00110010 " +
  "00110011 00110100";
export const BLACK_TERMINATING =
  "0000110111 010 11 10 011 0011 0010 00011 000101 000100 0000100 0000101 0000111 00000100 00000111 " +
  "000011000 0000010111 0000011000 0000001000 00001100111 00001101000 00001101100 00000110111 00000101000 " +
  "00000010111 00000011000 000011001010 000011001011 000011001100 000011001101 000001101000 000001101001 " +
  "000001101010 000001101011 000011010010 000011010011 000011010100 000011010101 000011010110 000011010111 " +
  "000001101100 000001101101 000011011010 000011011011 000001010100 000001010101 000001010110 000001010111 " +
  "000001100100 000001100101 000001010010 000001010011 000000100100 000000110111 000000111000 000000100111 " +
  "000000101000 000001011000 000001011001 000000101011 000000101100 000001011010 000001100110 000001100111";
/** Codes of the make-up runs 64, 128, ... 1728 (T.4 Table 3). */
export const WHITE_MAKEUP =
  "11011 10010 010111 0110111 00110110 00110111 01100100 01100101 01101000 01100111 011001100 011001101 " +
  "011010010 011010011 011010100 011010101 011010110 011010111 011011000 011011001 011011010 011011011 " +
  "010011000 010011001 010011010 011000 010011011";
export const BLACK_MAKEUP =
  "0000001111 000011001000 000011001001 000001011011 000000110011 000000110100 000000110101 0000001101100 " +
  "0000001101101 0000001001010 0000001001011 0000001001100 0000001001101 0000001110010 0000001110011 " +
  "0000001110100 0000001110101 0000001110110 0000001110111 0000001010010 0000001010011 0000001010100 " +
  "0000001010101 0000001011010 0000001011011 0000001100100 0000001100101";
/** Make-up runs 1792 to 2560, the same for both colours (T.4 Table 3a). */
export const EXTENDED_MAKEUP =
  "00000001000 00000001100 00000001101 000000010010 000000010011 000000010100 000000010101 000000010110 " +
  "000000010111 000000011100 000000011101 000000011110 000000011111";

/** Bits a code is looked up by. */
export const PEEK = 13;
/** Modes (T.4 Table 4): pass, horizontal, and vertical by -3 to +3. */
export const PASS = 100;
export const HORIZONTAL = 101;
const MODES: [string, number][] = [
  ["0001", PASS],
  ["001", HORIZONTAL],
  ["1", 0],
  ["011", 1],
  ["000011", 2],
  ["0000011", 3],
  ["010", -1],
  ["000010", -2],
  ["0000010", -3],
];

/** A table of the next 13 bits to (code length << 16) | (value + 8); 0 where no code starts. */
function tableOf(codes: [string, number][]): Uint32Array {
  const table = new Uint32Array(1 << PEEK);
  for (const [code, value] of codes) {
    const first = parseInt(code, 2) << (PEEK - code.length);
    table.fill((code.length << 16) | (value + 8), first, first + (1 << (PEEK - code.length)));
  }
  return table;
}

function runTable(terminating: string, makeup: string): Uint32Array {
  const codes: [string, number][] = [];
  terminating.split(" ").forEach((code, run) => codes.push([code, run]));
  makeup.split(" ").forEach((code, i) => codes.push([code, 64 * (i + 1)]));
  EXTENDED_MAKEUP.split(" ").forEach((code, i) => codes.push([code, 1792 + 64 * i]));
  return tableOf(codes);
}

/**
 * The white runs', black runs' and modes' tables: the next 13 bits to (code length << 16) | (value
 * + 8), 0 where no code starts. Exported for the tests' JavaScript decoder.
 */
export const g4Tables = () => ({
  white: runTable(WHITE_TERMINATING, WHITE_MAKEUP),
  black: runTable(BLACK_TERMINATING, BLACK_MAKEUP),
  modes: tableOf(MODES),
});

interface G4Decoder {
  memory: WebAssembly.Memory;
  tables(): number;
  begin(width: number, length: number, band: number, byteAlign: number, blackIs1: number): number;
  decodeRows(count: number): number;
  output(): number;
}

let instance: G4Decoder | undefined;
/**
 * The decoder's loop (assembly/g4.ts), instantiated once per thread, synchronously, at its first
 * stream (most processes never see one), with the white runs', black runs' and modes' tables
 * written into its memory.
 */
const decoderOf = () =>
  (instance ??= (() => {
    const exports = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(G4_WASM, "base64")))
      .exports as unknown as G4Decoder;
    const { white, black, modes } = g4Tables();
    const at = exports.tables();
    [white, black, modes].forEach((table, i) =>
      new Uint32Array(exports.memory.buffer, at + i * table.byteLength, table.length).set(table),
    );
    return exports;
  })());

/** Rows come out of the decoder's memory this many bytes at a time, at most (whole rows, one at least). */
const BAND_BYTES = 64 * 1024;

/**
 * The samples of a Group 4 stream of `width` x `height` (0 for black unless blackIs1), each row
 * byte-aligned when `byteAlign`; undefined for data that is not such a stream.
 *
 * The rows are decoded in WebAssembly (assembly/g4.ts), a band at a time: the coded data are copied
 * into its memory, and the rows out. In JavaScript (a reader object's methods for each code, which
 * the lean engine processes' V8 inlined little of) decoding was 15-20 % of
 * scan_hl1396_18p_ccitt's job.
 */
export function decodeG4(
  data: Uint8Array,
  width: number,
  height: number,
  byteAlign: boolean,
  blackIs1: boolean,
): Bits | undefined {
  const decoder = decoderOf();
  const rowBytes = rowBytesOf(width);
  const out = new Uint8Array(rowBytes * height);
  const band = Math.max(1, Math.floor(BAND_BYTES / Math.max(1, rowBytes)));
  const input = decoder.begin(width, data.length, band, byteAlign ? 1 : 0, blackIs1 ? 1 : 0);
  new Uint8Array(decoder.memory.buffer).set(data, input);
  for (let y = 0; y < height; y += band) {
    const rows = Math.min(band, height - y);
    if (decoder.decodeRows(rows) !== 0) return undefined;
    out.set(new Uint8Array(decoder.memory.buffer, decoder.output(), rows * rowBytes), y * rowBytes);
  }
  return { data: out, width, height };
}
