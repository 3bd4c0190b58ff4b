// Image XObjects: downsample and re-encode what we understand exactly, leave everything else.
//
// Recoded: 8-bit DeviceGray, DeviceRGB and ICCBased (N = 1 or 3) images whose data is a JPEG
// (DCTDecode, possibly wrapped in lossless filters) or plain samples behind lossless filters
// without predictors. Left alone: masks (used as /SMask or /Mask of another image, stencil masks),
// color-key masking, /Decode arrays, Indexed, CMYK, Lab, Separation and DeviceN, other bit depths,
// JBIG2, CCITT and JPEG 2000, and any image whose data does not agree with its dictionary.
import sharp from "sharp";
import type { Sharp } from "sharp";
import { PDFArray, PDFBool, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFDict, PDFName, PDFObject } from "@cantoo/pdf-lib";
import {
  decodeFilters,
  decodeParmsOf,
  deflate,
  filtersOf,
  hasNoPredictor,
  isGeneralFilter,
  N,
  numberOf,
} from "./filters.ts";
import type { ImageSettings } from "./profiles.ts";

/** sharp refuses inputs above this many pixels; we skip such images before decoding them. */
export const MAX_IMAGE_PIXELS = 100_000_000;
/** Below this, an image is not worth the work. */
const MIN_PIXELS = 64 * 64;
const MIN_JPEG_BYTES = 8 * 1024;
/** zlib level for candidate lossless encodings of image samples (9 is much slower on photos). */
const IMAGE_DEFLATE_LEVEL = 6;

export interface ImageReport {
  images: number;
  recoded: number;
  bytesBefore: number;
  bytesAfter: number;
}

interface ImageInfo {
  width: number;
  height: number;
  channels: 1 | 3;
}

/** `deflated`: the stored data is plain Flate, so its size is a fair measure of a lossless encoding. */
type Source = { kind: "jpeg"; data: Uint8Array } | { kind: "samples"; data: Uint8Array; deflated: boolean };

const sharpOptions = { limitInputPixels: MAX_IMAGE_PIXELS, ignoreIcc: true } as const;

function channelsOf(colorSpace: PDFObject | undefined, context: PDFContext): 1 | 3 | undefined {
  const cs = colorSpace === undefined ? undefined : context.lookup(colorSpace);
  if (cs === N.DeviceGray) return 1;
  if (cs === N.DeviceRGB) return 3;
  if (cs instanceof PDFArray && cs.size() === 2 && cs.lookup(0) === N.ICCBased) {
    const profile = cs.lookup(1);
    if (profile instanceof PDFRawStream) {
      const n = numberOf(profile.dict.lookup(N.N));
      if (n === 1 || n === 3) return n;
    }
  }
  return undefined;
}

/** The image's geometry when we may recode it, else undefined. */
function describe(dict: PDFDict, context: PDFContext): ImageInfo | undefined {
  if (dict.lookup(N.ImageMask) === PDFBool.True) return undefined;
  if (dict.has(N.Decode) || dict.lookup(N.Mask) instanceof PDFArray || dict.has(N.SMaskInData)) return undefined;
  if (numberOf(dict.lookup(N.BitsPerComponent)) !== 8) return undefined;
  const width = numberOf(dict.lookup(N.Width));
  const height = numberOf(dict.lookup(N.Height));
  if (!width || !height || !Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    return undefined;
  }
  if (width * height < MIN_PIXELS || width * height > MAX_IMAGE_PIXELS) return undefined;
  const channels = channelsOf(dict.get(N.ColorSpace), context);
  return channels ? { width, height, channels } : undefined;
}

/** The image's data as a JPEG file or as plain samples, when we can get at it. */
function sourceOf(stream: PDFRawStream, info: ImageInfo): Source | undefined {
  const filters = filtersOf(stream.dict);
  const parms = filters && decodeParmsOf(stream.dict, filters.length);
  if (!filters || !parms || stream.dict.has(N.F)) return undefined;
  const expected = info.width * info.height * info.channels;
  if (filters.at(-1) === "DCTDecode") {
    const outer = filters.slice(0, -1);
    // /ColorTransform overrides the JPEG's own markers; we would have to reproduce that.
    if (parms.at(-1) !== undefined || outer.some((name) => !isGeneralFilter(name))) return undefined;
    const data = decodeFilters(stream.contents, outer, parms.slice(0, -1), stream.dict, expected + 1024 * 1024);
    return data && data.length >= MIN_JPEG_BYTES ? { kind: "jpeg", data } : undefined;
  }
  if (filters.some((name) => !isGeneralFilter(name)) || !parms.every(hasNoPredictor)) return undefined;
  const data = decodeFilters(stream.contents, filters, parms, stream.dict, expected + 4096, { tolerant: true });
  if (!data || data.length < expected) return undefined;
  const deflated = filters.length === 1 && filters[0] === "FlateDecode";
  return { kind: "samples", data: data.subarray(0, expected), deflated };
}

function targetSize(info: ImageInfo, maxSide: number): { width: number; height: number } | undefined {
  const longest = Math.max(info.width, info.height);
  if (longest <= maxSide) return undefined;
  const scale = maxSide / longest;
  return {
    width: Math.max(1, Math.round(info.width * scale)),
    height: Math.max(1, Math.round(info.height * scale)),
  };
}

async function encodeJpeg(image: Sharp, channels: 1 | 3, quality: number): Promise<Uint8Array> {
  return (channels === 1 ? image.toColourspace("b-w") : image.toColourspace("srgb"))
    .jpeg({ quality, mozjpeg: true })
    .toBuffer();
}

