// Image XObjects: downsample to the resolution at which the pages draw them, and re-encode as JPEG
// (photographs) or PNG-predicted Flate (line art, flat colour, soft masks), keeping whichever of the
// old and the new data is smaller. Graphics (RGB images JPEG does not suit) are also tried as a
// palette of at most 256 colours (libimagequant), kept when smaller and above the quality floor.
//
// - Where each image is drawn comes from the content streams (shared/placement.ts); large inline images
//   become XObjects first (inline.ts). An image the pages were not seen to draw keeps the old
//   longest-side rule.
// - Every lossy result is drawn as a renderer would draw it at 100 dpi and compared with the
//   original (quality.ts): below the profile's floor, the next larger size is tried, and failing
//   all, the image stays as it is. Sharp text and line art so keep the pixels they need, and
//   photographs go down to the profile's resolution.
// - Recoded: 8-bit images (16-bit ones are reduced to 8) in DeviceGray/RGB/CMYK, CalGray/CalRGB,
//   Lab, ICCBased (N = 1, 3, 4), Separation and DeviceN of 1, 3 or 4 components, behind JPEG
//   (DCTDecode, possibly wrapped in lossless filters) or lossless filters with or without
//   predictors; Indexed images of any depth (expanded to their base space when that wins); soft
//   masks (lossless, resized by their images' placement); /Decode arrays kept in force; RGB images
//   of grays stored as gray. Left alone here: stencil masks, colour-key masking, 1-, 2- and 4-bit
//   non-Indexed images, JBIG2, CCITT and JPEG 2000, and any image whose data does not agree with
//   its dictionary. (1-bit images are re-coded losslessly by bitonal-images.ts, in every profile.)
// - Page images of scanned text are also tried as layers (layers.ts): a text mask over a
//   background, the image turned into a form that draws them.
import { PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFObject, PDFContext } from "@cantoo/pdf-lib";
import { MAX_IMAGE_PIXELS } from "./codecs.ts";
import type { JpegEffort } from "./codecs.ts";
import { N } from "../streams/filters.ts";
import { convertInlineImages, MIN_INLINE_BYTES } from "./inline.ts";
import { findImagePlacements } from "../shared/placement.ts";
import type { Placement, Placements } from "../shared/placement.ts";
import type { ImageSettings } from "../shared/profiles.ts";
import { forEachBounded } from "../shared/bounded-jobs.ts";
import type { JobBounds } from "../shared/bounded-jobs.ts";
import { MAX_DECODED_BYTES, pixelComponents, describe, sourceOf, jpxSourceOf } from "./samples.ts";
import type { ImageInfo } from "./samples.ts";
import type { Replacement } from "./candidates.ts";
import { LAYERED_MIN_PAGE_SHARE, targetSize, hasMasks, recodeImage } from "./recode.ts";
import type { ImageToRecode } from "./recode.ts";
import { bytesOf, replace } from "./replace.ts";
import { detachJpeg, recodeOffThread, recodeWorkersFor } from "./off-thread.ts";
import { PageQualityTally } from "./page-quality.ts";
import type { PageQuality } from "./page-quality.ts";

export { MAX_IMAGE_PIXELS };

export interface ImageReport {
  images: number;
  recoded: number;
  /** Of the recoded: how many were downsampled. */
  downsampled: number;
  /** Inline images turned into image XObjects (then treated like the others). */
  inlineConverted: number;
  /** Of the recoded: page images of scanned text split into a text mask and a background (layers.ts). */
  layered: number;
  /** Worker threads started for the JPEG images (0: the main thread did it all)... */
  threads: number;
  /** ...and the images sent to them (recoded on the main thread after all if a thread died). */
  offThread: number;
  bytesBefore: number;
  bytesAfter: number;
  /** The lowest SSIM of a page whose images changed, from the quality check's measurements. */
  quality: PageQuality;
}

const lookupStream = (context: PDFContext, value: PDFObject | undefined) => {
  const object = value === undefined ? undefined : context.lookup(value);
  return object instanceof PDFRawStream ? object : undefined;
};

/** Pages drawn on by either, each with the larger share. */
function unionPages(a: Placement, b: Placement): Map<number, number> | undefined {
  if (!a.pages || !b.pages) return a.pages ?? b.pages;
  const pages = new Map(a.pages);
  for (const [page, share] of b.pages) pages.set(page, Math.max(share, pages.get(page) ?? 0));
  return pages;
}

