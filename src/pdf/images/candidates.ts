// The encodings an image is tried as (recode.ts tries them): JPEG for photographs, lossless
// (PNG-predicted Flate) for line art, flat colour and masks, a palette beside it for graphics; and
// the working pixels they start from.
import type { PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import { adobeInverts, decodeJpeg, encodeJpeg, encodeLossless, encodePalette, release, resample } from "./codecs.ts";
import type { Components, JpegEffort, JpegHeader, Pixels, Size } from "./codecs.ts";
import type { DirectColour } from "../shared/colour.ts";
import { deflate, N } from "../streams/filters.ts";
import { deflateInBackground } from "../streams/recompress.ts";
import type { FlateDecoding } from "../streams/filters.ts";
import type { Placement } from "../shared/placement.ts";
import type { ImageSettings } from "../shared/profiles.ts";
import type { LayeredEncoding } from "./layers.ts";
import { luminance } from "./quality.ts";
import {
  MIN_PIXELS,
  MAX_DECODED_BYTES,
  isGrayWithin,
  pixelComponents,
  reduceWhileInflating,
  pixelsOf,
  writeGray,
} from "./samples.ts";
import type { ImageInfo, Source } from "./samples.ts";

/** zlib level of lossless candidates (9 is much slower on photographs for little gain). */
export const LOSSLESS_LEVEL = 6;

/** Images larger than four times this are told photograph or line art on a copy of this size. */
const PROBE_PIXELS = 1_000_000;

/** When an image fails the quality check at one size, the next size tried is this much larger. */
export const SIZE_STEP = 1.25;

/** An RGB image whose channels differ by at most this is stored as gray. */
const GRAY_TOLERANCE = 2;

export type Replacement = {
  data: Uint8Array;
  filter: PDFName;
  size: Size;
  /** Columns and colours of PNG predictors on the data, when it has them. */
  predictor?: { colors: number; columns: number };
  /** The colour space to write (an Indexed image expanded to its base space). */
  colour?: DirectColour;
  /** The /Decode to write; null removes it. */
  decode?: number[] | null;
  /** The data are indices into these colours of `base` (an Indexed colour space), of `bits` bits. */
  indexed?: { base: DirectColour; palette: Uint8Array; bits: number };
  /** The image becomes a form of layers instead (layers.ts); the other fields describe nothing. */
  layered?: LayeredEncoding;
  /**
   * What the page will show of it: "same" when its decoded pixels are the image's own, else the
   * SSIM its drawing keeps with the original's where the pages draw it largest, at 100 dpi (the
   * quality check's measurement, quality.ts); absent when the check could not measure it (the
   * pages were not seen to draw it). Read by the report's page SSIM (page-quality.ts).
   */
  look?: "same" | number;
  /** Milliseconds spent measuring `look` for the report alone (where the check had not measured it). */
  lookMs?: number;
};

/** What a Decode array reads as when samples are stored inverted (255 - v). */
const flipped = (decode: number[]) => decode.flatMap((_, i) => (i % 2 === 0 ? [decode[i + 1]!, decode[i]!] : []));

export interface Job {
  stream: PDFRawStream;
  info: ImageInfo;
  /** A soft mask: lossless unless it already was a JPEG. */
  mask: boolean;
  /** The image has a mask of its own (/SMask or /Mask): it is not split into layers. */
  masked: boolean;
  /** Where the pages draw it largest, when known. */
  placement: Placement | undefined;
  /** The size to downsample to, when it is to be downsampled. */
  target: Size | undefined;
  settings: ImageSettings;
  /** How hard the JPEG encoder works on this document's images (see `effortFor`). */
  effort: JpegEffort;
  /** An RGB JPEG to make gray (the grayscale option, images/grayscale.ts): its working pixels are its luminance. */
  gray?: boolean;
}

export const scaled = (size: Size, factor: number): Size => ({
  width: Math.round(size.width * factor),
  height: Math.round(size.height * factor),
});

/** `size` scaled to about `pixels` pixels. */
function scaledTo(size: Size, pixels: number): Size {
  const scale = Math.sqrt(pixels / (size.width * size.height));
  return { width: Math.max(1, Math.round(size.width * scale)), height: Math.max(1, Math.round(size.height * scale)) };
}

const DEVICE_GRAY: DirectColour = {
  kind: "direct",
  components: 1,
  ranges: [0, 1],
  object: N.DeviceGray,
  rgbLike: true,
};

/** One channel of an RGB image whose three channels differ nowhere by more than `tolerance`. */
function grayOf(pixels: Pixels, tolerance: number): Pixels | undefined {
  if (pixels.components !== 3 || !isGrayWithin(pixels.data, tolerance)) return undefined;
  const gray = new Uint8Array(pixels.width * pixels.height);
  writeGray(pixels.data, gray);
  return { data: gray, width: pixels.width, height: pixels.height, components: 1 };
}

/** The pixels the recoding starts from: the image's own, or a reduced copy of a very large one. */
export interface Working {
  pixels: Pixels;
  /** The pixels are a reduced copy (any output from them is a downsampling). */
  reduced: boolean;
  /** The colour space and /Decode to write when they change (Indexed expanded, RGB of grays). */
  recoloured: Pick<Replacement, "colour" | "decode">;
  /** The source was a JPEG (its recodings stay JPEG). */
  jpeg: JpegHeader | undefined;
  /**
   * What the stored data costs as a lossless encoding of these pixels, when it is one, if under
   * `least`; else some size from `least` on. Worked out when first asked (samples stored in other
   * filters than Flate alone are deflated for it, only as far as `least`).
   */
  storedLossless: ((least: number) => Promise<number>) | undefined;
  /** The pixels' buffer was made for this image (not a view of the document's data): release it after. */
  owned: boolean;
  /** The stream's Flate data as decoded for them, for the lossless bar to take (samples.ts: sourceOf). */
  decoding?: FlateDecoding;
}

/**
 * Working.storedLossless of samples: the stored Flate data's size, or the samples deflated (once,
 * when asked). The deflate runs on the thread pool and stops once more than `least - 1` bytes have
 * come out: inline_image_large's 1200 x 675 photograph, stored in ASCII85, deflated whole to
 * 1,707 KB (190 ms at level 6, a fifth of the job) to be compared with 219 KB.
 */
export function storedLosslessOf(source: Source, storedBytes: number): Working["storedLossless"] {
  if (source.kind !== "samples") return undefined;
  if (source.flate) return () => Promise.resolve(storedBytes);
  const samples = source.data;
  let deflated: number | undefined;
  return async (least) => {
    if (deflated !== undefined) return deflated;
    const deflating = deflateInBackground(samples, LOSSLESS_LEVEL);
    try {
      const longer = await deflating.longerThan(least - 1);
      if (longer) return least;
      // zlib failed on the thread pool (longer undefined): as before, on this one.
      deflated = deflating.whole()?.length ?? deflate(samples, LOSSLESS_LEVEL).length;
      return deflated;
    } finally {
      deflating.close();
    }
  };
}

/** Decodes the image, reducing very large ones on the way. */
export async function workingPixels(job: Job, source: Source): Promise<Working | undefined> {
  const { info, target, stream } = job;
  const n = pixelComponents(info.colour) as Components;
  const large = info.width * info.height * n > MAX_DECODED_BYTES;
  let reduceTo: Size | undefined;
  if (large) {
    // Reduced by a whole factor (at least halved), to no less than a step above the target.
    if (!target) return undefined;
    const ratio = Math.min(info.width / target.width, info.height / target.height);
    const factor = Math.max(2, Math.floor(ratio / SIZE_STEP));
    reduceTo = { width: Math.ceil(info.width / factor), height: Math.ceil(info.height / factor) };
    if (reduceTo.width * reduceTo.height * n > 2 * MAX_DECODED_BYTES) return undefined;
  }
  if (source.kind === "jpeg") {
    // A JPEG is decoded once, whole: every size tried is resampled from it, and the quality check
    // draws it. (libvips's shrink-on-load does not apply below a 3x reduction, and decoding twice,
    // reduced for the candidates and whole for the check, cost more than decoding once.) A very
    // large one is decoded reduced, and checked against that.
    let pixels = await decodeJpeg(source.data, n, reduceTo);
    let recoloured: Working["recoloured"] = {};
    if (job.gray && pixels.components === 3) {
      // Luminance as renderers take it (quality.ts), so the check compares gray candidates with the page.
      const gray: Pixels = { data: luminance(pixels), width: pixels.width, height: pixels.height, components: 1 };
      release(pixels.data);
      pixels = gray;
      recoloured = { colour: DEVICE_GRAY, decode: null };
    }
    return {
      pixels,
      reduced: reduceTo !== undefined,
      recoloured,
      jpeg: source.header,
      storedLossless: undefined,
      owned: true,
    };
  }
  const indexed = info.colour.kind === "indexed";
  const base = info.colour.kind === "indexed" ? info.colour.base : info.colour;
  const grayable = base.rgbLike && base.components === 3 && !info.decode;
  let pixels: Pixels | undefined;
  if (source.kind === "large-flate") {
    if (!reduceTo) return undefined;
    const factor = Math.floor(Math.min(info.width / reduceTo.width, info.height / reduceTo.height));
    if (factor < 2) return undefined;
    // Reduced straight to gray when it is gray: never its RGB and its gray at once.
    const tolerance = grayable && n === 3 ? GRAY_TOLERANCE : undefined;
    pixels = await reduceWhileInflating(stream.contents, source.parms, info.width, info.height, n, factor, tolerance);
    if (pixels && pixels.components === 1 && tolerance !== undefined) {
      return {
        pixels,
        reduced: true,
        recoloured: { colour: DEVICE_GRAY, decode: null },
        jpeg: undefined,
        storedLossless: undefined,
        owned: true,
      };
    }
  } else {
    pixels = pixelsOf(source.data, info);
  }
  if (!pixels) return undefined;
  // Samples used as decoded are a view of the filters' output, which may be the stream's own data.
  let owned = source.kind === "large-flate" || indexed || info.bpc === 16;
  let recoloured: Working["recoloured"] = indexed ? { colour: base, decode: null } : {};
  if (grayable) {
    const gray = grayOf(pixels, GRAY_TOLERANCE);
    if (gray) {
      if (owned) release(pixels.data);
      pixels = gray;
      owned = true;
      recoloured = { colour: DEVICE_GRAY, decode: null };
    }
  }
  const storedLossless = storedLosslessOf(source, stream.contents.length);
  const decoding = source.kind === "samples" ? source.decoding : undefined;
  return {
    pixels,
    reduced: source.kind === "large-flate",
    recoloured,
    jpeg: undefined,
    storedLossless,
    owned,
    ...(decoding ? { decoding } : {}),
  };
}

/** A candidate encoding, with the pixels a reader will decode from it. */
export interface Candidate {
  replacement: Replacement;
  decoded: Pixels;
  /** The decoded pixels are exactly the image's (lossless, not resampled). */
  exact: boolean;
}

/** The quality of an image's JPEG candidates (masks keep more). */
const jpegQualityOf = (job: Job) => (job.mask ? Math.max(job.settings.jpegQuality, 85) : job.settings.jpegQuality);

/**
 * A JPEG of `output`, or of `output` resampled to `size` (in the same pass) when given; `encoded`:
 * that JPEG, already made (the photograph probe's, of the same pixels at the same settings).
 */
export async function jpegCandidate(
  job: Job,
  working: Working,
  output: Pixels,
  size?: Size,
  encoded?: Uint8Array,
): Promise<Candidate> {
  const { info } = job;
  const data =
    encoded ??
    (await encodeJpeg(output, { quality: jpegQualityOf(job), effort: job.effort, ...(size ? { size } : {}) }));
  const n = output.components;
  // libvips writes 4-component JPEGs Adobe-inverted; so does the stored JPEG when it has the marker.
  const inverted = n === 4 && adobeInverts(working.jpeg?.adobe ?? false);
  const ranges = working.recoloured.colour?.ranges ?? (info.colour as DirectColour).ranges;
  const decode = inverted ? flipped(working.recoloured.decode === null ? ranges : (info.decode ?? ranges)) : undefined;
  return {
    replacement: {
      data,
      filter: N.DCTDecode,
      size: size ?? { width: output.width, height: output.height },
      ...working.recoloured,
      ...(decode ? { decode } : {}),
    },
    decoded: await decodeJpeg(data, n),
    exact: false,
  };
}

async function losslessCandidate(working: Working, output: Pixels, exact: boolean): Promise<Candidate> {
  const lossless = await encodeLossless(output, LOSSLESS_LEVEL);
  return {
    replacement: {
      data: lossless.data,
      filter: N.FlateDecode,
      size: { width: output.width, height: output.height },
      ...(lossless.predicted ? { predictor: { colors: output.components, columns: output.width } } : {}),
      ...working.recoloured,
    },
    decoded: output,
    exact,
  };
}

/**
 * The colour space a palette of `working`'s pixels would index: an RGB-like one of three
 * components whose samples are the pixels as they are (no /Decode to carry over).
 */
function paletteBase(job: Job, working: Working): DirectColour | undefined {
  const colour = working.recoloured.colour ?? job.info.colour;
  if (colour.kind !== "direct" || colour.components !== 3 || !colour.rgbLike) return undefined;
  if (job.info.decode && working.recoloured.decode !== null) return undefined;
  return colour;
}

/**
 * `output` quantised to a palette of at most 256 colours (libimagequant, through sharp), written
 * as Indexed over the image's own colour space: a graphic of few colours in a fraction of its
 * lossless size. Lossy (unless it had 256 colours or fewer), so only where the quality check can
 * judge it; never for photographs (JPEG's), masks or JPEG sources.
 */
async function paletteCandidate(job: Job, working: Working, output: Pixels): Promise<Candidate | undefined> {
  const base = paletteBase(job, working);
  if (!base || job.settings.paletteQuality === undefined) return undefined;
  const encoded = await encodePalette(output, job.settings.paletteQuality);
  if (!encoded) return undefined;
  return {
    replacement: {
      data: encoded.data,
      filter: N.FlateDecode,
      size: { width: output.width, height: output.height },
      predictor: { colors: 1, columns: output.width },
      decode: null,
      indexed: { base, palette: encoded.palette, bits: encoded.bitsPerComponent },
    },
    decoded: encoded.decoded,
    exact: false,
  };
}

/** Lossless, and beside it a palette when the check can judge one: smallest first. */
async function graphicCandidates(
  job: Job,
  working: Working,
  output: Pixels,
  lossless: Candidate,
  checked: boolean,
): Promise<Candidate[]> {
  const palette = checked && !job.mask ? await paletteCandidate(job, working, output) : undefined;
  const candidates = palette ? [palette, lossless] : [lossless];
  return candidates.sort((a, b) => a.replacement.data.length - b.replacement.data.length);
}

/**
 * Both promises' values; when one fails, its error once the other has settled too (its work may
 * still read buffers the caller frees when this returns: none is left running behind).
 */
export async function both<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === "rejected") throw first.reason;
  if (second.status === "rejected") throw second.reason;
  return [first.value, second.value];
}

