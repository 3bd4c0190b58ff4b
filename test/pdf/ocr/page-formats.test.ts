// The scans OCR reads besides JPEG, gray and colour samples and JBIG2, on pages made by code: a CCITT
// G4 page (as fax and office scanners write them) and an indexed-colour page (4 bits of index into
// an RGB palette) come back with their words; and a document with more scanned pages than the pass's
// pageLimit is refused before a page is read (OcrPageLimit: a synchronous call queues it as a job).
import {
  concatTransformationMatrix,
  drawObject,
  PDFDocument,
  PDFHexString,
  PDFName,
  popGraphicsState,
  pushGraphicsState,
} from "@cantoo/pdf-lib";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { pack } from "../../../src/pdf/codecs/ccitt.ts";
import { encodeG4 } from "../../../src/pdf/images/bitonal.ts";
import { addTextLayers, OcrPageLimit } from "../../../src/pdf/ocr/text-layers.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";
import { scanDocument, scanImage } from "../helpers/scans.ts";

const poppler = popplerScratch("engine-ocr-formats");
afterAll(() => poppler.remove());

const LINES = ["Scanned by a fax machine", "and read back as words"];
const WIDTH = 612;
const HEIGHT = 200;

/** The lines rendered at 300 dpi, as one gray byte per pixel. */
async function grayScan() {
  const png = await scanImage({ lines: LINES, dpi: 300, width: WIDTH, height: HEIGHT });
  const { data, info } = await sharp(png).flatten().grayscale().raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(1);
  return { gray: new Uint8Array(data), width: info.width, height: info.height };
}

/** A one-page PDF drawing this image stream over the whole page. */
async function pageOf(image: { data: Uint8Array; dict: Record<string, unknown>; flate?: boolean }) {
  const doc = await PDFDocument.create();
  const { context } = doc;
  const stream = image.flate
    ? context.flateStream(image.data, { Type: "XObject", Subtype: "Image", ...image.dict })
    : context.stream(image.data, { Type: "XObject", Subtype: "Image", ...image.dict });
  const page = doc.addPage([WIDTH, HEIGHT]);
  const name = page.node.newXObject("Im", context.register(stream));
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(WIDTH, 0, 0, HEIGHT, 0, 0),
    drawObject(name),
    popGraphicsState(),
  );
  return doc.save();
}

async function read(input: Uint8Array, pageLimit?: number) {
  const doc = await PDFDocument.load(input);
  const report = await addTextLayers(doc.context, {
    languages: ["eng"],
    pageTimeoutMs: 60_000,
    timeBudgetMs: 120_000,
    ...(pageLimit !== undefined ? { pageLimit } : {}),
  });
  return { report, output: await doc.save() };
}

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

describe.skipIf(!hasPoppler())("scans in other image formats", () => {
  it("reads a CCITT G4 page", { timeout: 60_000 }, async () => {
    const { gray, width, height } = await grayScan();
    const g4 = await encodeG4(pack(gray, width, height));
    expect(g4).toBeDefined();
    const input = await pageOf({
      data: g4!,
      dict: {
        Width: width,
        Height: height,
        BitsPerComponent: 1,
        ColorSpace: "DeviceGray",
        Filter: "CCITTFaxDecode",
        DecodeParms: { K: -1, Columns: width, Rows: height },
      },
    });
    const { report, output } = await read(input);
    expect(report).toMatchObject({ pagesRead: 1, pagesNotRead: 0 });
    expect(wordsOf(poppler.textOf(output))).toEqual(wordsOf(LINES.join(" ")));
  });

  it("reads an indexed-colour page (4 bits of index into an RGB palette)", { timeout: 60_000 }, async () => {
    const { gray, width, height } = await grayScan();
    // 16 grays as RGB, indices packed two to a byte, rows padded to a byte.
    const palette = Array.from({ length: 16 }, (_, i) => (i * 17).toString(16).padStart(2, "0").repeat(3)).join("");
    const rowBytes = Math.ceil(width / 2);
    const data = new Uint8Array(rowBytes * height);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) data[y * rowBytes + (x >> 1)]! |= (gray[y * width + x]! >> 4) << (x & 1 ? 0 : 4);
    }
    const input = await pageOf({
      data,
      flate: true,
      dict: {
        Width: width,
        Height: height,
        BitsPerComponent: 4,
        ColorSpace: [PDFName.of("Indexed"), PDFName.of("DeviceRGB"), 15, PDFHexString.of(palette)],
      },
    });
    const { report, output } = await read(input);
    expect(report).toMatchObject({ pagesRead: 1, pagesNotRead: 0 });
    expect(wordsOf(poppler.textOf(output))).toEqual(wordsOf(LINES.join(" ")));
  });

  it("refuses a document with more scanned pages than its pageLimit before reading one", async () => {
    const input = await scanDocument([{ lines: ["one"] }, { lines: ["two"] }, { lines: ["three"] }]);
    const refused = await read(input, 2).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OcrPageLimit);
    expect(refused).toMatchObject({ code: "ocr_page_limit", pages: 3, limit: 2 });
  });
});