const union = (a: Placement | undefined, b: Placement | undefined): Placement | undefined => {
  if (!a || !b) return a ?? b;
  const pages = unionPages(a, b);
  return {
    width: Math.max(a.width, b.width),
    height: Math.max(a.height, b.height),
    pageShare: Math.max(a.pageShare, b.pageShare),
    ...(pages ? { pages } : {}),
  };
};

/** An image to recode, with what its recoding depends on besides the profile. */
interface ImageJob {
  stream: PDFRawStream;
  mask: boolean;
  placement: Placement | undefined;
  /** Keep its size (a soft mask with /Matte, or the image of one). */
  fixedSize: boolean;
  /** Recode it gray (the grayscale option's RGB JPEGs). */
  gray: boolean;
}

/**
 * Pixels to encode (images at the size they would first be tried at) above which a document's
 * JPEGs are encoded with the "fast" effort: about twenty A4 pages at 150 ppi (the corpus's
 * documents stay below, the largest at 44 million). mozjpeg's trellis quantisation takes some
 * 15 % off each JPEG but multiplies its encoding time by about five: on a long scan that is most
 * of the engine's time, on a few pages a fraction of a second.
 */
const BEST_EFFORT_MAX_PIXELS = 48_000_000;

/**
 * How hard the JPEG encoder works on a document, from how many pixels its images would be
 * written with (their target sizes, or their own).
 */
function effortFor(jobs: readonly ImageJob[], context: PDFContext, settings: ImageSettings): JpegEffort {
  let pixels = 0;
  for (const job of jobs) {
    try {
      const info = describe(job.stream.dict, context);
      if (!info) continue;
      const size = (!job.fixedSize && targetSize(info, job.placement, settings)) || info;
      pixels += size.width * size.height;
    } catch {
      // Left alone when recoded: it costs nothing.
    }
  }
  return pixels > BEST_EFFORT_MAX_PIXELS ? "fast" : "best";
}

/**
 * About the most memory recoding an image holds at once: its stored data (a copy, when filters
 * are undone), its decoded samples (a very large one is decoded reduced, to at most twice
 * MAX_DECODED_BYTES), and a candidate with its encoding and decoding (a quarter of the samples or
 * less when downsampled, the whole when not: counted as half), and what layers add. An image we do not recode counts
 * as nothing: it is left alone without being decoded.
 */
function peakBytesOf(job: ImageJob, context: PDFContext, settings: ImageSettings): number {
  const { stream } = job;
  let info: ImageInfo | undefined;
  try {
    info = describe(stream.dict, context);
  } catch {
    return 0;
  }
  if (!info) return 0;
  const decoded = info.width * info.height * pixelComponents(info.colour);
  // Layers hold about two bytes a pixel more, the composition the check draws and the mask's gray
  // copy for libtiff (layers.ts: the luminance goes through the kernels' memory a row at a time);
  // counted as three, a margin for the mask, the grown text and the background.
  const layers = settings.layers && !job.mask && (job.placement?.pageShare ?? 0) >= LAYERED_MIN_PAGE_SHARE;
  const layered = layers && decoded <= MAX_DECODED_BYTES ? 3 * info.width * info.height : 0;
  return 1.5 * Math.min(decoded, 2 * MAX_DECODED_BYTES) + stream.contents.length + layered;
}

/**
 * Downsamples and re-encodes the document's image XObjects in place, per `settings`, several at a
 * time within `bounds`; the images in `gray` (RGB JPEGs under the grayscale option) are recoded as
 * gray. Returns the streams it replaced (already optimally encoded: leave them out of later
 * passes) and a report.
 */
