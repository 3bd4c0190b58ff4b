// The linearize option (fast web view, src/pdf/structure/linearize.ts): on documents made here
// (every profile, PDF/A-1's xref tables, outlines, inherited page attributes, the other options)
// and, when the shared corpus is present, on real files. Each output must pass
// `qpdf --check-linearization` without a warning and `qpdf --check`, and render as the same
// document written without the option does (pdftoppm). Skipped with a message without qpdf or
// Poppler.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFString, StandardFonts } from "@cantoo/pdf-lib";
import { afterAll, describe, expect, it } from "vitest";
import { compressPdf } from "../../../src/pdf/index.ts";
import type { CompressionProfile, CompressionReport, EngineOptions } from "../../../src/pdf/index.ts";
import { findBinary } from "../../../bench/pdf/tools.ts";
import { corpusDir, jpegOf, photoPdf, photoPixels } from "../fixtures.ts";
import { popplerScratch } from "../helpers/poppler.ts";

const TOOLS = findBinary("qpdf") !== undefined && findBinary("pdftoppm") !== undefined;
if (!TOOLS) console.warn("engine-linearize: qpdf or pdftoppm missing, the linearization tests are skipped");
const MUTOOL = findBinary("mutool") !== undefined;
const CORPUS = corpusDir();
if (!CORPUS) console.warn("engine-linearize: the shared corpus is absent, its files are skipped");

const scratch = popplerScratch("engine-linearize");
afterAll(scratch.remove);
const { write } = scratch;

async function compress(input: Uint8Array, profile: CompressionProfile, options: EngineOptions) {
  let report: CompressionReport | undefined;
  const { output } = await compressPdf(input, profile, (r) => (report = r), options);
  return { output, report: report! };
}

/** qpdf's verdict on the linearization: its whole output, which is one line when all is well. */
function checkLinearization(bytes: Uint8Array): string {
  const file = write(bytes);
  const result = spawnSync("qpdf", ["--check-linearization", file], { encoding: "utf8" });
  return `${result.stdout}${result.stderr}`.replaceAll(file, "out.pdf").trim();
}

/** qpdf --check's exit status (0: no error and no warning). */
const qpdfCheck = (bytes: Uint8Array) => spawnSync("qpdf", ["--check", write(bytes)]).status;

/** Every page drawn by pdftoppm at 40 dpi, as the bytes of its PPM file. */
const render = (bytes: Uint8Array) => scratch.pixelsOf(bytes, 40);

/** The same document with and without the option: linearized, checked, drawn the same. */
async function expectLinearized(input: Uint8Array, profile: CompressionProfile, options: EngineOptions = {}) {
  const plain = await compress(input, profile, options);
  const linearized = await compress(input, profile, { ...options, linearize: true });
  expect(linearized.report.linearization).toEqual({ linearized: true });
  expect(checkLinearization(linearized.output)).toBe("out.pdf: no linearization errors");
  expect(qpdfCheck(linearized.output)).toBe(0);
  const pages = render(linearized.output);
  expect(pages.length).toBeGreaterThan(0);
  expect(pages).toEqual(render(plain.output));
  if (MUTOOL) expect(spawnSync("mutool", ["info", write(linearized.output)]).status).toBe(0);
  return { plain, linearized };
}

/**
 * Four pages: a photograph on the first, a font shared by all, a link on the second, outlines,
 * a document information dictionary, and /Resources and /MediaBox on the page tree, not the pages.
 */
async function bookPdf(options: { useOutlines?: boolean; pdfA1?: boolean } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const image = await doc.embedJpg(await jpegOf(photoPixels(600, 400, 3, 7), 600, 400, 3));
  for (let i = 0; i < 4; i++) {
    const page = doc.addPage([612, 792]);
    page.drawText(`Chapter ${i + 1}`, { x: 60, y: 720, size: 28, font });
    for (let line = 0; line < 20; line++) {
      page.drawText(`Line ${line + 1} of chapter ${i + 1}, set in the shared font.`, {
        x: 60,
        y: 680 - line * 18,
        size: 11,
        font,
      });
    }
    if (i === 0) page.drawImage(image, { x: 60, y: 60, width: 300, height: 200 });
  }
  const [first, second] = [doc.getPage(0), doc.getPage(1)];
  const link = doc.context.obj({
    Type: "Annot",
    Subtype: "Link",
    Rect: [60, 700, 300, 750],
    Border: [0, 0, 0],
    Dest: [first.ref, "Fit"],
  });
  second.node.set(PDFName.of("Annots"), doc.context.obj([doc.context.register(link)]));
  // Inherited attributes: the pages take theirs from the tree.
  const tree = doc.catalog.lookup(PDFName.of("Pages"), PDFDict);
  tree.set(PDFName.of("Resources"), first.node.get(PDFName.of("Resources"))!);
  tree.set(PDFName.of("MediaBox"), doc.context.obj([0, 0, 612, 792]));
  for (const page of doc.getPages()) {
    if (page.node.get(PDFName.of("Resources")) === tree.get(PDFName.of("Resources"))) {
      page.node.delete(PDFName.of("Resources"));
    }
    page.node.delete(PDFName.of("MediaBox"));
  }
  const outlines = doc.context.nextRef();
  const items = doc.getPages().map(() => doc.context.nextRef());
  items.forEach((ref, i) => {
    const item = doc.context.obj({
      Title: PDFString.of(`Chapter ${i + 1}`),
      Parent: outlines,
      Dest: [doc.getPage(i).ref, "Fit"],
    });
    if (i > 0) item.set(PDFName.of("Prev"), items[i - 1]!);
    if (i < items.length - 1) item.set(PDFName.of("Next"), items[i + 1]!);
    doc.context.assign(ref, item);
  });
  doc.context.assign(
    outlines,
    doc.context.obj({ Type: "Outlines", First: items[0]!, Last: items.at(-1)!, Count: items.length }),
  );
  doc.catalog.set(PDFName.of("Outlines"), outlines);
  if (options.useOutlines) doc.catalog.set(PDFName.of("PageMode"), PDFName.of("UseOutlines"));
  doc.setTitle("A book made here");
  if (options.pdfA1) {
    const packet =
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
      '<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="1" pdfaid:conformance="B"/>' +
      "</rdf:RDF></x:xmpmeta>";
    const metadata = doc.context.stream(packet, { Type: "Metadata", Subtype: "XML" });
    doc.catalog.set(PDFName.of("Metadata"), doc.context.register(metadata));
  }
  return doc.save({ useObjectStreams: false });
}

