// PDFs for the engine and runner tests, made here: @cantoo/pdf-lib for the documents, sharp for
// the JPEGs, deterministic pixels for "photographs" and "line art".
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import {
  concatTransformationMatrix,
  drawObject,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRawStream,
  PDFStream,
  PDFString,
  popGraphicsState,
  pushGraphicsState,
  StandardFonts,
} from "@cantoo/pdf-lib";
import type { PDFObject, PDFPage, PDFRef, SecurityOptions } from "@cantoo/pdf-lib";

/**
 * Corpus files whose signatures the engine finds: the signed category, and one file the manifest
 * expects a 200 for from before signed_document (issue 26): the Federal Register issue carries the
 * Government Publishing Office's signature (pdfsig: "Signature is Valid"). It is refused unless its
 * signatures are to be removed. (The prefilled 1040's usage rights, /Perms /UR3, are no signature:
 * they are removed and the form compressed; engine-signatures.test.ts.)
 */
const SIGNED_OUTSIDE_THEIR_CATEGORY = new Set(["text_federal_register_15p.pdf"]);
export const carriesSignatures = (file: string, category: string) =>
  category === "signed" || SIGNED_OUTSIDE_THEIR_CATEGORY.has(file);

/** The shared corpus of real PDFs: PDF_CORPUS_DIR, else ../shared/corpus/pdf beside the repository. */
export function corpusDir(): string | undefined {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const dir = process.env["PDF_CORPUS_DIR"] ?? path.resolve(repoRoot, "../shared/corpus/pdf");
  return existsSync(path.join(dir, "MANIFEST.tsv")) ? dir : undefined;
}

/** A small deterministic generator of numbers in [0, 1) (mulberry32). */
export function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v | 0);

/** Smooth gradients, texture and sensor-like noise: compresses like a photograph. */
export function photoPixels(width: number, height: number, channels: 1 | 3, seed = 1): Uint8Array {
  const next = random(seed);
  const out = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const base = 120 + 60 * Math.sin(x / 97 + y / 131) + 35 * Math.sin((x * y) / 40000) + 20 * Math.cos(y / 17);
      for (let c = 0; c < channels; c++) {
        const tint = c === 0 ? 1 : c === 1 ? 0.8 : 0.6;
        out[(y * width + x) * channels + c] = clamp(
          base * tint + 30 * Math.sin(x / (11 + c * 5)) + (next() - 0.5) * 24,
        );
      }
    }
  }
  return out;
}

/** Flat areas and hard edges: compresses like a diagram or a screenshot. */
export function lineArtPixels(width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height * 3).fill(255);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      if (x % 40 < 2 || y % 40 < 2) out.fill(0, i, i + 3);
      else if ((Math.floor(x / 80) + Math.floor(y / 80)) % 5 === 0) out.set([30, 90, 200], i);
    }
  }
  return out;
}

export async function jpegOf(pixels: Uint8Array, width: number, height: number, channels: 1 | 3, quality = 95) {
  const image = sharp(pixels, { raw: { width, height, channels } });
  // sharp writes a 1-channel input as a 3-component JPEG unless told otherwise
  return new Uint8Array(await (channels === 1 ? image.toColourspace("b-w") : image).jpeg({ quality }).toBuffer());
}

/** Registers an RGB image XObject of JPEG data and returns its reference. */
export function jpegImage(doc: PDFDocument, jpeg: Uint8Array, width: number, height: number): PDFRef {
  const stream = doc.context.stream(jpeg, {
    Type: "XObject",
    Subtype: "Image",
    Width: width,
    Height: height,
    BitsPerComponent: 8,
    ColorSpace: "DeviceRGB",
    Filter: "DCTDecode",
  });
  return doc.context.register(stream);
}

/** Registers an 8-bit image XObject with Flate data (no predictor) and returns its reference. */
export function flateImage(
  doc: PDFDocument,
  pixels: Uint8Array,
  width: number,
  height: number,
  colorSpace: "DeviceRGB" | "DeviceGray",
  extra: Record<string, PDFRef> = {},
): PDFRef {
  const stream = doc.context.flateStream(pixels, {
    Type: "XObject",
    Subtype: "Image",
    Width: width,
    Height: height,
    ColorSpace: colorSpace,
    BitsPerComponent: 8,
    ...extra,
  });
  return doc.context.register(stream);
}

