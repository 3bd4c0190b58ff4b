// CCITT fax (ITU-T T.4 and T.6: G3 and G4) images decoded by libtiff through libvips: the stream
// as the one strip of a TIFF built around it; byte-aligned G4, which TIFF cannot say, by codecs/g4.ts.
// The ground floor of the passes that read bi-tonal samples: the bi-tonal pass
// (images/bitonal-images.ts) and OCR (ocr/page-image.ts).
import { PDFBool, PDFName } from "@cantoo/pdf-lib";
import type { PDFDict } from "@cantoo/pdf-lib";
import sharp from "sharp";
import { N, numberOf } from "../streams/filters.ts";
import { decodeG4 } from "./g4.ts";
import { rowBytesOf } from "./jbig2.ts";
import type { Bits } from "./jbig2.ts";

/** Whether a Uint32Array reads a buffer's first byte as its word's low byte. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Each byte value with its bits in the reverse order, then the same inverted. */
const REVERSED = (() => {
  const table = new Uint8Array(512);
  for (let v = 0; v < 256; v++) for (let bit = 0; bit < 8; bit++) if (v & (1 << bit)) table[v]! |= 0x80 >> bit;
  for (let v = 0; v < 256; v++) table[256 + v] = ~table[v]! & 0xff;
  return table;
})();

/**
 * Packed bits of gray samples (at least 128: 1). Where every row starts on a 4-byte boundary, a
 * byte is made of two 32-bit words: the four top bits of a word gathered by one multiplication
 * (bits 7, 15, 23 and 31 moved by 21, 14, 7 and 0 to bits 28-31, no two products overlapping) and
 * the eight put in the PDF's order by a table. Setting bits one sample at a time was a third of a
 * 600 dpi G4 scan's CPU time, eight samples' bits a byte a fifth (scan_jphysiol_6p). `invert`
 * gives every byte inverted, the rows' padding bits included (1 bits for samples under 128).
 */
export function pack(gray: Uint8Array, width: number, height: number, invert = false): Bits {
  const rowBytes = rowBytesOf(width);
  const data = new Uint8Array(rowBytes * height);
  const whole = width >> 3;
  const words =
    LITTLE_ENDIAN && width % 4 === 0 && gray.byteOffset % 4 === 0
      ? new Uint32Array(gray.buffer, gray.byteOffset, (width * height) >> 2)
      : undefined;
  const table = invert ? 256 : 0;
  for (let y = 0; y < height; y++) {
    let i = y * width;
    const row = y * rowBytes;
    if (words) {
      for (let b = 0, w = i >> 2; b < whole; b++, w += 2) {
        const low = Math.imul(words[w]! & 0x80808080, 0x00204081) >>> 28;
        const high = Math.imul(words[w + 1]! & 0x80808080, 0x00204081) >>> 28;
        data[row + b] = REVERSED[table + (low | (high << 4))]!;
      }
      i += whole * 8;
    } else {
      for (let b = 0; b < whole; b++, i += 8) {
        data[row + b] =
          (gray[i]! & 0x80) |
          ((gray[i + 1]! & 0x80) >> 1) |
          ((gray[i + 2]! & 0x80) >> 2) |
          ((gray[i + 3]! & 0x80) >> 3) |
          ((gray[i + 4]! & 0x80) >> 4) |
          ((gray[i + 5]! & 0x80) >> 5) |
          ((gray[i + 6]! & 0x80) >> 6) |
          (gray[i + 7]! >> 7);
      }
    }
    for (let x = whole * 8; x < width; x++, i++) if (gray[i]! >= 128) data[row + (x >> 3)]! |= 0x80 >> (x & 7);
    if (invert && !words) for (let b = row; b < row + whole; b++) data[b] = ~data[b]! & 0xff;
    if (invert && whole < rowBytes) data[row + whole] = ~data[row + whole]! & 0xff;
  }
  return { data, width, height };
}

/** Little-endian TIFF fields: tag, type (3 short, 4 long), value (-1 for the strip's offset). */
type Field = [number, number, number];