describe.skipIf(!TOOLS)("linearize", () => {
  it.each(["lossless", "balanced", "extreme"] as const)(
    "%s: a book with outlines and inherited attributes is linearized, with object streams",
    async (profile) => {
      const { linearized } = await expectLinearized(await bookPdf(), profile);
      const text = new TextDecoder("latin1").decode(linearized.output);
      expect(text.slice(0, 1024)).toMatch(/\/Linearized 1 \/L \d+ \/H \[ \d+ \d+ \] \/O \d+ \/E \d+ \/N 4 \/T \d+/);
      expect(text).toContain("/Type /ObjStm");
    },
    120_000,
  );

  it("outlines opened first (/PageMode /UseOutlines) go with the first page", async () => {
    await expectLinearized(await bookPdf({ useOutlines: true }), "balanced");
  }, 60_000);

  it("a PDF/A-1 file (no object streams allowed) is linearized with xref tables", async () => {
    const { linearized } = await expectLinearized(await bookPdf({ pdfA1: true }), "balanced");
    const text = new TextDecoder("latin1").decode(linearized.output);
    expect(text).not.toContain("/ObjStm");
    expect(text).not.toContain("/XRef");
    expect(text.match(/^xref$/gm)).toHaveLength(2);
  }, 60_000);

  it("a single page, and with every other option at once", async () => {
    const photo = (await photoPdf()).bytes;
    const options: EngineOptions = { grayscale: true, maxImagePpi: 100, removeMetadata: true };
    await expectLinearized(photo, "balanced", options);
    const single = await PDFDocument.create({ updateMetadata: false });
    single.addPage([200, 200]).drawText("one page", { x: 20, y: 100 });
    await expectLinearized(await single.save(), "lossless");
  }, 120_000);

  it("a target size counts the linearized output's bytes", async () => {
    const photo = (await photoPdf()).bytes;
    const plain = await compress(photo, "balanced", { linearize: true });
    const target = Math.round(plain.output.length * 0.6);
    const { output, report } = await compress(photo, "balanced", { linearize: true, targetSize: target });
    expect(output.length).toBeLessThanOrEqual(target);
    expect(report.linearization).toEqual({ linearized: true });
    expect(checkLinearization(output)).toBe("out.pdf: no linearization errors");
  }, 300_000);

  it("a page listed twice in the page tree is written without linearization, and the report says so", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([200, 200]);
    page.drawText("twice", { x: 20, y: 100 });
    const tree = doc.catalog.lookup(PDFName.of("Pages"), PDFDict);
    tree.lookup(PDFName.of("Kids"), PDFArray).push(page.ref);
    tree.set(PDFName.of("Count"), PDFNumber.of(2));
    const { output, report } = await compress(await doc.save(), "balanced", { linearize: true });
    expect(report.linearization).toMatchObject({ linearized: false, reason: "page_tree" });
    expect(checkLinearization(output)).toContain("not linearized");
    expect(render(output)).toHaveLength(2);
  }, 60_000);
});

describe.skipIf(!TOOLS || !CORPUS)("linearize, corpus files", () => {
  it.each([
    ["cv_word_tagged_1p.pdf", "balanced"],
    ["form_f1040_prefilled.pdf", "balanced"],
    ["text_us_constitution_19p.pdf", "extreme"],
    ["optimised_linearized_objstm_206p.pdf", "lossless"],
  ] as const)(
    "%s (%s)",
    async (name, profile) => {
      const input = new Uint8Array(readFileSync(path.join(CORPUS!, "files", name)));
      const { plain, linearized } = await expectLinearized(input, profile);
      // The cost of linearization: a hint stream, a second cross-reference section, page objects
      // outside object streams (docs/engine.md#options-beside-the-profile measures it; qpdf's own costs 15 % on the 206 pages).
      expect(linearized.output.length - plain.output.length).toBeLessThan(plain.output.length * 0.04 + 4096);
    },
    300_000,
  );
});
