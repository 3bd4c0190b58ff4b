// The measuring functions of bench:compress (bench/pdf/quality.ts): SSIM against a plain,
// window-by-window implementation of the same formula and against a closed form, and, when
// Poppler and qpdf are installed, rendering, checking and counting on a PDF made here.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFDocument, rgb } from "@cantoo/pdf-lib";
import {
  measuredPages,
  pageCount,
  parsePgm,
  qpdfCheck,
  renderPage,
  ssim,
  structureCounts,
  structureLosses,
  textSimilarity,
} from "../../bench/pdf/quality.ts";
import type { GrayImage } from "../../bench/pdf/quality.ts";
import { findBinary } from "../../bench/pdf/tools.ts";

const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

function image(width: number, height: number, pixel: (x: number, y: number) => number): GrayImage {
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = pixel(x, y);
  return { width, height, data };
}

/** A deterministic pseudo-random image (no flaky inputs). */
function noise(width: number, height: number, seed: number): GrayImage {
  let state = seed;
  return image(width, height, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % 256;
  });
}

/** The definition, computed window by window with the 2-D Gaussian: slow, obviously right. */
function referenceSsim(a: GrayImage, b: GrayImage): number {
  const g = Array.from({ length: 11 }, (_, i) => Math.exp(-((i - 5) ** 2) / (2 * 1.5 * 1.5)));
  const sum = g.reduce((x, y) => x + y, 0);
  const w = g.map((v) => v / sum);
  let total = 0;
  let count = 0;
  for (let y = 0; y + 11 <= a.height; y++) {
    for (let x = 0; x + 11 <= a.width; x++) {
      let mx = 0;
      let my = 0;
      let exx = 0;
      let eyy = 0;
      let exy = 0;
      for (let j = 0; j < 11; j++) {
        for (let i = 0; i < 11; i++) {
          const weight = w[i]! * w[j]!;
          const p = a.data[(y + j) * a.width + x + i]!;
          const q = b.data[(y + j) * b.width + x + i]!;
          mx += weight * p;
          my += weight * q;
          exx += weight * p * p;
          eyy += weight * q * q;
          exy += weight * p * q;
        }
      }
      const vx = exx - mx * mx;
      const vy = eyy - my * my;
      const cov = exy - mx * my;
      total += ((2 * mx * my + C1) * (2 * cov + C2)) / ((mx * mx + my * my + C1) * (vx + vy + C2));
      count++;
    }
  }
  return total / count;
}

describe("ssim", () => {
  it("is exactly 1 for identical images", () => {
    const a = noise(40, 30, 1);
    expect(ssim(a, { ...a, data: a.data.slice() })).toBe(1);
  });

  it("falls below 1 when pixels change, and further the more they change", () => {
    const a = noise(40, 30, 2);
    const slightly = { ...a, data: a.data.map((v, i) => (i % 7 === 0 ? Math.min(255, v + 20) : v)) };
    const heavily = noise(40, 30, 3);
    const s1 = ssim(a, slightly);
    const s2 = ssim(a, heavily);
    expect(s1).toBeLessThan(1);
    expect(s1).toBeGreaterThan(0.8);
    expect(s2).toBeLessThan(s1);
    expect(s2).toBeLessThan(0.1);
  });

  it("matches the closed form on flat images: (2ab + C1) / (a² + b² + C1)", () => {
    const a = image(20, 16, () => 100);
    const b = image(20, 16, () => 120);
    expect(ssim(a, b)).toBeCloseTo((2 * 100 * 120 + C1) / (100 ** 2 + 120 ** 2 + C1), 12);
  });

  it("matches a window-by-window computation of the definition", () => {
    const a = noise(37, 29, 4);
    const b = { ...a, data: a.data.map((v, i) => Math.max(0, Math.min(255, v + ((i * 31) % 41) - 20))) };
    expect(ssim(a, b)).toBeCloseTo(referenceSsim(a, b), 10);
    const gradient = image(50, 23, (x, y) => (x * 5 + y * 3) % 256);
    const blurred = image(50, 23, (x, y) => Math.round(((x * 5 + y * 3) % 256) * 0.9 + 10));
    expect(ssim(gradient, blurred)).toBeCloseTo(referenceSsim(gradient, blurred), 10);
  });

  it("refuses images of different sizes", () => {
    expect(() => ssim(noise(20, 20, 5), noise(21, 20, 5))).toThrow(RangeError);
  });
});

