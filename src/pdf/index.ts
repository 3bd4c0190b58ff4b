// The compression engine: bytes in, bytes out. It knows nothing of HTTP, files or processes.
export { compressPdf } from "./compress.ts";
export type { EngineProgress } from "./compress.ts";
export type { CompressionReport, EngineOutput } from "./report.ts";
export { isPdfRejectedCode, PDF_REJECTED_CODES, PdfRejected, TargetUnreachable } from "./shared/errors.ts";
export {
  MAX_IMAGE_PPI,
  MAX_OCR_LANGUAGES,
  MIN_IMAGE_PPI,
  MIN_TARGET_SIZE,
  OCR_LANGUAGES,
  optionProblem,
} from "./shared/options.ts";
export type { EngineOptions, OcrLanguage, OptionProblem, SignaturePolicy } from "./shared/options.ts";
export type { OcrReport } from "./ocr/text-layers.ts";
export { OcrPageLimit } from "./ocr/text-layers.ts";
export { TARGET_FLOOR_SSIM } from "./target.ts";
export type { PdfRejectedCode } from "./shared/errors.ts";
export { COMPRESSION_PROFILES, isCompressionProfile, PROFILE_SETTINGS } from "./shared/profiles.ts";
export type { CompressionProfile, ImageSettings, ProfileSettings } from "./shared/profiles.ts";
export { MAX_IMAGE_PIXELS } from "./images/optimise.ts";
export { activeContentRemoved } from "./security/active-content.ts";
export { unlockPdf } from "./unlock.ts";
export { findHeader as findPdfHeader, HEADER_WINDOW as PDF_HEADER_WINDOW } from "./structure/load.ts";
export { isRegular as isPdfRegular, isWhite as isPdfWhiteSpace } from "./shared/syntax.ts";
export { warmUp } from "./warm-up.ts";
