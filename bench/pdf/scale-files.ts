// Large, realistic PDFs for the scale benchmark, built by code from the shared corpus and cached
// outside the repository (they are hundreds of megabytes; never commit them).
//
// - scan-<N>mb.pdf: what most people compress: a scanned document, one colour 300 dpi JPEG per
//   A4 page. Pages are corpus pages rendered by pdftoppm (-r 300 -jpeg -jpegopt quality=90, scaled
//   to A4 at 300 dpi, 2480 x 3508), taken round robin over the corpus files so that every page is
//   distinct and the mix of text, photo and scan pages is that of the corpus. Each JPEG goes into
//   the PDF as it is (one DCTDecode image XObject per page), written by a small streaming writer
//   here, so building a 290 MB file holds one page in memory at a time.
// - text-<N>mb.pdf: a long text-heavy document with many objects: the corpus's text-like files
//   (text, objstm, optimised, incremental, form) joined again and again by qpdf. Each repetition
//   goes through its own path, so qpdf copies its fonts and content streams anew instead of
//   sharing them, as a real 10,000-page document would have its own.
//
// Page renders are cached too (<dir>/pages), so the 100 MB and 290 MB scans share them, and a
// file already built with the same recipe is reused (its recipe is in <name>.json beside it).
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { WriteStream } from "node:fs";
import { listCorpus } from "./corpus.ts";
import type { BenchFile } from "./corpus.ts";
import { requireBinary, run } from "./tools.ts";

/** A4 in PDF points, and at 300 dpi in pixels. */
const A4_POINTS = { width: 595.28, height: 841.89 } as const;
const A4_300DPI = { width: 2480, height: 3508 } as const;

/** Bump when the way a kind of file is built changes, so a cached file of the old recipe is rebuilt. */
const RECIPE_VERSION: Record<ScaleKind, number> = { scan: 1, text: 2 };

export type ScaleKind = "scan" | "text";

export interface ScaleFile {
  kind: ScaleKind;
  path: string;
  size: number;
  pages: number;
  /** Whether it was built in this run (false: reused from the cache). */
  built: boolean;
  buildMs: number;
}

interface Recipe {
  version: number;
  kind: ScaleKind;
  targetBytes: number;
  corpus: string;
  pages: number;
  size: number;
}

const MB = 1_000_000;

export function scaleFileName(kind: ScaleKind, targetMb: number): string {
  return `${kind}-${targetMb}mb.pdf`;
}

async function cached(file: string, recipe: Omit<Recipe, "pages" | "size">): Promise<Recipe | undefined> {
  try {
    const saved = JSON.parse(await readFile(`${file}.json`, "utf8")) as Recipe;
    const { size } = await stat(file);
    const same =
      saved.version === recipe.version &&
      saved.kind === recipe.kind &&
      saved.targetBytes === recipe.targetBytes &&
      saved.corpus === recipe.corpus &&
      saved.size === size;
    return same ? saved : undefined;
  } catch {
    return undefined;
  }
}

async function pageCount(file: string): Promise<number> {
  const result = await run(requireBinary("pdfinfo", "to count the pages of a corpus file"), [file], {
    timeoutMs: 60_000,
  });
  const match = /^Pages:\s+(\d+)/m.exec(result.stdout.toString("utf8"));
  return match ? Number(match[1]) : 0;
}

/** The corpus files pages are rendered from: accepted by the API, none derived from the others. */
async function sourceFiles(
  corpusDir: string,
  categories?: ReadonlySet<string>,
): Promise<{ file: BenchFile; pages: number }[]> {
  const files = listCorpus(corpusDir).files.filter(
    (file) => !file.name.startsWith("derived_") && (!categories || categories.has(file.category)),
  );
  const withPages: { file: BenchFile; pages: number }[] = [];
  for (const file of files) {
    const pages = await pageCount(file.path);
    if (pages > 0) withPages.push({ file, pages });
  }
  return withPages;
}

/** (file, page) pairs round robin: page 1 of every file, then page 2 of those that have one, ... */
function roundRobin(sources: { file: BenchFile; pages: number }[]): { file: BenchFile; page: number }[] {
  const order: { file: BenchFile; page: number }[] = [];
  const most = Math.max(0, ...sources.map((source) => source.pages));
  for (let page = 1; page <= most; page += 1) {
    for (const source of sources) if (page <= source.pages) order.push({ file: source.file, page });
  }
  return order;
}

