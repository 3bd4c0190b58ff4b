// The report's measure of what the pages kept: the lowest SSIM, at 100 dpi, of any page whose
// pixels the image pass changed, made from the quality check's own measurements rather than a
// second rendering (the engine has no renderer; docs/compression-report.md).
//
// A page's SSIM is the mean over its windows. Where nothing changed, a window of the output is the
// input's, and scores 1; the windows over an image score what the check measured for the image
// drawn at its size on the page (quality.ts draws as pdftoppm does). So a page keeps
//   1 - sum over its changed images of (share of the page the image covers) x (1 - image's SSIM).
// Checked against pdftoppm's renderings of input and output: test/pdf/images/page-quality.test.ts.
import type { Placement } from "../shared/placement.ts";
import type { Replacement } from "./candidates.ts";

export interface PageQuality {
  /** The lowest page SSIM over the pages changed; null when no page's pixels changed. */
  minSsim: number | null;
  /** Pages changed and measured. */
  pagesChecked: number;
  /** Images changed whose pages are not known (the content could not be followed): not in the figure. */
  imagesNotMeasured: number;
  /** Milliseconds spent on the figure beyond the quality check's own work (bench:compress adds them up). */
  measureMs: number;
}

/** Page SSIMs made up from the images changed, one at a time. */
export class PageQualityTally {
  /** What each page lost: the sum of share x (1 - SSIM) of its changed images. */
  private readonly losses = new Map<number, number>();
  private notMeasured = 0;
  private spentMs = 0;

  /** An image's replacement, drawn where `placement` says. */
  add(replacement: Replacement, placement: Placement | undefined): void {
    const started = performance.now();
    this.tally(replacement, placement);
    this.spentMs += (replacement.lookMs ?? 0) + performance.now() - started;
  }

  private tally({ look }: Replacement, placement: Placement | undefined): void {
    if (look === "same") return;
    if (look === undefined || !placement?.pages) {
      this.notMeasured++;
      return;
    }
    for (const [page, share] of placement.pages) {
      this.losses.set(page, (this.losses.get(page) ?? 0) + share * (1 - look));
    }
  }

  result(): PageQuality {
    let worst: number | undefined;
    for (const loss of this.losses.values()) worst = Math.max(worst ?? 0, loss);
    return {
      // SSIM is at least -1 (each window's is).
      minSsim: worst === undefined ? null : Math.max(-1, 1 - worst),
      pagesChecked: this.losses.size,
      imagesNotMeasured: this.notMeasured,
      measureMs: this.spentMs,
    };
  }
}
