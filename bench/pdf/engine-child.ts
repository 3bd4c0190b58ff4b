// One engine job in its own process, so that the benchmark can measure its peak memory (GNU
// time around this process) as it would be in the service, where every job runs in a child of
// its own (src/compress/isolation/child.ts, whose sharp settings are copied here).
//   node bench/pdf/engine-child.ts <input.pdf> <output.pdf> <profile>
// Prints one JSON line (EngineChildReply) on stdout. Exit 0 when the engine finished or
// refused the file; 1 when it threw anything else (the stack goes to stderr).
import { readFile, writeFile } from "node:fs/promises";
import sharp from "sharp";
import { compressPdf, isCompressionProfile, PdfRejected } from "../../src/pdf/index.ts";
import type { CompressionReport } from "../../src/pdf/index.ts";

export type EngineChildReply =
  | { ok: true; pages: number; outputSize: number; engineMs: number; maxRssKb: number; report?: CompressionReport }
  | { ok: false; refused: true; code: string; message: string }
  | { ok: false; refused: false; message: string };

sharp.concurrency(1);
sharp.cache(false);

const [inputPath, outputPath, profile] = process.argv.slice(2);
if (!inputPath || !outputPath || !isCompressionProfile(profile)) {
  console.error("usage: engine-child.ts <input.pdf> <output.pdf> <lossless|balanced|extreme>");
  process.exit(2);
}

const reply = (message: EngineChildReply) => process.stdout.write(`${JSON.stringify(message)}\n`);

try {
  const input = await readFile(inputPath);
  let report: CompressionReport | undefined;
  const started = performance.now();
  const result = await compressPdf(input, profile, (r) => (report = r));
  const engineMs = performance.now() - started;
  await writeFile(outputPath, result.output);
  reply({
    ok: true,
    pages: result.pages,
    outputSize: result.output.length,
    engineMs,
    maxRssKb: process.resourceUsage().maxRSS,
    ...(report ? { report } : {}),
  });
} catch (error) {
  if (error instanceof PdfRejected) {
    reply({ ok: false, refused: true, code: error.code, message: error.message });
  } else {
    console.error(error);
    reply({ ok: false, refused: false, message: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
  }
}
