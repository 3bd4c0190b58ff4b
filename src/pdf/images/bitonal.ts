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
import { decodeJbig2, encodeJbig2, rowBytesOf } from "../codecs/jbig2.ts";
import { oneBitTiff } from "../codecs/ccitt.ts";
import { g4Size } from "../codecs/g4-size.ts";
import type { Bits } from "../codecs/jbig2.ts";

export type { Bits };

/** "best": G4 and JBIG2, the smaller; "fast": G4 only. */
export type BitonalEffort = "best" | "fast";

/** libvips writes one strip up to this many rows (its tile height); taller images are not written as G4. */
const MAX_G4_ROWS = 32768;

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
  // The packed bits as an uncompressed one-bit TIFF (MinIsBlack: 1 bits white), which libvips
  // reads as 0 and 255: no byte a pixel made in JavaScript (unpack was 7 % of scan_epson_6p_jpeg's
  // samples, its masks 2550 pixels wide).
  const data = samples.data.subarray(0, rowBytesOf(width) * height);
  const source = oneBitTiff(data, width, height, 1, 1);
  // MinIsWhite: libtiff codes 0 bits as white runs, and libvips writes white (255) as 0.
  const tiff = await sharp(source, { limitInputPixels: 0 })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, tileHeight: Math.max(16, height) })
    .toBuffer();
  const strip = onlyStrip(tiff);
  return strip && Uint8Array.from(strip);
}

export { decodeJbig2 };

export interface BitonalEncoding {
  data: Uint8Array;
  filter: "CCITTFaxDecode" | "JBIG2Decode";
}

/**
 * The smaller of G4 and (with effort "best") JBIG2 generic coding of the samples. With both, the
 * G4 is written only when it could be the smaller: its size is counted first (codecs/g4-size.ts,
 * libtiff's bytes exactly), 5-15 ms of a 300 dpi page where libvips's G4 took 25-50 ms of CPU, and
 * on text JBIG2 is the smaller (scan_epson_6p_jpeg's masks: 78 % of G4). No G4 is then held beside
 * the JBIG2's coding either (libvips's byte a pixel, and its copies).
 */
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
  const jbig2 = effort === "best" ? encodeJbig2(samples) : undefined;
  // libvips writes no G4 of more rows than it has (encodeG4): the JBIG2 then wins uncounted.
  if (jbig2 && (samples.height > MAX_G4_ROWS || jbig2.length < g4Size(samples, jbig2.length))) {
    return { data: jbig2, filter: "JBIG2Decode" };
  }
  const g4 = await encodeG4(samples);
  if (jbig2 && (!g4 || jbig2.length < g4.length)) return { data: jbig2, filter: "JBIG2Decode" };
  return g4 && { data: g4, filter: "CCITTFaxDecode" };
}
