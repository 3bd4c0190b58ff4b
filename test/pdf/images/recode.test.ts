// Where an image's pixels go (src/pdf/images/recode.ts targetSize): the profile's resolution, and
// extreme's floor on the short side, which keeps a CV's headshot a face (issue 42: at 72 ppi the
// corpus's Chrome CV photo, drawn some 50 points wide, came to 50 x 50 pixels to save 1.2 KB).
// The floor is checked on the shared corpus's CVs with photos when it is there, through pdfimages
// (Poppler), not the pdf-lib the engine is built on.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compressPdf, PROFILE_SETTINGS } from "../../../src/pdf/index.ts";
import { targetSize } from "../../../src/pdf/images/recode.ts";
import { corpusDir } from "../fixtures.ts";
import { popplerScratch } from "../helpers/poppler.ts";

const EXTREME = PROFILE_SETTINGS.extreme.images!;
const BALANCED = PROFILE_SETTINGS.balanced.images!;
const FLOOR = EXTREME.minShortSide!;
/** Drawn `points` wide and high, with the page at `share` of it. */
const placed = (points: number) => ({ width: points, height: points, pageShare: 0.05 });

describe("targetSize", () => {
  it.each([
    // [image side, drawn at points, profile, expected side (undefined: kept as it is)]
    [768, 50, "extreme", FLOOR], // 72 ppi would make 50 px: the floor's 96
    [768, 300, "extreme", 300], // 72 ppi is above the floor
    [100, 50, "extreme", undefined], // 96 is too little below 100 to resample
    [80, 20, "extreme", undefined], // already below the floor: as it is
    [768, 50, "balanced", 104], // balanced has no floor (150 ppi is above it here)
  ] as const)("%i px drawn at %i pt in %s: %s px", (side, points, profile, expected) => {
    const settings = profile === "extreme" ? EXTREME : BALANCED;
    const size = targetSize({ width: side, height: side }, placed(points), settings);
    expect(size?.width).toBe(expected);
  });

  it("the caller's maxImagePpi wins over the floor", () => {
    const size = targetSize({ width: 768, height: 768 }, placed(50), { ...EXTREME, maxPpi: 72 });
    expect(size).toEqual({ width: 50, height: 50 });
  });
});

const corpus = corpusDir();
if (!corpus) console.log("recode.test.ts: skipped the corpus case, the shared corpus is absent.");
const scratch = popplerScratch("engine-recode");
afterAll(scratch.remove);

/** The images pdfimages lists (not masks): width and height. */
function imageSizes(bytes: Uint8Array): [number, number][] {
  const listing = execFileSync("pdfimages", ["-list", scratch.write(bytes)], { encoding: "utf8" });
  return listing
    .split("\n")
    .slice(2)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[2] === "image")
    .map((fields) => [Number(fields[3]), Number(fields[4])]);
}

describe("extreme keeps photos of people legible", () => {
  it
    .skipIf(!corpus)
    .each([
      "cv_chrome_twocolumn_photo.pdf",
      "cv_scribus_wholefonts_photo.pdf",
      "cv_xelatex_chinese_photo.pdf",
      "cv_pdfkit_japanese_rirekisho_photo.pdf",
    ])(
    "%s: every image at least 96 px on its short side, or as it was",
    async (file) => {
      const input = readFileSync(path.join(corpus!, "files", file));
      const before = imageSizes(input);
      const { output } = await compressPdf(input, "extreme");
      const after = imageSizes(output);
      expect(after.length).toBeGreaterThan(0);
      for (const [width, height] of after) {
        const kept = before.some(([w, h]) => w === width && h === height);
        if (!kept) expect(Math.min(width, height)).toBeGreaterThanOrEqual(FLOOR);
      }
    },
    120_000,
  );
});
