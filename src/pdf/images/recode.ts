// Recoding one image: the sizes to try (the target, then larger steps while the quality check
// fails), the first candidate that is smaller and holds the floor, layers for page images of
// scanned text, and the weaker profiles' settings while the image is left as it was.
import type { PDFDict, PDFRawStream } from "@cantoo/pdf-lib";
import { release, resample } from "./codecs.ts";
import type { JpegEffort, JpegHeader, Pixels, Size } from "./codecs.ts";
import { N } from "../streams/filters.ts";
import type { Placement } from "../shared/placement.ts";
import type { ImageSettings } from "../shared/profiles.ts";
import { layeredEncoding } from "./layers.ts";
import { QualityCheck } from "./quality.ts";
import { losslessBar } from "../streams/recompress.ts";
import { MAX_DECODED_BYTES, componentsOf } from "./samples.ts";
import type { ImageInfo, Source } from "./samples.ts";
import { SIZE_STEP, scaled, workingPixels, jpegCandidate, candidatesAt } from "./candidates.ts";
import type { Replacement, Job, Working, Candidate } from "./candidates.ts";
import { bytesOf } from "./replace.ts";

/** A JPEG kept at its size is not re-encoded below this. */
const MIN_JPEG_BYTES = 4 * 1024;

/** Images stored in fewer bytes are not worth the work. */
const MIN_STORED_BYTES = 512;

/**
 * A JPEG kept at its size is not re-encoded when it was made at a quality at most ours plus this
 * (mozjpeg still takes some 20 % off a JPEG of about our quality, and the quality check guards).
 */
const JPEG_QUALITY_MARGIN = -10;

/**
 * What the lossless pass makes of a stored JPEG larger than this is not worked out (counting the
 * symbols for new Huffman tables takes some 30 ms of JavaScript per megabyte: losslessBar)
 * for a candidate smaller than NEAR_LOSSLESS of it: new tables save 5 to 20 % (the downsampled
 * pages of a scan come to 10 to 30 %).
 */
const MAX_BAR_JPEG_BYTES = 512 * 1024;

/**
 * Nor for a JPEG candidate of an image of more samples than this (Flate at level 9 with a
 * predictor chosen row by row takes seconds on a photograph of ten megabytes, and the JPEG is a
 * small fraction of that).
 */
const MAX_BAR_SAMPLE_BYTES = 1024 * 1024;

const NEAR_LOSSLESS = 0.75;

const sampleBytesOf = (info: ImageInfo) =>
  Math.ceil((info.width * componentsOf(info.colour) * info.bpc) / 8) * info.height;

/** Downsampled sizes tried at most (then the image's own). */
const MAX_SIZES = 8;

/** Layers (layers.ts) are tried on images covering at least this share of their page... */
export const LAYERED_MIN_PAGE_SHARE = 0.5;

/** ...of at least this many pixels, at a resolution at least this. */
const LAYERED_MIN_PIXELS = 1_000_000;

const LAYERED_MIN_PPI = 150;

/**
 * Layers smaller than this share of the stored image are taken without working out the usual
 * candidates (those come to 20-35 % of a 300 dpi scan in balanced: more would rarely be smaller).
 */
const LAYERED_CLEAR_SHARE = 0.2;

/**
 * How many times finer than `ppi` the pages draw an image, along its less oversampled axis
 * (undefined when it is not known where they draw it, or drawn too small to say).
 */
function oversampling(info: Size, placement: Placement | undefined, ppi: number): number | undefined {
  const wantWidth = placement ? (placement.width / 72) * ppi : 0;
  const wantHeight = placement ? (placement.height / 72) * ppi : 0;
  if (!placement || (wantWidth < 1 && wantHeight < 1)) return undefined;
  return Math.min(info.width / Math.max(wantWidth, 1e-9), info.height / Math.max(wantHeight, 1e-9));
}

/** The widest an image may stay under the settings' `maxPpi` (Infinity without one, or unplaced). */
function capWidth(info: Size, placement: Placement | undefined, settings: ImageSettings): number {
  const ratio = settings.maxPpi === undefined ? undefined : oversampling(info, placement, settings.maxPpi);
  // Rounded as targetSize rounds: an image downsampled to the cap is not above it.
  return ratio === undefined || !(ratio > 1) ? Infinity : Math.max(1, Math.round(info.width / ratio));
}

