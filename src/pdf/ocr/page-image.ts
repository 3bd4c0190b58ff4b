// Which pages are read, and the image each is read from. A page is read when it draws no text
// (no Tj, TJ, ' or " in its content or in the forms it draws) and one image XObject drawn by its
// own content covers at least half its visible area: a scan. The image is read as it is stored,
// before the image pass downsamples or splits it: JPEG (any colour, through sharp), 1- and 8-bit
// gray, RGB and CMYK samples behind the lossless filters, indexed colour (1, 2, 4 or 8 bits of
// index into a gray, RGB or CMYK palette), image masks, CCITT fax (G3 and G4, through libtiff:
// codecs/ccitt.ts) and JBIG2 generic regions (codecs/jbig2.ts), made gray and handed to Tesseract
// as a PGM file. Others (JPEG 2000, JBIG2 with global segments) are not read, and the report counts them.
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import sharp from "sharp";
import { decodeJbig2 } from "../codecs/jbig2.ts";
import { ccittParmsOf, decodeCcitt } from "../codecs/ccitt.ts";
import { colourOf, grayOf } from "../shared/colour.ts";
import type { Colour } from "../shared/colour.ts";
import { contentStreamsOf, IDENTITY, multiply, pagesOf, PLACING_OPERATORS } from "../shared/placement.ts";
import type { Matrix } from "../shared/placement.ts";
import { Op, scanContent } from "../shared/syntax.ts";
import { decodeFilters, decodeParmsOf, decodeStreamData, filtersOf, N, numberOf } from "../streams/filters.ts";
import type { PageImage } from "./recognise.ts";

const P = {
  XObject: PDFName.of("XObject"),
  Resources: PDFName.of("Resources"),
  Form: PDFName.of("Form"),
  Matrix: PDFName.of("Matrix"),
  JBIG2Globals: PDFName.of("JBIG2Globals"),
};

/** A page's content decoded, per stream, at most. */
const MAX_CONTENT_BYTES = 16 * 1024 * 1024;
/** The pixels of an image read, at most (a 600 dpi A3 scan is 70 million): larger ones are reduced. */
export const MAX_OCR_PIXELS = 40_000_000;
/** A scan's image covers at least this share of its page. */
const MIN_COVER = 0.5;
const MAX_FORM_DEPTH = 8;

export interface ScanPage {
  /** The page's dictionary. */
  page: PDFDict;
  /** Its resources (inherited ones included). */
  resources: PDFDict | undefined;
  image: PDFRawStream;
  /** The image's placement: the CTM that maps the unit square onto the page. */
  placement: Matrix;
}

export interface PageSurvey {
  pages: number;
  /** Pages with text of their own: left as they are. */
  withText: number;
  /** Pages that are mostly one image, without text. */
  scans: ScanPage[];
}

function decoded(stream: PDFRawStream): Uint8Array | undefined {
  return decodeStreamData(stream, MAX_CONTENT_BYTES, { predictors: true, tolerant: true });
}

function joined(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length + 1, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    out[at + part.length] = 0x0a;
    at += part.length + 1;
  }
  return out;
}

const TEXT_OPS = new Set<number>([Op.Tj, Op.TJ, Op.quote, Op.doubleQuote]);

interface Drawn {
  hasText: boolean;
  images: { stream: PDFRawStream; ctm: Matrix }[];
}

function xobjectOf(context: PDFContext, resources: PDFDict | undefined, name: string): PDFObject | undefined {
  const xobjects = resources?.lookup(P.XObject);
  return xobjects instanceof PDFDict ? context.lookup(xobjects.get(PDFName.of(name))) : undefined;
}

/** What content draws: whether any text, and the image XObjects it draws itself, with their CTMs. */
function walk(context: PDFContext, content: Uint8Array, resources: PDFDict | undefined, depth: number): Drawn {
  const drawn: Drawn = { hasText: false, images: [] };
  const stack: Matrix[] = [];
  let ctm: Matrix = IDENTITY;
  const readable = scanContent(content, {
    operandsOf: PLACING_OPERATORS,
    operator(op, operands) {
      if (TEXT_OPS.has(op)) drawn.hasText = true;
      else if (op === Op.q) stack.push(ctm);
      else if (op === Op.Q) ctm = stack.pop() ?? ctm;
      else if (op === Op.cm && operands.length >= 6 && operands.slice(-6).every((v) => typeof v === "number")) {
        ctm = multiply(operands.slice(-6) as unknown as Matrix, ctm);
      } else if (op === Op.Do && typeof operands.at(-1) === "string") {
        const target = xobjectOf(context, resources, operands.at(-1) as string);
        if (!(target instanceof PDFRawStream)) return;
        const subtype = target.dict.lookup(N.Subtype);
        if (subtype === N.Image) drawn.images.push({ stream: target, ctm });
        else if (subtype === P.Form && !drawn.hasText) {
          const inner = depth < MAX_FORM_DEPTH ? decoded(target) : undefined;
          const own = target.dict.lookup(P.Resources);
          // A form we cannot read may hold text: it counts as text.
          drawn.hasText = !inner || walk(context, inner, own instanceof PDFDict ? own : resources, depth + 1).hasText;
        }
      }
    },
  });
  if (!readable) drawn.hasText = true;
  return drawn;
}

