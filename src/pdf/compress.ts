// compressPdf: bytes in, smaller bytes out, same pages. The passes, in order: active content out
// (every profile), private data and metadata out (as the profile or removeMetadata says),
// unreferenced objects and duplicates out, fonts embedded whole subset to the glyphs drawn
// (fonts/subset.ts, every profile), colours to gray (the grayscale option), images
// (images/optimise.ts), lossless stream re-encoding (streams/recompress.ts), duplicates again, and
// the writer (object streams, objects renumbered; linearized with the linearize option). The options (shared/options.ts) change the settings;
// a target size runs the passes again down a ladder of image settings (target.ts). A signed
// document is refused (signed_document) unless its signatures are to be removed
// (security/signatures.ts): any rewrite breaks them. The input comes back unchanged when the
// output would not be smaller, except when active content was removed or the options change what
// the pages or metadata say: a file is never handed back with its JavaScript for the sake of a
// few bytes, and refused (unsupported_pdf) when the cleaned document cannot be written back.
import { availableParallelism } from "node:os";
import type { PDFContext } from "@cantoo/pdf-lib";
import { compactContentStreams } from "./content/compact.ts";
import { grayPageContent } from "./content/grayscale.ts";
import { cutPressProfiles } from "./content/press-profiles.ts";
import { srgbAsDeviceRgb } from "./content/srgb.ts";
import { subsetFonts } from "./fonts/subset.ts";
import { recodeBitonalImages } from "./images/bitonal-images.ts";
import { grayImages, grayLeftovers } from "./images/grayscale.ts";
import { optimiseImages } from "./images/optimise.ts";
import { addTextLayers } from "./ocr/text-layers.ts";
import type { CompressionReport, EngineOutput } from "./report.ts";
import { activeContentRemoved, removeActiveContent } from "./security/active-content.ts";
import { handleSignatures, removeUsageRights } from "./security/signatures.ts";
import { defaultConcurrency } from "./shared/bounded-jobs.ts";
import { PdfRejected } from "./shared/errors.ts";
import { OCR_PAGE_TIMEOUT_MS, OCR_TIME_BUDGET_MS, optionProblem, settingsFor } from "./shared/options.ts";
import type { OcrLanguage } from "./shared/options.ts";
import type { EngineOptions } from "./shared/options.ts";
import { isCompressionProfile } from "./shared/profiles.ts";
import type { CompressionProfile, ProfileSettings } from "./shared/profiles.ts";
import { deflateAttachmentsAhead, recompressStreamsAfter } from "./streams/recompress.ts";
import { catalogXmp, discardMetadata, discardPrivateData, pdfAPart, removeAllMetadata } from "./structure/cleanup.ts";
import { mergeDuplicates } from "./structure/dedup.ts";
import { openPdf } from "./structure/load.ts";
import { removeUnreachableObjects } from "./structure/prune.ts";
import { readsBack, saveDocument, saveLinearized } from "./structure/save.ts";
import { compressToTarget } from "./target.ts";

export type { CompressionReport, EngineOutput } from "./report.ts";
export type { EngineOptions, SignaturePolicy } from "./shared/options.ts";

/** The input handed back as it came keeps its signatures, and they still verify. */
const KEPT_AS_IT_WAS = { signaturesRemoved: 0 } as const;

const ACTIVE_CONTENT_STUCK =
  "The PDF contains active content (JavaScript or launch actions), and it could not be written back without it.";

const OPTIONS_STUCK =
  "The PDF could not be written back with the options asked (grayscale, remove_metadata, linearize, ocr).";

const REPAIR_STUCK = "The PDF is damaged, and the document rebuilt from it could not be written back.";

/**
 * Told how far a run is, as pages done of the document's pages: 0 of them once it is open, then each
 * page OCR has read (the pages it does not read count as done when it starts); the caller knows
 * the run has done them all when it returns.
 */
export type EngineProgress = (pagesDone: number, pagesTotal: number) => void;

/** compressPdf's options, and whom to tell its progress. */
type RunOptions = EngineOptions & { onProgress?: EngineProgress };

/** The OCR pass (ocr/text-layers.ts): the languages checked by optionProblem. */
const readScans = (context: PDFContext, options: RunOptions, pages: number) =>
  addTextLayers(context, {
    languages: (options.ocrLanguages ?? ["eng"]) as OcrLanguage[],
    pageTimeoutMs: OCR_PAGE_TIMEOUT_MS,
    timeBudgetMs: options.ocrTimeBudgetMs ?? OCR_TIME_BUDGET_MS,
    ...(options.ocrPageLimit !== undefined ? { pageLimit: options.ocrPageLimit } : {}),
    onPage: (done, of) => options.onProgress?.(pages - of + done, pages),
  });

