// 1-bit images re-coded losslessly, in every profile: the samples are decoded (general filters,
// CCITT fax through libtiff, JBIG2 generic regions through codecs/jbig2.ts) and written with the
// smaller of CCITT G4 and JBIG2 generic coding (./bitonal.ts), kept when smaller than the stored
// data. Every sample stays as it was, so the colour space, /Decode, a colour-key /Mask and the
// image's use as a stencil (/ImageMask) keep their meaning. Left alone: JBIG2 with globals (symbol
// dictionaries: already smaller than generic coding), MMR-coded JBIG2, CCITT that libtiff does
// not read, images with data elsewhere (/F).
import { PDFBool, PDFName, PDFNumber, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { forEachBounded } from "../shared/bounded-jobs.ts";
import type { JobBounds } from "../shared/bounded-jobs.ts";
import { decodeFilters, decodeParmsOf, filtersOf, isGeneralFilter, N, numberOf } from "../streams/filters.ts";
import { ccittParmsOf, decodeCcitt } from "../codecs/ccitt.ts";
import { decodeJbig2, encodeBitonal } from "./bitonal.ts";
import { rowBytesOf } from "../codecs/jbig2.ts";
import type { BitonalEffort, Bits } from "./bitonal.ts";
import { colourOf } from "../shared/colour.ts";

export interface BitonalReport {
  images: number;
  recoded: number;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Bi-tonal pixels in a document above which JBIG2 (JavaScript) is not tried, only G4 (libtiff,
 * on the thread pool): some 24 A4 pages at 300 dpi. JBIG2 takes about 60 ms of the main thread
 * per such page.
 */
const BEST_EFFORT_MAX_PIXELS = 200_000_000;
/** Smaller images are not worth the work. */
const MIN_STORED_BYTES = 256;

const JBIG2Globals = PDFName.of("JBIG2Globals");

interface BitonalImage {
  stream: PDFRawStream;
  width: number;
  height: number;
}

/** The image when its samples are 1 bit of one component (a stencil mask, or gray, Indexed...). */
function bitonalImage(stream: PDFRawStream, context: PDFContext): BitonalImage | undefined {
  const { dict } = stream;
  if (dict.lookup(N.Subtype) !== N.Image || dict.has(N.F) || dict.has(N.SMaskInData)) return undefined;
  const width = numberOf(dict.lookup(N.Width));
  const height = numberOf(dict.lookup(N.Height));
  if (!width || !height || !Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    return undefined;
  }
  if (width * height > 400_000_000 || stream.contents.length < MIN_STORED_BYTES) return undefined;
  if (dict.lookup(N.ImageMask) === PDFBool.True) {
    const bpc = numberOf(dict.lookup(N.BitsPerComponent));
    return bpc === undefined || bpc === 1 ? { stream, width, height } : undefined;
  }
  if (numberOf(dict.lookup(N.BitsPerComponent)) !== 1) return undefined;
  const colour = colourOf(dict.get(N.ColorSpace), context);
  if (!colour || (colour.kind !== "indexed" && colour.components !== 1)) return undefined;
  return { stream, width, height };
}

/**
 * The image's samples, packed rows of 1 bit, when every filter can be undone exactly; `fromG4`:
 * they were stored as CCITT Group 4.
 */
async function samplesOf(image: BitonalImage): Promise<{ samples: Bits; fromG4: boolean } | undefined> {
  const { stream, width, height } = image;
  const filters = filtersOf(stream.dict);
  const parms = filters && decodeParmsOf(stream.dict, filters.length);
  if (!filters || !parms) return undefined;
  const expected = rowBytesOf(width) * height;
  const last = filters.at(-1);
  const special = last === "CCITTFaxDecode" || last === "JBIG2Decode";
  const outer = special ? filters.slice(0, -1) : filters;
  if (outer.some((name) => !isGeneralFilter(name))) return undefined;
  const data =
    outer.length === 0
      ? stream.contents
      : decodeFilters(stream.contents, outer, parms.slice(0, outer.length), stream.dict, expected * 2 + 1024 * 1024, {
          predictors: true,
        });
  if (!data) return undefined;
  if (last === "CCITTFaxDecode") {
    const ccitt = ccittParmsOf(parms.at(-1), width, height);
    const samples = ccitt && (await decodeCcitt(data, ccitt));
    return samples && { samples, fromG4: ccitt.k < 0 };
  }
  if (last === "JBIG2Decode") {
    if (parms.at(-1)?.has(JBIG2Globals)) return undefined;
    const samples = decodeJbig2(data, width, height);
    return samples && { samples, fromG4: false };
  }
  if (data.length < expected) return undefined;
  return { samples: { data: data.subarray(0, expected), width, height }, fromG4: false };
}

/**
 * Re-codes the document's 1-bit images as G4 or JBIG2, whichever is smaller, where that is
 * smaller than what they are stored in. Returns the streams replaced and a report.
 */
export async function recodeBitonalImages(
  context: PDFContext,
  pool: JobBounds,
): Promise<{ replaced: Set<PDFRawStream>; report: BitonalReport }> {
  const images: BitonalImage[] = [];
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    try {
      const image = bitonalImage(object, context);
      if (image) images.push(image);
    } catch {
      // A dictionary we cannot read: the image stays as it is.
    }
  }
  const replaced = new Set<PDFRawStream>();
  const report: BitonalReport = { images: images.length, recoded: 0, bytesBefore: 0, bytesAfter: 0 };
  const pixels = images.reduce((sum, image) => sum + image.width * image.height, 0);
  const effort: BitonalEffort = pixels > BEST_EFFORT_MAX_PIXELS ? "fast" : "best";
  await forEachBounded(
    images,
    // One gray byte per pixel for libtiff through libvips, held twice (ours and libvips's copy),
    // the same again decoding CCITT, and the packed samples and their encodings: four per pixel.
    (image) => image.width * image.height * 4 + image.stream.contents.length,
    async (image) => {
      let encoded: Awaited<ReturnType<typeof encodeBitonal>>;
      try {
        const read = await samplesOf(image);
        encoded = read && (await encodeBitonal(read.samples, effort, read.fromG4));
      } catch {
        return;
      }
      const { stream, width, height } = image;
      if (!encoded || encoded.data.length >= stream.contents.length) return;
      report.recoded++;
      report.bytesBefore += stream.contents.length;
      report.bytesAfter += encoded.data.length;
      writeBitonal(stream, encoded, width, height, context);
      replaced.add(stream);
    },
    pool,
  );
  return { replaced, report };
}

/** Puts a bi-tonal encoding into an image stream (its other entries kept). */
export function writeBitonal(
  stream: PDFRawStream,
  encoded: { data: Uint8Array; filter: "CCITTFaxDecode" | "JBIG2Decode" },
  width: number,
  height: number,
  context: PDFContext,
): void {
  const { dict } = stream;
  dict.set(N.Filter, PDFName.of(encoded.filter));
  if (encoded.filter === "CCITTFaxDecode") {
    dict.set(N.DecodeParms, context.obj({ K: -1, Columns: width, Rows: height }));
  } else dict.delete(N.DecodeParms);
  dict.delete(N.DL);
  dict.set(N.Length, PDFNumber.of(encoded.data.length));
  stream.updateContents(encoded.data);
}
