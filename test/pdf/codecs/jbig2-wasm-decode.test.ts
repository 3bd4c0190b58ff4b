// The JBIG2 generic region decoder's WebAssembly loop (src/pdf/codecs/assembly/jbig2.ts, through
// decodeJbig2: template 0 with the default adaptive pixels) against a plain decoder written here:
// the MQ decoder as T.88 Annex E draws it (INITDEC, DECODE with its MPS and LPS exchanges,
// RENORMD, BYTEIN, with the registers Chigh and Clow), one symbol at a time, each pixel's
// 16-pixel context read from the bitmap decoded so far, and typical prediction's SLTP bit before
// each row. The pixels must be the same on the encoder's output for noise, sparse specks,
// text-like lines, all-black, all-white and striped bitmaps of widths 1-257 (odd ones, and on
// multiples of 8 and 32) and heights 1-37, regions over several of the decoder's bands of rows
// (one row a band too), that data cut short (read on as 0xFF), random bytes (0xFF and markers
// among them) with typical prediction and without, and the generic regions of the corpus's JBIG2
// scans when the corpus is there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { PDFArray, PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { decodeJbig2, encodeGenericRegion, NLPS, NMPS, QE, rowBytesOf, SWITCH } from "../../../src/pdf/codecs/jbig2.ts";
import { corpusDir } from "../fixtures.ts";
import { bitmap, KINDS, samplesOf, stream, TEMPLATE } from "../helpers/jbig2.ts";
import { random } from "../helpers/random.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";

/** The region's pixels, a byte each (1 black), decoded one symbol at a time. */
function plainDecode(coded: Uint8Array, width: number, height: number, tpgdon: boolean): Uint8Array {
  const byteAt = (i: number) => (i < coded.length ? coded[i]! : 0xff);
  const index = new Uint8Array(1 << 16);
  const mps = new Uint8Array(1 << 16);
  let [bp, chigh, clow, a, ct] = [0, 0, 0, 0x8000, 0];
  const byteIn = () => {
    if (byteAt(bp) === 0xff && byteAt(bp + 1) > 0x8f) {
      clow += 0xff00;
      ct = 8;
    } else if (byteAt(bp) === 0xff) {
      bp++;
      clow += byteAt(bp) << 9;
      ct = 7;
    } else {
      bp++;
      clow += byteAt(bp) << 8;
      ct = 8;
    }
    if (clow > 0xffff) {
      chigh += clow >> 16;
      clow &= 0xffff;
    }
  };
  const renormd = () => {
    do {
      if (ct === 0) byteIn();
      a <<= 1;
      chigh = ((chigh << 1) & 0xffff) | ((clow >> 15) & 1);
      clow = (clow << 1) & 0xffff;
      ct--;
    } while ((a & 0x8000) === 0);
  };
  const mpsOut = (cx: number) => {
    index[cx] = NMPS[index[cx]!]!;
    return mps[cx]!;
  };
  const lpsOut = (cx: number) => {
    const d = 1 - mps[cx]!;
    if (SWITCH.includes(index[cx]!)) mps[cx] = d;
    index[cx] = NLPS[index[cx]!]!;
    return d;
  };
  const decode = (cx: number) => {
    const qe = QE[index[cx]!]!;
    let d: number;
    a -= qe;
    if (chigh < qe) {
      // LPS_EXCHANGE
      d = a < qe ? mpsOut(cx) : lpsOut(cx);
      a = qe;
      renormd();
    } else {
      chigh -= qe;
      if ((a & 0x8000) === 0) {
        // MPS_EXCHANGE
        d = a < qe ? lpsOut(cx) : mpsOut(cx);
        renormd();
      } else d = mps[cx]!;
    }
    return d;
  };
  // INITDEC
  chigh = byteAt(0);
  byteIn();
  chigh = ((chigh << 7) & 0xffff) | ((clow >> 9) & 0x7f);
  clow = (clow << 7) & 0xffff;
  ct -= 7;
  const out = new Uint8Array(width * height);
  const pixel = (x: number, y: number) => (x < 0 || x >= width || y < 0 ? 0 : out[y * width + x]!);
  let ltp = 0;
  for (let y = 0; y < height; y++) {
    if (tpgdon) ltp ^= decode(0x9b25);
    for (let x = 0; x < width; x++) {
      if (ltp) {
        out[y * width + x] = pixel(x, y - 1);
        continue;
      }
      let context = 0;
      for (const [dx, dy] of TEMPLATE) context = (context << 1) | pixel(x + dx, y + dy);
      out[y * width + x] = decode(context);
    }
  }
  return out;
}