export async function optimiseImages(
  context: PDFContext,
  settings: ImageSettings,
  bounds: JobBounds,
  gray: ReadonlySet<PDFRawStream> = new Set(),
): Promise<{ replaced: Set<PDFRawStream>; report: ImageReport }> {
  let placements: Placements;
  let inlineConverted = 0;
  try {
    placements = findImagePlacements(context, MIN_INLINE_BYTES);
    inlineConverted = convertInlineImages(context, placements);
  } catch {
    // Content we could not follow: no placements (images keep the longest-side rule), no inline conversion.
    placements = { images: new Map(), inline: new Map(), inlinePlaced: new Map(), complete: false };
  }
  const images = context
    .enumerateIndirectObjects()
    .map(([, object]) => object)
    .filter((o): o is PDFRawStream => o instanceof PDFRawStream && o.dict.lookup(N.Subtype) === N.Image);
  const replaced = new Set<PDFRawStream>();
  const report: ImageReport = {
    images: images.length,
    recoded: 0,
    downsampled: 0,
    inlineConverted,
    layered: 0,
    threads: 0,
    offThread: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    quality: { minSsim: null, pagesChecked: 0, imagesNotMeasured: 0, measureMs: 0 },
  };
  if (images.length === 0) return { replaced, report };
  const quality = new PageQualityTally();

  // When some content could not be read, an image's largest placement may be missing: use none.
  const placed = placements.complete ? placements.images : new Map<PDFRawStream, Placement>();

  // Soft masks follow their images' placement; stencil masks and colour keys are left alone.
  const softMasks = new Map<
    PDFRawStream,
    { placement: Placement | undefined; matte: boolean; unplacedParent: boolean }
  >();
  const stencils = new Set<PDFRawStream>();
  const matteParents = new Set<PDFRawStream>();
  for (const image of images) {
    const smask = lookupStream(context, image.dict.get(N.SMask));
    if (smask) {
      const entry = softMasks.get(smask) ?? { placement: undefined, matte: false, unplacedParent: false };
      const placement = placed.get(image);
      entry.placement = union(entry.placement, placement);
      entry.unplacedParent ||= !placement;
      entry.matte ||= smask.dict.has(N.Matte);
      softMasks.set(smask, entry);
      if (smask.dict.has(N.Matte)) matteParents.add(image);
    }
    const mask = lookupStream(context, image.dict.get(N.Mask));
    if (mask) stencils.add(mask);
  }

  const process = async (job: ImageJob) => {
    const { stream, mask, placement, fixedSize } = job;
    let info: ImageInfo | undefined;
    let replacement: Replacement | undefined;
    try {
      info = describe(stream.dict, context);
      const source = info && (sourceOf(stream, info) ?? (await jpxSourceOf(stream, info)));
      if (!info || !source) return;
      const masked = hasMasks(stream.dict);
      const image: ImageToRecode = { stream, info, mask, masked, placement, fixedSize, gray: job.gray };
      // To a thread that has room for it (in colour: threads do not make gray); else here, while they are busy.
      const toThread = workers?.hasRoom() && source.kind === "jpeg" && !job.gray;
      const detached = toThread ? detachJpeg(image, source, settings, effort) : undefined;
      if (detached) report.offThread++;
      replacement = detached
        ? await recodeOffThread(workers!, detached, () => recodeImage(image, source, settings, effort))
        : await recodeImage(image, source, settings, effort);
    } catch {
      // sharp could not read it (damaged data, unusual JPEG), or the dictionary is not what it
      // seems: the image stays as it is.
      return;
    }
    if (!replacement) return;
    report.recoded++;
    if (replacement.layered) report.layered++;
    if (replacement.size.width !== info.width || replacement.size.height !== info.height) report.downsampled++;
    report.bytesBefore += stream.contents.length;
    report.bytesAfter += bytesOf(replacement);
    quality.add(replacement, placement);
    // A layered image's mask and background are as they should be too (mozjpeg's Huffman tables
    // are already optimal): the stream pass would only work them out again.
    for (const made of replace(stream, replacement, context)) replaced.add(made);
    replaced.add(stream);
  };

  // Every image is a job of its own (they share nothing but the report), run a few at a time.
  const jobs: ImageJob[] = [];
  for (const stream of images) {
    if (softMasks.has(stream) || stencils.has(stream)) continue;
    const fixedSize = matteParents.has(stream);
    jobs.push({ stream, mask: false, placement: placed.get(stream), fixedSize, gray: gray.has(stream) });
  }
  for (const [stream, entry] of softMasks) {
    if (stencils.has(stream)) continue;
    // A mask whose image is drawn somewhere we did not see keeps the longest-side rule; one also
    // drawn on its own counts that placement too.
    const placement = entry.unplacedParent ? undefined : union(entry.placement, placed.get(stream));
    jobs.push({ stream, mask: true, placement, fixedSize: entry.matte, gray: false });
  }
  const effort = effortFor(jobs, context, settings);
  const workers = recodeWorkersFor(jobs, bounds);
  report.threads = workers?.threads ?? 0;
  try {
    await forEachBounded(
      jobs,
      (job) => peakBytesOf(job, context, settings),
      (job) => process(job),
      bounds,
    );
  } finally {
    await workers?.close();
  }
  report.quality = quality.result();
  return { replaced, report };
}
