// Bi-tonal images: CCITT Group 4 through libvips (libtiff writes it: a one-strip TIFF whose strip
// is the /CCITTFaxDecode stream) and JBIG2 generic region coding (codecs/jbig2.ts), the smaller kept.
// Both are lossless: the samples a reader decodes are the ones given, bit for bit.
//
// Why both: on text at 300 dpi JBIG2's generic region (an adaptive arithmetic coder over sixteen
// neighbouring pixels) takes some 35-45 % less than G4, but it runs in JavaScript, about ten times
// slower than libtiff's G4 in C on libuv's threads; G4 is what readers have decoded longest.
// Documents with many bi-tonal pixels get G4 only (`BitonalEffort`), as JPEGs get mozjpeg's fast
// setting. JBIG2 symbol coding (a dictionary of glyph shapes) is left out: lossless only when
// every matched glyph is exact, and a great deal more code.
import sharp from "sharp";
import { release } from "./codecs.ts";
import { decodeJbig2, encodeJbig2, rowBytesOf } from "../codecs/jbig2.ts";
import type { Bits } from "../codecs/jbig2.ts";

export type { Bits };

/** "best": G4 and JBIG2, the smaller; "fast": G4 only. */
export type BitonalEffort = "best" | "fast";

/** libvips writes one strip up to this many rows (its tile height); taller images are not written as G4. */
const MAX_G4_ROWS = 32768;

/** 8 gray samples (0 or 255) per byte value, as two 32-bit words, in the machine's byte order. */
const UNPACKED = (() => {
  const bytes = new Uint8Array(256 * 8);
  for (let v = 0; v < 256; v++) for (let bit = 0; bit < 8; bit++) bytes[v * 8 + bit] = v & (0x80 >> bit) ? 255 : 0;
  return new Uint32Array(bytes.buffer);
})();

/** One gray byte per pixel (1 bits 255, 0 bits 0). */
export function unpack(bits: Bits): Uint8Array {
  const { data, width, height } = bits;
  const rowBytes = rowBytesOf(width);
  const padded = rowBytes * 8;
  if (padded === width) {
    const words = new Uint32Array((padded * height) / 4);
    for (let i = 0, w = 0; i < rowBytes * height; i++, w += 2) {
      const v = data[i]! * 2;
      words[w] = UNPACKED[v]!;
      words[w + 1] = UNPACKED[v + 1]!;
    }
    return new Uint8Array(words.buffer);
  }
  // Rows whose width is not a multiple of 8 go through one row's scratch: not a padded copy of the
  // whole image (a 300-dpi page's 8.8 MB more, allocated and copied once more).
  const row = new Uint32Array(rowBytes * 2);
  const head = new Uint8Array(row.buffer, 0, width);
  const out = new Uint8Array(width * height);
  for (let y = 0, i = 0; y < height; y++) {
    for (let w = 0; w < row.length; i++, w += 2) {
      const v = data[i]! * 2;
      row[w] = UNPACKED[v]!;
      row[w + 1] = UNPACKED[v + 1]!;
    }
    out.set(head, y * width);
  }
  return out;
}

/** The one strip of a TIFF libvips wrote, when it has exactly one. */
function onlyStrip(tiff: Uint8Array): Uint8Array | undefined {
  const view = Buffer.from(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  if (view.toString("latin1", 0, 2) !== "II" || view.readUInt16LE(2) !== 42) return undefined;
  const ifd = view.readUInt32LE(4);
  const count = view.readUInt16LE(ifd);
  let offset: number | undefined;
  let length: number | undefined;
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    const tag = view.readUInt16LE(at);
    const n = view.readUInt32LE(at + 4);
    const type = view.readUInt16LE(at + 2);
    const value = type === 3 ? view.readUInt16LE(at + 8) : view.readUInt32LE(at + 8);
    if ((tag === 273 || tag === 279) && n !== 1) return undefined;
    if (tag === 273) offset = value;
    if (tag === 279) length = value;
  }
  if (offset === undefined || length === undefined || offset + length > tiff.length) return undefined;
  return tiff.subarray(offset, offset + length);
}

/**
 * A CCITT G4 stream of the samples (/K -1, /BlackIs1 false: 0 bits are black), made by libtiff
 * through libvips; undefined when libvips did not write it as one strip.
 */
export async function encodeG4(samples: Bits): Promise<Uint8Array | undefined> {
  const { width, height } = samples;
  if (height > MAX_G4_ROWS) return undefined;
  const gray = unpack(samples);
  // MinIsWhite: libtiff codes 0 bits as white runs, and libvips writes white (255) as 0.
  const tiff = await sharp(gray, { raw: { width, height, channels: 1 } })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, tileHeight: Math.max(16, height) })
    .toBuffer();
  // A byte a pixel, done with: gone now rather than at the collector's next full run.
  release(gray);
  const strip = onlyStrip(tiff);
  return strip && Uint8Array.from(strip);
}

export { decodeJbig2 };

export interface BitonalEncoding {
  data: Uint8Array;
  filter: "CCITTFaxDecode" | "JBIG2Decode";
}

/**
 * Images of up to this many pixels have their G4 written beside the JBIG2's coding; larger ones
 * after it, as before: libvips's byte a pixel (and its copies) would be held through the coding
 * (scan_jphysiol_6p's 600 dpi pages, 18 million pixels: its peak went from 166-176 to 177-198 MiB,
 * against a budget of 202).
 */
const MAX_OVERLAPPED_PIXELS = 10_000_000;

/** The smaller of G4 and (with effort "best") JBIG2 generic coding of the samples. */
export async function encodeBitonal(
  samples: Bits,
  effort: BitonalEffort,
  fromG4 = false,
): Promise<BitonalEncoding | undefined> {
  // Samples that were G4 come out of libtiff's G4 at their own size give or take a few bytes (a
  // byte-aligned stream's padding): where JBIG2 is tried, G4 is not made again. libvips's copies of
  // a 300-dpi page cost some 40 MiB that the allocator keeps (18 pages of scan_hl1396_18p_ccitt).
  if (fromG4 && effort === "best") {
    const jbig2 = encodeJbig2(samples);
    return jbig2 && { data: jbig2, filter: "JBIG2Decode" };
  }
  // libtiff writes the G4 on libuv's threads while JavaScript codes the JBIG2 (on two cores, the
  // one's time hides the other's).
  const coding = encodeG4(samples);
  if (samples.width * samples.height > MAX_OVERLAPPED_PIXELS) await coding;
  let jbig2: Uint8Array | undefined;
  try {
    jbig2 = effort === "best" ? encodeJbig2(samples) : undefined;
  } catch (error) {
    // Not left to reject unhandled.
    await coding.catch(() => undefined);
    throw error;
  }
  const g4 = await coding;
  if (jbig2 && (!g4 || jbig2.length < g4.length)) return { data: jbig2, filter: "JBIG2Decode" };
  return g4 && { data: g4, filter: "CCITTFaxDecode" };
}