/**
 * A one-strip, one-bit TIFF of `width` x `height` around `strip`: its compression (1 none, 3 G3,
 * 4 G4), photometric interpretation (0 MinIsWhite, 1 MinIsBlack) and any further fields.
 */
export function oneBitTiff(
  strip: Uint8Array,
  width: number,
  height: number,
  compression: number,
  photometric: number,
  more: Field[] = [],
): Uint8Array {
  const fields: Field[] = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, 1],
    [259, 3, compression],
    [262, 3, photometric],
    [273, 4, -1],
    [277, 3, 1],
    [278, 4, height],
    [279, 4, strip.length],
  ];
  return tiffOf([...fields, ...more], strip);
}

/** A one-strip TIFF around `strip` (tags in ascending order). */
function tiffOf(fields: Field[], strip: Uint8Array): Uint8Array {
  const entries = [...fields].sort((p, q) => p[0] - q[0]);
  const ifdAt = 8;
  const dataAt = ifdAt + 2 + entries.length * 12 + 4;
  const out = Buffer.alloc(dataAt + strip.length);
  out.write("II", 0, "latin1");
  out.writeUInt16LE(42, 2);
  out.writeUInt32LE(ifdAt, 4);
  out.writeUInt16LE(entries.length, ifdAt);
  entries.forEach(([tag, type, value], i) => {
    const at = ifdAt + 2 + i * 12;
    out.writeUInt16LE(tag, at);
    out.writeUInt16LE(type, at + 2);
    out.writeUInt32LE(1, at + 4);
    if (type === 3) out.writeUInt16LE(value, at + 8);
    else out.writeUInt32LE(value === -1 ? dataAt : value, at + 8);
  });
  out.set(strip, dataAt);
  return out;
}

export interface CcittParms {
  k: number;
  columns: number;
  rows: number;
  blackIs1: boolean;
  encodedByteAlign: boolean;
}

const P = {
  K: PDFName.of("K"),
  Rows: PDFName.of("Rows"),
  BlackIs1: PDFName.of("BlackIs1"),
  EncodedByteAlign: PDFName.of("EncodedByteAlign"),
};

/**
 * The CCITT parameters of a /CCITTFaxDecode image of this size from its /DecodeParms (ISO 32000-1
 * Table 11's defaults); undefined when their Columns or Rows say another size.
 */
export function ccittParmsOf(parms: PDFDict | undefined, width: number, height: number): CcittParms | undefined {
  const columns = numberOf(parms?.lookup(N.Columns)) ?? 1728;
  const rows = numberOf(parms?.lookup(P.Rows)) ?? height;
  if (columns !== width || (rows !== height && rows !== 0)) return undefined;
  return {
    k: numberOf(parms?.lookup(P.K)) ?? 0,
    columns,
    rows: height,
    blackIs1: parms?.lookup(P.BlackIs1) === PDFBool.True,
    encodedByteAlign: parms?.lookup(P.EncodedByteAlign) === PDFBool.True,
  };
}

/**
 * The samples a /CCITTFaxDecode stream decodes to, read by libtiff through libvips (the stream as
 * the strip of a TIFF); undefined when libtiff cannot read it or reads another size.
 */