type Replacement = { data: Uint8Array; filter: PDFName; width: number; height: number };

async function recodeJpeg(jpeg: Uint8Array, info: ImageInfo, stored: number, settings: ImageSettings) {
  const meta = await sharp(jpeg, sharpOptions).metadata();
  // The JPEG must be what the dictionary says it is (sizes and number of components).
  if (meta.width !== info.width || meta.height !== info.height || meta.channels !== info.channels) return undefined;
  const target = targetSize(info, settings.maxSide);
  let image = sharp(jpeg, sharpOptions);
  if (target) image = image.resize(target.width, target.height, { fit: "fill" });
  const data = await encodeJpeg(image, info.channels, settings.jpegQuality);
  const limit = target ? stored : stored * (1 - settings.minJpegSaving);
  if (data.length >= limit) return undefined;
  const size = target ?? info;
  return { data, filter: N.DCTDecode, width: size.width, height: size.height } satisfies Replacement;
}

async function recodeSamples(
  samples: Uint8Array,
  deflated: boolean,
  info: ImageInfo,
  stored: number,
  settings: ImageSettings,
) {
  const raw = (width: number, height: number) => ({ raw: { width, height, channels: info.channels } }) as const;
  const target = targetSize(info, settings.maxSide);
  let pixels = samples;
  let size: { width: number; height: number } = info;
  if (target) {
    pixels = await sharp(samples, { ...sharpOptions, ...raw(info.width, info.height) })
      .resize(target.width, target.height, { fit: "fill" })
      .raw()
      .toBuffer();
    size = target;
  }
  const jpeg = await encodeJpeg(
    sharp(pixels, { ...sharpOptions, ...raw(size.width, size.height) }),
    info.channels,
    settings.jpegQuality,
  );
  // The lossless encoding of the same pixels, to tell photographs (JPEG far smaller) from line art
  // and flat colour (Flate as small or smaller). Stored Flate data of the same pixels is one already.
  const lossless = target || !deflated ? deflate(pixels, IMAGE_DEFLATE_LEVEL) : undefined;
  const losslessSize = Math.min(lossless?.length ?? stored, target ? Infinity : stored);
  if (jpeg.length <= losslessSize * settings.losslessToJpegRatio && jpeg.length < stored) {
    return { data: jpeg, filter: N.DCTDecode, ...size } satisfies Replacement;
  }
  if (lossless && lossless.length < stored) {
    return { data: lossless, filter: N.FlateDecode, ...size } satisfies Replacement;
  }
  return undefined;
}

function replace(stream: PDFRawStream, replacement: Replacement): void {
  const { dict } = stream;
  dict.set(N.Filter, replacement.filter);
  dict.delete(N.DecodeParms);
  dict.delete(N.DL);
  dict.set(N.Width, PDFNumber.of(replacement.width));
  dict.set(N.Height, PDFNumber.of(replacement.height));
  dict.set(N.BitsPerComponent, PDFNumber.of(8));
  dict.set(N.Length, PDFNumber.of(replacement.data.length));
  stream.updateContents(replacement.data);
}

/** A soft mask with /Matte (pre-multiplied colours) must keep the image's exact size. */
function hasMatte(image: PDFRawStream, context: PDFContext): boolean {
  const smask = image.dict.get(N.SMask);
  const mask = smask === undefined ? undefined : context.lookup(smask);
  return mask instanceof PDFRawStream && mask.dict.has(N.Matte);
}

/** The streams other images use as masks: recoding those would change what they reveal. */
function masksIn(images: PDFRawStream[], context: PDFContext): Set<PDFObject> {
  const masks = new Set<PDFObject>();
  for (const image of images) {
    for (const key of [N.SMask, N.Mask]) {
      const value = image.dict.get(key);
      if (value) masks.add(context.lookup(value) ?? value);
    }
  }
  return masks;
}

/**
 * Downsamples and re-encodes the document's image XObjects in place, per `settings`. Returns the
 * streams it replaced (already optimally encoded: leave them out of later passes) and a report.
 */
export async function optimiseImages(
  context: PDFContext,
  settings: ImageSettings,
): Promise<{ replaced: Set<PDFRawStream>; report: ImageReport }> {
  const images = context
    .enumerateIndirectObjects()
    .map(([, object]) => object)
    .filter((o): o is PDFRawStream => o instanceof PDFRawStream && o.dict.lookup(N.Subtype) === N.Image);
  const masks = masksIn(images, context);
  const replaced = new Set<PDFRawStream>();
  const report: ImageReport = { images: images.length, recoded: 0, bytesBefore: 0, bytesAfter: 0 };
  for (const stream of images) {
    if (masks.has(stream) || hasMatte(stream, context)) continue;
    const info = describe(stream.dict, context);
    const source = info && sourceOf(stream, info);
    if (!info || !source) continue;
    const stored = stream.contents.length;
    let replacement: Replacement | undefined;
    try {
      replacement =
        source.kind === "jpeg"
          ? await recodeJpeg(source.data, info, stored, settings)
          : await recodeSamples(source.data, source.deflated, info, stored, settings);
    } catch {
      // sharp could not read it (damaged data, unusual JPEG): the image stays as it is.
      continue;
    }
    if (!replacement) continue;
    report.recoded++;
    report.bytesBefore += stored;
    report.bytesAfter += replacement.data.length;
    replace(stream, replacement);
    replaced.add(stream);
  }
  return { replaced, report };
}
