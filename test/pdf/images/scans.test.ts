// Scans (issue 28): bi-tonal images coded losslessly as CCITT G4 or JBIG2 generic regions, and
// page images of scanned text split into a text mask and a background. Round trips through our
// decoders and through two readers' (poppler's pdfimages and pdftoppm, MuPDF's mutool); every PDF
// is generated in code. The shared corpus's scans are measured by bench:compress.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFRef } from "@cantoo/pdf-lib";
import { compressPdf } from "../../../src/pdf/index.ts";
import { decodeCcitt, pack } from "../../../src/pdf/codecs/ccitt.ts";
import { encodeG4 } from "../../../src/pdf/images/bitonal.ts";
import { decodeJbig2, encodeJbig2, rowBytesOf } from "../../../src/pdf/codecs/jbig2.ts";
import type { Bits } from "../../../src/pdf/codecs/jbig2.ts";
import { ssim } from "../../../src/pdf/images/quality.ts";
import { jpegImage, photoPixels } from "../fixtures.ts";

const has = (tool: string, arg: string) => spawnSync(tool, [arg]).status === 0;
const hasPoppler = has("pdfimages", "-v");
const hasMutool = spawnSync("mutool", ["-v"]).error === undefined;
const work = mkdtempSync(path.join(os.tmpdir(), "engine-scans-"));
afterAll(() => (process.env["KEEP_WORK"] ? undefined : rmSync(work, { recursive: true, force: true })));

/** Words of random letters, as many as fill a line. */
function words(seed: number, letters: number): string {
  let out = "";
  while (out.length < letters) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += (seed >> 8) % 6 === 0 ? " " : String.fromCharCode(97 + ((seed >> 12) % 26));
  }
  return out;
}

/** A page of text set by librsvg (RGB, on off-white paper). */
async function textPage(width: number, height: number, lines: number): Promise<Uint8Array> {
  const size = Math.round(height / (lines * 1.6));
  const rows = Array.from(
    { length: lines },
    (_, i) =>
      `<text x="${size * 2}" y="${size * 2 + i * size * 1.5}" font-size="${size}" font-family="serif">` +
      `${words(i + 1, Math.floor(width / (size * 0.55)))}</text>`,
  ).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fbfaf7"/>${rows}</svg>`;
  return new Uint8Array(await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer());
}

/** Bits of text: the text page thresholded, and specks (what a scanner leaves). */
async function textBits(width: number, height: number): Promise<Bits> {
  const rgb = await textPage(width, height, 30);
  const gray = new Uint8Array(width * height);
  for (let i = 0; i < gray.length; i++) gray[i] = rgb[i * 3]! >= 160 ? 255 : 0;
  let seed = 7;
  for (let i = 0; i < 4000; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    gray[seed % gray.length] = 0;
  }
  return pack(gray, width, height);
}

function sameBits(a: Bits, b: Bits): number {
  const rowBytes = rowBytesOf(a.width);
  let differ = 0;
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      const i = y * rowBytes + (x >> 3);
      const m = 0x80 >> (x & 7);
      if ((a.data[i]! & m) !== (b.data[i]! & m)) differ++;
    }
  }
  return differ;
}

/** A PDF of one page per image, each drawn over its page at 72 dpi (one pixel a point). */
async function pdfOfImages(images: { data: Uint8Array; dict: Record<string, unknown> }[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const { data, dict } of images) {
    const width = dict["Width"] as number;
    const height = dict["Height"] as number;
    const ref = doc.context.register(doc.context.stream(data, { Type: "XObject", Subtype: "Image", ...dict }));
    addPage(doc, ref, width, height);
  }
  return doc.save({ useObjectStreams: false });
}

function addPage(doc: PDFDocument, ref: PDFRef, width: number, height: number) {
  const page = doc.addPage([width, height]);
  page.node.setXObject(PDFName.of("Im0"), ref);
  const content = doc.context.register(doc.context.stream(`q ${width} 0 0 ${height} 0 0 cm /Im0 Do Q`));
  page.node.set(PDFName.of("Contents"), content);
}

/** The 1-bit images of a PDF as poppler decodes them (pdfimages: PBM, 1 black), as samples (0 black). */
function popplerBits(pdf: string): Bits[] {
  const prefix = path.join(work, `pi-${path.basename(pdf)}`);
  execFileSync("pdfimages", [pdf, prefix]);
  const out: Bits[] = [];
  for (let i = 0; ; i++) {
    let file: Buffer;
    try {
      file = readFileSync(`${prefix}-${String(i).padStart(3, "0")}.pbm`);
    } catch {
      return out;
    }
    const [, w, h] = /^P4\s+(\d+)\s+(\d+)\s/.exec(file.toString("latin1", 0, 40))!;
    const width = Number(w);
    const height = Number(h);
    const body = file.subarray(file.length - rowBytesOf(width) * height);
    out.push({ data: Uint8Array.from(body, (v) => ~v & 0xff), width, height });
  }
}

