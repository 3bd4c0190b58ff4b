// Colour images to gray (the grayscale option), before the image pass: the gray is the
// luminance renderers compute (images/quality.ts: 0.3 R + 0.59 G + 0.11 B; CMYK through
// 1 - min(1, K + ...)), so the quality check that follows sees the same page.
//
// RGB JPEGs are not re-encoded here when the image pass follows (grayImages hands them over): a
// gray JPEG made here, then recoded by the image pass, was coded twice, and the check compared the
// candidates with the first coding's noise instead of the page; the corpus's Epson scan came out
// larger with grayscale than without (472,581 B against 435,570 B), its backgrounds failing at 75
// ppi. The image pass takes their luminance as its working pixels (candidates.ts) and so makes
// gray candidates of the colour original, each no larger than its colour candidate; the ones it
// leaves as they are are made gray afterwards, here (grayLeftovers).
//
// - Indexed images over RGB or CMYK: the palette becomes gray (the samples stay as they are).
// - 8-bit RGB and CMYK images (DeviceRGB/CMYK, ICCBased of 3 or 4, CalRGB) without /Decode: behind
//   general filters, stored gray with Flate; JPEGs, re-encoded as gray JPEGs at their quality.
// Left as they are: image masks and soft masks (already gray), Lab, Separation and DeviceN,
// JPEG 2000, 16-bit and 1-, 2-, 4-bit colour images, images with /Decode, and inline images.
import { PDFArray, PDFHexString, PDFName, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { decodeFilters, decodeParmsOf, deflate, filtersOf, N } from "../streams/filters.ts";
import { decodeJpeg, encodeJpeg, readJpegHeader, release } from "./codecs.ts";
import type { Pixels } from "./codecs.ts";
import { colourOf, grayOf } from "../shared/colour.ts";
import type { DirectColour } from "../shared/colour.ts";
import { luminance } from "./quality.ts";

const ImageMask = PDFName.of("ImageMask");
const Subtype = PDFName.of("Subtype");
const Image = PDFName.of("Image");
/** Images decoded larger than this are left in colour (the image pass's own limit). */
const MAX_DECODED = 48 * 1024 * 1024;
/** The quality of a gray JPEG when its source's cannot be read. */
const DEFAULT_JPEG_QUALITY = 85;

/** The kind of colour a space holds, as gray conversion needs it. */
function kindOf(colour: DirectColour): "rgb" | "cmyk" | undefined {
  if (colour.components === 3 && (colour.rgbLike || isFamily(colour.object, "CalRGB"))) return "rgb";
  if (colour.components === 4 && !isFamily(colour.object, "DeviceN")) return "cmyk";
  return undefined;
}

const isFamily = (object: PDFObject, family: string) =>
  object instanceof PDFArray && object.get(0) === PDFName.of(family);

/** An Indexed palette over RGB or CMYK, made gray; false when the palette is over another space. */
function grayPalette(stream: PDFRawStream, context: PDFContext): boolean {
  const colour = colourOf(stream.dict.lookup(N.ColorSpace), context);
  if (colour?.kind !== "indexed") return false;
  const kind = kindOf(colour.base);
  if (!kind) return false;
  const n = colour.base.components;
  const gray = new Uint8Array(colour.hival + 1);
  for (let i = 0; i <= colour.hival; i++) gray[i] = grayOf(kind, colour.palette, i * n);
  const lookup = PDFHexString.of(Buffer.from(gray).toString("hex"));
  stream.dict.set(N.ColorSpace, context.obj([PDFName.of("Indexed"), N.DeviceGray, colour.hival, lookup]));
  return true;
}

/** The stored bytes behind general filters, and whether they are a JPEG. */
function dataOf(stream: PDFRawStream): { data: Uint8Array; jpeg: boolean } | undefined {
  const filters = filtersOf(stream.dict);
  const parms = filters && decodeParmsOf(stream.dict, filters.length);
  if (!filters || !parms) return undefined;
  const jpeg = filters.at(-1) === "DCTDecode";
  const general = jpeg ? filters.slice(0, -1) : filters;
  const data = decodeFilters(stream.contents, general, parms.slice(0, general.length), stream.dict, MAX_DECODED, {
    predictors: true,
  });
  return data && { data, jpeg };
}

/** A direct RGB or CMYK image made gray; false when it is left as it is. */
async function grayImage(stream: PDFRawStream, context: PDFContext): Promise<boolean> {
  const { dict } = stream;
  const colour = colourOf(dict.lookup(N.ColorSpace), context);
  if (colour?.kind !== "direct" || dict.has(N.Decode)) return false;
  const kind = kindOf(colour);
  const width = dict.lookup(N.Width);
  const height = dict.lookup(N.Height);
  const bpc = dict.lookup(N.BitsPerComponent);
  if (!kind || !(width instanceof PDFNumber) || !(height instanceof PDFNumber)) return false;
  const size = { width: width.asNumber(), height: height.asNumber() };
  const components = kind === "rgb" ? 3 : 4;
  if (size.width * size.height * components > MAX_DECODED) return false;
  const stored = dataOf(stream);
  if (!stored) return false;
  let pixels: Pixels;
  if (stored.jpeg) {
    const header = readJpegHeader(stored.data);
    // A CMYK JPEG's samples may be stored inverted (Adobe): the image pass knows; left in colour.
    if (!header || components === 4) return false;
    pixels = await decodeJpeg(stored.data, components);
  } else {
    if (!(bpc instanceof PDFNumber) || bpc.asNumber() !== 8) return false;
    if (stored.data.length < size.width * size.height * components) return false;
    pixels = { data: stored.data, ...size, components };
  }
  const gray: Pixels = { data: luminance(pixels), width: pixels.width, height: pixels.height, components: 1 };
  let data: Uint8Array;
  if (stored.jpeg) {
    const quality = readJpegHeader(stored.data)?.quality ?? DEFAULT_JPEG_QUALITY;
    data = await encodeJpeg(gray, { quality });
    release(pixels.data);
    dict.set(N.Filter, PDFName.of("DCTDecode"));
  } else {
    data = deflate(gray.data, 6);
    dict.set(N.Filter, N.FlateDecode);
  }
  dict.delete(N.DecodeParms);
  dict.delete(N.DL);
  dict.set(N.ColorSpace, N.DeviceGray);
  dict.set(N.BitsPerComponent, PDFNumber.of(8));
  dict.set(N.Length, PDFNumber.of(data.length));
  stream.updateContents(data);
  return true;
}

/** Whether grayImage would re-encode the image as a gray JPEG (an RGB JPEG it can read). */
function isRgbJpeg(stream: PDFRawStream, context: PDFContext): boolean {
  const colour = colourOf(stream.dict.lookup(N.ColorSpace), context);
  if (colour?.kind !== "direct" || stream.dict.has(N.Decode) || kindOf(colour) !== "rgb") return false;
  return filtersOf(stream.dict)?.at(-1) === "DCTDecode";
}

/**
 * Makes the document's colour image XObjects gray; answers how many it changed. With
 * `handOverJpegs` (the image pass follows), RGB JPEGs are left in colour and returned instead, for
 * the image pass to make gray candidates of (then grayLeftovers).
 */
export async function grayImages(
  context: PDFContext,
  handOverJpegs = false,
): Promise<{ changed: number; handedOver: Set<PDFRawStream> }> {
  let changed = 0;
  const handedOver = new Set<PDFRawStream>();
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream) || object.dict.lookup(Subtype) !== Image) continue;
    if (object.dict.lookup(ImageMask)?.toString() === "true") continue;
    if (handOverJpegs && isRgbJpeg(object, context)) handedOver.add(object);
    else if (grayPalette(object, context) || (await grayImage(object, context))) changed++;
  }
  return { changed, handedOver };
}

/**
 * The images handed over by grayImages made gray: those the image pass wrote gray (`recoded`)
 * are counted, the others converted here. Answers how many are gray.
 */
export async function grayLeftovers(
  context: PDFContext,
  handedOver: ReadonlySet<PDFRawStream>,
  recoded: ReadonlySet<PDFRawStream>,
): Promise<number> {
  let changed = 0;
  for (const stream of handedOver) {
    if (recoded.has(stream) || (await grayImage(stream, context))) changed++;
  }
  return changed;
}
