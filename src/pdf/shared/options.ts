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
// - ocr, ocrLanguages: an invisible text layer on every page that has no text and is mostly one
//   image (ocr/text-layers.ts), read in these languages (Tesseract's codes, OCR_LANGUAGES; eng
//   unless told). Every profile: the layer never moves a pixel. Not with targetSize, whose ladder
//   runs the passes again (each run would read the pages again).
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
  /** An invisible text layer on the scanned pages (pages without text, mostly one image). */
  ocr?: boolean;
  /** The languages the scans are read in (OCR_LANGUAGES; ["eng"] unless told); only with ocr. */
  ocrLanguages?: string[];
  /** The OCR pass's time, at most (pages not begun by then are left unread); default OCR_TIME_BUDGET_MS. */
  ocrTimeBudgetMs?: number;
  /**
   * The most scanned pages OCR may read: a document with more is refused (OcrPageLimit, before a
   * page is read), for the caller to run it where time allows (the service: as a job). Unset: no limit.
   */
  ocrPageLimit?: number;
}

/**
 * The languages OCR reads (Tesseract's ISO 639-2/T codes), each an npm dependency,
 * @tesseract.js-data/<code>: a language is added by adding its package and its code here.
 */
export const OCR_LANGUAGES = ["eng", "deu", "fra", "spa", "por", "ita"] as const;
export type OcrLanguage = (typeof OCR_LANGUAGES)[number];
export const isOcrLanguage = (code: string): code is OcrLanguage => (OCR_LANGUAGES as readonly string[]).includes(code);
/** Languages read at once, at most: each one more is read on every page, and slows it. */
export const MAX_OCR_LANGUAGES = 3;
/** One page's recognition, at most. */
export const OCR_PAGE_TIMEOUT_MS = 120_000;
/** The whole OCR pass, at most, unless the caller says less (the service: within its job's time limit). */
export const OCR_TIME_BUDGET_MS = 30 * 60_000;

function ocrProblem(options: EngineOptions): OptionProblem | undefined {
  const languages = options.ocrLanguages;
  if (languages !== undefined) {
    if (options.ocr !== true) return { option: "ocrLanguages", message: "applies only with ocr=true" };
    const unknown = languages.find((code) => !isOcrLanguage(code));
    if (unknown !== undefined || languages.length === 0) {
      return {
        option: "ocrLanguages",
        message: `must be one to ${MAX_OCR_LANGUAGES} of ${OCR_LANGUAGES.join(", ")}, separated by +${unknown === undefined ? "" : `; "${unknown.slice(0, 20)}" is not one`}`,
      };
    }
    if (languages.length > MAX_OCR_LANGUAGES || new Set(languages).size !== languages.length) {
      return { option: "ocrLanguages", message: `must name one to ${MAX_OCR_LANGUAGES} different languages` };
    }
  }
  if (options.ocr === true && options.targetSize !== undefined) {
    return {
      option: "ocr",
      message: "cannot be combined with target_size (each step of its ladder would read the pages again)",
    };
  }
  return undefined;
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
  return ocrProblem(options);
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