/** Page `n` drawn by MuPDF at 72 dpi in gray, thresholded to samples. */
function mupdfBits(pdf: string, n: number, width: number, height: number): Bits {
  const file = path.join(work, `mu-${n}.pgm`);
  execFileSync("mutool", ["draw", "-q", "-r", "72", "-c", "gray", "-o", file, pdf, String(n)], { stdio: "ignore" });
  const pgm = readFileSync(file);
  return pack(pgm.subarray(pgm.length - width * height), width, height);
}

describe("bi-tonal coding", () => {
  it("JBIG2 generic regions decode to what was encoded, at any size", () => {
    let seed = 3;
    for (const [width, height] of [
      [1, 1],
      [7, 3],
      [33, 17],
      [64, 40],
      [130, 61],
    ] as const) {
      const data = new Uint8Array(rowBytesOf(width) * height);
      for (let i = 0; i < data.length; i++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        data[i] = seed % 3 === 0 ? 0xff : seed >> 8;
      }
      const bits = { data, width, height };
      const decoded = decodeJbig2(encodeJbig2(bits), width, height);
      expect(decoded && sameBits(decoded, bits)).toBe(0);
    }
  });

  it("G4 and JBIG2 of a text page: our decoders, poppler and MuPDF all read the same pixels", async () => {
    const width = 1275;
    const height = 1650;
    const bits = await textBits(width, height);
    const g4 = (await encodeG4(bits))!;
    const jbig2 = encodeJbig2(bits);
    expect(g4).toBeDefined();
    // JBIG2's generic region is the smaller on text.
    expect(jbig2.length).toBeLessThan(g4.length);
    const fromG4 = await decodeCcitt(g4, {
      k: -1,
      columns: width,
      rows: height,
      blackIs1: false,
      encodedByteAlign: false,
    });
    expect(fromG4 && sameBits(fromG4, bits)).toBe(0);
    expect(sameBits(decodeJbig2(jbig2, width, height)!, bits)).toBe(0);
    const common = { Width: width, Height: height, BitsPerComponent: 1, ColorSpace: "DeviceGray" };
    const pdf = path.join(work, "bitonal.pdf");
    writeFileSync(
      pdf,
      await pdfOfImages([
        {
          data: g4,
          dict: { ...common, Filter: "CCITTFaxDecode", DecodeParms: { K: -1, Columns: width, Rows: height } },
        },
        { data: jbig2, dict: { ...common, Filter: "JBIG2Decode" } },
      ]),
    );
    if (hasPoppler) for (const decoded of popplerBits(pdf)) expect(sameBits(decoded, bits)).toBe(0);
    else console.warn("pdfimages (poppler-utils) not installed: poppler's decoding not checked");
    if (hasMutool) for (const n of [1, 2]) expect(sameBits(mupdfBits(pdf, n, width, height), bits)).toBe(0);
    else console.warn("mutool (mupdf-tools) not installed: MuPDF's decoding not checked");
  });

  it("1-bit images (Flate, CCITT, stencil masks) are re-coded pixel for pixel in every profile", async () => {
    const width = 850;
    const height = 1100;
    const bits = await textBits(width, height);
    const g4 = (await encodeG4(bits))!;
    const { deflateSync } = await import("node:zlib");
    const input = await pdfOfImages([
      {
        data: deflateSync(bits.data),
        dict: { Width: width, Height: height, BitsPerComponent: 1, ColorSpace: "DeviceGray", Filter: "FlateDecode" },
      },
      {
        data: g4,
        dict: {
          Width: width,
          Height: height,
          BitsPerComponent: 1,
          ColorSpace: "DeviceGray",
          Filter: "CCITTFaxDecode",
          DecodeParms: { K: -1, Columns: width, Rows: height },
          Decode: [1, 0],
        },
      },
      { data: deflateSync(bits.data), dict: { Width: width, Height: height, ImageMask: true, Filter: "FlateDecode" } },
    ]);
    const original = path.join(work, "bitonal-input.pdf");
    writeFileSync(original, input);
    const reference = hasPoppler ? popplerBits(original) : [];
    for (const profile of ["lossless", "balanced", "extreme"] as const) {
      const { output } = await compressPdf(input, profile);
      expect(output.length).toBeLessThan(input.length);
      const doc = await PDFDocument.load(output);
      const filters = doc.context
        .enumerateIndirectObjects()
        .map(([, o]) => o)
        .filter(
          (o): o is PDFRawStream =>
            o instanceof PDFRawStream && o.dict.lookup(PDFName.of("Subtype")) === PDFName.of("Image"),
        )
        .map((o) => String(o.dict.lookup(PDFName.of("Filter"))));
      expect(filters).toEqual(["/JBIG2Decode", "/JBIG2Decode", "/JBIG2Decode"]);
      const file = path.join(work, `recoded-${profile}.pdf`);
      writeFileSync(file, output);
      if (hasPoppler) {
        const decoded = popplerBits(file);
        expect(decoded).toHaveLength(3);
        decoded.forEach((d, i) => expect(sameBits(d, reference[i]!)).toBe(0));
      }
    }
  });
});

