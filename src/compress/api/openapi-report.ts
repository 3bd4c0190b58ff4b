// The OpenAPI description of the compression report (src/compress/report.ts,
// docs/compression-report.md), merged into /v1/openapi.json by openapi.ts.
import { OCR_LANGUAGES } from "../../pdf/index.ts";
import { REMOVED_KINDS } from "../report.ts";

const count = (description: string) => ({ type: "integer", minimum: 0, description });

export const reportSchemas = {
  CompressionReport: {
    type: "object",
    description:
      "What the compression changed. Present in every result made since the report exists (a job finished before has none). Fields may be added; none is removed or changes meaning.",
    required: [
      "original_returned",
      "ssim_floor",
      "fonts_subset",
      "images_recoded",
      "images_downsampled",
      "bytes_saved_by_kind",
      "removed",
      "signatures_removed",
      "repaired",
    ],
    properties: {
      original_returned: {
        type: "boolean",
        description:
          "True when nothing smaller came out and the upload is handed back as it was; the counts are then 0.",
      },
      ssim_floor: {
        type: ["number", "null"],
        minimum: 0,
        maximum: 1,
        description:
          "The structural similarity (SSIM, pages drawn at 100 dpi) every recoded image had to keep its page above; null for lossless, which changes no pixel.",
      },
      min_ssim: {
        type: ["number", "null"],
        minimum: -1,
        maximum: 1,
        description:
          "The lowest structural similarity (SSIM, luminance, pages drawn at 100 dpi) of any page whose pixels the compression changed, measured on the output against the upload (from the measurements the quality check made of each changed image where the page draws it; see docs/compression-report.md); rounded down to 4 decimals. null when no pixel changed. Absent from results stored before it existed.",
      },
      pages_checked: count(
        "How many pages min_ssim was measured on: every page whose pixels changed (0 when min_ssim is null).",
      ),
      fonts_subset: count("Embedded fonts cut down to the glyphs the document draws."),
      images_recoded: count("Images stored again (resampled, re-encoded or both)."),
      images_downsampled: count("Of those, how many were resampled to fewer pixels."),
      bytes_saved_by_kind: {
        type: "object",
        required: ["images", "fonts", "structure"],
        description:
          "original_size − compressed_size split by where it came from; the three add up to it. fonts is estimated from the font programs' sizes before stream compression (at most what images leave); structure is the rest: streams recompressed, objects removed or merged, cross-reference and object streams.",
        properties: { images: count("Bytes."), fonts: count("Bytes."), structure: count("Bytes.") },
      },
      removed: {
        type: "array",
        items: { type: "string", enum: [...REMOVED_KINDS] },
        description:
          "What was taken out, each kind once: active_content (JavaScript, launch actions, XFA scripts), private_data (/PieceInfo, thumbnails; extreme also metadata), unused_objects, duplicate_objects (merged), signatures, usage_rights (a form's Reader usage rights, /Perms /UR3, which any rewrite voids: always removed, never refused).",
      },
      signatures_removed: count("Digital signatures removed (signatures=remove); 0 otherwise."),
      repaired: {
        type: "array",
        items: { type: "string" },
        description:
          "Damage repaired while reading the file, e.g. cross_reference, stream_length, trailer, truncated; empty for a whole file.",
      },
      linearization: {
        type: "object",
        required: ["linearized"],
        description:
          "Present when linearize=true was asked: linearized true when the result is linearized (fast web view); false when the document could not be, with reason (page_tree: a page tree a reader would have to repair; unparsed_objects: objects that could not be parsed; catalog; output_invalid; too_large; layout), and the result is then compressed as without the option.",
        properties: {
          linearized: { type: "boolean" },
          reason: { type: "string", description: "Why not, when linearized is false." },
        },
      },
      ocr: {
        type: "object",
        required: [
          "pages_read",
          "pages_without_words",
          "pages_with_text",
          "pages_not_read",
          "pages_timed_out",
          "languages",
        ],
        description:
          "Present when ocr=true was asked: pages_read got an invisible text layer; pages_without_words were scans on which no word was found; pages_with_text already had text and were left as they were; pages_not_read were scans whose image could not be read (JPEG 2000 scans, inline images and JBIG2 with global segments are not read yet) or that the time limit cut short (pages_timed_out of them); languages, those read.",
        properties: {
          pages_read: count("Pages given a text layer."),
          pages_without_words: count("Scanned pages on which no word was found."),
          pages_with_text: count("Pages that already had text: left as they were."),
          pages_not_read: count("Scanned pages not read."),
          pages_timed_out: count("Of pages_not_read, those cut short by the time limit."),
          languages: { type: "array", items: { type: "string", enum: [...OCR_LANGUAGES] } },
        },
      },
    },
  },
};

export const reportProperty = { report: { $ref: "#/components/schemas/CompressionReport" } };
