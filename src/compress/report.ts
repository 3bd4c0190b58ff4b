// The compression report: what the engine changed, in every result (the synchronous answer, the
// job resource and its webhook, the dashboard's result card) under `report`, beside the documented
// fields. A stable public shape (docs/compression-report.md), mapped from the engine's own report
// (src/pdf/compress.ts CompressionReport), which may change with the engine. Made in the engine's
// child process and checked by the parent like everything a child says (isReportBody).
import type { CompressionProfile, CompressionReport } from "../pdf/index.ts";
import { activeContentRemoved, PROFILE_SETTINGS } from "../pdf/index.ts";

/** What was taken out of the document; each kind named once, when something of it went. */
export const REMOVED_KINDS = [
  "active_content",
  "private_data",
  "unused_objects",
  "duplicate_objects",
  "signatures",
  "usage_rights",
] as const;

export type RemovedKind = (typeof REMOVED_KINDS)[number];

// A type alias, not an interface: Prisma's Json input takes it as it is.
export type CompressionReportBody = {
  /** True when the upload came back as it was (nothing smaller came out); the counts are then 0. */
  original_returned: boolean;
  /** The similarity every recoded image kept its page above (SSIM at 100 dpi); null: lossless. */
  ssim_floor: number | null;
  /**
   * The lowest SSIM, at 100 dpi, of a page whose pixels changed, measured on the output (the
   * quality check's measurements, src/pdf/images/page-quality.ts); null when no page changed.
   * Absent from reports stored before it existed.
   */
  min_ssim?: number | null;
  /** How many pages min_ssim was measured on: the pages changed. */
  pages_checked?: number;
  fonts_subset: number;
  images_recoded: number;
  images_downsampled: number;
  /** original_size − compressed_size, split by where it came from; the parts add up to it. */
  bytes_saved_by_kind: { images: number; fonts: number; structure: number };
  removed: RemovedKind[];
  signatures_removed: number;
  /** Damage repaired while reading (e.g. "cross_reference", "stream_length", "trailer", "truncated"). */
  repaired: string[];
  /**
   * Asked with linearize only: whether the result is linearized (fast web view); when it is not,
   * `reason` says why (e.g. "page_tree") and the result is compressed as without the option.
   */
  linearization?: { linearized: true } | { linearized: false; reason: string };
  /**
   * Asked with ocr only: the pages given a text layer (pages_read), the scanned pages on which no
   * word was found, the pages left as they were because they had text, the scanned pages not
   * read (an image format OCR does not read, or out of time: pages_timed_out of them), and the
   * languages read.
   */
  ocr?: {
    pages_read: number;
    pages_without_words: number;
    pages_with_text: number;
    pages_not_read: number;
    pages_timed_out: number;
    languages: string[];
  };
};

/** The public report of one engine run on an input of `inputSize` bytes that gave `outputSize`. */
export function reportBody(
  report: CompressionReport,
  run: { profile: CompressionProfile | undefined; inputSize: number; outputSize: number },
): CompressionReportBody {
  const returned = report.unchanged !== undefined;
  const floor = run.profile ? (PROFILE_SETTINGS[run.profile].images?.minSsim ?? null) : null;
  const total = Math.max(0, run.inputSize - run.outputSize);
  const images = returned || !report.images ? 0 : Math.max(0, report.images.bytesBefore - report.images.bytesAfter);
  const fonts = returned ? 0 : Math.max(0, report.fonts.bytesBefore - report.fonts.bytesAfter);
  const imagesSaved = Math.min(images, total);
  // Font sizes are of the programs before stream compression: at most what is left to explain.
  const fontsSaved = Math.min(fonts, total - imagesSaved);
  return {
    original_returned: returned,
    ssim_floor: floor,
    ...measured(returned ? undefined : report.images?.quality),
    fonts_subset: returned ? 0 : report.fonts.subset,
    images_recoded: returned ? 0 : (report.images?.recoded ?? 0),
    images_downsampled: returned ? 0 : (report.images?.downsampled ?? 0),
    bytes_saved_by_kind: { images: imagesSaved, fonts: fontsSaved, structure: total - imagesSaved - fontsSaved },
    removed: returned ? [] : removedKinds(report),
    signatures_removed: returned ? 0 : report.signaturesRemoved,
    repaired: [...(report.repaired ?? [])],
    ...(report.linearization ? { linearization: linearizationBody(report.linearization) } : {}),
    ...(report.ocr ? { ocr: ocrBody(report.ocr) } : {}),
  };
}