/** Press profiles cut to what readers draw with, and sRGB profiles written as DeviceRGB (content/). */
function colourProfiles(context: PDFContext, settings: ProfileSettings): number | undefined {
  if (settings.cutPressProfiles) cutPressProfiles(context);
  return settings.srgbAsDeviceRgb ? srgbAsDeviceRgb(context) : undefined;
}

/** What one stream may decode to in the stream pass: within the memory budget of 3 x the input + 200 MB. */
const maxDecodedOf = (input: Uint8Array) => 32 * 1024 * 1024 + input.length;

/** The passes of a profile over the document; the output is undefined when writing failed. */
async function rewrite(
  input: Uint8Array,
  settings: ProfileSettings,
  options: RunOptions,
): Promise<{ output: Uint8Array | undefined; pages: number; report: CompressionReport }> {
  const { doc, pages, repaired } = await openPdf(input);
  options.onProgress?.(0, pages);
  const { context } = doc;
  const signaturesRemoved = handleSignatures(context, options.signatures);
  const usageRightsRemoved = removeUsageRights(context);
  const activeContent = removeActiveContent(context);
  let discarded = settings.discardPrivateData ? discardPrivateData(context) : 0;
  if (settings.removeMetadata) discarded += removeAllMetadata(context);
  else if (settings.discardMetadata) discarded += discardMetadata(context);
  // Dead objects and copies go first, so that the expensive passes do not work on them.
  let removedObjects = removeUnreachableObjects(context);
  let mergedObjects = mergeDuplicates(context).merged;
  // Attachments deflated on the thread pool beside the passes below, which leave them as they are.
  const attachments = deflateAttachmentsAhead(context, maxDecodedOf(input));
  // Visually lossless: in every profile. After the merge, so that a font copied per page is subset once.
  const fonts = await subsetFonts(context);
  // Before the bi-tonal and image passes: the scans are read as they were stored, at full resolution.
  const ocr = options.ocr ? await readScans(doc.context, options, pages) : undefined;
  // Lossless, in every profile; before the image pass, whose text masks are made as they should be.
  const bitonal = await recodeBitonalImages(context, {
    concurrency: defaultConcurrency(),
    memoryBudget: Math.min(64 * 1024 * 1024 + input.length, 256 * 1024 * 1024),
  });
  // Before the image pass, which then recodes the gray images (and checks them against the gray),
  // and makes gray candidates of the RGB JPEGs handed over (images/grayscale.ts).
  const gray = settings.grayscale ? await grayImages(context, settings.images !== undefined) : undefined;
  const grayContent = settings.grayscale ? grayPageContent(context) : 0;
  const images = settings.images
    ? await optimiseImages(
        context,
        settings.images,
        {
          concurrency: defaultConcurrency(),
          workerThreads: input.length >= WORKERS_MIN_INPUT_BYTES ? availableParallelism() - 1 : 0,
          // What images being recoded may hold at once: within the memory budget of 3 x the input +
          // 200 MB (at most 1.2 GiB), beside Node and its modules (about 100 MB), the input, the
          // parsed document and the output.
          memoryBudget: Math.min(64 * 1024 * 1024 + input.length, 256 * 1024 * 1024),
        },
        gray?.handedOver,
      )
    : undefined;
  const grayscale = gray && {
    images: gray.changed + (await grayLeftovers(context, gray.handedOver, images?.replaced ?? new Set())),
    contentStreams: grayContent,
  };
  // After the font and image passes (which read the content as it came), before the stream pass.
  const content = settings.compactContent ? compactContentStreams(context) : undefined;
  const skip = new Set([...(images?.replaced ?? []), ...bitonal.replaced]);
  const plainMetadata = pdfAPart(catalogXmp(context)) !== undefined;
  const streamOptions = { skip, plainMetadata, maxDecoded: maxDecodedOf(input) };
  const streams = await recompressStreamsAfter(context, streamOptions, attachments);
  // After the stream pass, which strips a JPEG's own ICC profile only where the colour space has one.
  const srgbSpaces = colourProfiles(context, settings);
  // Streams that were stored differently may have become the same.
  mergedObjects += mergeDuplicates(context).merged;
  removedObjects += removeUnreachableObjects(context);
  const report: CompressionReport = {
    ...(images ? { images: images.report } : {}),
    ...(bitonal.report.recoded > 0 ? { bitonal: bitonal.report } : {}),
    ...(grayscale ? { grayscale } : {}),
    fonts,
    streams,
    ...(content ? { content } : {}),
    ...(srgbSpaces ? { srgbSpaces } : {}),
    ...(ocr ? { ocr } : {}),
    activeContent,
    discardedEntries: discarded,
    removedObjects,
    mergedObjects,
    signaturesRemoved,
    ...(usageRightsRemoved ? { usageRightsRemoved } : {}),
    ...(repaired.length > 0 ? { repaired } : {}),
  };
  let output: Uint8Array | undefined;
  try {
    if (settings.linearize) {
      const saved = await saveLinearized(doc, pages);
      output = saved.output;
      report.linearization = saved.linearization;
    } else {
      output = await saveDocument(doc);
    }
  } catch {
    output = undefined;
  }
  return { output, pages, report };
}

