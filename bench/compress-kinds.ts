// The two kinds of warm engine process side by side (issue 42; src/compress/isolation/process-kind.ts),
// run by hand:
//   npm run bench:compress:kinds -- <corpus dir> [--only substr[,substr]] [--rounds N] [--profile P]
// Each file runs through two runners with the service's limits, one whose processes are all quick
// (quickExecArgv) and one whose are all lean (engineExecArgv), alternated (quick first on odd
// rounds, lean first on even ones), each job in a warm process that is ready when it is submitted.
// Per file: the kind QUICK_RULE gives it, the medians of the job's CPU (the child's, after warmUp),
// its wall time through the runner and its peak RSS (VmHWM) beside its budget (3 x input + 200 MiB),
// for each kind, the quick/lean ratios, and whether the outputs of both kinds were the same bytes.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../src/config/env.ts";
import { createRunner, serviceRunnerOptions } from "../src/compress/isolation/runner.ts";
import type { Runner } from "../src/compress/isolation/runner.ts";
import { jobKindOf, QUICK_RULE } from "../src/compress/isolation/process-kind.ts";
import { isCompressionProfile } from "../src/pdf/index.ts";
import { memoryBudgetBytes } from "./pdf/aggregate.ts";
import { listCorpus } from "./pdf/corpus.ts";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string" },
    rounds: { type: "string", default: "3" },
    profile: { type: "string", default: "balanced" },
  },
});
const dir = positionals[0];
if (!dir || !isCompressionProfile(flags.profile)) {
  console.error("usage: npm run bench:compress:kinds -- <dir> [--only a,b] [--rounds N] [--profile balanced]");
  process.exit(2);
}
const profile = flags.profile;
const rounds = Math.max(1, Number(flags.rounds));
const filters = flags.only?.split(",").filter(Boolean);
const files = listCorpus(dir).files.filter((file) => !filters || filters.some((s) => file.name.includes(s)));

const service = serviceRunnerOptions(loadConfig({}).compress);
const everything = { maxBytes: Number.POSITIVE_INFINITY, maxImagePixels: Number.POSITIVE_INFINITY };
const kinds: Record<"quick" | "lean", Runner> = {
  quick: createRunner({ ...service, concurrency: 1, warmProcesses: 0, quickWarmProcesses: 1, quickRule: everything }),
  lean: createRunner({ ...service, concurrency: 1, warmProcesses: 1, quickWarmProcesses: 0 }),
};
const work = await mkdtemp(path.join(os.tmpdir(), "bench-kinds-"));

interface Run {
  cpuMs: number;
  wallMs: number;
  peakMiB: number;
  md5: string;
}

async function runOnce(runner: Runner, input: string, n: number): Promise<Run | string> {
  // A warm process ready for the job (its predecessor's replacement has started by now).
  for (let waited = 0; runner.stats().warm < 1; waited += 20) {
    if (waited > 60_000) throw new Error("no warm process got ready within 60 s");
    await sleep(20);
  }
  const output = path.join(work, `out-${n}.pdf`);
  const started = performance.now();
  const result = await runner.run({ kind: "compress", inputPath: input, outputPath: output, profile });
  const wallMs = performance.now() - started;
  if (!result.ok) return result.code;
  const md5 = createHash("md5")
    .update(await readFile(output))
    .digest("hex");
  await rm(output, { force: true });
  return { cpuMs: result.usage?.cpuMs ?? NaN, wallMs, peakMiB: (result.usage?.maxRssKb ?? NaN) / 1024, md5 };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

console.log(
  `bench:compress:kinds ${profile}, ${rounds} rounds, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
console.log(
  "| file | KB | rule | CPU quick ms | CPU lean ms | CPU q/l | wall quick | wall lean | wall q/l | peak quick MiB | peak lean MiB | budget MiB | same bytes |",
);
console.log("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
let n = 0;
for (const file of files) {
  const size = (await stat(file.path)).size;
  const rule = jobKindOf(file.path, size, QUICK_RULE);
  const runs: Record<"quick" | "lean", Run[]> = { quick: [], lean: [] };
  let refused: string | undefined;
  for (let round = 0; round < rounds && !refused; round++) {
    const order: ("quick" | "lean")[] = round % 2 === 0 ? ["quick", "lean"] : ["lean", "quick"];
    for (const kind of order) {
      const run = await runOnce(kinds[kind], file.path, ++n);
      if (typeof run === "string") refused = run;
      else runs[kind].push(run);
    }
  }
  if (refused) {
    console.log(`| ${file.name} | ${Math.round(size / 1024)} | ${rule} | ${refused} |`);
    continue;
  }
  const m = (kind: "quick" | "lean", key: "cpuMs" | "wallMs" | "peakMiB") => median(runs[kind].map((r) => r[key]));
  const same = new Set([...runs.quick, ...runs.lean].map((r) => r.md5)).size === 1;
  const budget = memoryBudgetBytes(size) / 1024 / 1024;
  const peak = (kind: "quick" | "lean") => {
    const max = Math.max(...runs[kind].map((r) => r.peakMiB));
    return `${max.toFixed(0)}${max > budget ? " OVER" : ""}`;
  };
  console.log(
    `| ${file.name} | ${Math.round(size / 1024)} | ${rule} | ${m("quick", "cpuMs").toFixed(0)} | ${m("lean", "cpuMs").toFixed(0)} | ` +
      `${(m("quick", "cpuMs") / m("lean", "cpuMs")).toFixed(2)} | ${m("quick", "wallMs").toFixed(0)} | ${m("lean", "wallMs").toFixed(0)} | ` +
      `${(m("quick", "wallMs") / m("lean", "wallMs")).toFixed(2)} | ${peak("quick")} | ${peak("lean")} | ${budget.toFixed(0)} | ${same ? "yes" : "NO"} |`,
  );
}
console.log(
  `load at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
await Promise.all([kinds.quick.close(), kinds.lean.close()]);
await rm(work, { recursive: true, force: true });
