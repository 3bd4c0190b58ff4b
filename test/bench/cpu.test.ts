// bench:compress's CPU section (bench/pdf/cpu.ts): CPU seconds per MB and per page over the files
// every contender compressed and reported its CPU for, so each figure is of the same files; and
// bench:compress:http's address check (traffic stays on this machine).
import { describe, expect, it } from "vitest";
import type { Aggregate, FileResult } from "../../bench/pdf/aggregate.ts";
import { cpuLines } from "../../bench/pdf/cpu.ts";
import { loopbackBase } from "../../bench/pdf/http-compress.ts";

const aggregates = [
  { id: "engine:balanced", label: "engine balanced" },
  { id: "gs:ebook", label: "gs /ebook" },
] as unknown as Aggregate[];

function file(name: string, size: number, pages: number, engineCpuMs?: number, gsCpuMs?: number): FileResult {
  const run = (cpuMs?: number) => ({ status: "ok", wallMs: 100, ...(cpuMs === undefined ? {} : { cpuMs }) });
  return {
    name,
    category: "cv",
    size,
    input: { pages },
    results: [
      { id: "engine:balanced", run: run(engineCpuMs) },
      { id: "gs:ebook", run: run(gsCpuMs) },
    ],
  } as unknown as FileResult;
}

describe("bench:compress CPU per MB and per page", () => {
  it("counts only the files every contender reported its CPU for", () => {
    const lines = cpuLines(aggregates, [
      file("a.pdf", 1_000_000, 4, 2_000, 1_000),
      file("b.pdf", 1_000_000, 6, 3_000, 500),
      file("no-gs-cpu.pdf", 5_000_000, 100, 9_000),
    ]);
    expect(lines[0]).toBe("over 2 files every contender compressed (2.0 MB, 10 pages):");
    expect(lines[1]).toMatch(/engine balanced +CPU +5\.0 s .*: 2\.500 s per MB, 0\.500 s per page$/);
    expect(lines[2]).toMatch(/gs \/ebook +CPU +1\.5 s .*: 0\.750 s per MB, 0\.150 s per page$/);
  });

  it("says so when no file has every contender's CPU", () => {
    expect(cpuLines(aggregates, [file("a.pdf", 1_000, 1, 10)])).toEqual(["no file with every contender's CPU time"]);
  });
});

describe("bench:compress:http's address", () => {
  it("takes http:// on this machine only", () => {
    expect(loopbackBase("http://127.0.0.1:3000")).toBeInstanceOf(URL);
    expect(loopbackBase("http://localhost:3000")).toBeInstanceOf(URL);
    expect(loopbackBase("https://127.0.0.1:3000")).toMatch(/on this machine/);
    expect(loopbackBase("http://example.com")).toMatch(/on this machine/);
  });
});