/** Pages rendered at 100 dpi in gray by pdftoppm and by mutool. */
function renders(pdf: string, tool: "pdftoppm" | "mutool"): Buffer {
  const out = path.join(work, `r-${tool}-${path.basename(pdf)}`);
  if (tool === "pdftoppm") execFileSync("pdftoppm", ["-r", "100", "-gray", "-singlefile", pdf, out]);
  else
    execFileSync("mutool", ["draw", "-q", "-r", "100", "-c", "gray", "-o", `${out}.pgm`, pdf, "1"], {
      stdio: "ignore",
    });
  return readFileSync(`${out}.pgm`);
}

function pgm(file: Buffer): { data: Uint8Array; width: number; height: number } {
  const [, w, h] = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(file.toString("latin1", 0, 40))!;
  const width = Number(w);
  const height = Number(h);
  return { data: file.subarray(file.length - width * height), width, height };
}

describe("mixed raster content", () => {
  it("a scanned text page with a photograph becomes a text mask over a background, held to its floor", async () => {
    // Letter at 200 dpi: text, a colour photograph in its lower third, JPEG at q90.
    const width = 1700;
    const height = 2200;
    const rgb = await textPage(width, height, 40);
    const photo = photoPixels(600, 400, 3, 5);
    for (let y = 0; y < 400; y++) rgb.set(photo.subarray(y * 1800, (y + 1) * 1800), ((1600 + y) * width + 900) * 3);
    const jpeg = await sharp(rgb, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 90 })
      .toBuffer();
    const doc = await PDFDocument.create();
    const ref = jpegImage(doc, jpeg, width, height);
    const page = doc.addPage([612, 792]);
    page.node.setXObject(PDFName.of("Im0"), ref);
    page.node.set(PDFName.of("Contents"), doc.context.register(doc.context.stream("q 612 0 0 792 0 0 cm /Im0 Do Q")));
    const input = await doc.save();
    const { output } = await compressPdf(input, "balanced");
    // A few kilobytes of text mask and background where the page was one JPEG.
    expect(output.length).toBeLessThan(input.length * 0.2);
    const result = await PDFDocument.load(output);
    const kinds = result.context
      .enumerateIndirectObjects()
      .map(([, o]) => o)
      .filter((o): o is PDFRawStream => o instanceof PDFRawStream)
      .map((o) => String(o.dict.lookup(PDFName.of("Subtype"))));
    expect(kinds).toContain("/Form");
    const before = path.join(work, "mrc-in.pdf");
    const after = path.join(work, "mrc-out.pdf");
    writeFileSync(before, input);
    writeFileSync(after, output);
    const tools = [...(has("pdftoppm", "-v") ? ["pdftoppm" as const] : []), ...(hasMutool ? ["mutool" as const] : [])];
    if (tools.length < 2) console.warn("pdftoppm or mutool not installed: the page is rendered by fewer readers");
    for (const tool of tools) {
      const a = pgm(renders(before, tool));
      const b = pgm(renders(after, tool));
      expect([b.width, b.height]).toEqual([a.width, a.height]);
      expect(ssim(a.data, b.data, a.width, a.height)).toBeGreaterThanOrEqual(0.95);
      // The photograph is still there (its region alone, at 100 dpi).
      const crop = (img: typeof a) => {
        const x0 = Math.round((900 / width) * img.width);
        const y0 = Math.round((1600 / height) * img.height);
        const w = Math.round((600 / width) * img.width);
        const h = Math.round((400 / height) * img.height);
        const out = new Uint8Array(w * h);
        for (let y = 0; y < h; y++)
          out.set(img.data.subarray((y0 + y) * img.width + x0, (y0 + y) * img.width + x0 + w), y * w);
        return { out, w, h };
      };
      const pa = crop(a);
      const pb = crop(b);
      expect(ssim(pa.out, pb.out, pa.w, pa.h)).toBeGreaterThan(0.8);
    }
  });
});
