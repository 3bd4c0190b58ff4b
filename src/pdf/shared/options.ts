// What a caller may ask beside the profile, and what each option does to the profile's settings.
//
// - grayscale: colour images and the pages' colour operators become gray (images/grayscale.ts,
//   content/grayscale.ts). Balanced and extreme: the lossless profile keeps every pixel as it is.
// - maxImagePpi: no image stays drawn finer than this many pixels per inch of the page: the
//   profile's resolution is lowered to it where it is higher, and an image above it is brought to
//   it even when the quality floor would have kept it larger. Balanced and extreme.
// - removeMetadata: the document information dictionary, XMP metadata, page thumbnails and other
//   applications' private data (/PieceInfo) go; what a reader needs to show and read the document
//   (language, structure tree, MarkInfo, outlines, output intents) stays. Every profile. A PDF/A or
//   PDF/UA file loses its XMP, and with it the claim of conformance.
// - targetSize: the output's size in bytes, reached with the least loss (target.ts): the profile
//   first, then image resolution and quality lowered step by step, never below the floor of
//   TARGET_FLOOR_SSIM on every page checked. Balanced and extreme.
// - linearize: the output is linearized ("fast web view", ISO 32000-1 Annex F,
//   structure/linearize.ts): a reader over HTTP shows the first page before the rest arrives. Every
//   profile. A document that cannot be linearized is written without, and the report says why.
import type { CompressionProfile, ImageSettings, ProfileSettings } from "./profiles.ts";
import { PROFILE_SETTINGS } from "./profiles.ts";

/**
 * What to do with a signed document: refuse it (signed_document, the default), or remove its
 * signatures, which the rewrite would break anyway.
 */
export type SignaturePolicy = "refuse" | "remove";

export interface EngineOptions {
  signatures?: SignaturePolicy;
  /** Colour images and the pages' colour operators converted to gray. */
  grayscale?: boolean;
  /** The finest an image may be drawn at, in pixels per inch of the page. */
  maxImagePpi?: number;
  /** Document information, XMP metadata, thumbnails and private application data removed. */
  removeMetadata?: boolean;
  /** The size in bytes the output must not exceed (TargetUnreachable when the floor cannot reach it). */
  targetSize?: number;
  /** The output linearized for fast web view (or, where it cannot be, the report says why). */
  linearize?: boolean;
}

/** The bounds of maxImagePpi: below 36 no text scanned into an image stays legible. */
export const MIN_IMAGE_PPI = 36;
export const MAX_IMAGE_PPI = 2400;
/** The smallest targetSize accepted: no PDF with a page is smaller. */
export const MIN_TARGET_SIZE = 1024;

/** An option the engine cannot honour with this profile, or out of its bounds. */
export interface OptionProblem {
  option: keyof EngineOptions;
  message: string;
}

const LOSSY_ONLY = "the lossless profile keeps every image as it is; use balanced or extreme";

/** Why these options cannot run with this profile, if they cannot (the first problem found). */
export function optionProblem(profile: CompressionProfile, options: EngineOptions): OptionProblem | undefined {
  const { maxImagePpi, targetSize } = options;
  if (maxImagePpi !== undefined) {
    if (!Number.isInteger(maxImagePpi) || maxImagePpi < MIN_IMAGE_PPI || maxImagePpi > MAX_IMAGE_PPI) {
      return {
        option: "maxImagePpi",
        message: `must be a whole number of pixels per inch from ${MIN_IMAGE_PPI} to ${MAX_IMAGE_PPI}`,
      };
    }
    if (profile === "lossless") return { option: "maxImagePpi", message: LOSSY_ONLY };
  }
  if (targetSize !== undefined) {
    if (!Number.isSafeInteger(targetSize) || targetSize < MIN_TARGET_SIZE) {
      return { option: "targetSize", message: `must be a whole number of bytes, at least ${MIN_TARGET_SIZE}` };
    }
    if (profile === "lossless") return { option: "targetSize", message: LOSSY_ONLY };
  }
  if (options.grayscale === true && profile === "lossless") return { option: "grayscale", message: LOSSY_ONLY };
  return undefined;
}

/** Image settings with the resolution capped at `maxPpi` (the fallbacks too). */
export function cappedImages(settings: ImageSettings, maxPpi: number): ImageSettings {
  return {
    ...settings,
    targetPpi: Math.min(settings.targetPpi, maxPpi),
    maxPpi: Math.min(settings.maxPpi ?? Infinity, maxPpi),
    ...(settings.fallback ? { fallback: cappedImages(settings.fallback, maxPpi) } : {}),
  };
}

/** The profile's settings as the options change them. */
export function settingsFor(profile: CompressionProfile, options: EngineOptions): ProfileSettings {
  const base = PROFILE_SETTINGS[profile];
  const images = base.images && options.maxImagePpi ? cappedImages(base.images, options.maxImagePpi) : base.images;
  return {
    ...base,
    ...(images ? { images } : {}),
    ...(options.grayscale ? { grayscale: true } : {}),
    ...(options.removeMetadata ? { removeMetadata: true, discardPrivateData: true } : {}),
    ...(options.linearize ? { linearize: true } : {}),
  };
}
