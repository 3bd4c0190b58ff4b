// The Group 4 decoder's WebAssembly loop (src/pdf/codecs/assembly/g4.ts, through decodeG4) against
// the JavaScript decoder it replaced (g4-plain.ts): the same rows, /BlackIs1 or not, byte-aligned
// or not, on libtiff's G4 of the codecs' drawings (rows enough for several of the decoder's bands),
// on the corpus's byte-aligned pages when the corpus is there, and the same answer (the same rows,
// or undefined) on streams damaged byte by byte, cut short, and random bytes (fast-check).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeG4 } from "../../../src/pdf/codecs/g4.ts";
import { encodeG4 } from "../../../src/pdf/images/bitonal.ts";
import { openPdf } from "../../../src/pdf/structure/load.ts";
import { corpusDir } from "../fixtures.ts";
import { bitsOf, codecDrawings } from "../helpers/bits.ts";
import { plainDecodeG4 } from "./g4-plain.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";

const CORPUS = corpusDir();
const HL1396 = CORPUS && path.join(CORPUS, "files", "scan_hl1396_18p_ccitt.pdf");
const HAVE_HL1396 = HL1396 !== undefined && existsSync(HL1396);

const same = (a: Bits | undefined, b: Bits | undefined) =>
  a === undefined || b === undefined ? a === b : Buffer.from(a.data).equals(Buffer.from(b.data));

/** Both decoders' answers to the same arguments, which must agree. */
function expectSame(data: Uint8Array, width: number, height: number, byteAlign: boolean, blackIs1: boolean) {
  const wasm = decodeG4(data, width, height, byteAlign, blackIs1);
  const plain = plainDecodeG4(data, { data, width, height }, { byteAlign, blackIs1 });
  expect(same(wasm, plain)).toBe(true);
  return wasm;
}

/** Drawings whose rows pass through the decoder's memory in several bands (64 KB of rows). */
const tall: [string, Bits][] = [
  ["tall stripes", bitsOf(2550, 700, (x, y) => Math.floor((x + y) / 13) % 3 === 0)],
  ["a narrow column", bitsOf(5, 30_000, (x, y) => (x * 7 + y) % 5 === 0)],
];

describe("Group 4 decoding in WebAssembly", () => {
  it.each([...codecDrawings(), ...tall])(
    "decodes libtiff's G4 of %s as the JavaScript decoder",
    async (_name, bits) => {
      const coded = (await encodeG4(bits))!;
      for (const blackIs1 of [false, true]) {
        const decoded = expectSame(coded, bits.width, bits.height, false, blackIs1);
        expect(decoded).toBeDefined();
      }
      expect(decodeG4(coded, bits.width, bits.height, false, false)!.data).toEqual(bits.data);
    },
  );

  it("answers as the JavaScript decoder on damaged, shortened and random streams", async () => {
    // Text-like: runs of both colours, make-up codes, and every mode.
    const drawing = bitsOf(700, 60, (x, y) => (x % 97) + (y % 23) * 3 < 40 || Math.floor(x / (1 + (y % 9))) % 5 === 0);
    const coded = (await encodeG4(drawing))!;
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(coded.length - 1), value: fc.nat(255) }), { maxLength: 4 }),
        fc.nat(coded.length),
        fc.boolean(),
        fc.boolean(),
        (changes, keep, byteAlign, blackIs1) => {
          const damaged = coded.slice(0, Math.max(1, keep));
          for (const { at, value } of changes) if (at < damaged.length) damaged[at] = value;
          expectSame(damaged, drawing.width, drawing.height, byteAlign, blackIs1);
        },
      ),
      { numRuns: 150, seed: 42 },
    );
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        fc.boolean(),
        (data, width, height, byteAlign, blackIs1) => void expectSame(data, width, height, byteAlign, blackIs1),
      ),
      { numRuns: 300, seed: 42 },
    );
  });

  it.skipIf(!HAVE_HL1396)("decodes the corpus's byte-aligned pages as the JavaScript decoder", async () => {
    const { doc } = await openPdf(new Uint8Array(readFileSync(HL1396!)));
    let pages = 0;
    for (const [, object] of doc.context.enumerateIndirectObjects()) {
      if (!(object instanceof PDFRawStream) || object.dict.get(PDFName.of("Filter")) !== PDFName.of("CCITTFaxDecode")) {
        continue;
      }
      const width = Number(object.dict.get(PDFName.of("Width"))!.toString());
      const height = Number(object.dict.get(PDFName.of("Height"))!.toString());
      expect(expectSame(object.contents, width, height, true, false)).toBeDefined();
      pages++;
    }
    expect(pages).toBe(18);
  });
});