/** The pages, those with text, and the scans among the others (pages mostly drawn by one image). */
export function surveyPages(context: PDFContext): PageSurvey {
  const pages = pagesOf(context) ?? [];
  const survey: PageSurvey = { pages: pages.length, withText: 0, scans: [] };
  for (const info of pages) {
    const streams = contentStreamsOf(context, info.page);
    const parts = streams?.map(decoded);
    if (!parts || parts.some((part) => part === undefined)) {
      survey.withText++;
      continue;
    }
    const drawn = walk(context, joined(parts as Uint8Array[]), info.resources, 0);
    if (drawn.hasText) {
      survey.withText++;
      continue;
    }
    const area = info.area / (info.userUnit * info.userUnit);
    let best: { stream: PDFRawStream; ctm: Matrix; cover: number } | undefined;
    for (const { stream, ctm } of drawn.images) {
      const cover = Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2]);
      if (!best || cover > best.cover) best = { stream, ctm, cover };
    }
    if (best && area > 0 && best.cover >= MIN_COVER * area) {
      survey.scans.push({ page: info.page, resources: info.resources, image: best.stream, placement: best.ctm });
    }
  }
  return survey;
}

function pgm(gray: Uint8Array, width: number, height: number): PageImage {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const file = new Uint8Array(header.length + width * height);
  file.set(header);
  file.set(gray.subarray(0, width * height), header.length);
  return { file, width, height };
}

/** 1-bit rows (0 black, as DeviceGray and image masks have it unless /Decode swaps them) to gray. */
function grayOfBits(bits: Uint8Array, width: number, height: number, oneIsBlack: boolean): Uint8Array {
  const gray = new Uint8Array(width * height);
  const row = (width + 7) >> 3;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const bit = (bits[y * row + (x >> 3)]! >> (7 - (x & 7))) & 1;
      gray[y * width + x] = bit === (oneIsBlack ? 1 : 0) ? 0 : 255;
    }
  }
  return gray;
}

function decodeArray(dict: PDFDict): number[] | undefined {
  const array = dict.lookup(N.Decode);
  if (!(array instanceof PDFArray)) return undefined;
  const values: number[] = [];
  for (let i = 0; i < array.size(); i++) {
    const item = array.lookup(i);
    values.push(item instanceof PDFNumber ? item.asNumber() : 0);
  }
  return values;
}

