// CPU seconds per MB of input and per page, each contender beside the others (issue 42): on the
// files every contender compressed and reported its CPU for, so the figures are of the same files.
// The engine's is its process's CPU (every thread) while compressPdf ran; a peer's, its whole
// process (GNU time's user + system).
import type { Aggregate, FileResult } from "./aggregate.ts";

const MB = 1_000_000;

export function cpuLines(aggregates: readonly Aggregate[], results: readonly FileResult[]): string[] {
  const counted = results.filter(
    (file) =>
      file.input &&
      aggregates.every((a) => {
        const run = file.results.find((r) => r.id === a.id)?.run;
        return run?.status === "ok" && run.cpuMs !== undefined;
      }),
  );
  if (counted.length === 0) return ["no file with every contender's CPU time"];
  const bytes = counted.reduce((sum, file) => sum + file.size, 0);
  const pages = counted.reduce((sum, file) => sum + (file.input?.pages ?? 0), 0);
  const lines = [
    `over ${counted.length} files every contender compressed (${(bytes / MB).toFixed(1)} MB, ${pages} pages):`,
  ];
  for (const a of aggregates) {
    const cpuMs = counted.reduce((sum, file) => sum + (file.results.find((r) => r.id === a.id)?.run.cpuMs ?? 0), 0);
    const wallMs = counted.reduce((sum, file) => sum + (file.results.find((r) => r.id === a.id)?.run.wallMs ?? 0), 0);
    lines.push(
      `  ${a.label.padEnd(18)} CPU ${(cpuMs / 1000).toFixed(1).padStart(7)} s (wall ${(wallMs / 1000).toFixed(1)} s): ` +
        `${(cpuMs / 1000 / (bytes / MB)).toFixed(3)} s per MB, ${(cpuMs / 1000 / pages).toFixed(3)} s per page`,
    );
  }
  return lines;
}
