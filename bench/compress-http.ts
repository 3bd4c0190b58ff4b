// The commonest call as a subscriber times it: one small file sent to POST /v1/compress of a running
// service on this machine, --runs times, beside gs /ebook on the same file in the same run (the two
// alternated, so both meet the same machine), and the p50 and p90 of each (issue 42: a small CV at
// p50 of 20 runs). Run by hand, never in CI.
//
//   npm start &
//   KEY=$(npm run -s accounts -- key:issue demo-corporate@example.com --json | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
//   npm run bench:compress:http -- --http http://127.0.0.1:3000 --key $KEY ../shared/corpus/pdf/cv_gdocs_coverletter.pdf
//
// Flags: --runs N (20), --profile P (balanced), --warmup N (2 runs of each first, not counted).
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { isCompressionProfile } from "../src/pdf/index.ts";
import { peerContenders, type Contender } from "./pdf/contenders.ts";
import { httpContender, loopbackBase } from "./pdf/http-compress.ts";

const { values: flags, positionals: files } = parseArgs({
  allowPositionals: true,
  options: {
    http: { type: "string" },
    key: { type: "string" },
    runs: { type: "string", default: "20" },
    warmup: { type: "string", default: "2" },
    profile: { type: "string", default: "balanced" },
  },
});

function fail(message: string): never {
  console.error(`bench:compress:http: ${message}`);
  process.exit(2);
}

if (!flags.http || !flags.key) fail("--http URL and --key KEY are required (see the head of bench/compress-http.ts)");
const base = loopbackBase(flags.http);
if (typeof base === "string") fail(base);
if (!isCompressionProfile(flags.profile)) fail(`unknown profile ${flags.profile}`);
const runs = Number(flags.runs);
const warmup = Number(flags.warmup);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(warmup) || warmup < 0)
  fail("--runs and --warmup: whole numbers");
if (files.length === 0) fail("name at least one PDF");

const engine = httpContender(base, flags.key, flags.profile);
const gs = peerContenders(new Set(["gs"])).contenders.find((c) => c.id === "gs:ebook");
const contenders: Contender[] = gs ? [engine, gs] : [engine];
if (!gs) console.log("gs not installed: the engine alone (apt-get install ghostscript)");

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
const dir = await mkdtemp(path.join(os.tmpdir(), "bench-http-"));
try {
  console.log(
    `bench:compress:http: ${runs} runs (after ${warmup}) of each file, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  for (const file of files) {
    const times = new Map<string, number[]>(contenders.map((c) => [c.id, []]));
    for (let i = 0; i < warmup + runs; i++) {
      for (const contender of contenders) {
        const run = await contender.run(file, path.join(dir, `${contender.id.replace(":", "-")}.pdf`), 120_000);
        if (run.status !== "ok")
          fail(`${contender.label} on ${path.basename(file)}: ${run.status} ${run.message ?? ""}`);
        if (i >= warmup) times.get(contender.id)!.push(run.wallMs);
      }
    }
    const p50 = new Map<string, number>();
    console.log(`\n${path.basename(file)}`);
    for (const contender of contenders) {
      const sorted = times.get(contender.id)!.sort((a, b) => a - b);
      p50.set(contender.id, quantile(sorted, 0.5));
      console.log(
        `  ${contender.label.padEnd(28)} p50 ${quantile(sorted, 0.5).toFixed(0).padStart(6)} ms  p90 ${quantile(sorted, 0.9).toFixed(0).padStart(6)} ms`,
      );
    }
    if (gs) console.log(`  p50 ratio engine / gs /ebook: ${(p50.get(engine.id)! / p50.get(gs.id)!).toFixed(2)}x`);
  }
  console.log(
    `\nload at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
