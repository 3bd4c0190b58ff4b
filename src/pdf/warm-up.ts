// Work an engine process does once, before its first document: compiling the WebAssembly modules
// and running the passes once over a small document made here, so that V8 has compiled the
// engine's and pdf-lib's functions, and libvips has loaded its JPEG and PNG coders, before a job
// comes. A warm process (src/compress/isolation/pool.ts) calls it before it says it is ready, off
// any request's path. Measured on the corpus's small CVs (issue 42, docs/engine.md "Where the time
// goes"): the first document of a process took two to three times the CPU of the same document
// run again. Nothing of a document is kept: only compiled code.
import { deflateSync } from "node:zlib";
import { PDFDocument, PDFName, StandardFonts } from "@cantoo/pdf-lib";
import { compressPdf } from "./compress.ts";
import { compiledSubsetter, prepareSubsetter } from "./fonts/harfbuzz.ts";
import { convertType1 } from "./fonts/type1-convert.ts";
import { encodeJpeg } from "./images/codecs.ts";
import { warmUpPng } from "./streams/png.ts";
import { openPdf } from "./structure/load.ts";
import { embedWarmUpType1, TYPE1_DRAWN, warmUpType1Program } from "./warm-up-type1.ts";

/** A photograph-like image (smooth gradients and a little noise): JPEG's kind, not a graphic's. */
function photo(width: number, height: number): Uint8Array {
  const data = new Uint8Array(width * height * 3);
  let seed = 42;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const noise = (seed >>> 28) - 8;
      data[i++] = (x * 255) / width + noise;
      data[i++] = (y * 255) / height + noise;
      data[i++] = ((x + y) * 127) / (width + height) + 64 + noise;
    }
  }
  return data;
}

/**
 * Lines of text as word processors write them (glyph runs with kerning in TJ, hex strings, moves,
 * colours set again): enough operators for V8 to compile the content readers and the compaction.
 */
function textLines(font: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    const y = 280 - (i % 50) * 5;
    lines.push(
      `BT /${font} 9 Tf 0 0 0 rg 1 0 0 1 20 ${y}.25 Tm [(Warm) -20.5 (ing) 3 (up) ] TJ 0.000 Tw <5761726d> Tj ET`,
    );
  }
  return lines.join("\n");
}

/**
 * Cells as Excel and Word write them: marked content with a property list (a dictionary operand),
 * clipped rectangles filled, and a small inline image (BI … ID … EI). Without them the warm-up's
 * content never reached those branches of the lexer and the compaction's reader, and V8, which
 * optimises them during a job, compiled them without and threw them away at the job's first `<<`
 * or `BI` (Lexer.next twice, ContentReader.read, scanContent with the reader's handlers: four
 * deoptimisations, each a compilation again on a background thread). text_excel_warn_16p, the job
 * after warmUp and 3 s idle, quick flags, alternated: CPU 947 -> 887 ms (lower in 7 of 11) and
 * 940 -> 856 (6 of 9), the same md5; warmUp's own CPU unchanged (547-632 against 491-609 ms).
 */
const TAGGED_CELLS =
  "/P <</MCID 0>> BDC q 20 20 260 250 re W* n 0.941 g 20 200 260 13.32 re f* Q EMC\n" +
  "q 10 0 0 10 250 20 cm BI /W 2 /H 2 /BPC 8 /CS /G ID abcd EI Q";

/**
 * A page of text with a JPEG and a Flate image drawn at a third of their pixels (so both are
 * downsampled, checked and recoded), a line in a Type 1 font as pdfTeX embeds them (converted to
 * CFF, then subset: warm-up-type1.ts), a second page sharing them (duplicates, placements).
 */