/** Gray samples of an image when we can read them; undefined otherwise. */
async function graySamples(
  context: PDFContext,
  stream: PDFRawStream,
): Promise<{ gray: Uint8Array; width: number; height: number } | undefined> {
  const { dict } = stream;
  const width = numberOf(dict.lookup(N.Width));
  const height = numberOf(dict.lookup(N.Height));
  const filters = filtersOf(dict);
  const parms = filters && decodeParmsOf(dict, filters.length);
  if (!width || !height || !filters || !parms || dict.has(N.F)) return undefined;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width * height > 4 * MAX_OCR_PIXELS) return undefined;
  const mask = dict.lookup(N.ImageMask)?.toString() === "true";
  const decode = decodeArray(dict);
  const inverted = decode !== undefined && decode[0]! > decode[1]!;
  const last = filters.at(-1);
  const special = last === "DCTDecode" || last === "JBIG2Decode" || last === "CCITTFaxDecode";
  const outer = filters.slice(0, special ? -1 : filters.length);
  const limit = width * height * 4 + 1024 * 1024;
  const data = decodeFilters(stream.contents, outer, parms.slice(0, outer.length), dict, limit, {
    predictors: true,
    tolerant: true,
  });
  if (!data) return undefined;
  if (last === "DCTDecode") {
    const { data: gray, info } = await sharp(data, { limitInputPixels: 4 * MAX_OCR_PIXELS })
      .grayscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 1) return undefined;
    return { gray: inverted ? gray.map((v) => 255 - v) : gray, width: info.width, height: info.height };
  }
  if (last === "JBIG2Decode") {
    if (parms.at(-1)?.has(P.JBIG2Globals)) return undefined;
    const bits = decodeJbig2(data, width, height);
    return bits && { gray: grayOfBits(bits.data, width, height, !inverted), width, height };
  }
  if (last === "CCITTFaxDecode") {
    // The samples as the image holds them (1: white unless /Decode says otherwise), as for raw bits.
    const ccitt = ccittParmsOf(parms.at(-1), width, height);
    const bits = ccitt && (await decodeCcitt(data, ccitt));
    return bits && { gray: grayOfBits(bits.data, width, height, inverted), width, height };
  }
  const bpc = mask ? 1 : numberOf(dict.lookup(N.BitsPerComponent));
  const colour = mask ? undefined : colourOf(dict.lookup(N.ColorSpace), context);
  if (colour?.kind === "indexed") return indexedGray(data, { width, height, bpc, inverted }, colour);
  if (bpc === 1 && (mask || (colour?.kind === "direct" && colour.components === 1))) {
    if (data.length < ((width + 7) >> 3) * height) return undefined;
    return { gray: grayOfBits(data, width, height, inverted), width, height };
  }
  if (bpc !== 8 || colour?.kind !== "direct" || ![1, 3, 4].includes(colour.components)) return undefined;
  const n = colour.components;
  if (data.length < width * height * n) return undefined;
  const gray = new Uint8Array(width * height);
  for (let i = 0; i < gray.length; i++) {
    const v = n === 1 ? data[i]! : grayOf(n === 3 ? "rgb" : "cmyk", data, i * n);
    gray[i] = inverted ? 255 - v : v;
  }
  return { gray, width, height };
}

/** The gray of each palette entry of an indexed colour space (a gray, RGB or CMYK base). */
function paletteGray(colour: Extract<Colour, { kind: "indexed" }>): Uint8Array | undefined {
  const n = colour.base.components;
  if (![1, 3, 4].includes(n)) return undefined;
  const lut = new Uint8Array(colour.hival + 1);
  for (let i = 0; i < lut.length; i++) {
    lut[i] = n === 1 ? colour.palette[i]! : grayOf(n === 3 ? "rgb" : "cmyk", colour.palette, i * n);
  }
  return lut;
}

/**
 * Gray samples of an indexed image: 1, 2, 4 or 8 bits of index per pixel, rows padded to a byte
 * (ISO 32000-1 8.9.3), each looked up in the palette's grays (an index past hival is hival's). An
 * inverted /Decode (hival 0) reverses the indices.
 */
function indexedGray(
  data: Uint8Array,
  image: { width: number; height: number; bpc: number | undefined; inverted: boolean },
  colour: Extract<Colour, { kind: "indexed" }>,
): { gray: Uint8Array; width: number; height: number } | undefined {
  const { width, height, bpc, inverted } = image;
  const lut = paletteGray(colour);
  if (!lut || (bpc !== 1 && bpc !== 2 && bpc !== 4 && bpc !== 8)) return undefined;
  const rowBytes = Math.ceil((width * bpc) / 8);
  if (data.length < rowBytes * height) return undefined;
  const gray = new Uint8Array(width * height);
  const perByte = 8 / bpc;
  const max = (1 << bpc) - 1;
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes;
    for (let x = 0; x < width; x++) {
      const byte = data[row + Math.floor(x / perByte)]!;
      const raw = (byte >> ((perByte - 1 - (x % perByte)) * bpc)) & max;
      const index = Math.min(inverted ? colour.hival - raw : raw, colour.hival);
      gray[y * width + x] = lut[Math.max(0, index)]!;
    }
  }
  return { gray, width, height };
}

/** The page's image as Tesseract reads it (reduced to MAX_OCR_PIXELS), or undefined when we cannot read it. */
export async function pageImageOf(context: PDFContext, stream: PDFRawStream): Promise<PageImage | undefined> {
  const samples = await graySamples(context, stream).catch(() => undefined);
  if (!samples) return undefined;
  const { gray, width, height } = samples;
  if (width * height <= MAX_OCR_PIXELS) return pgm(gray, width, height);
  const scale = Math.sqrt(MAX_OCR_PIXELS / (width * height));
  const w = Math.max(1, Math.floor(width * scale));
  const h = Math.max(1, Math.floor(height * scale));
  const reduced = await sharp(gray, { raw: { width, height, channels: 1 }, limitInputPixels: false })
    .resize(w, h, { kernel: "lanczos3" })
    .raw()
    .toBuffer();
  return pgm(reduced, w, h);
}