/**
 * The least whole size s with s * ratio >= jpeg (ratio > 0), in floating point as the comparison
 * takes it: a stored size from it on cannot lower the reference below the JPEG's.
 */
export function leastSizeAtRatio(jpeg: number, ratio: number): number {
  let size = Math.max(0, Math.ceil(jpeg / ratio));
  while (size > 0 && (size - 1) * ratio >= jpeg) size--;
  while (size * ratio < jpeg) size++;
  return size;
}

/**
 * The encodings of `output` (the working pixels at one size) that the profile wants, smallest
 * first: JPEG for photographs; lossless for line art, flat colour and masks, and a palette beside
 * it for graphics the quality check can judge. Photographs are told apart by how JPEG compares
 * with a lossless encoding of the same pixels (on a smaller copy of very large ones), once per
 * image: `kind` remembers the answer for the other sizes.
 */
export async function candidatesAt(
  job: Job,
  working: Working,
  output: Pixels,
  atOwnSize: boolean,
  kind: { photo?: boolean },
  checked: boolean,
): Promise<Candidate[]> {
  const { settings, info } = job;
  const exact = atOwnSize && !working.reduced;
  if (working.jpeg) return [await jpegCandidate(job, working, output)];
  // Indexed images keep their indices (already lossless) unless they are downsampled.
  const indexedKept = info.colour.kind === "indexed" && exact;
  if (job.mask || output.width * output.height < MIN_PIXELS) kind.photo = false;
  if (kind.photo === false) {
    if (indexedKept) return [];
    return graphicCandidates(job, working, output, await losslessCandidate(working, output, exact), checked);
  }
  if (kind.photo === true) return [await jpegCandidate(job, working, output)];
  const large = output.width * output.height > PROBE_PIXELS * 4;
  const probe = large ? await resample(output, scaledTo(output, PROBE_PIXELS)) : output;
  // The two encodings are libvips's, on the thread pool: made at once, on two cores.
  const [probeJpeg, probeLossless] = await both(
    encodeJpeg(probe, { quality: settings.jpegQuality, effort: job.effort }),
    losslessCandidate(working, probe, exact && !large),
  );
  if (large) release(probe.data);
  // The stored data's lossless size only lowers the reference: asked for when it could decide.
  const { losslessToJpegRatio: ratio } = settings;
  let reference = probeLossless.replacement.data.length;
  if (probeJpeg.length <= reference * ratio && exact && !large && working.storedLossless !== undefined) {
    reference = Math.min(reference, await working.storedLossless(leastSizeAtRatio(probeJpeg.length, ratio)));
  }
  kind.photo = probeJpeg.length <= reference * ratio;
  // The probe's JPEG is the candidate's when it was made of these pixels at its settings.
  const same = !large && jpegQualityOf(job) === settings.jpegQuality;
  if (kind.photo) return [await jpegCandidate(job, working, output, undefined, same ? probeJpeg : undefined)];
  if (indexedKept) return [];
  const lossless = large ? await losslessCandidate(working, output, exact) : probeLossless;
  return graphicCandidates(job, working, output, lossless, checked);
}