describe("helpers", () => {
  it("parses a binary PGM", () => {
    const bytes = new Uint8Array([...Buffer.from("P5\n# made by hand\n3 2\n255\n"), 0, 64, 128, 192, 255, 1]);
    expect(parsePgm(bytes)).toEqual({ width: 3, height: 2, data: new Uint8Array([0, 64, 128, 192, 255, 1]) });
    expect(() => parsePgm(Buffer.from("P6\n1 1\n255\nabc"))).toThrow(/PGM/);
  });

  it("measures the first, middle and last pages", () => {
    expect(measuredPages(1)).toEqual([1]);
    expect(measuredPages(2)).toEqual([1, 2]);
    expect(measuredPages(14)).toEqual([1, 7, 14]);
  });

  it("compares texts by the words they share", () => {
    expect(textSimilarity("a b c", "c b a")).toBe(1);
    expect(textSimilarity("a b c d", "a b")).toBe(0.5);
    expect(textSimilarity("", "")).toBe(1);
  });

  it("reports what got fewer", () => {
    const none = { formFields: 0, links: 0, bookmarks: 0, embeddedFiles: 0, fileAttachmentAnnotations: 0 };
    expect(structureLosses({ ...none, formFields: 3, links: 2 }, { ...none, links: 5 })).toEqual(["fields 3→0"]);
  });
});

const POPPLER_AND_QPDF = Boolean(findBinary("pdftoppm") && findBinary("qpdf"));
if (!POPPLER_AND_QPDF) {
  console.log("quality.test.ts: rendering tests skipped, pdftoppm or qpdf is not installed (poppler-utils, qpdf).");
}

describe.skipIf(!POPPLER_AND_QPDF)("on a PDF made with pdf-lib", () => {
  let dir: string;
  let pdf: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "bench-quality-"));
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++) {
      // 200 x 100 pt: 200 x 100 px at 72 dpi.
      const page = doc.addPage([200, 100]);
      page.drawRectangle({ x: 20 + i * 10, y: 20, width: 60, height: 40, color: rgb(0.2, 0.2, 0.2) });
    }
    doc.getForm().createTextField("name").addToPage(doc.getPage(0), { x: 120, y: 20, width: 60, height: 20 });
    pdf = path.join(dir, "tiny.pdf");
    await writeFile(pdf, await doc.save());
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("renders a page to gray pixels of the expected size", async () => {
    const page = await renderPage(pdf, 2, { dpi: 72 });
    expect([page.width, page.height]).toEqual([200, 100]);
    expect(Math.min(...page.data)).toBeLessThan(100); // the dark rectangle
    expect(ssim(page, await renderPage(pdf, 2, { dpi: 72 }))).toBe(1);
    expect(ssim(page, await renderPage(pdf, 3, { dpi: 72 }))).toBeLessThan(1);
  });

  it("checks, counts pages and counts form fields with qpdf", async () => {
    expect(await pageCount(pdf)).toBe(3);
    expect((await qpdfCheck(pdf)).status).not.toBe("errors");
    expect(await structureCounts(pdf)).toEqual({
      formFields: 1,
      links: 0,
      bookmarks: 0,
      embeddedFiles: 0,
      fileAttachmentAnnotations: 0,
    });
  });

  it("fails with a clear message on a page that does not exist", async () => {
    await expect(renderPage(pdf, 9)).rejects.toThrow(/pdftoppm could not render page 9/);
  });
});
