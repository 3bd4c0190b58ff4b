// bench:compress --against (bench/pdf/against.ts): larger, hungrier and worse-looking outputs are
// always news; slower only past the spread of gs's own times between the two runs, as the
// engine's ratio to gs on the same file.
import { describe, expect, it } from "vitest";
import { compareWithBaseline, type Baseline } from "../../bench/pdf/against.ts";
import type { FileResult } from "../../bench/pdf/aggregate.ts";

type Run = { bytes: number; seconds: number; peakMiB: number; ssim: number };

/** A run's results: per file, the engine's and gs's figures. */
function results(files: Record<string, { engine: Run; gs: Run }>): FileResult[] {
  const result = (id: string, r: Run) => ({
    id,
    run: { status: "ok" as const, wallMs: r.seconds * 1000, peakRssKb: r.peakMiB * 1024 },
    output: { size: r.bytes, minSsim: r.ssim },
  });
  return Object.entries(files).map(([name, f]) => ({
    name,
    category: "text",
    size: 1000,
    results: [result("engine:balanced", f.engine), result("gs:ebook", f.gs)],
  })) as unknown as FileResult[];
}

const same = (n: number): { engine: Run; gs: Run } => ({
  engine: { bytes: 500 + n, seconds: 1, peakMiB: 100, ssim: 0.99 },
  gs: { bytes: 600 + n, seconds: 0.5, peakMiB: 30, ssim: 0.98 },
});

function baselineOf(files: FileResult[]): Baseline {
  const b = compareWithBaseline({ recordedAt: "", commit: "", loadAverage: [], files: {} }, files);
  expect(b.news).toBe(0);
  const figures: Baseline["files"] = {};
  for (const f of files) {
    figures[f.name] = Object.fromEntries(
      f.results.map((r) => [
        r.id,
        {
          bytes: r.output!.size,
          seconds: r.run.wallMs / 1000,
          peakMiB: r.run.peakRssKb! / 1024,
          ssim: r.output!.minSsim,
        },
      ]),
    );
  }
  return { recordedAt: "2026-12-05T00:00:00Z", commit: "abc", loadAverage: [1], files: figures };
}

describe("bench:compress --against", () => {
  const files = Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`f${n}.pdf`, same(n)]));
  const baseline = baselineOf(results(files));

  it("finds nothing in the same figures", () => {
    expect(compareWithBaseline(baseline, results(files)).lines).toEqual([]);
  });

  it("flags a byte more, 10 % more memory plus 8 MiB, and a lower SSIM, whatever the noise", () => {
    const now = {
      ...files,
      "f1.pdf": { ...same(1), engine: { ...same(1).engine, bytes: 502 } },
      "f2.pdf": { ...same(2), engine: { ...same(2).engine, peakMiB: 119 } },
      "f3.pdf": { ...same(3), engine: { ...same(3).engine, peakMiB: 117, ssim: 0.98 } },
    };
    const { lines } = compareWithBaseline(baseline, results(now));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/f1\.pdf engine:balanced: larger 501 -> 502 B/);
    expect(lines[1]).toMatch(/f2\.pdf engine:balanced: hungrier 100 -> 119 MiB/);
    expect(lines[2]).toMatch(/f3\.pdf engine:balanced: worse-looking SSIM 0\.9900 -> 0\.9800$/);
  });

  it("flags slower only past how far gs's own times moved between the runs", () => {
    // A busier machine: gs 40 % slower on every file, the engine too, and 2x on one file.
    const busier = (n: number, engineSeconds: number) => ({
      engine: { ...same(n).engine, seconds: engineSeconds },
      gs: { ...same(n).gs, seconds: 0.7 },
    });
    const now = {
      ...Object.fromEntries([1, 2, 3, 4].map((n) => [`f${n}.pdf`, busier(n, 1.4)])),
      "f5.pdf": busier(5, 2.8),
    };
    const comparison = compareWithBaseline(baseline, results(now));
    expect(Math.exp(comparison.noise)).toBeCloseTo(1.4, 5);
    expect(comparison.lines).toEqual(["  f5.pdf engine:balanced: slower 2.00x -> 4.00x gs's time (1 -> 2.8 s)"]);
  });
});