export async function sampleDocument(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const size = 240;
  const pixels = photo(size, size);
  const jpeg = await encodeJpeg({ data: pixels, width: size, height: size, components: 3 }, { quality: 92 });
  const image = { Type: "XObject", Subtype: "Image", Width: size, Height: size, BitsPerComponent: 8 };
  const flate = doc.context.stream(deflateSync(pixels), { ...image, ColorSpace: "DeviceRGB", Filter: "FlateDecode" });
  const dct = doc.context.stream(jpeg, { ...image, ColorSpace: "DeviceRGB", Filter: "DCTDecode" });
  const refs = [doc.context.register(flate), doc.context.register(dct)];
  const type1 = embedWarmUpType1(doc);
  const hex = TYPE1_DRAWN.map((code) => code.toString(16).padStart(2, "0")).join("");
  for (let p = 0; p < 2; p++) {
    const page = doc.addPage([300, 300]);
    page.drawText("Warm-up: the engine's passes, once.", { x: 20, y: 270, size: 12, font });
    const names = refs.map((ref, i) => page.node.newXObject(`Im${i}`, ref));
    page.pushOperators();
    const draw = names.map((name, i) => `q 80 0 0 80 ${20 + i * 100} 100 cm ${name.toString()} Do Q`).join("\n");
    const fontName = page.node.newFontDictionary("F", font.ref).asString().slice(1);
    const type1Name = page.node.newFontDictionary("T", type1).asString().slice(1);
    const type1Line = `BT /${type1Name} 10 Tf 20 40 Td <${hex}> Tj ET`;
    const content = doc.context.flateStream(`${draw}\n${type1Line}\n${textLines(fontName)}\n${TAGGED_CELLS}`);
    page.node.addContentStream(doc.context.register(content));
  }
  doc.catalog.set(PDFName.of("PageMode"), PDFName.of("UseNone"));
  return doc.save({ useObjectStreams: false });
}

/**
 * Conversions of the warm-up font in warmUp. The 49 Type 1 programs of
 * cv_pdflatex_cjk_chinese_moderncv (237 KB) took 111-131 ms of CPU to convert after warmUp, and
 * 18-24 ms once V8 had optimised the conversion (the same process, the fourth time); after warmUp
 * with 40 more conversions of the warm-up font 89-101 ms, with 60 52-53 ms (quick flags, one process
 * each). Its job after warmUp and 3 s idle, alternated, 16 rounds at load 10-13: CPU 299 -> 280 and
 * 273 -> 250 ms (medians; lower in 14 of 16), wall time 1,006 -> 869 and 695 -> 518 ms;
 * cv_pdflatex_moderncv_2p (fewer programs) 217 -> 220 ms, no change. warmUp's own CPU 671 -> 827 ms
 * (medians of 5), off any request's path.
 */
export const TYPE1_CONVERSIONS = 60;

/**
 * The warm-up font's conversion to CFF repeated (TYPE1_CONVERSIONS times, after the two runs of the
 * sample), so that V8 has optimised the Type 1 reading, the charstring interpreter and the Type 2
 * writer before a job: a quick process optimises a function after 30,000 calls (JS_TIERING,
 * src/compress/isolation/runner.ts), and the sample's 19 glyphs are far from that.
 */
function convertType1Again(): void {
  const { program } = warmUpType1Program();
  for (let i = 0; i < TYPE1_CONVERSIONS; i++) convertType1(program);
}

/**
 * Readings of the sample's output (object streams, as the writer makes them) in warmUp, after its
 * runs: each job parses twice (its input, and its output read back), and the sample's two runs
 * left pdf-lib's parser far from optimised (a quick process optimises after 30,000 calls). The job
 * after warmUp and 3 s idle, its parses' CPU without and with 30 more readings (one process each,
 * 3 pairs, load 12): form_fancy_fields_incremental (11 revisions, 39 object streams) 108-124 ->
 * 55-60 ms, the whole job 283-301 -> 204-231; form_f1040_prefilled 191 -> 92 ms. warmUp's own CPU
 * 480-732 -> 722-949 ms, off any request's path.
 */
export const WARM_UP_PARSES = 30;

/**
 * Prepares the process for its first document (see above); resolves when done. Failures are
 * swallowed: a process that could not warm up still compresses, only slower.
 */
export async function warmUp(): Promise<void> {
  try {
    await compiledSubsetter();
    warmUpPng();
    const sample = await sampleDocument();
    const { output } = await compressPdf(sample, "balanced");
    await compressPdf(sample, "lossless");
    convertType1Again();
    for (let i = 0; i < WARM_UP_PARSES; i++) await openPdf(output);
    // Last: the instance the job's font pass will use, made here rather than in the job.
    await prepareSubsetter();
  } catch {
    // Only the first job's speed depended on it.
  }
}
