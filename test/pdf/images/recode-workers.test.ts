// JPEG images recoded on worker threads (src/pdf/images/recode-workers.ts): a long scan's pages are
// recoded off the main thread, and what comes out is what the main thread alone makes of them.
// Every PDF is generated in code.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { compileChild } from "../../../src/compress/isolation/stripped-copy.ts";
import { PDFDict, PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFRef } from "@cantoo/pdf-lib";
import { optimiseImages } from "../../../src/pdf/images/optimise.ts";
import type { DetachedRecode } from "../../../src/pdf/images/recode-workers.ts";
import { createRecodeWorkers, WorkerUnavailable } from "../../../src/pdf/images/recode-workers.ts";
import { PROFILE_SETTINGS } from "../../../src/pdf/index.ts";
import { flateImage, jpegImage, jpegOf, photoPixels, place } from "../fixtures.ts";

/** A page of lines of letters, black on off-white paper, as a scanner gives it (RGB). */
async function scannedPage(width: number, height: number, seed: number): Promise<Uint8Array> {
  const size = Math.round(height / 70);
  let state = seed;
  const line = () => {
    let text = "";
    while (text.length < width / (size * 0.55)) {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      text += (state >> 8) % 6 === 0 ? " " : String.fromCharCode(97 + ((state >> 12) % 26));
    }
    return text;
  };
  const rows = Array.from(
    { length: 40 },
    (_, i) =>
      `<text x="${size * 2}" y="${size * 3 + i * size * 1.6}" font-size="${size}" font-family="serif">${line()}</text>`,
  ).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#f7f4ee"/>${rows}</svg>`;
  return new Uint8Array(await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer());
}

/**
 * Five US Letter pages at 300 dpi, one JPEG each (42 million pixels: over the line from which
 * workers start), the last with a photograph in it; and a small Flate image the main thread keeps.
 */
async function longScan(): Promise<Uint8Array> {
  const width = 2550;
  const height = 3300;
  const doc = await PDFDocument.create();
  for (let p = 0; p < 5; p++) {
    const rgb = await scannedPage(width, height, p + 1);
    if (p === 4) {
      const photo = photoPixels(900, 700, 3, 3);
      for (let y = 0; y < 700; y++) rgb.set(photo.subarray(y * 2700, (y + 1) * 2700), ((2200 + y) * width + 1200) * 3);
    }
    const jpeg = await jpegOf(rgb, width, height, 3, 90);
    const ref = jpegImage(doc, jpeg, width, height);
    place(doc.addPage([612, 792]), ref, 0, 0, 612, 792);
  }
  const small = photoPixels(300, 200, 3, 9);
  const flate = flateImage(doc, small, 300, 200, "DeviceRGB");
  place(doc.getPage(0), flate, 400, 600, 150, 100);
  return doc.save();
}

/** What became of each image of the input: its dictionary's kind and filter, and every byte it draws. */
function outcomes(context: PDFContext, refs: PDFRef[]): string[] {
  return refs.map((ref) => {
    const stream = context.lookup(ref);
    if (!(stream instanceof PDFRawStream)) throw new Error(`${ref.toString()} is not a stream`);
    const subtype = String(stream.dict.lookup(PDFName.of("Subtype")));
    const parts = [
      subtype,
      String(stream.dict.lookup(PDFName.of("Filter"))),
      Buffer.from(stream.contents).toString("base64"),
    ];
    const resources = stream.dict.lookup(PDFName.of("Resources"));
    const xobjects = resources instanceof PDFDict ? resources.lookup(PDFName.of("XObject")) : undefined;
    if (xobjects instanceof PDFDict) {
      for (const key of xobjects.keys()) {
        const drawn = xobjects.lookup(key);
        if (!(drawn instanceof PDFRawStream)) throw new Error(`${key.toString()} is not a stream`);
        parts.push(
          key.toString(),
          String(drawn.dict.lookup(PDFName.of("Filter"))),
          Buffer.from(drawn.contents).toString("base64"),
        );
      }
    }
    return parts.join(" ");
  });
}

