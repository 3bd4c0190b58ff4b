// The engine under a mutation fuzzer (issues 25 and 31): copies of generated fixtures and of small
// corpus files with bytes flipped, bytes inserted, or cut off (bench/pdf/damage.ts), each through
// the runner with the service's limits. Every case is answered 200 or with one of the engine's
// refusals; never a timeout, a kill for memory, a crash or a runner error.
//
// The count is bounded for CI: PDF_FUZZ_CASES (default 16) copies, PDF_FUZZ_SEED (default 1)
// picks them, so a failure is made again by running with the seed it names:
//   PDF_FUZZ_CASES=500 PDF_FUZZ_SEED=7 npx vitest run test/pdf/fuzz.test.ts
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPdfRejectedCode } from "../../src/pdf/index.ts";
import { createRunner } from "../../src/compress/isolation/runner.ts";
import type { Runner } from "../../src/compress/isolation/runner.ts";
import { flipBytes, insertBytes, randomSource, truncate } from "../../bench/pdf/damage.ts";
import type { Damaged } from "../../bench/pdf/damage.ts";
import { corpusDir, photoPdf, textPdf } from "./fixtures.ts";

const CASES = Number(process.env["PDF_FUZZ_CASES"] ?? 16);
const SEED = Number(process.env["PDF_FUZZ_SEED"] ?? 1);
/** The service's limits for a small file (src/config/env.ts defaults), as the corpus test uses them. */
const TIMEOUT_MS = 60_000;
const MEMORY_MB = 1024;
/** Corpus seeds: small files of the categories uploads come in. */
const SEED_CATEGORIES = new Set(["text", "photo", "form", "cv", "scanned", "damaged"]);
const MAX_SEED_BYTES = 300 * 1024;

function corpusSeeds(): { name: string; bytes: Uint8Array }[] {
  const corpus = corpusDir();
  if (!corpus) return [];
  const [head, ...lines] = readFileSync(path.join(corpus, "MANIFEST.tsv"), "utf8").trim().split("\n");
  const columns = head!.split("\t");
  return lines
    .map((line) => line.split("\t"))
    .map((fields) => ({
      file: fields[columns.indexOf("file")] ?? "",
      category: fields[columns.indexOf("category")] ?? "",
      size: Number(fields[columns.indexOf("size_bytes")]),
    }))
    .filter((row) => SEED_CATEGORIES.has(row.category) && row.size <= MAX_SEED_BYTES)
    .map((row) => ({ name: row.file, bytes: new Uint8Array(readFileSync(path.join(corpus, "files", row.file))) }));
}

function mutate(bytes: Uint8Array, random: () => number): Damaged {
  const roll = random();
  if (roll < 0.45) return flipBytes(bytes, random);
  if (roll < 0.8) return insertBytes(bytes, random);
  return truncate(bytes, random());
}

describe("the engine under a mutation fuzzer", () => {
  let runner: Runner;
  let dir: string;
  const seeds: { name: string; bytes: Uint8Array }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "engine-fuzz-"));
    runner = createRunner({
      concurrency: 1,
      queueLimit: CASES,
      timeoutMs: TIMEOUT_MS,
      memoryMb: MEMORY_MB,
      maxRssMb: 2 * MEMORY_MB,
    });
    seeds.push({ name: "textPdf(3)", bytes: await textPdf(3) });
    seeds.push({ name: "photoPdf, object streams", bytes: (await photoPdf({ objectStreams: true })).bytes });
    seeds.push(...corpusSeeds());
  }, 60_000);

  afterAll(async () => {
    await runner?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`answers ${CASES} mutated files (seed ${SEED}) with 200 or a refusal, within the limits`, async () => {
    const random = randomSource(SEED);
    const unanswered: string[] = [];
    let compressed = 0;
    for (let i = 0; i < CASES; i++) {
      const seed = seeds[Math.floor(random() * seeds.length)]!;
      const damaged = mutate(seed.bytes, random);
      const label = `case ${i} (PDF_FUZZ_SEED=${SEED}): ${seed.name} ${damaged.kind} ${damaged.detail}`;
      const inputPath = path.join(dir, `${i}.pdf`);
      await writeFile(inputPath, damaged.bytes);
      try {
        const result = await runner.run({
          kind: "compress",
          inputPath,
          outputPath: `${inputPath}.out`,
          profile: "balanced",
        });
        if (result.ok) compressed++;
        else if (!isPdfRejectedCode(result.code)) unanswered.push(`${label}: ${result.code} ${result.message}`);
      } catch (error) {
        unanswered.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(unanswered).toEqual([]);
    // Most of what a fuzzer does to a file, readers shrug off; so does the engine.
    expect(compressed).toBeGreaterThan(0);
    expect(runner.stats()).toMatchObject({ timedOut: 0, failed: 0 });
  }, 600_000);
});
