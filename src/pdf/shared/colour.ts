// Colour spaces of image XObjects, as far as re-encoding needs them: how many components a sample
// has, which JPEG layout fits (gray, three components, CMYK), and the palettes of Indexed spaces.
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream, PDFString, PDFHexString } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { decodeStreamData, N, numberOf } from "../streams/filters.ts";

/** A colour space whose samples are the colour components themselves. */
export interface DirectColour {
  kind: "direct";
  components: number;
  /** Each component's default decode range (what samples 0 and 2^bpc - 1 mean). */
  ranges: number[];
  /** The colour space object as the image dictionary holds it. */
  object: PDFObject;
  /** DeviceRGB, DeviceGray or an ICC profile of those: an RGB image of grays may become DeviceGray. */
  rgbLike: boolean;
}

export interface IndexedColour {
  kind: "indexed";
  base: DirectColour;
  hival: number;
  /** (hival + 1) * base.components bytes. */
  palette: Uint8Array;
}

export type Colour = DirectColour | IndexedColour;

const C = {
  CalGray: PDFName.of("CalGray"),
  CalRGB: PDFName.of("CalRGB"),
  DeviceCMYK: PDFName.of("DeviceCMYK"),
  DeviceN: PDFName.of("DeviceN"),
  Indexed: PDFName.of("Indexed"),
  Lab: PDFName.of("Lab"),
  Range: PDFName.of("Range"),
  Separation: PDFName.of("Separation"),
} as const;

const unit = (n: number) => new Array<number>(n).fill(0).flatMap(() => [0, 1]);

function rangesOf(array: PDFObject | undefined, count: number): number[] | undefined {
  if (!(array instanceof PDFArray) || array.size() < count) return undefined;
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    const item = array.lookup(i);
    if (!(item instanceof PDFNumber)) return undefined;
    values.push(item.asNumber());
  }
  return values;
}

function direct(object: PDFObject, context: PDFContext): DirectColour | undefined {
  const cs = context.lookup(object);
  if (cs === N.DeviceGray) return { kind: "direct", components: 1, ranges: unit(1), object, rgbLike: true };
  if (cs === N.DeviceRGB) return { kind: "direct", components: 3, ranges: unit(3), object, rgbLike: true };
  if (cs === C.DeviceCMYK) return { kind: "direct", components: 4, ranges: unit(4), object, rgbLike: false };
  if (!(cs instanceof PDFArray) || cs.size() < 1) return undefined;
  const family = cs.lookup(0);
  if (family === N.ICCBased && cs.size() >= 2) {
    const profile = cs.lookup(1);
    if (!(profile instanceof PDFRawStream)) return undefined;
    const n = numberOf(profile.dict.lookup(N.N));
    if (n !== 1 && n !== 3 && n !== 4) return undefined;
    const ranges = rangesOf(profile.dict.lookup(C.Range), 2 * n) ?? unit(n);
    return { kind: "direct", components: n, ranges, object, rgbLike: n !== 4 };
  }
  if (family === C.CalGray) return { kind: "direct", components: 1, ranges: unit(1), object, rgbLike: false };
  if (family === C.CalRGB) return { kind: "direct", components: 3, ranges: unit(3), object, rgbLike: false };
  if (family === C.Lab && cs.size() >= 2) {
    const params = cs.lookup(1);
    const ab = params instanceof PDFDict ? rangesOf(params.lookup(C.Range), 4) : undefined;
    return {
      kind: "direct",
      components: 3,
      ranges: [0, 100, ...(ab ?? [-100, 100, -100, 100])],
      object,
      rgbLike: false,
    };
  }
  if (family === C.Separation) return { kind: "direct", components: 1, ranges: unit(1), object, rgbLike: false };
  if (family === C.DeviceN && cs.size() >= 3) {
    const names = cs.lookup(1);
    const n = names instanceof PDFArray ? names.size() : 0;
    return n >= 1 && n <= 32 ? { kind: "direct", components: n, ranges: unit(n), object, rgbLike: false } : undefined;
  }
  return undefined;
}

/** The image's colour space, when it is one we can re-encode; undefined otherwise. */
export function colourOf(object: PDFObject | undefined, context: PDFContext): Colour | undefined {
  if (object === undefined) return undefined;
  const cs = context.lookup(object);
  if (cs instanceof PDFArray && cs.size() === 4 && cs.lookup(0) === C.Indexed) {
    const base = direct(cs.get(1), context);
    const hival = numberOf(cs.lookup(2));
    if (!base || hival === undefined || !Number.isInteger(hival) || hival < 0 || hival > 255) return undefined;
    const lookup = cs.lookup(3);
    let bytes: Uint8Array | undefined;
    if (lookup instanceof PDFString || lookup instanceof PDFHexString) bytes = lookup.asBytes();
    else if (lookup instanceof PDFRawStream) bytes = decodeStreamData(lookup, 256 * 32 + 1024, { predictors: true });
    const size = (hival + 1) * base.components;
    if (!bytes || bytes.length < size) return undefined;
    return { kind: "indexed", base, hival, palette: bytes.subarray(0, size) };
  }
  return direct(object, context);
}

/** The gray (0-255) of an RGB colour (samples 0-255): ITU-R BT.601's weights in 8-bit fixed point. */
export const grayOfRgb = (r: number, g: number, b: number): number => (77 * r + 151 * g + 28 * b + 128) >> 8;

/** The gray of a CMYK colour: white less its inks (weighted as RGB's) and its black. */
export function grayOfCmyk(c: number, m: number, y: number, k: number): number {
  const ink = (77 * c + 151 * m + 28 * y + 128) / 256 + k;
  return ink >= 255 ? 0 : 255 - Math.round(ink);
}

/** The gray (0-255) of one colour of `kind`, from samples 0-255. */
export function grayOf(kind: "rgb" | "cmyk", samples: ArrayLike<number>, at = 0): number {
  return kind === "rgb"
    ? grayOfRgb(samples[at]!, samples[at + 1]!, samples[at + 2]!)
    : grayOfCmyk(samples[at]!, samples[at + 1]!, samples[at + 2]!, samples[at + 3]!);
}
