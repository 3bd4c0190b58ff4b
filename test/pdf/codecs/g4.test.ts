// The Group 4 decoder (src/pdf/codecs/g4.ts) against libtiff: images made here are coded by libtiff
// (images/bitonal.ts, encodeG4) and must decode to the same bits; the corpus's
// scan_hl1396_18p_ccitt.pdf (G4 with /EncodedByteAlign, which libtiff cannot read) is decoded,
// written again and rendered by poppler (which reads the original by itself) when the corpus is there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compressPdf } from "../../../src/pdf/index.ts";
import { decodeG4 } from "../../../src/pdf/codecs/g4.ts";
import { encodeG4 } from "../../../src/pdf/images/bitonal.ts";
import { corpusDir } from "../fixtures.ts";
import { codecDrawings } from "../helpers/bits.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";

const CORPUS = corpusDir();
const HL1396 = CORPUS && path.join(CORPUS, "files", "scan_hl1396_18p_ccitt.pdf");
const HAVE_HL1396 = HL1396 !== undefined && existsSync(HL1396);
if (!HAVE_HL1396)
  console.log("g4.test.ts: skipped the corpus case, scan_hl1396_18p_ccitt.pdf is not in ../shared/corpus/pdf.");
const POPPLER = hasPoppler();
if (!POPPLER) console.log("g4.test.ts: skipped the rendering check, poppler-utils is not installed.");
const poppler = popplerScratch("g4");
afterAll(() => poppler.remove());

const drawings = codecDrawings();

describe("Group 4 decoding", () => {
  it.each(drawings)("decodes libtiff's G4 of %s to the same bits", async (_name, bits) => {
    const coded = await encodeG4(bits);
    expect(coded).toBeDefined();
    const decoded = decodeG4(coded!, bits.width, bits.height, false, false);
    expect(decoded?.data).toEqual(bits.data);
    const inverted = decodeG4(coded!, bits.width, bits.height, false, true);
    expect(inverted?.data).toEqual(bits.data.map((byte) => ~byte & 0xff));
  });

  it("refuses what is not G4 of that size", async () => {
    expect(decodeG4(new Uint8Array([0, 0, 0, 0]), 100, 10, false, false)).toBeUndefined();
    const coded = await encodeG4(drawings[4]![1]);
    expect(decodeG4(coded!.subarray(0, coded!.length >> 1), 3001, 400, false, false)).toBeUndefined();
  });
});

describe.skipIf(!HAVE_HL1396)("the corpus's G4 with /EncodedByteAlign (scan_hl1396_18p_ccitt.pdf)", () => {
  it(
    "is decoded and re-coded in lossless, every page as poppler reads the original",
    { timeout: 120_000 },
    async () => {
      const input = new Uint8Array(readFileSync(HL1396!));
      const { output } = await compressPdf(input, "lossless");
      // 1,301,924 bytes, 0.3 % saved before: the 18 pages' G4 were left as they were.
      expect(output.length).toBeLessThan(input.length * 0.8);
      expect(Buffer.from(output).includes("EncodedByteAlign")).toBe(false);
      // Samples that were G4 go to JBIG2 only (images/bitonal.ts: G4 again would be their own size).
      expect(Buffer.from(output).includes("CCITTFaxDecode")).toBe(false);
      if (!POPPLER) return;
      const before = poppler.pixelsOf(input, 50);
      const after = poppler.pixelsOf(output, 50);
      expect(after.length).toBe(18);
      after.forEach((page, i) => expect(page.equals(before[i]!)).toBe(true));
    },
  );
});
