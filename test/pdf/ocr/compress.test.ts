// ocr through compressPdf: the words come back, the pages render exactly as the same profile
// without ocr, and the options it cannot take are refused by optionProblem.
import { afterAll, describe, expect, it } from "vitest";
import { compressPdf, optionProblem } from "../../../src/pdf/index.ts";
import type { CompressionReport, EngineOptions } from "../../../src/pdf/index.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";
import { scanDocument } from "../helpers/scans.ts";

const POPPLER = hasPoppler();
const poppler = popplerScratch("engine-ocr-compress");
afterAll(() => poppler.remove());

const LINES = ["Invoice number seven hundred", "Payment due within thirty days"];
const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

async function run(input: Uint8Array, profile: "lossless" | "balanced" | "extreme", options: EngineOptions) {
  let report: CompressionReport | undefined;
  const { output } = await compressPdf(input, profile, (r) => (report = r), options);
  return { output, report: report! };
}

describe.skipIf(!POPPLER)("compressPdf with ocr", () => {
  it.each(["lossless", "balanced", "extreme"] as const)(
    "%s: the words come back, and every pixel is the profile's without ocr",
    { timeout: 180_000 },
    async (profile) => {
      const input = await scanDocument([{ lines: LINES, dpi: 300 }]);
      const plain = await run(input, profile, {});
      const read = await run(input, profile, { ocr: true });
      expect(read.report.ocr).toMatchObject({ pagesRead: 1, pagesWithText: 0, languages: ["eng"] });
      expect(plain.report.ocr).toBeUndefined();
      expect(wordsOf(poppler.textOf(read.output))).toEqual(wordsOf(LINES.join(" ")));
      const [without] = poppler.pixelsOf(plain.output, 150);
      const [withLayer] = poppler.pixelsOf(read.output, 150);
      expect(withLayer!.equals(without!)).toBe(true);
    },
  );
});

describe("the ocr options", () => {
  it.each([
    [{ ocr: true }, undefined],
    [{ ocr: true, ocrLanguages: ["eng", "deu"] }, undefined],
    [{ ocr: true, ocrLanguages: ["fra", "spa", "por"] }, undefined],
    [{ ocr: true, ocrLanguages: ["klingon"] }, "ocrLanguages"],
    [{ ocr: true, ocrLanguages: [] }, "ocrLanguages"],
    [{ ocr: true, ocrLanguages: ["eng", "eng"] }, "ocrLanguages"],
    [{ ocr: true, ocrLanguages: ["eng", "deu", "fra", "ita"] }, "ocrLanguages"],
    [{ ocrLanguages: ["eng"] }, "ocrLanguages"],
    [{ ocr: true, targetSize: 100_000 }, "ocr"],
  ] as [EngineOptions, string | undefined][])("%j: %s", (options, refused) => {
    expect(optionProblem("balanced", options)?.option).toBe(refused);
  });
});
