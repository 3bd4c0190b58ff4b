// The report's page SSIM (src/pdf/images/page-quality.ts): made of the quality check's
// measurements, it must agree with an independent rendering. Input and output of corpus files are
// drawn by pdftoppm at 100 dpi in gray, each page compared with the engine's SSIM function (8 x 8
// windows every 4 pixels, the measure the floor is stated in), and the lowest page's figure held
// to the report's within 0.01 (issue 42, item 5). The tally's arithmetic is checked on its own.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compressPdf } from "../../../src/pdf/index.ts";
import type { CompressionReport } from "../../../src/pdf/index.ts";
import { ssim } from "../../../src/pdf/images/quality.ts";
import { PageQualityTally } from "../../../src/pdf/images/page-quality.ts";
import type { Replacement } from "../../../src/pdf/images/candidates.ts";
import { N } from "../../../src/pdf/streams/filters.ts";
import { corpusDir } from "../fixtures.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";

const replacement = (look: Replacement["look"]): Replacement => ({
  data: new Uint8Array(0),
  filter: N.FlateDecode,
  size: { width: 1, height: 1 },
  ...(look === undefined ? {} : { look }),
});
const drawnOn = (pages: [number, number][]) => ({ width: 100, height: 100, pageShare: 1, pages: new Map(pages) });

describe("PageQualityTally", () => {
  it("adds up each page's changed images by the share they cover; exact ones change nothing", () => {
    const tally = new PageQualityTally();
    tally.add(replacement(0.9), drawnOn([[0, 0.5]])); // page 0 loses 0.05
    tally.add(
      replacement(0.96),
      drawnOn([
        [0, 0.25],
        [3, 1],
      ]),
    ); // page 0 0.01 more; page 3 0.04
    tally.add(replacement("same"), drawnOn([[5, 1]]));
    const result = tally.result();
    expect(result.minSsim).toBeCloseTo(0.94, 9);
    expect(result.pagesChecked).toBe(2);
    expect(result.imagesNotMeasured).toBe(0);
  });

  it("null when no page changed; images whose pages are unknown are counted apart", () => {
    const tally = new PageQualityTally();
    expect(tally.result()).toMatchObject({ minSsim: null, pagesChecked: 0, imagesNotMeasured: 0 });
    tally.add(replacement(0.9), undefined);
    tally.add(replacement(undefined), drawnOn([[0, 1]]));
    expect(tally.result()).toMatchObject({ minSsim: null, pagesChecked: 0, imagesNotMeasured: 2 });
  });
});

const corpus = corpusDir();
const poppler = hasPoppler();
if (!corpus)
  console.log("page-quality.test.ts: skipped the corpus cases, the shared corpus is absent (PDF_CORPUS_DIR).");
if (!poppler) console.log("page-quality.test.ts: skipped the corpus cases, pdftoppm (poppler-utils) is absent.");
const scratch = popplerScratch("engine-page-quality");
afterAll(scratch.remove);

/** Every page of `bytes` in gray at 100 dpi, by pdftoppm: samples, width and height. */
function grayPages(bytes: Uint8Array, tag: string) {
  const prefix = path.join(scratch.dir, tag);
  execFileSync("pdftoppm", ["-r", "100", "-gray", scratch.write(bytes), prefix]);
  return readdirSync(scratch.dir)
    .filter((file) => file.startsWith(`${tag}-`) && file.endsWith(".pgm"))
    .sort()
    .map((file) => {
      const pgm = readFileSync(path.join(scratch.dir, file));
      // pdftoppm's header: "P5\n<width> <height>\n255\n".
      const [, width, height] = pgm.subarray(0, 40).toString("latin1").split(/\s+/).map(Number);
      return { width: width!, height: height!, data: new Uint8Array(pgm.subarray(pgm.length - width! * height!)) };
    });
}

describe("the report's min_ssim agrees with pdftoppm's renderings", () => {
  it.skipIf(!corpus || !poppler).each([
    // A one-page JPEG scan; a Flate photograph recoded as JPEG; 21 pages, images on some;
    // a colour scan split into layers (measured again once its background is a JPEG).
    "scan_c02-22_jpeg.pdf",
    "photo_mountain_flate.pdf",
    "photo_pdflib_21p.pdf",
    "scan_epson_6p_jpeg.pdf",
  ])(
    "%s, balanced",
    async (file) => {
      const input = readFileSync(path.join(corpus!, "files", file));
      let report: CompressionReport | undefined;
      const { output } = await compressPdf(input, "balanced", (r) => (report = r));
      const quality = report!.images!.quality;
      const before = grayPages(input, `${file}-in`);
      const after = grayPages(output, `${file}-out`);
      expect(after.length).toBe(before.length);
      const pages = before.map((page, i) => ssim(page.data, after[i]!.data, page.width, page.height));
      const changed = pages.filter((s) => s < 1);
      expect(quality.minSsim).not.toBeNull();
      expect(Math.abs(quality.minSsim! - Math.min(...pages))).toBeLessThanOrEqual(0.01);
      // The pages checked include every page pdftoppm sees changed.
      expect(quality.pagesChecked).toBeGreaterThanOrEqual(changed.length);
      expect(quality.imagesNotMeasured).toBe(0);
    },
    60_000,
  );
});