/** Renders one corpus page as the A4 300 dpi JPEG a scanner would give, cached in pagesDir. */
async function renderPage(pagesDir: string, file: BenchFile, page: number): Promise<string | undefined> {
  const base = path.join(pagesDir, `${file.name.replace(/\.pdf$/i, "")}-p${page}`);
  const jpeg = `${base}.jpg`;
  try {
    if ((await stat(jpeg)).size > 0) return jpeg;
  } catch {
    // not rendered yet
  }
  const result = await run(
    requireBinary("pdftoppm", "to render corpus pages for the scan-like file"),
    [
      "-r",
      "300",
      "-jpeg",
      "-jpegopt",
      "quality=90",
      "-scale-to-x",
      String(A4_300DPI.width),
      "-scale-to-y",
      String(A4_300DPI.height),
      "-f",
      String(page),
      "-l",
      String(page),
      "-singlefile",
      file.path,
      base,
    ],
    { timeoutMs: 120_000 },
  );
  if (result.exitCode !== 0 || result.timedOut) return undefined;
  try {
    return (await stat(jpeg)).size > 0 ? jpeg : undefined;
  } catch {
    return undefined;
  }
}

/** Width, height and components from a JPEG's start-of-frame marker. */
export function jpegFrame(jpeg: Uint8Array): { width: number; height: number; components: number } {
  let at = 2;
  while (at + 9 < jpeg.length) {
    if (jpeg[at] !== 0xff) throw new Error("not a JPEG: marker expected");
    const marker = jpeg[at + 1]!;
    const length = (jpeg[at + 2]! << 8) | jpeg[at + 3]!;
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return {
        height: (jpeg[at + 5]! << 8) | jpeg[at + 6]!,
        width: (jpeg[at + 7]! << 8) | jpeg[at + 8]!,
        components: jpeg[at + 9]!,
      };
    }
    at += 2 + length;
  }
  throw new Error("JPEG without a start-of-frame marker");
}

/** Writes a PDF object by object and keeps the offsets for the cross-reference table. */
class StreamingPdf {
  private readonly out: WriteStream;
  private readonly offsets: number[] = [];
  private position = 0;

  constructor(file: string) {
    this.out = createWriteStream(file);
  }

  private async write(chunk: string | Uint8Array): Promise<void> {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk;
    this.position += bytes.length;
    if (!this.out.write(bytes)) await new Promise<void>((resolve) => this.out.once("drain", resolve));
  }

  async header(): Promise<void> {
    // The binary comment line tells transfer tools the file is binary (PDF 32000-1, 7.5.2).
    await this.write("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n");
  }

  async object(id: number, dictionary: string, stream?: Uint8Array): Promise<void> {
    this.offsets[id] = this.position;
    if (stream) {
      await this.write(`${id} 0 obj\n${dictionary}\nstream\n`);
      await this.write(stream);
      await this.write("\nendstream\nendobj\n");
    } else {
      await this.write(`${id} 0 obj\n${dictionary}\nendobj\n`);
    }
  }