/** Where the pixels should go: the target size, or undefined to keep the image's own. */
export function targetSize(info: Size, placement: Placement | undefined, settings: ImageSettings): Size | undefined {
  let scale: number;
  const ratio = oversampling(info, placement, settings.targetPpi);
  if (ratio !== undefined) {
    // Above maxPpi an image is downsampled however little finer than the target it is.
    const aboveCap = capWidth(info, placement, settings) < info.width;
    if (!(ratio > settings.downsampleThreshold) && !aboveCap) return undefined;
    scale = 1 / ratio;
  } else {
    const longest = Math.max(info.width, info.height);
    if (longest <= settings.maxSide) return undefined;
    scale = settings.maxSide / longest;
  }
  // The floor on the short side (settings.minShortSide), unless the caller's maxPpi asks for less.
  const short = Math.min(info.width, info.height) * scale;
  const floor = settings.minShortSide ?? 0;
  if (short < floor && !(capWidth(info, placement, settings) < info.width)) {
    scale = Math.min(1, floor / Math.min(info.width, info.height));
    // Too little smaller than the image's own to be worth a resampling (as above).
    if (1 / scale <= settings.downsampleThreshold) return undefined;
  }
  return {
    width: Math.max(1, Math.round(info.width * scale)),
    height: Math.max(1, Math.round(info.height * scale)),
  };
}

/**
 * The downsampled sizes to try, smallest first: the target, then steps of SIZE_STEP while the
 * image stays finer than a step by the profile's threshold. Images the pages were not seen to
 * draw have only their target (there is nothing to check a larger one against).
 */
function ladderOf(job: Job): Size[] {
  if (!job.target || !job.placement) return job.target ? [job.target] : [];
  const sizes: Size[] = [];
  const limit = Math.min(
    job.info.width / job.settings.downsampleThreshold,
    capWidth(job.info, job.placement, job.settings),
  );
  for (let size = job.target; size.width <= limit && sizes.length < MAX_SIZES; size = scaled(size, SIZE_STEP)) {
    sizes.push(size);
  }
  return sizes;
}

/** Whether re-encoding a JPEG at its own size is worth trying (it was made at a higher quality). */
function reencodesAtOwnSize(job: Job, header: JpegHeader): boolean {
  if (job.stream.contents.length < MIN_JPEG_BYTES) return false;
  return header.quality === undefined || header.quality > job.settings.jpegQuality + JPEG_QUALITY_MARGIN;
}

/** Sizes to try, as resample targets (undefined: the working pixels as they are). */
function sizesToTry(job: Job, working: Working): (Size | undefined)[] {
  const { width, height } = working.pixels;
  const sizes: (Size | undefined)[] = ladderOf(job).filter((s) => s.width < width && s.height <= height);
  // The working pixels themselves: the image's own size, or the largest reduction decoded (not
  // above maxPpi).
  const capped = width > capWidth(job.info, job.placement, job.settings);
  if (!capped && (working.reduced || !working.jpeg || reencodesAtOwnSize(job, working.jpeg))) sizes.push(undefined);
  return sizes;
}

/**
 * Tries the sizes in turn, and at each its candidates smallest first; the first candidate that is
 * smaller (than what is stored, and than `ceiling`: a replacement already found) and passes the
 * check wins.
 */
