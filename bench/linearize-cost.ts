// bench:linearize <dir> [--profile balanced] [--only name,name]: what the linearize option costs, and
// whether every output holds. Each file of <dir> (a folder of PDFs, or the shared corpus layout, see
// pdf/corpus.ts) is compressed twice in this process, without and with linearize; then the
// linearized output goes through `qpdf --check-linearization` (one line, no warning), `qpdf --check`,
// `mutool info` (when installed), and pdftoppm draws both at 40 dpi, page for page the same bytes.
// One JSON line per file, then the summary (docs/engine.md#options-beside-the-profile, "The cost, measured"). Run it
// with `nice -n 10`: the machine is shared.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { compressPdf, isCompressionProfile } from "../src/pdf/index.ts";
import type { CompressionReport } from "../src/pdf/index.ts";
import { listCorpus } from "./pdf/corpus.ts";
import { findBinary, requireBinary } from "./pdf/tools.ts";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { profile: { type: "string", default: "balanced" }, only: { type: "string" } },
});
const profile = flags.profile;
if (!isCompressionProfile(profile) || positionals.length !== 1) {
  console.error("usage: bench:linearize <dir> [--profile lossless|balanced|extreme] [--only name,name]");
  process.exit(2);
}
requireBinary("qpdf", "to check the linearization");
requireBinary("pdftoppm", "to compare the pages drawn");
const mutool = findBinary("mutool") !== undefined;
const work = mkdtempSync(path.join(tmpdir(), "bench-linearize-"));
let files = 0;
const save = (bytes: Uint8Array) => {
  const file = path.join(work, `f${files++}.pdf`);
  writeFileSync(file, bytes);
  return file;
};

/** Every page drawn at 40 dpi, as its PPM bytes. */
function pages(file: string): Buffer[] {
  const prefix = path.join(work, `r${files++}`);
  spawnSync("pdftoppm", ["-r", "40", file, prefix], { timeout: 300_000 });
  const names = readdirSync(work).filter((name) => name.startsWith(`${path.basename(prefix)}-`));
  return names.sort().map((name) => readFileSync(path.join(work, name)));
}

/** What is wrong with the linearized output beside the plain one: an empty list when nothing is. */
function problems(plain: string, linearized: string): string[] {
  const found: string[] = [];
  const check = spawnSync("qpdf", ["--check-linearization", linearized], { encoding: "utf8" });
  const said = `${check.stdout}${check.stderr}`.trim();
  if (said !== `${linearized}: no linearization errors`) found.push(`linearization: ${said.slice(0, 300)}`);
  if (spawnSync("qpdf", ["--check", plain]).status === 0 && spawnSync("qpdf", ["--check", linearized]).status !== 0) {
    found.push("qpdf --check fails where the plain output passes");
  }
  if (mutool && spawnSync("mutool", ["info", linearized]).status !== 0) found.push("mutool info fails");
  const [a, b] = [pages(plain), pages(linearized)];
  if (a.length === 0 || a.length !== b.length || a.some((page, i) => !page.equals(b[i]!))) found.push("pages differ");
  return found;
}

const corpus = listCorpus(positionals[0]!);
const only = flags.only?.split(",").filter(Boolean);
const rows: { plain: number; linearized: number; ok: boolean; fellBack: boolean }[] = [];
for (const file of corpus.files.filter((f) => !only || only.some((s) => f.name.includes(s)))) {
  const input = new Uint8Array(readFileSync(file.path));
  const run = async (linearize: boolean) => {
    let report: CompressionReport | undefined;
    const started = performance.now();
    const { output } = await compressPdf(input, profile, (r) => (report = r), { linearize, signatures: "remove" });
    return { output, report, ms: Math.round(performance.now() - started) };
  };
  try {
    const [plain, linearized] = [await run(false), await run(true)];
    const fellBack = linearized.report?.linearization?.linearized !== true;
    const found = fellBack ? [] : problems(save(plain.output), save(linearized.output));
    rows.push({ plain: plain.output.length, linearized: linearized.output.length, ok: found.length === 0, fellBack });
    const { linearization } = linearized.report ?? {};
    const sizes = { plain: plain.output.length, linearized: linearized.output.length };
    console.log(JSON.stringify({ file: file.name, ...sizes, ms: [plain.ms, linearized.ms], linearization, found }));
  } catch (error) {
    console.log(JSON.stringify({ file: file.name, refused: (error as { code?: string }).code ?? String(error) }));
  }
}
rmSync(work, { recursive: true, force: true });
const extra = rows.map((r) => r.linearized - r.plain).sort((x, y) => x - y);
const [plainTotal, linearizedTotal] = [
  rows.reduce((t, r) => t + r.plain, 0),
  rows.reduce((t, r) => t + r.linearized, 0),
];
console.log(
  JSON.stringify({
    profile,
    compressed: rows.length,
    linearized: rows.filter((r) => !r.fellBack).length,
    clean: rows.filter((r) => r.ok && !r.fellBack).length,
    extraMedian: extra[Math.floor((extra.length - 1) / 2)] ?? 0,
    extraMin: extra[0] ?? 0,
    extraMax: extra.at(-1) ?? 0,
    totals: [plainTotal, linearizedTotal],
  }),
);
