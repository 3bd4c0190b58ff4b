// A target size (the targetSize option): the smallest loss that brings the output under it.
//
// The profile runs first, as it would without a target: when its output fits, that is the answer.
// Otherwise the images go down a ladder of settings, each step a lower resolution, a lower JPEG
// quality and a lower quality floor than the one before, down to the floor: every image the
// engine checks keeps an SSIM of at least TARGET_FLOOR_SSIM with the original on its page, drawn at
// 100 dpi (images/quality.ts), and no step goes below it. The lowest step that fits is found by
// bisection (the output shrinks as the steps go down), so a file takes the profile's run, the
// floor's, and two or three between. When even the floor does not fit, TargetUnreachable carries
// the smallest size reached. Steps never undo the profile: each is at most the profile's
// resolution and quality, and the caller's maxImagePpi holds on every step.
import type { CompressionReport, EngineOutput } from "./report.ts";
import { TargetUnreachable } from "./shared/errors.ts";
import type { ImageSettings, ProfileSettings } from "./shared/profiles.ts";

/** The least SSIM any checked image keeps on its page, on every step. */
export const TARGET_FLOOR_SSIM = 0.8;

/** A step of the ladder: what an image may become. */
interface Step {
  ppi: number;
  jpegQuality: number;
  minSsim: number;
  minImageSsim: number;
}

/** From the profile's own settings down to the floor (the last step). */
const LADDER: readonly Step[] = [
  { ppi: 120, jpegQuality: 60, minSsim: 0.93, minImageSsim: 0.88 },
  { ppi: 100, jpegQuality: 50, minSsim: 0.9, minImageSsim: 0.86 },
  { ppi: 72, jpegQuality: 40, minSsim: 0.87, minImageSsim: 0.84 },
  { ppi: 60, jpegQuality: 35, minSsim: 0.84, minImageSsim: 0.82 },
  { ppi: 50, jpegQuality: 30, minSsim: TARGET_FLOOR_SSIM, minImageSsim: TARGET_FLOOR_SSIM },
];

/** The longest side of an image the pages were not seen to draw, in proportion to the resolution. */
const SIDE_PER_PPI = 2000 / 150;

/** The profile's image settings at a step: never above the profile's resolution or quality. */
export function stepImages(images: ImageSettings, step: Step): ImageSettings {
  return {
    ...images,
    // The step's resolution is a target, not a cap: an image the floor keeps larger stays so
    // (images.maxPpi, the caller's cap, holds).
    targetPpi: Math.min(images.targetPpi, step.ppi),
    downsampleThreshold: Math.min(images.downsampleThreshold, 1.1),
    jpegQuality: Math.min(images.jpegQuality, step.jpegQuality),
    minSsim: Math.min(images.minSsim, step.minSsim),
    minImageSsim: Math.min(images.minImageSsim, step.minImageSsim),
    maxSide: Math.min(images.maxSide, Math.round(step.ppi * SIDE_PER_PPI)),
    losslessSourcesOnly: false,
    // Tried on an image the step leaves as it was: the profile's own.
    fallback: images,
  };
}

/**
 * Runs `run` with the profile's settings, then with steps of the ladder, and answers the output
 * of the first (least lossy) that fits in `targetSize`; rejects with TargetUnreachable when none does.
 */
export async function compressToTarget(
  inputSize: number,
  settings: ProfileSettings,
  targetSize: number,
  run: (settings: ProfileSettings, onReport: (report: CompressionReport) => void) => Promise<EngineOutput>,
  onReport?: (report: CompressionReport) => void,
): Promise<EngineOutput> {
  let runs = 0;
  let smallest = inputSize;
  const attempt = async (step: number) => {
    const stepSettings =
      step === 0 || !settings.images
        ? settings
        : { ...settings, images: stepImages(settings.images, LADDER[step - 1]!) };
    let report: CompressionReport | undefined;
    const result = await run(stepSettings, (r) => (report = r));
    runs++;
    smallest = Math.min(smallest, result.output.length);
    return { result, report, fits: result.output.length <= targetSize };
  };
  const answer = (step: number, found: Awaited<ReturnType<typeof attempt>>) => {
    if (found.report) onReport?.({ ...found.report, target: { targetSize, step, steps: LADDER.length, runs } });
    return found.result;
  };
  const profile = await attempt(0);
  if (profile.fits || !settings.images) {
    if (profile.fits) return answer(0, profile);
    throw new TargetUnreachable(targetSize, smallest);
  }
  const floor = await attempt(LADDER.length);
  if (!floor.fits) throw new TargetUnreachable(targetSize, smallest);
  // Bisection between the profile (too large) and the floor (fits).
  let [low, high, best] = [0, LADDER.length, floor];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const tried = await attempt(middle);
    if (tried.fits) [high, best] = [middle, tried];
    else low = middle;
  }
  return answer(high, best);
}