async function firstAcceptable(
  job: Job,
  working: Working,
  sizes: (Size | undefined)[],
  check: QualityCheck | undefined,
  kind: { photo?: boolean },
  ceiling = Infinity,
): Promise<Replacement | null | undefined> {
  const stored = job.stream.contents.length;
  /**
   * Whether a size is at least what the lossless stream pass would store the image in (worked out
   * when needed, and only as far as needed; for a JPEG, a bound a few bytes in a thousand below it).
   */
  let bar: ((size: number) => Promise<boolean>) | undefined;
  for (const [tried, size] of sizes.entries()) {
    const own = size === undefined;
    const downsampled = !own || working.reduced;
    // A JPEG's first size is resampled and encoded in one pass: nothing looks at its resampled
    // pixels (the first size is not checked before its candidate), and handing them to JavaScript
    // and back cost a copy of a quarter of the page image and a pipeline of its own.
    const direct = working.jpeg !== undefined && tried === 0 && !own;
    const output = direct ? working.pixels : await resample(working.pixels, size);
    let candidates: Candidate[] = [];
    try {
      // Once an image has failed a size, a size whose resampled pixels already fall below the
      // floor will not pass with JPEG's loss added: its encoding and decoding are skipped. The
      // first size is encoded straight away: most images pass it, and the check of their
      // candidate covers it. Lossless candidates are checked once, below: their decoded pixels
      // are these.
      const lossy = working.jpeg !== undefined || kind.photo === true;
      if (check && tried > 0 && downsampled && lossy && !check.passes(output)) continue;
      candidates = direct
        ? [await jpegCandidate(job, working, working.pixels, size)]
        : await candidatesAt(job, working, output, own, kind, check !== undefined);
      const limit = Math.min(
        !downsampled && working.jpeg ? stored * (1 - job.settings.minJpegSaving) : stored,
        ceiling,
      );
      for (const [index, candidate] of candidates.entries()) {
        const bytes = candidate.replacement.data.length;
        // A larger size will not be smaller: give up (null). A larger candidate is not either.
        if (bytes >= limit) {
          if (index === 0) return null;
          break;
        }
        // Nor larger than the lossless profile stores the image (its stream pass, which this
        // profile's would run on the image left as it is): a stronger profile is never larger.
        const lossless = candidate.replacement.filter === N.FlateDecode;
        const work = working.jpeg
          ? stored <= MAX_BAR_JPEG_BYTES
          : lossless || sampleBytesOf(job.info) <= MAX_BAR_SAMPLE_BYTES;
        const worked = work || bytes >= NEAR_LOSSLESS * stored;
        if (worked && (await (bar ??= losslessBar(job.stream, MAX_DECODED_BYTES, working.decoding))(bytes))) {
          if (index === 0) return null;
          break;
        }
        if (candidate.exact) return { ...candidate.replacement, look: "same" };
        if (!check) return candidate.replacement;
        const look = check.accepts(candidate.decoded);
        if (look !== undefined) return { ...candidate.replacement, look };
      }
    } finally {
      // Resampled and decoded pixels are sharp's buffers, made for this size only.
      const mine = (pixels: Pixels) => pixels !== working.pixels && pixels !== output;
      release(
        output === working.pixels ? undefined : output.data,
        ...candidates.map((candidate) => (mine(candidate.decoded) ? candidate.decoded.data : undefined)),
      );
    }
  }
  return undefined;
}

/**
 * The image at `size`, the largest under the caller's maxPpi, whatever the quality floor and the
 * size it was stored in say: the smallest candidate there.
 */
async function atCap(job: Job, working: Working, size: Size, check?: QualityCheck): Promise<Replacement | undefined> {
  const output = await resample(working.pixels, size);
  let candidates: Candidate[] = [];
  try {
    candidates = await candidatesAt(job, working, output, false, {}, false);
    const smallest = (best: Candidate | undefined, candidate: Candidate) =>
      best && best.replacement.data.length <= candidate.replacement.data.length ? best : candidate;
    const chosen = candidates.reduce<Candidate | undefined>(smallest, undefined);
    if (!chosen || !check) return chosen?.replacement;
    // Below the floor, maybe: measured all the same, for the report.
    const started = performance.now();
    const look = check.similarity(chosen.decoded);
    return { ...chosen.replacement, look, lookMs: performance.now() - started };
  } finally {
    const mine = (pixels: Pixels) => pixels !== working.pixels && pixels !== output;
    release(
      output === working.pixels ? undefined : output.data,
      ...candidates.map((candidate) => (mine(candidate.decoded) ? candidate.decoded.data : undefined)),
    );
  }
}

/**
 * The image's replacement; null when no candidate came out smaller than what it is stored in,
 * undefined when none was tried or none held the quality floor.
 */
async function recode(job: Job, source: Source): Promise<Replacement | null | undefined> {
  const { settings, stream, placement } = job;
  if (stream.contents.length < MIN_STORED_BYTES) return undefined;
  // Re-encoding a JPEG at its size gains little, and loses quality, unless it was made finer.
  if (source.kind === "jpeg" && !job.target && !reencodesAtOwnSize(job, source.header)) return undefined;
  const working = await workingPixels(job, source);
  if (!working) return undefined;
  try {
    const check = placement && new QualityCheck(working.pixels, placement, imageFloor(settings, placement));
    const layered = check && layersWanted(job, working) ? await layeredCandidate(job, working, check) : undefined;
    // Far below what one image would take: the usual candidates are not worked out.
    if (layered && bytesOf(layered) < stream.contents.length * LAYERED_CLEAR_SHARE) return layered;
    const sizes = sizesToTry(job, working);
    // Only a candidate smaller than the layers could replace them: larger sizes are not tried once
    // a size's smallest candidate is not (a 2400 dpi scan tried nine sizes in 0.9 s to lose to them).
    const ceiling = layered ? bytesOf(layered) : Infinity;
    const usual = await firstAcceptable(job, working, sizes, check, {}, ceiling);
    if (layered && (!usual || bytesOf(layered) < usual.data.length)) return layered;
    // Above maxPpi, the caller's cap wins over the quality floor: the largest size under it.
    const largest = sizes.at(-1);
    const aboveCap = capWidth(job.info, placement, settings) < job.info.width;
    if (usual || !aboveCap || !largest) return usual;
    return (await atCap(job, working, largest, check)) ?? usual;
  } finally {
    if (working.owned) release(working.pixels.data);
  }
}

