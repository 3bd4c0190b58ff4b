// The public report's measured quality (src/compress/report.ts): min_ssim and pages_checked from
// the engine's page SSIM, null where no page changed or the upload came back, and the check a
// parent makes of what a child sent, which also takes reports stored before the fields existed.
import { describe, expect, it } from "vitest";
import { isReportBody, reportBody } from "../../src/compress/report.ts";
import type { CompressionReport } from "../../src/pdf/index.ts";

const engineReport = (quality: { minSsim: number | null; pagesChecked: number }, unchanged = false) =>
  ({
    images: {
      images: 2,
      recoded: 1,
      downsampled: 1,
      inlineConverted: 0,
      layered: 0,
      threads: 0,
      offThread: 0,
      bytesBefore: 1000,
      bytesAfter: 400,
      quality: { ...quality, imagesNotMeasured: 0, measureMs: 0.01 },
    },
    fonts: { subset: 0, bytesBefore: 0, bytesAfter: 0 },
    activeContent: {},
    discardedEntries: 0,
    removedObjects: 0,
    mergedObjects: 0,
    signaturesRemoved: 0,
    ...(unchanged ? { unchanged: "not_smaller" } : {}),
  }) as unknown as CompressionReport;

const run = { profile: "balanced" as const, inputSize: 2000, outputSize: 1400 };

describe("the report's measured quality", () => {
  it.each([
    // [engine's minSsim, pages, handed back, min_ssim, pages_checked]
    [0.987_654_3, 3, false, 0.9876, 3], // rounded down: never above what was measured
    [null, 0, false, null, 0],
    [0.95, 2, true, null, 0], // the upload came back: no pixel changed
  ] as const)("engine %s on %i pages (handed back: %s): %s on %i", (minSsim, pages, unchanged, expected, checked) => {
    const body = reportBody(engineReport({ minSsim, pagesChecked: pages }, unchanged), run);
    expect(body.min_ssim).toBe(expected);
    expect(body.pages_checked).toBe(checked);
    expect(isReportBody(body)).toBe(true);
  });

  it("a stored report without the fields is still a report; a wrong figure is not", () => {
    const body = reportBody(engineReport({ minSsim: 0.97, pagesChecked: 1 }), run);
    const older: Record<string, unknown> = { ...body };
    delete older["min_ssim"];
    delete older["pages_checked"];
    expect(isReportBody(older)).toBe(true);
    expect(isReportBody({ ...body, min_ssim: 1.5 })).toBe(false);
    expect(isReportBody({ ...body, min_ssim: "0.9" })).toBe(false);
    expect(isReportBody({ ...body, pages_checked: -1 })).toBe(false);
  });
});