/** Draws an image XObject on a page at the given box. */
export function place(page: PDFPage, ref: PDFRef, x: number, y: number, w: number, h: number): void {
  const name = page.node.newXObject("Im", ref);
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(w, 0, 0, h, x, y),
    drawObject(name),
    popGraphicsState(),
  );
}

export interface PhotoPdf {
  bytes: Uint8Array;
  /** Object numbers of the image XObjects, by role. */
  refs: { jpeg: PDFRef; flate: PDFRef; lineArt: PDFRef; mask: PDFRef; masked: PDFRef };
}

/**
 * Two pages: a big photographic JPEG (quality 95) and a Flate RGB photograph, then a line-art
 * Flate image and a photograph with a soft mask, plus text on both.
 */
export async function photoPdf(
  options: { encrypt?: SecurityOptions; objectStreams?: boolean } = {},
): Promise<PhotoPdf> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page1 = doc.addPage([612, 792]);
  const page2 = doc.addPage([612, 792]);
  page1.drawText("A photograph and a lossless photograph", { x: 50, y: 750, size: 14, font });
  page2.drawText("Line art and a masked photograph", { x: 50, y: 750, size: 14, font });

  const jpegImage = await doc.embedJpg(await jpegOf(photoPixels(2600, 1800, 3, 1), 2600, 1800, 3));
  page1.drawImage(jpegImage, { x: 50, y: 400, width: 500, height: 346 });
  const flate = flateImage(doc, photoPixels(1400, 1000, 3, 2), 1400, 1000, "DeviceRGB");
  place(page1, flate, 50, 50, 500, 357);

  const lineArt = flateImage(doc, lineArtPixels(1600, 1200), 1600, 1200, "DeviceRGB");
  place(page2, lineArt, 50, 400, 500, 375);
  const mask = flateImage(doc, photoPixels(900, 600, 1, 3), 900, 600, "DeviceGray");
  const masked = flateImage(doc, photoPixels(900, 600, 3, 4), 900, 600, "DeviceRGB", { SMask: mask });
  place(page2, masked, 50, 50, 500, 333);

  if (options.encrypt) doc.encrypt(options.encrypt);
  const bytes = await doc.save({ useObjectStreams: options.objectStreams ?? false });
  return { bytes, refs: { jpeg: jpegImage.ref, flate, lineArt, mask, masked } };
}

/** A page of text with every document information field set (Title, Author, Creator, Producer). */
export async function documentWithInformation(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([300, 300]).drawText("Hello", { x: 20, y: 200, size: 20, font });
  doc.setTitle("A title");
  doc.setAuthor("An author");
  doc.setCreator("A creator");
  doc.setProducer("A producer");
  return doc.save();
}

/** A small text-only PDF with `pages` pages. */
export async function textPdf(pages = 3, options: { encrypt?: SecurityOptions } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([612, 792]);
    for (let line = 0; line < 40; line++) {
      page.drawText(`Page ${i + 1}, line ${line + 1}: the quick brown fox jumps over the lazy dog.`, {
        x: 50,
        y: 740 - line * 17,
        size: 11,
        font,
      });
    }
  }
  if (options.encrypt) doc.encrypt(options.encrypt);
  return doc.save({ useObjectStreams: false });
}

/** The raw (still encoded) data of every image XObject, by object number. */
export async function imageStreams(
  bytes: Uint8Array,
): Promise<Map<number, { filter: string; data: Uint8Array; width: number; height: number }>> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const images = new Map<number, { filter: string; data: Uint8Array; width: number; height: number }>();
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream) || object.dict.lookup(PDFName.of("Subtype")) !== PDFName.of("Image"))
      continue;
    images.set(ref.objectNumber, {
      filter: String(object.dict.lookup(PDFName.of("Filter"))),
      data: object.contents,
      width: Number(String(object.dict.lookup(PDFName.of("Width")))),
      height: Number(String(object.dict.lookup(PDFName.of("Height")))),
    });
  }
  return images;
}