export async function decodeCcitt(data: Uint8Array, parms: CcittParms): Promise<Bits | undefined> {
  const { k, columns: width, rows: height } = parms;
  // G4 has no byte alignment option in TIFF (codecs/g4.ts reads it); G3 takes it as T4Options' fill
  // bits.
  if (k < 0 && parms.encodedByteAlign) return decodeG4(data, width, height, true, parms.blackIs1);
  // G3's T4Options: two-dimensional coding (K > 0), fill bits before each row's end (byte alignment).
  const t4: Field[] = k >= 0 ? [[292, 4, (k > 0 ? 1 : 0) | (parms.encodedByteAlign ? 4 : 0)]] : [];
  const tiff = oneBitTiff(data, width, height, k < 0 ? 4 : 3, 0, t4);
  try {
    // libvips gives white (a white run) as 255; BlackIs1 false makes white runs 1 bits. Packed by
    // libvips, written as an uncompressed one-bit TIFF (white 1 bits, or 0 in miniswhite): no
    // byte a pixel reaches JavaScript (18 MB a page at 600 dpi, and pack's pass over it).
    const oneBit = await sharp(tiff, { limitInputPixels: 0 })
      .toColourspace("b-w")
      .tiff({ compression: "none", bitdepth: 1, miniswhite: parms.blackIs1 })
      .toBuffer();
    const bits = uncompressedRows(oneBit, width, height);
    if (bits) {
      // libvips pads rows with 0 bits; pack's inverted rows have 1 bits there.
      if (parms.blackIs1) padWithOnes(bits, width, height);
      return { data: bits, width, height };
    }
    const { data: gray, info } = await sharp(tiff, { limitInputPixels: 0 })
      .toColourspace("b-w")
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.width !== width || info.height !== height || info.channels !== 1) return undefined;
    return pack(gray, width, height, parms.blackIs1);
  } catch {
    return undefined;
  }
}

/** The padding bits of every row (those past `width` in its last byte) set. */
function padWithOnes(data: Uint8Array, width: number, height: number): void {
  if (width % 8 === 0) return;
  const rowBytes = rowBytesOf(width);
  const padding = 0xff >> (width % 8);
  for (let at = rowBytes - 1; at < rowBytes * height; at += rowBytes) data[at]! |= padding;
}

/**
 * The rows of a little-endian, uncompressed, one-component, one-bit TIFF of `width` x `height`
 * (its first image's strips, joined), as pack lays them out (rows padded to whole bytes); undefined
 * for any other TIFF.
 */
export function uncompressedRows(tiff: Uint8Array, width: number, height: number): Uint8Array | undefined {
  if (tiff.length < 8 || tiff[0] !== 0x49 || tiff[1] !== 0x49) return undefined;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  if (view.getUint16(2, true) !== 42) return undefined;
  const ifd = view.getUint32(4, true);
  if (ifd + 2 > tiff.length) return undefined;
  const count = view.getUint16(ifd, true);
  if (ifd + 2 + count * 12 > tiff.length) return undefined;
  /** A field's values (shorts or longs), wherever they are kept. */
  const values = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    const type = view.getUint16(at + 2, true);
    const n = view.getUint32(at + 4, true);
    const size = type === 3 ? 2 : type === 4 ? 4 : 0;
    if (size === 0) continue;
    const from = n * size <= 4 ? at + 8 : view.getUint32(at + 8, true);
    if (from + n * size > tiff.length) return undefined;
    const read: number[] = [];
    for (let j = 0; j < n; j++)
      read.push(size === 2 ? view.getUint16(from + j * 2, true) : view.getUint32(from + j * 4, true));
    values.set(view.getUint16(at, true), read);
  }
  const one = (tag: number, fallback?: number) => {
    const v = values.get(tag);
    return v ? (v.length === 1 ? v[0] : undefined) : fallback;
  };
  const fields: [number, number | undefined][] = [
    [256, width],
    [257, height],
    [258, 1],
    [259, 1],
    [266, 1],
    [277, 1],
  ];
  if (fields.some(([tag, value]) => one(tag, tag > 257 ? 1 : undefined) !== value)) return undefined;
  const offsets = values.get(273);
  const lengths = values.get(279);
  if (!offsets || !lengths || offsets.length !== lengths.length) return undefined;
  const out = new Uint8Array(rowBytesOf(width) * height);
  let filled = 0;
  for (let i = 0; i < offsets.length; i++) {
    const from = offsets[i]!;
    const length = Math.min(lengths[i]!, out.length - filled);
    if (from + length > tiff.length) return undefined;
    out.set(tiff.subarray(from, from + length), filled);
    filled += length;
  }
  return filled === out.length ? out : undefined;
}