/** Packed samples (0 black) of pixels a byte each (1 black). */
function samplesOfPixels(pixels: Uint8Array, width: number, height: number): Uint8Array {
  const rowBytes = rowBytesOf(width);
  const samples = new Uint8Array(rowBytes * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) if (!pixels[y * width + x]) samples[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
  return samples;
}

/** decodeJbig2's samples of the coded region, which must be the plain decoder's; returns them. */
function expectSamePixels(coded: Uint8Array, width: number, height: number, tpgdon: boolean): Uint8Array {
  const decoded = decodeJbig2(stream(coded, width, height, tpgdon), width, height);
  const plain = samplesOfPixels(plainDecode(coded, width, height, tpgdon), width, height);
  expect(decoded).toBeDefined();
  expect(Buffer.from(decoded!.data).equals(Buffer.from(plain))).toBe(true);
  return plain;
}

/** The encoder's output for `bits` decodes to its pixels, in WebAssembly and plainly. */
function expectRoundTrip(bits: Bits) {
  const plain = expectSamePixels(encodeGenericRegion(bits), bits.width, bits.height, true);
  expect(Buffer.from(plain).equals(Buffer.from(samplesOf(bits)))).toBe(true);
}

describe("the JBIG2 generic region decoder in WebAssembly", () => {
  const widths = [1, 3, 5, 7, 8, 9, 15, 17, 31, 32, 33, 63, 64, 65, 99, 127, 129, 255, 257];
  it.each(KINDS.flatMap((kind) => widths.map((width) => [kind, width] as const)))(
    "decodes the encoder's %s, %i wide, into the plain decoder's pixels",
    (kind, width) => {
      for (const height of [1, 2, 3, 19, 37]) expectRoundTrip(bitmap(kind, width, height, width * 17 + height));
    },
  );

  it("decodes rows that repeat the row above (typical prediction) and an empty region", () => {
    const bits = bitmap("text", 203, 60, 7);
    const rowBytes = rowBytesOf(203);
    for (let y = 10; y < 20; y++) bits.data.copyWithin(y * rowBytes, 9 * rowBytes, 10 * rowBytes);
    for (let y = 40; y < 60; y++) bits.data.copyWithin(y * rowBytes, 39 * rowBytes, 40 * rowBytes);
    expectRoundTrip(bits);
    expectRoundTrip({ data: new Uint8Array(0), width: 40, height: 0 });
    expectRoundTrip({ data: new Uint8Array(0), width: 0, height: 5 });
  });

  it.each(["noise", "sparse", "text", "white"] as const)("decodes %s over several bands of rows", (kind) => {
    // 64 KB a band: 31 rows of 2049 pixels; 70,001 pixels a row is a band of one row.
    expectRoundTrip(bitmap(kind, 2049, 300, 11));
    expectRoundTrip(bitmap(kind, 70_001, 3, 12));
  });

  it("decodes data cut short as the plain decoder does (read on as 0xFF)", () => {
    for (const kind of KINDS) {
      const bits = bitmap(kind, 301, 41, 5);
      const coded = encodeGenericRegion(bits);
      for (const keep of [0, 1, 2, coded.length >> 2, coded.length >> 1, coded.length - 3]) {
        for (const tpgdon of [true, false]) expectSamePixels(coded.subarray(0, keep), 301, 41, tpgdon);
      }
    }
  });

  it("decodes random bytes, markers among them, with typical prediction and without", () => {
    const source = random(99);
    const next = () => source() / 2 ** 32;
    for (let i = 0; i < 80; i++) {
      const width = 1 + Math.floor(next() * 260);
      const height = 1 + Math.floor(next() * 40);
      const coded = new Uint8Array(Math.floor(next() * 2000));
      const ff = next() * 0.3;
      for (let k = 0; k < coded.length; k++) {
        const r = next();
        // 0xFF often, and what follows it on both sides of 0x8F.
        coded[k] = r < ff ? 0xff : r < ff + 0.1 ? 0x8e + Math.floor(next() * 4) : Math.floor(next() * 256);
      }
      expectSamePixels(coded, width, height, i % 2 === 0);
    }
  });
});

/** The arithmetic generic regions of an embedded JBIG2 stream (segment headers as 7.2 lays them out). */
function genericRegions(data: Uint8Array) {
  const u32 = (at: number) => ((data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!) >>> 0;
  const regions: { width: number; height: number; flags: number; at: number[]; coded: Uint8Array }[] = [];
  let pos = 0;
  while (pos + 11 <= data.length) {
    const number = u32(pos);
    const type = data[pos + 4]! & 0x3f;
    const referred = data[pos + 5]! >> 5;
    if (referred === 7) break;
    const body = pos + 6 + referred * (number <= 256 ? 1 : number <= 65536 ? 2 : 4) + (data[pos + 4]! & 0x40 ? 4 : 1);
    const length = u32(body);
    const start = body + 4;
    if (length === 0xffffffff || start + length > data.length) break;
    const flags = data[start + 17]!;
    if ((type === 36 || type === 38 || type === 39) && (flags & 7) === 0) {
      const at = Array.from(data.subarray(start + 18, start + 26), (v) => (v << 24) >> 24);
      const coded = data.subarray(start + 26, start + length);
      regions.push({ width: u32(start), height: u32(start + 4), flags, at, coded });
    }
    pos = start + length;
  }
  return regions;
}

const CORPUS = corpusDir();
const SCANS = ["scan_cardinal_4p_jbig2.pdf", "scan_jbig2_globals.pdf"].map((name) =>
  CORPUS ? path.join(CORPUS, "files", name) : name,
);
const HAVE_SCANS = SCANS.every((file) => existsSync(file));
if (!HAVE_SCANS) {
  console.log("jbig2-wasm-decode.test.ts: skipped the corpus case, its JBIG2 scans are not in ../shared/corpus/pdf.");
}

describe.skipIf(!HAVE_SCANS)("the corpus's JBIG2 generic regions", () => {
  it("decode into the plain decoder's pixels", { timeout: 120_000 }, async () => {
    let compared = 0;
    for (const file of SCANS) {
      const doc = await PDFDocument.load(readFileSync(file), { updateMetadata: false });
      for (const [, object] of doc.context.enumerateIndirectObjects()) {
        if (!(object instanceof PDFRawStream)) continue;
        const filter = object.dict.lookup(PDFName.of("Filter"));
        const only = filter instanceof PDFArray && filter.size() === 1 ? filter.lookup(0) : filter;
        if (only !== PDFName.of("JBIG2Decode")) continue;
        // Template 0 with the default adaptive pixels: the regions the WebAssembly loop reads.
        const regions = genericRegions(object.contents);
        for (const { width, height, flags, at, coded } of regions) {
          if (at.join() !== "3,-1,-3,-1,2,-2,-2,-2" || width * height > 100_000_000) continue;
          expectSamePixels(coded, width, height, (flags & 8) !== 0);
          compared++;
        }
      }
    }
    // scan_cardinal_4p_jbig2's JBIG2 page (2550 x 3300, typical prediction); scan_jbig2_globals's
    // pages are symbol-coded.
    expect(compared).toBeGreaterThanOrEqual(1);
  });
});
