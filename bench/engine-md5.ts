// The engine's output bytes on the whole corpus, as md5s: the check that a refactoring of src/pdf
// changed no behaviour (issue 41). Run by hand before and after, and compare the two files:
//   npm run bench:engine-md5 -- [corpus dir] [--out FILE] [--only substr[,substr]] [--timeout S]
//   diff before.txt after.txt
// Every file of MANIFEST.tsv (refused ones included) goes through the engine's entry points
// (src/pdf/index.ts) with every profile; a refused file gives its error code instead of an md5.
// Some files also run with options, so that the passes only options reach are covered: the
// signed ones with signatures=remove, the ones with a known password through unlockPdf, and the
// CVs with grayscale, linearize, maxImagePpi and a target size. One line per run, sorted:
//   <file> <run> <md5 of the output | error:<code>> <output bytes>
// Each file runs in a child process of its own, one at a time, under a time limit (a hostile file
// cannot hold the run); a child past it gives "timeout" for its runs, which is no comparison.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  compressPdf,
  COMPRESSION_PROFILES,
  isPdfRejectedCode,
  PdfRejected,
  TargetUnreachable,
  unlockPdf,
} from "../src/pdf/index.ts";
import type { EngineOptions, EngineOutput } from "../src/pdf/index.ts";

interface CorpusFile {
  name: string;
  path: string;
  category: string;
  password: string;
}

/** A run: a name for the output line, and what it does with the input. */
interface Run {
  name: string;
  run: (input: Uint8Array) => Promise<EngineOutput>;
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SIGNED_OUTSIDE_THEIR_CATEGORY = new Set(["text_federal_register_15p.pdf"]);

function readManifest(dir: string): CorpusFile[] {
  const [head, ...lines] = readFileSync(path.join(dir, "MANIFEST.tsv"), "utf8").trimEnd().split("\n");
  const columns = (head ?? "").split("\t");
  const at = (name: string) => columns.indexOf(name);
  return lines.map((line) => {
    const cells = line.split("\t");
    const name = cells[at("file")]!;
    return {
      name,
      path: path.join(dir, "files", name),
      category: cells[at("category")] ?? "",
      password: cells[at("password")] ?? "",
    };
  });
}

const compressing =
  (profile: (typeof COMPRESSION_PROFILES)[number], options: EngineOptions = {}) =>
  (input: Uint8Array) =>
    compressPdf(input, profile, undefined, options);

/** What runs on one file: every profile, and the options its kind calls for. */
function runsFor(file: CorpusFile, size: number): Run[] {
  const runs: Run[] = COMPRESSION_PROFILES.map((profile) => ({ name: profile, run: compressing(profile) }));
  if (file.category === "signed" || SIGNED_OUTSIDE_THEIR_CATEGORY.has(file.name)) {
    runs.push({ name: "balanced+signatures=remove", run: compressing("balanced", { signatures: "remove" }) });
  }
  if (file.password !== "") {
    runs.push({ name: "unlock", run: (input) => unlockPdf(input, file.password) });
  }
  if (file.category === "cv") {
    runs.push(
      { name: "balanced+grayscale", run: compressing("balanced", { grayscale: true }) },
      { name: "lossless+linearize", run: compressing("lossless", { linearize: true }) },
      { name: "extreme+removeMetadata", run: compressing("extreme", { removeMetadata: true }) },
      { name: "balanced+maxImagePpi=100", run: compressing("balanced", { maxImagePpi: 100 }) },
      {
        name: "balanced+targetSize=60%",
        run: compressing("balanced", { targetSize: Math.max(1024, Math.round(size * 0.6)) }),
      },
    );
  }
  return runs;
}

/** A refusal's code (and the smallest size a target run reached), else the error's name. */
function errorLabel(error: unknown): string {
  if (error instanceof TargetUnreachable) return `${error.code}:${error.smallestSize}`;
  if (error instanceof PdfRejected && isPdfRejectedCode(error.code)) return error.code;
  return error instanceof Error ? error.name : String(error);
}

/** The child: every run of one file, a line each on stdout. */
async function runFile(file: CorpusFile): Promise<void> {
  const input = new Uint8Array(readFileSync(file.path));
  for (const { name, run } of runsFor(file, input.length)) {
    let result: string;
    try {
      const { output } = await run(input);
      result = `${createHash("md5").update(output).digest("hex")}\t${output.length}`;
    } catch (error) {
      result = `error:${errorLabel(error)}\t-`;
    }
    process.stdout.write(`${file.name}\t${name}\t${result}\n`);
  }
}

/** Runs one file's child under the time limit; its lines, or "timeout" / "crash" lines. */
function inChild(file: CorpusFile, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--disable-warning=ExperimentalWarning", "--max-old-space-size=2048", fileURLToPath(import.meta.url)],
      { env: { ...process.env, ENGINE_MD5_CHILD: JSON.stringify(file) }, stdio: ["ignore", "pipe", "inherit"] },
    );
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const lines = stdout.split("\n").filter(Boolean);
      const done = new Set(lines.map((line) => line.split("\t")[1]));
      const why = signal === "SIGKILL" ? "timeout" : `crash:${code ?? signal}`;
      for (const { name } of runsFor(file, 0)) if (!done.has(name)) lines.push(`${file.name}\t${name}\t${why}\t-`);
      resolve(lines);
    });
  });
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { out: { type: "string" }, only: { type: "string" }, timeout: { type: "string", default: "900" } },
  });
  const dir = positionals[0] ?? process.env["PDF_CORPUS_DIR"] ?? path.resolve(HERE, "../../shared/corpus/pdf");
  const filters = values.only?.split(",").filter(Boolean);
  const files = readManifest(dir).filter((file) => !filters || filters.some((part) => file.name.includes(part)));
  const timeoutMs = Number(values.timeout) * 1000;
  const lines: string[] = [];
  const started = Date.now();
  for (const [i, file] of files.entries()) {
    const fileStarted = Date.now();
    const fileLines = await inChild(file, timeoutMs);
    lines.push(...fileLines);
    const seconds = ((Date.now() - fileStarted) / 1000).toFixed(1);
    process.stderr.write(`[${i + 1}/${files.length}] ${file.name}: ${fileLines.length} runs, ${seconds} s\n`);
  }
  const text = lines.sort().join("\n") + "\n";
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  process.stderr.write(`${files.length} files, ${lines.length} runs, ${minutes} min\n`);
}

const child = process.env["ENGINE_MD5_CHILD"];
if (child) await runFile(JSON.parse(child) as CorpusFile);
else await main();