/** The page SSIM measured, rounded to 4 decimals (the floor's precision and then some). */
function measured(quality: NonNullable<CompressionReport["images"]>["quality"] | undefined) {
  const minSsim = quality?.minSsim ?? null;
  return {
    min_ssim: minSsim === null ? null : Math.floor(minSsim * 10_000) / 10_000,
    pages_checked: minSsim === null ? 0 : quality!.pagesChecked,
  };
}

function ocrBody(ocr: NonNullable<CompressionReport["ocr"]>): NonNullable<CompressionReportBody["ocr"]> {
  return {
    pages_read: ocr.pagesRead,
    pages_without_words: ocr.pagesWithoutWords,
    pages_with_text: ocr.pagesWithText,
    pages_not_read: ocr.pagesNotRead,
    pages_timed_out: ocr.pagesTimedOut,
    languages: [...ocr.languages],
  };
}

const OCR_COUNTS = ["pages_read", "pages_without_words", "pages_with_text", "pages_not_read", "pages_timed_out"];

const isOcrBody = (value: unknown) =>
  value === undefined ||
  (isObject(value) &&
    OCR_COUNTS.every((k) => isCount(value[k])) &&
    Array.isArray(value["languages"]) &&
    value["languages"].every((code) => typeof code === "string" && /^[a-z]{3}$/.test(code)));

function linearizationBody(linearization: NonNullable<CompressionReport["linearization"]>) {
  return linearization.linearized
    ? { linearized: true as const }
    : { linearized: false as const, reason: linearization.reason };
}

function removedKinds(report: CompressionReport): RemovedKind[] {
  const counts: Record<RemovedKind, number> = {
    active_content: activeContentRemoved(report.activeContent),
    private_data: report.discardedEntries,
    unused_objects: report.removedObjects,
    duplicate_objects: report.mergedObjects,
    signatures: report.signaturesRemoved,
    usage_rights: report.usageRightsRemoved ? 1 : 0,
  };
  return REMOVED_KINDS.filter((kind) => counts[kind] > 0);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;

const isLinearization = (value: unknown) =>
  value === undefined ||
  (isObject(value) &&
    (value["linearized"] === true ||
      (value["linearized"] === false &&
        typeof value["reason"] === "string" &&
        /^[a-z_]{1,40}$/.test(value["reason"]))));

/** A report as a child sent it: the parent takes nothing else. */
export function isReportBody(value: unknown): value is CompressionReportBody {
  if (!isObject(value) || !isObject(value["bytes_saved_by_kind"])) return false;
  const saved = value["bytes_saved_by_kind"];
  const floor = value["ssim_floor"];
  const min = value["min_ssim"];
  return (
    typeof value["original_returned"] === "boolean" &&
    (floor === null || (typeof floor === "number" && floor >= 0 && floor <= 1)) &&
    (min === undefined || min === null || (typeof min === "number" && min >= -1 && min <= 1)) &&
    (value["pages_checked"] === undefined || isCount(value["pages_checked"])) &&
    ["fonts_subset", "images_recoded", "images_downsampled", "signatures_removed"].every((k) => isCount(value[k])) &&
    ["images", "fonts", "structure"].every((k) => isCount(saved[k])) &&
    Array.isArray(value["removed"]) &&
    value["removed"].every((kind) => (REMOVED_KINDS as readonly unknown[]).includes(kind)) &&
    Array.isArray(value["repaired"]) &&
    value["repaired"].every((what) => typeof what === "string" && /^[a-z_]{1,40}$/.test(what)) &&
    isLinearization(value["linearization"]) &&
    isOcrBody(value["ocr"])
  );
}