/**
 * Layers are tried on images that fill most of a page at a scanner's resolution, in a colour
 * space drawn as gray or RGB, as they are (not a reduced copy), without masks of their own.
 */
function layersWanted(job: Job, working: Working): boolean {
  const { settings, placement, info } = job;
  if (!settings.layers || job.mask || working.reduced || !placement) return false;
  if (placement.pageShare < LAYERED_MIN_PAGE_SHARE) return false;
  if (job.masked || info.decode) return false;
  const colour = working.recoloured.colour ?? (info.colour.kind === "indexed" ? info.colour.base : info.colour);
  if (!colour.rgbLike || (colour.components !== 1 && colour.components !== 3)) return false;
  const { width, height } = working.pixels;
  return width * height >= LAYERED_MIN_PIXELS && width / (placement.width / 72) >= LAYERED_MIN_PPI;
}

/** The image as layers, when the page as composed holds the floor. */
async function layeredCandidate(job: Job, working: Working, check: QualityCheck): Promise<Replacement | undefined> {
  const layers = job.settings.layers!;
  const ppi = working.pixels.width / (job.placement!.width / 72);
  const factors = [...new Set(layers.backgroundPpi.map((target) => Math.max(2, Math.round(ppi / target))))];
  let look: number | undefined;
  let lookMs = 0;
  const layered = await layeredEncoding(working.pixels, {
    factors: factors.sort((a, b) => b - a),
    jpegQuality: job.settings.jpegQuality,
    bitonalFirst: layers.bitonalFirst,
    effort: job.effort,
    jpegEffort: job.effort,
    // The composition taken is the first that holds the floor: its similarity is the last measured.
    passes: (composed) => (look = check.accepts(composed)) !== undefined,
    // Measured again as it is written (its background's JPEG loss included), for the report.
    written: (composed) => {
      const started = performance.now();
      look = check.similarity(composed);
      lookMs = performance.now() - started;
    },
  });
  if (!layered) return undefined;
  return {
    data: new Uint8Array(0),
    filter: N.FlateDecode,
    size: job.info,
    layered,
    ...(look === undefined ? {} : { look, lookMs }),
  };
}

/**
 * The similarity an image must keep so that its page keeps `settings.minSsim`: a page's SSIM is
 * about the area-weighted mean of its parts, and parts without images do not change.
 */
function imageFloor(settings: ImageSettings, placement: Placement): number {
  const share = Math.min(1, Math.max(placement.pageShare, 1e-6));
  return Math.max(settings.minImageSsim, 1 - (1 - settings.minSsim) / share);
}

/** An image of a document to recode, with what its recoding depends on besides the profile. */
export interface ImageToRecode {
  stream: PDFRawStream;
  info: ImageInfo;
  mask: boolean;
  masked: boolean;
  placement: Placement | undefined;
  fixedSize: boolean;
  /** Make it gray (an RGB JPEG under the grayscale option: candidates.ts). */
  gray?: boolean;
}

export const hasMasks = (dict: PDFDict) => dict.has(N.SMask) || dict.has(N.Mask);

/**
 * The image's replacement under the profile's settings, then those of the weaker profiles while
 * the image is left as it was. A retry at a higher JPEG quality only for an image stored
 * losslessly that failed on quality: where nothing came out smaller (null), more quality will not
 * either.
 */
export async function recodeImage(
  image: ImageToRecode,
  source: Source,
  settings: ImageSettings,
  effort: JpegEffort,
): Promise<Replacement | undefined> {
  const { info, placement, fixedSize } = image;
  let outcome: Replacement | null | undefined;
  for (let tried: ImageSettings | undefined = settings; tried; tried = tried.fallback) {
    if (tried.losslessSourcesOnly && (source.kind === "jpeg" || outcome === null)) continue;
    const target = fixedSize ? undefined : targetSize(info, placement, tried);
    outcome = await recode({ ...image, target, settings: tried, effort }, source);
    if (outcome) return outcome;
  }
  return undefined;
}