/** Addresses the cleaning must take out of a document (each carried by one link of reachingPdf). */
export const UNSAFE_ADDRESSES = [
  "\\\\attacker.example\\share\\report.pdf", // GoToR to a UNC path: Windows logs on with NTLM
  "//attacker.example/share/spec.pdf", // the same in PDF's own path syntax (a file specification)
  "smb://attacker.example/share/form.fdf", // SubmitForm to a share
  "file:///C:/Windows/System32/calc.exe",
  " \tFILE:///etc/passwd", // spaces and tabs in front, upper case: still file:
  "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
  "java\tscript:alert(1)", // a tab inside the scheme is ignored by browsers
  "\\\\attacker.example\\uri", // a URI to a share
] as const;

/** Addresses the cleaning keeps: cross-document links, the web, mail. */
export const SAFE_ADDRESSES = ["chapter2.pdf", "https://example.com/jobs", "mailto:jobs@example.com"] as const;

/**
 * A one-page document whose links reach outside it: one for each of UNSAFE_ADDRESSES (GoToR with a
 * file name or a file specification, SubmitForm, URI actions), one for each of SAFE_ADDRESSES, and
 * one RichMedia annotation (a Flash player) beside them.
 */
export async function reachingPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([400, 400]);
  page.drawText("links", { x: 20, y: 350, size: 14 });
  const { context } = doc;
  const str = (text: string) => PDFHexString.fromText(text);
  const [unc, pdfPath, smb, ...uris] = UNSAFE_ADDRESSES;
  const actions: Record<string, unknown>[] = [
    { S: "GoToR", F: str(unc), D: [0, "Fit"] },
    { S: "GoToR", F: { Type: "Filespec", F: str(pdfPath), UF: str(pdfPath) }, D: [0, "Fit"], NewWindow: true },
    { S: "SubmitForm", F: { FS: "URL", F: str(smb) } },
    ...uris.map((uri) => ({ S: "URI", URI: str(uri) })),
    { S: "GoToR", F: str(SAFE_ADDRESSES[0]), D: [0, "Fit"] },
    { S: "URI", URI: str(SAFE_ADDRESSES[1]) },
    { S: "URI", URI: str(SAFE_ADDRESSES[2]) },
  ];
  const annotations = actions.map((action, i) =>
    context.register(
      context.obj({ Type: "Annot", Subtype: "Link", Rect: [20, 320 - i * 25, 200, 340 - i * 25], A: action } as never),
    ),
  );
  const flash = context.register(context.stream("FWS flash movie", { Type: "EmbeddedFile" }));
  const player = context.obj({
    Type: "Annot",
    Subtype: "RichMedia",
    Rect: [220, 200, 380, 320],
    RichMediaContent: {
      Assets: { Names: [str("movie.swf"), { Type: "Filespec", F: str("movie.swf"), EF: { F: flash } }] },
      Configurations: [{ Type: "RichMediaConfiguration", Subtype: "Flash" }],
    },
    RichMediaSettings: { Activation: { Condition: "PO" } },
  } as never);
  annotations.push(context.register(player));
  page.node.set(PDFName.of("Annots"), context.obj(annotations));
  return doc.save({ useObjectStreams: false });
}

/** Every string of the document as text, wherever it is (dictionaries and arrays, direct or not). */
export function stringsOf(doc: PDFDocument): string[] {
  const found: string[] = [];
  const stack: PDFObject[] = doc.context.enumerateIndirectObjects().map(([, object]) => object);
  while (stack.length > 0) {
    const value = stack.pop()!;
    if (value instanceof PDFString || value instanceof PDFHexString) found.push(value.decodeText());
    else if (value instanceof PDFStream) stack.push(value.dict);
    else if (value instanceof PDFDict) stack.push(...value.values());
    else if (value instanceof PDFArray) stack.push(...value.asArray());
  }
  return found;
}