/**
 * Compresses a PDF with a profile and options (shared/options.ts). Resolves with the input itself when
 * nothing smaller came out (unless active content had to be removed, or the options change what
 * the pages show); rejects with PdfRejected when the input is not a PDF, is encrypted, is damaged,
 * or is signed (unless `options.signatures` is "remove"), and with TargetUnreachable when
 * `options.targetSize` cannot be reached above the quality floor. Options the profile cannot
 * honour (optionProblem) are a TypeError: the caller checks them first. `options.onProgress` is
 * told the pages done (EngineProgress).
 */
export async function compressPdf(
  input: Uint8Array,
  profile: CompressionProfile,
  onReport?: (report: CompressionReport) => void,
  options: RunOptions = {},
): Promise<EngineOutput> {
  if (!isCompressionProfile(profile)) throw new TypeError(`unknown compression profile: ${String(profile)}`);
  const problem = optionProblem(profile, options);
  if (problem) throw new TypeError(`option ${problem.option} ${problem.message}`);
  const settings = settingsFor(profile, options);
  if (options.targetSize === undefined) return compressWith(input, settings, options, onReport);
  const run = (step: ProfileSettings, report: (r: CompressionReport) => void) =>
    compressWith(input, step, options, report);
  return compressToTarget(input.length, settings, options.targetSize, run, onReport);
}

/**
 * Inputs from this size may have their images recoded on worker threads as well as the main
 * thread (images/recode-workers.ts). A thread holds some 35 MiB of its own, and the main thread
 * then holds its own images besides: the 100 MB scan-like file peaked at 495 MiB with one (434-440
 * without), over its budget (3 x the input + 200 MB: 488 MiB). From here the budget (584 MiB and
 * up) has room.
 */
const WORKERS_MIN_INPUT_BYTES = 128 * 1024 * 1024;

/** One run of the passes with these settings; see compressPdf. */
async function compressWith(
  input: Uint8Array,
  settings: ProfileSettings,
  options: RunOptions,
  onReport?: (report: CompressionReport) => void,
): Promise<EngineOutput> {
  // The document is out of scope once written: reading the output back does not hold both.
  const { output, pages, report } = await rewrite(input, settings, options);
  const cleaned = activeContentRemoved(report.activeContent) > 0;
  // A repaired file is never handed back as it came, damaged, for the sake of a few bytes; nor
  // one whose pages or metadata the caller asked to change.
  // A linearized output is what was asked for, even a few bytes larger than the input.
  const asked =
    settings.grayscale === true ||
    settings.removeMetadata === true ||
    report.linearization?.linearized === true ||
    (report.ocr?.pagesRead ?? 0) > 0;
  const mustRewrite = cleaned || report.repaired !== undefined || asked;
  const unchanged = (why: "write_failed" | "output_invalid"): EngineOutput => {
    // The input still holds the JavaScript we must not hand back: refuse rather than return it.
    if (cleaned) throw new PdfRejected("unsupported_pdf", ACTIVE_CONTENT_STUCK);
    if (asked) throw new PdfRejected("unsupported_pdf", OPTIONS_STUCK);
    if (report.repaired) throw new PdfRejected("corrupted_pdf", REPAIR_STUCK);
    onReport?.({ ...report, ...KEPT_AS_IT_WAS, unchanged: why });
    return { output: input, pages };
  };
  if (!output) return unchanged("write_failed");
  if (output.length >= input.length && !mustRewrite) {
    onReport?.({ ...report, ...KEPT_AS_IT_WAS, unchanged: "not_smaller" });
    return { output: input, pages };
  }
  // A linearized output was read back as it was written (saveLinearized).
  const verified = report.linearization?.linearized === true;
  if (!verified && !(await readsBack(output, pages))) return unchanged("output_invalid");
  onReport?.(output.length > input.length ? { ...report, larger: true } : report);
  return { output, pages };
}
