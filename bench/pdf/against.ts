// bench:compress's memory of a run (--record FILE) and its comparison with one (--against FILE),
// issue 42 item 6: a figure that got worse is news. A baseline keeps, per file and contender, the
// output's bytes, the wall time, the peak memory and the worst page SSIM. Against it, a run says
// which engine outputs got larger (the engine is deterministic: any byte is news), slower beyond
// the run-to-run noise, hungrier, or worse-looking. The noise is measured in the same run: gs does
// not change between two runs, so how far its times moved, file by file, is what the machine's
// neighbours did; the engine's time is compared as its ratio to gs's on the same file, in the
// same run, and flagged only past that spread.
import { readFile, writeFile } from "node:fs/promises";
import type { FileResult } from "./aggregate.ts";

interface Figures {
  bytes: number | null;
  seconds: number;
  peakMiB: number | null;
  ssim: number | null;
}

export interface Baseline {
  recordedAt: string;
  commit: string;
  loadAverage: number[];
  files: Record<string, Record<string, Figures>>;
}

const figuresOf = (files: FileResult[]): Baseline["files"] =>
  Object.fromEntries(
    files.map((f) => [
      f.name,
      Object.fromEntries(
        f.results
          .filter((r) => r.run.status === "ok")
          .map((r) => [
            r.id,
            {
              bytes: r.output?.size ?? null,
              seconds: Math.round(r.run.wallMs) / 1000,
              peakMiB: r.run.peakRssKb === undefined ? null : Math.round(r.run.peakRssKb / 1024),
              ssim: r.output?.minSsim ?? null,
            },
          ]),
      ),
    ]),
  );

export async function recordBaseline(
  path: string,
  files: FileResult[],
  environment: { commit: string; loadAverageAtStart: number[] },
) {
  const baseline: Baseline = {
    recordedAt: new Date().toISOString(),
    commit: environment.commit,
    loadAverage: environment.loadAverageAtStart,
    files: figuresOf(files),
  };
  await writeFile(path, `${JSON.stringify(baseline, null, 1)}\n`);
}

export async function readBaseline(path: string): Promise<Baseline> {
  return JSON.parse(await readFile(path, "utf8")) as Baseline;
}

/** The q-th quantile of the values (linear between neighbours). */
function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
}

/** Memory is noisy by a few MiB (the allocator, the page cache): news past 10 % and 8 MiB. */
const HUNGRIER = (before: number, now: number) => now > before * 1.1 + 8;
/** SSIM is measured on the same renders of deterministic outputs: news past its rounding. */
const WORSE_LOOKING = (before: number, now: number) => now < before - 0.0005;
/** The least spread of times taken as noise (ln 1.15), however still the machine was. */
const LEAST_NOISE = Math.log(1.15);

export interface Comparison {
  /** ln of the 90th percentile of gs's time change between the runs (or LEAST_NOISE). */
  noise: number;
  lines: string[];
  news: number;
}

/** What got larger, slower, hungrier or worse-looking than the baseline, engine contender by contender. */
export function compareWithBaseline(baseline: Baseline, files: FileResult[], peer = "gs:ebook"): Comparison {
  const now = figuresOf(files);
  const gsMoves: number[] = [];
  for (const [name, figures] of Object.entries(now)) {
    const [a, b] = [baseline.files[name]?.[peer], figures[peer]];
    if (a && b && a.seconds > 0 && b.seconds > 0) gsMoves.push(Math.abs(Math.log(b.seconds / a.seconds)));
  }
  const noise = Math.max(LEAST_NOISE, quantile(gsMoves, 0.9));
  const lines: string[] = [];
  let news = 0;
  for (const [name, figures] of Object.entries(now)) {
    const before = baseline.files[name];
    if (!before) continue;
    for (const [id, b] of Object.entries(figures)) {
      const a = before[id];
      if (!id.startsWith("engine:") || !a) continue;
      const found: string[] = [];
      if (a.bytes !== null && b.bytes !== null && b.bytes > a.bytes) {
        found.push(`larger ${a.bytes} -> ${b.bytes} B (+${(((b.bytes - a.bytes) / a.bytes) * 100).toFixed(2)} %)`);
      }
      const [gsA, gsB] = [before[peer]?.seconds, figures[peer]?.seconds];
      if (gsA && gsB) {
        const move = Math.log(b.seconds / gsB / (a.seconds / gsA));
        if (move > noise) {
          found.push(
            `slower ${(a.seconds / gsA).toFixed(2)}x -> ${(b.seconds / gsB).toFixed(2)}x gs's time (${a.seconds} -> ${b.seconds} s)`,
          );
        }
      }
      if (a.peakMiB !== null && b.peakMiB !== null && HUNGRIER(a.peakMiB, b.peakMiB)) {
        found.push(`hungrier ${a.peakMiB} -> ${b.peakMiB} MiB`);
      }
      if (a.ssim !== null && b.ssim !== null && WORSE_LOOKING(a.ssim, b.ssim)) {
        found.push(`worse-looking SSIM ${a.ssim.toFixed(4)} -> ${b.ssim.toFixed(4)}`);
      }
      if (found.length > 0) {
        news += found.length;
        lines.push(`  ${name} ${id}: ${found.join("; ")}`);
      }
    }
  }
  return { noise, lines, news };
}

/** The report's section of a comparison. */
export function againstSection(path: string, baseline: Baseline, comparison: Comparison): string {
  return [
    `== Against ${path} (recorded ${baseline.recordedAt}, commit ${baseline.commit}, load ${baseline.loadAverage.join(" ")}) ==`,
    `noise: gs's times moved up to ${((Math.exp(comparison.noise) - 1) * 100).toFixed(0)} % between the runs (90th percentile, at least 15 %); ` +
      "the engine is flagged slower only past that, as its ratio to gs's time on the same file",
    ...(comparison.lines.length > 0 ? comparison.lines : ["  nothing larger, slower, hungrier or worse-looking"]),
  ].join("\n");
}