  async finish(rootId: number): Promise<void> {
    const start = this.position;
    const count = this.offsets.length;
    let table = `xref\n0 ${count}\n0000000000 65535 f \n`;
    for (let id = 1; id < count; id += 1) {
      const offset = this.offsets[id];
      if (offset === undefined) throw new Error(`object ${id} was never written`);
      table += `${String(offset).padStart(10, "0")} 00000 n \n`;
    }
    await this.write(`${table}trailer\n<< /Size ${count} /Root ${rootId} 0 R >>\nstartxref\n${start}\n%%EOF\n`);
    await new Promise<void>((resolve, reject) =>
      this.out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  }
}

async function buildScan(
  file: string,
  corpusDir: string,
  targetBytes: number,
  log: (line: string) => void,
): Promise<number> {
  const pagesDir = path.join(path.dirname(file), "pages");
  await mkdir(pagesDir, { recursive: true });
  const order = roundRobin(await sourceFiles(corpusDir));
  const tmp = `${file}.part`;
  const pdf = new StreamingPdf(tmp);
  await pdf.header();
  // Object 1 is the catalog, 2 the page tree (written last, when the kids are known); page i
  // is objects 3+3i (image), 4+3i (content), 5+3i (page).
  const pageIds: number[] = [];
  let written = 0;
  for (const { file: source, page } of order) {
    if (written >= targetBytes) break;
    const jpegPath = await renderPage(pagesDir, source, page);
    if (!jpegPath) continue;
    const jpeg = await readFile(jpegPath);
    const { width, height, components } = jpegFrame(jpeg);
    const colourSpace = components === 1 ? "/DeviceGray" : components === 4 ? "/DeviceCMYK" : "/DeviceRGB";
    const base = 3 + pageIds.length * 3;
    await pdf.object(
      base,
      `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace ${colourSpace} /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>`,
      jpeg,
    );
    const content = Buffer.from(`q ${A4_POINTS.width} 0 0 ${A4_POINTS.height} 0 0 cm /Im0 Do Q\n`, "latin1");
    await pdf.object(base + 1, `<< /Length ${content.length} >>`, content);
    await pdf.object(
      base + 2,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${A4_POINTS.width} ${A4_POINTS.height}] /Resources << /XObject << /Im0 ${base} 0 R >> >> /Contents ${base + 1} 0 R >>`,
    );
    pageIds.push(base + 2);
    written += jpeg.length;
    if (pageIds.length % 25 === 0) log(`  scan: ${pageIds.length} pages, ${(written / MB).toFixed(0)} MB of JPEG`);
  }
  if (written < targetBytes) {
    throw new Error(
      `the corpus in ${corpusDir} gave only ${(written / MB).toFixed(0)} MB of pages, short of ${targetBytes / MB} MB`,
    );
  }
  await pdf.object(
    2,
    `<< /Type /Pages /Count ${pageIds.length} /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] >>`,
  );
  await pdf.object(1, "<< /Type /Catalog /Pages 2 0 R >>");
  await pdf.finish(1);
  await rename(tmp, file);
  return pageIds.length;
}

const TEXT_CATEGORIES: ReadonlySet<string> = new Set(["text", "objstm", "optimised", "incremental", "form"]);

async function buildText(
  file: string,
  corpusDir: string,
  targetBytes: number,
  log: (line: string) => void,
): Promise<number> {
  const qpdf = requireBinary("qpdf", "to join corpus files into the text-heavy file");
  const sources = await sourceFiles(corpusDir, TEXT_CATEGORIES);
  if (sources.length === 0) throw new Error(`no text-like files in ${corpusDir}`);
  const linkDir = path.join(path.dirname(file), `${path.basename(file)}.links`);
  await rm(linkDir, { recursive: true, force: true });
  await mkdir(linkDir, { recursive: true });
  const join = async (copies: number, output: string) => {
    const args = ["--empty", "--warning-exit-0", "--no-warn", "--pages"];
    for (let copy = 0; copy < copies; copy += 1) {
      for (const source of sources) {
        const link = path.join(linkDir, `${copy}-${source.file.name}`);
        await rm(link, { force: true });
        await symlink(source.file.path, link);
        args.push(link, "1-z");
      }
    }
    args.push("--", output);
    const result = await run(qpdf, args, { timeoutMs: 30 * 60_000 });
    if (result.exitCode !== 0 && result.exitCode !== 3) throw new Error(`qpdf failed: ${result.stderr.slice(-500)}`);
  };
  // One copy joined first: a joined copy is smaller than the sum of its files (shared objects,
  // dropped old revisions), and its size says how many copies reach the target.
  await join(1, `${file}.part`);
  const perCopy = (await stat(`${file}.part`)).size;
  const copies = Math.ceil(targetBytes / perCopy);
  log(`  text: joining ${copies} copies of ${sources.length} text-like corpus files with qpdf`);
  await join(copies, `${file}.part`);
  await rm(linkDir, { recursive: true, force: true });
  await rename(`${file}.part`, file);
  return pageCount(file);
}

/** Builds (or reuses) the kind-<targetMb>mb.pdf file in dir. */
export async function ensureScaleFile(
  dir: string,
  corpusDir: string,
  kind: ScaleKind,
  targetMb: number,
  log: (line: string) => void,
): Promise<ScaleFile> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, scaleFileName(kind, targetMb));
  const recipe = { version: RECIPE_VERSION[kind], kind, targetBytes: targetMb * MB, corpus: path.resolve(corpusDir) };
  const reuse = await cached(file, recipe);
  if (reuse) return { kind, path: file, size: reuse.size, pages: reuse.pages, built: false, buildMs: 0 };
  log(`building ${file} (${kind}, about ${targetMb} MB) from ${corpusDir}`);
  const started = performance.now();
  const pages =
    kind === "scan"
      ? await buildScan(file, corpusDir, recipe.targetBytes, log)
      : await buildText(file, corpusDir, recipe.targetBytes, log);
  const { size } = await stat(file);
  await writeFile(`${file}.json`, `${JSON.stringify({ ...recipe, pages, size } satisfies Recipe)}\n`);
  return { kind, path: file, size, pages, built: true, buildMs: performance.now() - started };
}
