// An ICC profile that is sRGB, embedded as an ICCBased colour space, written as DeviceRGB.
//
// Quartz (macOS: Pages, Word for Mac, Preview) and other producers embed the 3 KB sRGB IEC61966-2.1
// profile in every file and draw everything through it. Readers draw DeviceRGB as sRGB: poppler and
// MuPDF render such pages pixel for pixel the same either way (measured on the corpus's Quartz
// CVs), and Ghostscript's /ebook and /screen drop the profile the same way. A profile is taken for
// sRGB only when its primaries, white point and tone curves are sRGB's and it has no lookup tables
// (which a colour engine would prefer to them). PDF/A and PDF/X files keep their profiles (their
// output intent governs DeviceRGB there).
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFRef } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { decodeStreamData, N, numberOf } from "../streams/filters.ts";
import { iccTags } from "./icc.ts";

const OutputIntents = PDFName.of("OutputIntents");
/** ICC profiles larger than this are not read (sRGB's are 0.5 to 7 KB). */
const MAX_PROFILE_BYTES = 64 * 1024;

/** sRGB's colorants adapted to D50, as profiles store them (ICC.1, Annex; IEC 61966-2-1). */
const COLORANTS: Record<string, [number, number, number]> = {
  rXYZ: [0.4361, 0.2225, 0.0139],
  gXYZ: [0.3851, 0.7169, 0.0971],
  bXYZ: [0.1431, 0.0606, 0.7141],
};
const WHITE_POINTS: [number, number, number][] = [
  [0.9642, 1, 0.8249], // D50 (ICC v4, most v2 profiles)
  [0.9505, 1, 1.089], // D65 (the HP / Microsoft v2 profile)
];
const XYZ_TOLERANCE = 0.003;
/** The largest difference allowed between a profile's tone curve and sRGB's (of 1). */
const CURVE_TOLERANCE = 0.002;

/** sRGB's transfer function (IEC 61966-2-1), encoded value to linear. */
const srgbToLinear = (v: number) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);

function tagsOf(profile: Uint8Array): Map<string, Uint8Array> | undefined {
  const tags = iccTags(profile);
  return tags && new Map(tags.map((tag) => [tag.signature, profile.subarray(tag.offset, tag.offset + tag.size)]));
}

function xyz(tag: Uint8Array | undefined): [number, number, number] | undefined {
  if (!tag || tag.length < 20 || String.fromCharCode(...tag.subarray(0, 4)) !== "XYZ ") return undefined;
  const view = new DataView(tag.buffer, tag.byteOffset, tag.byteLength);
  return [view.getInt32(8) / 65536, view.getInt32(12) / 65536, view.getInt32(16) / 65536];
}

const close = (a: readonly number[], b: readonly number[]) =>
  a.every((value, i) => Math.abs(value - b[i]!) <= XYZ_TOLERANCE);

/** Whether a tone curve (curv or para) is sRGB's. */
function isSrgbCurve(tag: Uint8Array | undefined): boolean {
  if (!tag || tag.length < 12) return false;
  const view = new DataView(tag.buffer, tag.byteOffset, tag.byteLength);
  const type = String.fromCharCode(...tag.subarray(0, 4));
  let curve: (v: number) => number;
  if (type === "curv") {
    const n = view.getUint32(8);
    if (n < 16 || tag.length < 12 + 2 * n) return false;
    curve = (v) => {
      const x = v * (n - 1);
      const i = Math.min(n - 2, Math.floor(x));
      const a = view.getUint16(12 + 2 * i) / 65535;
      const b = view.getUint16(12 + 2 * (i + 1)) / 65535;
      return a + (b - a) * (x - i);
    };
  } else if (type === "para") {
    const fn = view.getUint16(8);
    if (fn !== 3 || tag.length < 12 + 5 * 4) return false;
    const [g, a, b, c, d] = [0, 1, 2, 3, 4].map((k) => view.getInt32(12 + 4 * k) / 65536) as [
      number,
      number,
      number,
      number,
      number,
    ];
    curve = (v) => (v >= d ? (a * v + b) ** g : c * v);
  } else return false;
  for (let k = 0; k <= 64; k++) {
    const v = k / 64;
    if (Math.abs(curve(v) - srgbToLinear(v)) > CURVE_TOLERANCE) return false;
  }
  return true;
}

