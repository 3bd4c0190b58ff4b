// What the engine hands back: the output, and the report of what each pass changed (made by
// compressPdf, compress.ts). Public through index.ts; the service maps it to its own stable shape
// (src/compress/report.ts).
import type { ContentReport } from "./content/compact.ts";
import type { FontReport } from "./fonts/subset.ts";
import type { BitonalReport } from "./images/bitonal-images.ts";
import type { ImageReport } from "./images/optimise.ts";
import type { OcrReport } from "./ocr/text-layers.ts";
import type { ActiveContentReport } from "./security/active-content.ts";
import type { StreamReport } from "./streams/recompress.ts";
import type { LinearizationReport } from "./structure/save.ts";

export type { LinearizationReport } from "./structure/save.ts";

export interface EngineOutput {
  output: Uint8Array;
  pages: number;
}

export interface CompressionReport {
  images?: ImageReport;
  /** 1-bit images re-coded losslessly as G4 or JBIG2 (every profile). */
  bitonal?: BitonalReport;
  fonts: FontReport;
  streams: StreamReport;
  /** Page content rewritten in fewer bytes (balanced, extreme). */
  content?: ContentReport;
  /** ICCBased sRGB colour spaces written as DeviceRGB (balanced, extreme). */
  srgbSpaces?: number;
  activeContent: ActiveContentReport;
  /** /PieceInfo, /Thumb and (extreme, or removeMetadata) metadata entries dropped. */
  discardedEntries: number;
  /** Objects nothing referred to, dropped. */
  removedObjects: number;
  /** Objects replaced by an identical copy. */
  mergedObjects: number;
  /** Signatures removed (signatures: "remove"); they would no longer have verified. */
  signaturesRemoved: number;
  /** Usage rights (/Perms /UR3) removed: a rewrite voids them (security/signatures.ts). */
  usageRightsRemoved?: true;
  /**
   * Why the input came back unchanged, if it did. A file from which active content was removed
   * is never given back unchanged for being no smaller: it comes back cleaned, and then
   * `larger` says it grew.
   */
  unchanged?: "not_smaller" | "write_failed" | "output_invalid";
  larger?: true;
  /**
   * What was rebuilt to read a damaged file, as readers rebuild it: "cross_reference",
   * "stream_length", "trailer", "truncated" (absent for an intact file). Public in the
   * compression report (src/compress/report.ts).
   */
  repaired?: string[];
  /** With grayscale: the images and content streams made gray. */
  grayscale?: { images: number; contentStreams: number };
  /** With ocr: the pages read, left (they had text), not read, and the languages. */
  ocr?: OcrReport;
  /** With targetSize: the step of the ladder that reached it (target.ts). */
  target?: TargetReport;
  /**
   * With linearize: whether the output is linearized; when it is not, why (the output is then
   * written as without the option): `reason` a stable word, `message` a sentence.
   */
  linearization?: LinearizationReport;
}

/** How the target was met: the step (0: the profile as it is) and how many runs it took. */
export interface TargetReport {
  targetSize: number;
  step: number;
  steps: number;
  runs: number;
}
