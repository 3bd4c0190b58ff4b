// The dashboard's view of a compression report (src/compress/report.ts): what changed, under the
// result's figures on Try it, in the words of docs/compression-report.md.
import type { CompressionReportBody, RemovedKind } from "../compress/report.ts";
import { html, type Html } from "./html.ts";

const REMOVED_TEXT: Record<RemovedKind, string> = {
  active_content: "active content (JavaScript, launch actions)",
  private_data: "private application data and thumbnails",
  unused_objects: "objects nothing referred to",
  duplicate_objects: "duplicate objects (merged)",
  signatures: "digital signatures",
  usage_rights: "Reader usage rights, which any change voids",
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The lowest page SSIM measured, in words (none for a report made before it was measured). */
function measuredQuality({ min_ssim, pages_checked, original_returned }: CompressionReportBody): string | undefined {
  if (min_ssim === undefined || original_returned) return undefined;
  if (min_ssim === null) return "no page's pixels changed";
  return `lowest page SSIM ${min_ssim.toFixed(4)} at 100 dpi, measured on the ${plural(pages_checked ?? 0, "page", "pages")} changed`;
}

/** "What changed": the report as a definition list; `bytes` formats the byte counts. */
export function reportCard(report: CompressionReportBody, bytes: (n: number) => string): Html {
  const saved = report.bytes_saved_by_kind;
  const rows: [string, string][] = report.original_returned
    ? [["Result", "Nothing smaller came out: the file is handed back as it was."]]
    : [
        ["Fonts subset", plural(report.fonts_subset, "font", "fonts")],
        [
          "Images recoded",
          `${plural(report.images_recoded, "image", "images")} (${report.images_downsampled} downsampled)`,
        ],
        [
          "Saved by kind",
          `images ${bytes(saved.images)}, fonts ${bytes(saved.fonts)}, structure ${bytes(saved.structure)}`,
        ],
        ["Removed", report.removed.map((kind) => REMOVED_TEXT[kind]).join("; ") || "nothing"],
      ];
  if (report.signatures_removed > 0) {
    rows.push(["Signatures removed", `${report.signatures_removed}: the document is no longer signed`]);
  }
  if (report.ssim_floor !== null) rows.push(["Image quality floor", `SSIM ${report.ssim_floor} per page at 100 dpi`]);
  const quality = measuredQuality(report);
  if (quality) rows.push(["Image quality kept", quality]);
  if (report.repaired.length > 0) rows.push(["Repaired", report.repaired.join(", ")]);
  if (report.linearization) {
    const { linearization } = report;
    rows.push([
      "Fast web view",
      linearization.linearized
        ? "linearized: the first page shows before the rest arrives"
        : `not linearized: ${linearization.reason}`,
    ]);
  }
  if (report.ocr) {
    const { ocr } = report;
    rows.push([
      "OCR",
      `${ocr.pages_read} page${ocr.pages_read === 1 ? "" : "s"} made searchable (${ocr.languages.join(", ")}); ` +
        `${ocr.pages_with_text} had text already` +
        (ocr.pages_not_read > 0 ? `; ${ocr.pages_not_read} not read` : ""),
    ]);
  }
  return html`<h3>What changed</h3>
    <dl class="report">
      ${rows.map(
        ([term, text]) =>
          html`<dt>${term}</dt>
            <dd>${text}</dd>`,
      )}
    </dl>`;
}