/** A JPEG's start and then noise: the decoder gives up on it. */
const damagedJpeg = (): DetachedRecode => ({
  contents: new Uint8Array([0xff, 0xd8, 0xff, 0xdb, ...Array.from({ length: 4096 }, (_, i) => (i * 37) & 0xff)]),
  jpeg: undefined,
  header: { width: 2000, height: 1500, components: 3, precision: 8, adobe: false, quality: 90 },
  dict: "<< /Filter /DCTDecode >>",
  info: {
    width: 2000,
    height: 1500,
    bpc: 8,
    decode: undefined,
    colour: { kind: "direct", components: 3, ranges: [0, 1, 0, 1, 0, 1], rgbLike: true },
  },
  mask: false,
  masked: false,
  placement: { width: 612, height: 792, pageShare: 1 },
  fixedSize: false,
  settings: PROFILE_SETTINGS.balanced.images!,
  effort: "fast",
});

const imageRefs = (context: PDFContext) =>
  context
    .enumerateIndirectObjects()
    .filter(([, o]) => o instanceof PDFRawStream && o.dict.lookup(PDFName.of("Subtype")) === PDFName.of("Image"))
    .map(([ref]) => ref);

describe("JPEG images recoded on worker threads", () => {
  it("gives each image what the main thread alone gives it", { timeout: 120_000 }, async () => {
    const input = await longScan();
    const run = async (workerThreads: number) => {
      const { context } = await PDFDocument.load(input, { updateMetadata: false });
      const refs = imageRefs(context);
      const settings = PROFILE_SETTINGS.balanced.images!;
      const { report } = await optimiseImages(context, settings, {
        concurrency: 3,
        memoryBudget: 256 * 1024 * 1024,
        workerThreads,
      });
      return { report, outcomes: outcomes(context, refs) };
    };
    const alone = await run(0);
    const threaded = await run(2);
    // The scanned pages became layers (text over a background), the photograph's page too.
    expect(alone.report.layered).toBe(5);
    expect(alone.report).toMatchObject({ threads: 0, offThread: 0 });
    // The threads took some of the pages, the main thread the others (while they were busy).
    expect(threaded.report.offThread).toBeGreaterThan(0);
    // The same pages measured the same (the time it took aside).
    const quality = { ...alone.report.quality, measureMs: threaded.report.quality.measureMs };
    expect(threaded.report).toEqual({ ...alone.report, threads: 2, offThread: threaded.report.offThread, quality });
    expect(threaded.outcomes).toEqual(alone.outcomes);
  });

  it("starts its threads from the engine processes' stripped copy, which holds the worker's module", async () => {
    const copy = compileChild(path.resolve("src/compress/isolation/child.ts"));
    expect(copy).toBeDefined();
    try {
      const images = path.join(path.dirname(copy!.module), "../../pdf/images");
      expect(existsSync(path.join(images, "recode-worker.mjs"))).toBe(true);
      expect(readFileSync(path.join(images, "recode-workers.mjs"), "utf8")).toContain('new URL("./recode-worker.mjs"');
      const copied = (await import(pathToFileURL(path.join(images, "recode-workers.mjs")).href)) as {
        createRecodeWorkers: typeof createRecodeWorkers;
      };
      const workers = copied.createRecodeWorkers(1);
      // Answered by the copy's worker (a thread that could not start would be WorkerUnavailable).
      await expect(workers.recode(damagedJpeg())).rejects.toThrow(/corrupt header/);
      await workers.close();
    } finally {
      copy?.remove();
    }
  });

  it("fails a request it cannot recode, and those still running when closed, and goes on", async () => {
    const workers = createRecodeWorkers(2);
    const damaged = damagedJpeg();
    // The decoder's error comes back as the request's failure; the threads go on.
    await expect(workers.recode(damaged)).rejects.toThrow(/corrupt header/);
    await expect(workers.recode(damaged)).rejects.toThrow(/corrupt header/);
    // Closed while one runs: it is answered or failed, never left waiting.
    const running = expect(workers.recode(damaged)).rejects.toThrow(/corrupt header|image worker exited/);
    await workers.close();
    await running;
    await expect(workers.recode(damaged)).rejects.toBeInstanceOf(WorkerUnavailable);
  });
});
