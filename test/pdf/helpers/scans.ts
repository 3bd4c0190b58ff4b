// Scanned pages made by code for the OCR tests: lines of words rendered by sharp (SVG text, DejaVu)
// at a resolution, wrapped as an image PDF (one gray PNG drawn over the whole page, as a scanner
// writes it).
import { PDFDocument, StandardFonts } from "@cantoo/pdf-lib";
import sharp from "sharp";

export interface ScanOptions {
  /** Lines of words, drawn top to bottom. */
  lines: readonly string[];
  dpi?: number;
  /** The page, in points (US letter's width, a third of its height unless told). */
  width?: number;
  height?: number;
}

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** A gray PNG of the lines, as a scanner at `dpi` would see the page. */
export async function scanImage({ lines, dpi = 200, width = 612, height = 264 }: ScanOptions): Promise<Buffer> {
  const w = Math.round((width * dpi) / 72);
  const h = Math.round((height * dpi) / 72);
  const size = Math.round((14 * dpi) / 72);
  const text = lines
    .map((line, i) => `<text x="${size * 2}" y="${size * 3 * (i + 1)}">${escape(line)}</text>`)
    .join("");
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">` +
    `<rect width="100%" height="100%" fill="white"/>` +
    `<g font-family="DejaVu Serif" font-size="${size}" fill="black">${text}</g></svg>`;
  return sharp(Buffer.from(svg)).grayscale().png().toBuffer();
}

/** An image PDF of one scanned page per entry. */
export async function scanDocument(pages: readonly ScanOptions[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const options of pages) {
    const { width = 612, height = 264 } = options;
    const png = await doc.embedPng(await scanImage(options));
    doc.addPage([width, height]).drawImage(png, { x: 0, y: 0, width, height });
  }
  return doc.save();
}

/** A page with real text (Helvetica), no image. */
export async function textDocument(line: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 264]).drawText(line, { x: 40, y: 200, size: 14, font });
  return doc.save();
}
