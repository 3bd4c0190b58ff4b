// The JBIG2 generic region encoder's WebAssembly loop (src/pdf/codecs/assembly/jbig2.ts, through
// encodeGenericRegion) against a plain definition written here: each pixel's 16-pixel context read
// from the bitmap, and the MQ coder as T.88 Annex E draws it (INITENC, ENCODE with CODEMPS and
// CODELPS, RENORME, BYTEOUT, FLUSH), one symbol at a time, with typical prediction's SLTP bit before
// each row (a row that repeats the one above is coded as that bit alone). The bytes must be the
// same on noise, text-like lines, all-black and all-white bitmaps, repeated rows, widths on and
// off multiples of 8 and 32, bitmaps spanning several of the encoder's bands of rows and outputs
// that grow its memory, and on bitmaps of random sizes and contents (a fixed seed).
import { describe, expect, it } from "vitest";
import { decodeJbig2, encodeGenericRegion, NLPS, NMPS, QE, rowBytesOf, SWITCH } from "../../../src/pdf/codecs/jbig2.ts";
import { bitmap, KINDS, samplesOf, stream, TEMPLATE } from "../helpers/jbig2.ts";
import { random } from "../helpers/random.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";

/** The generic region's coded data, one symbol at a time. */
function plainGenericRegion({ data, width, height }: Bits): Uint8Array {
  const rowBytes = rowBytesOf(width);
  const pixel = (x: number, y: number) =>
    x < 0 || x >= width || y < 0 ? 0 : (data[y * rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1;
  const index = new Uint8Array(1 << 16);
  const mps = new Uint8Array(1 << 16);
  const out: number[] = [];
  let [a, c, ct, b, first] = [0x8000, 0, 12, 0, true];
  const emit = () => {
    if (!first) out.push(b);
    first = false;
  };
  const byteOut = () => {
    if (b === 0xff) {
      emit();
      b = c >>> 20;
      c &= 0xfffff;
      ct = 7;
    } else if (c < 0x8000000) {
      emit();
      b = c >>> 19;
      c &= 0x7ffff;
      ct = 8;
    } else {
      b++;
      if (b === 0xff) {
        c &= 0x7ffffff;
        emit();
        b = c >>> 20;
        c &= 0xfffff;
        ct = 7;
      } else {
        emit();
        b = c >>> 19;
        c &= 0x7ffff;
        ct = 8;
      }
    }
  };
  const renorme = () => {
    do {
      a = (a << 1) & 0xffff;
      c = c << 1;
      ct--;
      if (ct === 0) byteOut();
    } while ((a & 0x8000) === 0);
  };
  const encode = (cx: number, bit: number) => {
    const i = index[cx]!;
    const qe = QE[i]!;
    a -= qe;
    if (bit === mps[cx]) {
      if ((a & 0x8000) === 0) {
        if (a < qe) a = qe;
        else c += qe;
        index[cx] = NMPS[i]!;
        renorme();
      } else c += qe;
    } else {
      if (a < qe) c += qe;
      else a = qe;
      if (SWITCH.includes(i)) mps[cx] = 1 - mps[cx]!;
      index[cx] = NLPS[i]!;
      renorme();
    }
  };
  let ltp = 0;
  for (let y = 0; y < height; y++) {
    let same = y > 0 ? 1 : 0;
    for (let x = 0; x < width && same; x++) if (pixel(x, y) !== pixel(x, y - 1)) same = 0;
    encode(0x9b25, same ^ ltp);
    ltp = same;
    if (same) continue;
    for (let x = 0; x < width; x++) {
      let context = 0;
      for (const [dx, dy] of TEMPLATE) context = (context << 1) | pixel(x + dx, y + dy);
      encode(context, pixel(x, y));
    }
  }
  // FLUSH: SETBITS, two bytes out, the last byte and the marker 0xFFAC.
  const top = c + a;
  c |= 0xffff;
  if (c >= top) c -= 0x8000;
  c <<= ct;
  byteOut();
  c <<= ct;
  byteOut();
  out.push(b);
  if (b !== 0xff) out.push(0xff);
  out.push(0xac);
  return Uint8Array.from(out);
}

function expectSameBytes(bits: Bits) {
  const coded = encodeGenericRegion(bits);
  expect(Buffer.from(coded).equals(Buffer.from(plainGenericRegion(bits)))).toBe(true);
  const decoded = decodeJbig2(stream(coded, bits.width, bits.height), bits.width, bits.height);
  expect(decoded && Buffer.from(decoded.data).equals(Buffer.from(samplesOf(bits)))).toBe(true);
}

describe("the JBIG2 generic region encoder in WebAssembly", () => {
  const kinds = KINDS;
  const widths = [1, 3, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 257];
  it.each(kinds.flatMap((kind) => widths.map((width) => [kind, width] as const)))(
    "codes %s, %i wide, into the bytes of the plain coder",
    (kind, width) => {
      for (const height of [1, 2, 3, 37]) expectSameBytes(bitmap(kind, width, height, width * 31 + height));
    },
  );

  it("codes rows that repeat the row above (typical prediction) and an empty region", () => {
    const bits = bitmap("text", 203, 60, 7);
    const rowBytes = rowBytesOf(203);
    // Rows 10-19 repeat row 9; rows 40-59 repeat row 39 (text or white).
    for (let y = 10; y < 20; y++) bits.data.copyWithin(y * rowBytes, 9 * rowBytes, 10 * rowBytes);
    for (let y = 40; y < 60; y++) bits.data.copyWithin(y * rowBytes, 39 * rowBytes, 40 * rowBytes);
    expectSameBytes(bits);
    expectSameBytes({ data: new Uint8Array(0), width: 40, height: 0 });
  });

  it.each(["noise", "text", "white"] as const)(
    "codes %s across several bands of rows, its output growing the memory",
    (kind) => {
      // 257 bytes a row: 255 rows a band; noise codes to some 150 KB.
      expectSameBytes(bitmap(kind, 2049, 600, 11));
      expectSameBytes(bitmap(kind, 8, 70_000, 12));
    },
  );

  it("codes sparse dots, so that runs of 0s in context 0 end at every pixel of a byte and of a row's end", () => {
    // The runs coded at once end where a dot is in this row, 4 pixels on in the row above or 3 in
    // the one above that (zeroRun): dots at every offset, some in a row's last pixels.
    const source = random(7);
    for (const width of [5, 13, 61, 64, 65, 120, 130, 200, 517]) {
      for (const density of [0.003, 0.02, 0.1]) {
        const height = 30;
        const rowBytes = rowBytesOf(width);
        const data = new Uint8Array(rowBytes * height);
        for (let y = 0; y < height; y++)
          for (let x = 0; x < width; x++)
            if (source() / 2 ** 32 < (x >= width - 5 ? 0.1 : density))
              data[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
        expectSameBytes({ data, width, height });
      }
    }
  });

  it("codes bitmaps of random sizes and contents", () => {
    const source = random(42);
    const next = () => source() / 2 ** 32;
    for (let i = 0; i < 60; i++) {
      const width = 1 + Math.floor(next() * 300);
      const height = 1 + Math.floor(next() * 50);
      const kind = kinds[Math.floor(next() * kinds.length)]!;
      const bits = bitmap(kind, width, height, i + 1);
      // Some rows copied from the one above, some pixels flipped.
      const rowBytes = rowBytesOf(width);
      for (let y = 1; y < height; y++)
        if (next() < 0.2) bits.data.copyWithin(y * rowBytes, (y - 1) * rowBytes, y * rowBytes);
      for (let k = 0; k < 10; k++) {
        const x = Math.floor(next() * width);
        const y = Math.floor(next() * height);
        bits.data[y * rowBytes + (x >> 3)]! ^= 0x80 >> (x & 7);
      }
      expectSameBytes(bits);
    }
  });
});
