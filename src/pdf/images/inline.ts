// Large inline images (BI … ID … EI in a content stream) become image XObjects drawn with Do, so
// that the image pass can downsample and re-encode them like any other. Small ones stay inline:
// there the XObject would cost more than it saves.
import { PDFArray, PDFBool, PDFDict, PDFHexString, PDFName, PDFNull, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import type { InlineImage, InlineValue } from "../shared/syntax.ts";
import { deflate, N } from "../streams/filters.ts";
import { MIN_INLINE_BYTES } from "../shared/placement.ts";
import type { InlineImages, Placements } from "../shared/placement.ts";

export { MIN_INLINE_BYTES };

const KEYS: Record<string, string> = {
  BPC: "BitsPerComponent",
  CS: "ColorSpace",
  D: "Decode",
  DP: "DecodeParms",
  F: "Filter",
  H: "Height",
  IM: "ImageMask",
  I: "Interpolate",
  W: "Width",
};
const COLOUR_SPACES: Record<string, string> = {
  G: "DeviceGray",
  RGB: "DeviceRGB",
  CMYK: "DeviceCMYK",
  I: "Indexed",
  DeviceGray: "DeviceGray",
  DeviceRGB: "DeviceRGB",
  DeviceCMYK: "DeviceCMYK",
  Indexed: "Indexed",
};
const FILTERS: Record<string, string> = {
  AHx: "ASCIIHexDecode",
  A85: "ASCII85Decode",
  LZW: "LZWDecode",
  Fl: "FlateDecode",
  RL: "RunLengthDecode",
  CCF: "CCITTFaxDecode",
  DCT: "DCTDecode",
};
const XObject = PDFName.of("XObject");
const ColorSpace = PDFName.of("ColorSpace");

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function toPdf(value: InlineValue, context: PDFContext): PDFObject {
  if (typeof value === "number") return PDFNumber.of(value);
  if (typeof value === "boolean") return value ? PDFBool.True : PDFBool.False;
  if (value === null) return PDFNull;
  if (Array.isArray(value)) return arrayOf(value, context);
  if (value instanceof Map) {
    const dict = PDFDict.withContext(context);
    for (const [key, item] of value) dict.set(PDFName.of(key), toPdf(item, context));
    return dict;
  }
  if ("name" in value) return PDFName.of(value.name);
  return PDFHexString.of(hex(value.bytes));
}

function arrayOf(values: InlineValue[], context: PDFContext): PDFArray {
  const array = PDFArray.withContext(context);
  for (const item of values) array.push(toPdf(item, context));
  return array;
}

/** A colour space name of an inline image: an abbreviation, a device space, or a resource. */
function colourSpaceName(name: string, resources: PDFDict, context: PDFContext): PDFObject | undefined {
  const device = COLOUR_SPACES[name];
  if (device) return PDFName.of(device);
  const named = resources.lookup(ColorSpace);
  if (!(named instanceof PDFDict)) return undefined;
  const value = named.get(PDFName.of(name));
  return value === undefined ? undefined : context.lookup(value) === undefined ? undefined : value;
}

function colourSpaceOf(value: InlineValue, resources: PDFDict, context: PDFContext): PDFObject | undefined {
  if (value !== null && typeof value === "object" && "name" in value)
    return colourSpaceName(value.name, resources, context);
  if (!Array.isArray(value) || value.length < 1) return undefined;
  const [family, base, ...rest] = value;
  if (family === null || typeof family !== "object" || !("name" in family)) return undefined;
  if (COLOUR_SPACES[family.name] !== "Indexed" || base === undefined) return toPdf(value, context);
  const baseObject = colourSpaceOf(base, resources, context);
  if (!baseObject) return undefined;
  const array = PDFArray.withContext(context);
  array.push(PDFName.of("Indexed"));
  array.push(baseObject);
  for (const item of rest) array.push(toPdf(item, context));
  return array;
}

function filterOf(value: InlineValue, context: PDFContext): PDFObject | undefined {
  const expand = (item: InlineValue) =>
    item !== null && typeof item === "object" && "name" in item
      ? PDFName.of(FILTERS[item.name] ?? item.name)
      : undefined;
  if (!Array.isArray(value)) return expand(value);
  const array = PDFArray.withContext(context);
  for (const item of value) {
    const name = expand(item);
    if (!name) return undefined;
    array.push(name);
  }
  return array;
}

/** The image XObject for an inline image, or undefined when its dictionary cannot be carried over. */
function xobjectFor(image: InlineImage, resources: PDFDict, context: PDFContext): PDFRawStream | undefined {
  const dict = PDFDict.withContext(context);
  dict.set(N.Type, XObject);
  dict.set(N.Subtype, N.Image);
  for (const [abbreviation, value] of image.dict) {
    const key = KEYS[abbreviation] ?? abbreviation;
    if (key === "L" || key === "Length") continue;
    let object: PDFObject | undefined;
    if (key === "ColorSpace") object = colourSpaceOf(value, resources, context);
    else if (key === "Filter") object = filterOf(value, context);
    else object = toPdf(value, context);
    if (object === undefined) return undefined;
    dict.set(PDFName.of(key), object);
  }
  if (dict.lookup(N.ImageMask) === PDFBool.True || !dict.has(N.Width) || !dict.has(N.Height)) return undefined;
  dict.set(N.Length, PDFNumber.of(image.data.length));
  return PDFRawStream.of(dict, Uint8Array.from(image.data));
}

function freeName(xobjects: PDFDict, taken: Set<string>): PDFName {
  for (let i = 1; ; i++) {
    const name = `InlineIm${i}`;
    if (!taken.has(name) && !xobjects.has(PDFName.of(name))) {
      taken.add(name);
      return PDFName.of(name);
    }
  }
}

const encoder = new TextEncoder();

/**
 * Rewrites one content stream with its large inline images as XObjects. Returns the new image
 * streams, each with the inline image it replaces.
 */
function convertStream(
  stream: PDFRawStream,
  found: InlineImages,
  resources: PDFDict,
  context: PDFContext,
): [PDFRawStream, InlineImage][] {
  const existing = resources.lookup(XObject);
  if (existing !== undefined && !(existing instanceof PDFDict)) return [];
  let xobjects: PDFDict | undefined = existing;
  const taken = new Set<string>();
  const pieces: Uint8Array[] = [];
  const converted: [PDFRawStream, InlineImage][] = [];
  let at = 0;
  for (const image of found.images) {
    const xobject = xobjectFor(image, resources, context);
    if (!xobject) continue;
    if (!xobjects) {
      xobjects = PDFDict.withContext(context);
      resources.set(XObject, xobjects);
    }
    const name = freeName(xobjects, taken);
    xobjects.set(name, context.register(xobject));
    pieces.push(found.content.subarray(at, image.start), encoder.encode(`${name.toString()} Do`));
    at = image.end;
    converted.push([xobject, image]);
  }
  if (converted.length === 0) return [];
  pieces.push(found.content.subarray(at));
  const content = deflate(Buffer.concat(pieces), 6);
  stream.dict.set(N.Filter, N.FlateDecode);
  stream.dict.delete(N.DecodeParms);
  stream.dict.delete(N.DL);
  stream.dict.set(N.Length, PDFNumber.of(content.length));
  stream.updateContents(content);
  return converted;
}

/**
 * Turns the large inline images the placement walk found into image XObjects, and records their
 * placements under the new streams. A content stream drawn with different resources is left as it
 * is. Returns how many it converted.
 */
export function convertInlineImages(context: PDFContext, placements: Placements): number {
  let count = 0;
  for (const [stream, found] of placements.inline) {
    if (!found.resources) continue;
    for (const [xobject, image] of convertStream(stream, found, found.resources, context)) {
      const placement = placements.inlinePlaced.get(image);
      if (placement) placements.images.set(xobject, placement);
      count++;
    }
  }
  return count;
}
