// The OpenAPI description of the output options (workflow/options.ts; the engine's src/pdf/shared/options.ts):
// one schema per field, the same in a multipart form (as text: "true", "600000") and in a direct
// upload's JSON body (as JSON: true, 600000). Each has a default that sets nothing: the docs page's
// "Try it out" fills a field without one with a sample (true; a number's minimum, target_size=1024,
// max_image_ppi=36), which would change the headline call. The numbers' default is empty, as
// callback_url's is, since no number means "not set"; the API takes an empty field as none.
import {
  MAX_IMAGE_PPI,
  MAX_OCR_LANGUAGES,
  MIN_IMAGE_PPI,
  MIN_TARGET_SIZE,
  OCR_LANGUAGES,
  TARGET_FLOOR_SSIM,
} from "../../pdf/index.ts";

const LOSSY_ONLY = "Balanced and extreme; refused with profile lossless, which keeps every image as it is";

export const outputOptionFields = {
  target_size: {
    type: "integer",
    minimum: MIN_TARGET_SIZE,
    default: "",
    description: `The most bytes the result may have. The profile runs first; when its result is larger, images are lowered in resolution and quality step by step, never below the quality floor (SSIM ${TARGET_FLOOR_SSIM} of every recoded image on its page), and the least lossy result that fits is answered. When even the floor does not fit: 422 target_unreachable, not charged, its message giving the smallest size reached. Takes longer: up to 5 runs of the engine (the time limit grows to match). ${LOSSY_ONLY} (400 invalid_target_size).`,
  },
  grayscale: {
    type: "boolean",
    default: false,
    description: `true: colour images and the pages' colours become grey (docs/engine.md#options-beside-the-profile says what stays as it is). ${LOSSY_ONLY} (400 invalid_grayscale).`,
  },
  max_image_ppi: {
    type: "integer",
    minimum: MIN_IMAGE_PPI,
    maximum: MAX_IMAGE_PPI,
    default: "",
    description: `No image stays drawn finer than this many pixels per inch of the page (${MIN_IMAGE_PPI} to ${MAX_IMAGE_PPI}), even where the profile's quality floor would have kept it larger. ${LOSSY_ONLY} (400 invalid_max_image_ppi).`,
  },
  remove_metadata: {
    type: "boolean",
    default: false,
    description:
      "true: the document information (Title, Author, Creator, Producer, …), XMP metadata, page thumbnails and other applications' private data are removed; what a reader needs (language, structure tree, outlines, output intents) stays. A PDF/A or PDF/UA file loses its claim of conformance with its XMP. Every profile.",
  },
  ocr: {
    type: "boolean",
    default: false,
    description: `true: every page that has no text and is mostly one image (a scan) gets an invisible text layer, so that its words can be searched, selected and copied, and systems that parse PDFs (applicant tracking, search indexes, screen readers) read them; pages that have text are left as they are. The text layer never moves a pixel: the pages look exactly as without ocr. Read by Tesseract 5 from the image as scanned, before the profile downsamples it. Slow (seconds a page): a job's time limit is six times a compression's; a synchronous call reads at most 5 scanned pages (COMPRESS_SYNC_OCR_MAX_PAGES) and answers a file with more with 202 and the job it was queued as (async_reason); the report's ocr says how many pages were read. Every profile; not with target_size (400 invalid_ocr).`,
  },
  ocr_languages: {
    type: "string",
    default: "",
    example: "eng+deu",
    description: `The languages the scans are written in, one to ${MAX_OCR_LANGUAGES} of ${OCR_LANGUAGES.join(", ")} (Tesseract's ISO 639-2 codes) joined by + (or commas): eng unless told. Each one more is read on every page and slows it. Only with ocr=true (400 invalid_ocr_languages).`,
  },
  linearize: {
    type: "boolean",
    default: false,
    description:
      'true: the result is linearized ("fast web view", ISO 32000-1 Annex F): a browser or viewer reading it over HTTP shows the first page before the rest has arrived. It costs a few hundred bytes to a few per cent (docs/engine.md#options-beside-the-profile). A document that cannot be linearized (a damaged page tree, for one) is compressed without it, and the report\'s linearization says why. Every profile (400 invalid_linearize).',
  },
};