/** Whether ICC profile bytes describe sRGB (an RGB display or colour-space profile, matrix and curves only). */
export function isSrgbProfile(profile: Uint8Array): boolean {
  if (profile.length < 132) return false;
  const text = (from: number) => String.fromCharCode(...profile.subarray(from, from + 4));
  if (text(16) !== "RGB " || text(20) !== "XYZ " || text(36) !== "acsp") return false;
  const tags = tagsOf(profile);
  if (!tags) return false;
  if (["A2B0", "A2B1", "A2B2", "B2A0", "B2A1", "B2A2"].some((lut) => tags.has(lut))) return false;
  for (const [name, expected] of Object.entries(COLORANTS)) {
    const value = xyz(tags.get(name));
    if (!value || !close(value, expected)) return false;
  }
  const white = xyz(tags.get("wtpt"));
  if (!white || !WHITE_POINTS.some((point) => close(white, point))) return false;
  return ["rTRC", "gTRC", "bTRC"].every((name) => isSrgbCurve(tags.get(name)));
}

/** Whether a colour space is [/ICCBased stream] with an sRGB profile (3 components). */
function isSrgbSpace(object: PDFObject | undefined, profiles: Map<PDFRawStream, boolean>): boolean {
  if (!(object instanceof PDFArray) || object.size() !== 2 || object.lookup(0) !== N.ICCBased) return false;
  const stream = object.lookup(1);
  return stream instanceof PDFRawStream && isSrgbStream(stream, profiles);
}

/** Whether a stream is an sRGB profile of 3 components; the answer is kept in `profiles`. */
function isSrgbStream(stream: PDFRawStream, profiles: Map<PDFRawStream, boolean>): boolean {
  let srgb = profiles.get(stream);
  if (srgb === undefined) {
    const data = numberOf(stream.dict.lookup(N.N)) === 3 ? decodeStreamData(stream, MAX_PROFILE_BYTES, {}) : undefined;
    srgb = data !== undefined && isSrgbProfile(data);
    profiles.set(stream, srgb);
  }
  return srgb;
}

/**
 * Whether some stream of the document is an sRGB profile. A colour space's profile is a stream,
 * and a stream is an object of its own: without one, no colour space is sRGB and the document's
 * walk is not made (2.5 % of text_excel_warn_16p's profile: 9,854 objects and no profile at all). Only
 * streams that say /N 3 are read, as isSrgbSpace reads them.
 */
function hasSrgbProfile(context: PDFContext, profiles: Map<PDFRawStream, boolean>): boolean {
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (object instanceof PDFRawStream && isSrgbStream(object, profiles)) return true;
  }
  return false;
}

/**
 * Writes every ICCBased colour space whose profile is sRGB as DeviceRGB; answers how many colour
 * spaces were. Nothing is done in a document with an output intent (PDF/A, PDF/X).
 */
export function srgbAsDeviceRgb(context: PDFContext): number {
  const root = context.lookup(context.trailerInfo.Root);
  if (!(root instanceof PDFDict) || root.has(OutputIntents)) return 0;
  const profiles = new Map<PDFRawStream, boolean>();
  if (!hasSrgbProfile(context, profiles)) return 0;
  // Colour spaces that are objects of their own: every reference to them becomes the name.
  const spaces = new Set<number>();
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    if (isSrgbSpace(object, profiles)) spaces.add(ref.objectNumber);
  }
  let replaced = spaces.size;
  const rewrite = (value: PDFObject): PDFObject | undefined => {
    if (value instanceof PDFRef) return spaces.has(value.objectNumber) ? N.DeviceRGB : undefined;
    if (value instanceof PDFArray && isSrgbSpace(value, profiles)) {
      replaced++;
      return N.DeviceRGB;
    }
    return undefined;
  };
  const visit = (object: PDFObject, depth: number) => {
    if (depth > 32) return;
    const dict = object instanceof PDFRawStream ? object.dict : object;
    if (dict instanceof PDFDict) {
      for (const [key, value] of dict.entries()) {
        const replacement = rewrite(value);
        if (replacement) dict.set(key, replacement);
        else if (!(value instanceof PDFRef)) visit(value, depth + 1);
      }
    } else if (dict instanceof PDFArray) {
      for (let i = 0; i < dict.size(); i++) {
        const value = dict.get(i);
        const replacement = rewrite(value);
        if (replacement) dict.set(i, replacement);
        else if (!(value instanceof PDFRef)) visit(value, depth + 1);
      }
    }
  };
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    // The colour space objects themselves are left for the pruning pass to drop.
    if (!spaces.has(ref.objectNumber)) visit(object, 0);
  }
  return replaced;
}
