// Font subsetting (src/pdf/fonts/subset.ts): TrueType programs embedded whole come out
// holding only the glyphs drawn, with text extraction (pdftotext) and rendering (pdftoppm at
// 100 dpi) identical; fonts a form field names stay whole; Type 3 fonts keep working. Documents are
// made here with DejaVu fonts embedded whole by pdf-lib (fontkit), or by hand for a simple
// TrueType font; the corpus's mixed-fonts file is run when the corpus is there.
import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import path from "node:path";
import fontkit from "@pdf-lib/fontkit";
import { describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import { COMPRESSION_PROFILES } from "../../../src/pdf/index.ts";
import { handleSignatures } from "../../../src/pdf/security/signatures.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { unwrapCff } from "../../../src/pdf/fonts/cff.ts";
import { readNamedCff } from "../../../src/pdf/fonts/cff-names.ts";
import { convertType1 } from "../../../src/pdf/fonts/type1-convert.ts";
import { subsetFonts } from "../../../src/pdf/fonts/subset.ts";
import { readType1 } from "../../../src/pdf/fonts/type1.ts";
import { STANDARD_ENCODING } from "../../../src/pdf/fonts/cff-strings.ts";
import { createRunner } from "../../../src/compress/isolation/runner.ts";
import { corpusDir } from "../fixtures.ts";
import {
  MONO,
  NIMBUS,
  NIMBUS_T1,
  HAVE_FONTS,
  POPPLER,
  poppler,
  compress,
  expandWidths,
  bfchars,
  fontsOf,
  twoPagesAndAField,
  type3Document,
  simpleTrueTypeDocument,
  simpleToUnicodeCodes,
  type1cDocument,
  type1Lengths,
  type1Document,
  write,
  expectSameLook,
} from "../helpers/fonts.ts";

describe.skipIf(!HAVE_FONTS || !POPPLER)("font subsetting", () => {
  it.each(COMPRESSION_PROFILES)(
    "%s: a font on two pages is subset, the form field's font stays whole, text and pixels unchanged",
    async (profile) => {
      const input = await twoPagesAndAField();
      const { output, report } = await compress(input, profile);
      expect(report.fonts.subset).toBe(1);
      // What is left is mostly the form field's font, whole.
      expect(output.length).toBeLessThan(input.length / 2);
      const before = await fontsOf(input);
      const after = await fontsOf(output);
      expect(after.get("DejaVuSans")!.baseFont).toMatch(/^[A-Z]{6}\+DejaVuSans-\d+$/);
      expect(after.get("DejaVuSans")!.programBytes).toBeLessThan(before.get("DejaVuSans")!.programBytes / 10);
      expect(after.get("DejaVuSerif")).toEqual(before.get("DejaVuSerif"));
      expectSameLook(input, output);
      // The field can still be filled with any text the font has.
      const doc = await PDFDocument.load(output);
      const field = doc.getForm().getTextField("name");
      expect(field.getText()).toBe("Ada");
    },
    60_000,
  );

  it("the font a field's default appearance names stays whole without AcroForm /DR too (found in its appearance)", async () => {
    const input = await twoPagesAndAField({ formResources: false });
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect((await fontsOf(output)).get("DejaVuSerif")).toEqual((await fontsOf(input)).get("DejaVuSerif"));
    expectSameLook(input, output);
  }, 60_000);

  it("a Type 3 font keeps working, and the font its glyphs draw keeps their glyphs", async () => {
    const input = await type3Document();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expectSameLook(input, output);
  }, 60_000);

  it("a CID font with Identity-H keeps its CIDToGIDMap; W and ToUnicode keep the drawn CIDs' entries", async () => {
    const input = await twoPagesAndAField();
    const { output } = await compress(input, "lossless");
    const read = async (bytes: Uint8Array) => {
      const doc = await PDFDocument.load(bytes, { updateMetadata: false });
      for (const [, object] of doc.context.enumerateIndirectObjects()) {
        if (!(object instanceof PDFDict) || object.lookup(PDFName.of("Subtype")) !== PDFName.of("Type0")) continue;
        const base = object.lookup(PDFName.of("BaseFont"), PDFName).decodeText();
        if (!/DejaVuSans-\d+$/.test(base)) continue;
        expect(object.lookup(PDFName.of("Encoding"))).toBe(PDFName.of("Identity-H"));
        const cid = object.lookup(PDFName.of("DescendantFonts"), PDFArray).lookup(0, PDFDict);
        const stream = object.lookup(PDFName.of("ToUnicode"));
        if (!(stream instanceof PDFRawStream)) throw new Error("no ToUnicode stream");
        const cmap = Buffer.from(decodeStreamData(stream, 1 << 24)!).toString("latin1");
        return {
          map: String(cid.lookup(PDFName.of("CIDToGIDMap"))),
          widths: expandWidths(cid.lookup(PDFName.of("W"), PDFArray)),
          toUnicode: bfchars(cmap),
        };
      }
      throw new Error("no DejaVuSans Type 0 font");
    };
    const before = await read(input);
    const after = await read(output);
    expect(after.map).toBe(before.map);
    // Some 40 distinct characters are drawn with the font, of its 6,000 glyphs.
    expect(after.widths.size).toBeGreaterThan(30);
    expect(after.widths.size).toBeLessThan(before.widths.size / 50);
    for (const [cid, width] of after.widths) expect(before.widths.get(cid), `width of CID ${cid}`).toBe(width);
    expect(after.toUnicode.size).toBe(after.widths.size);
    for (const [code, text] of after.toUnicode) expect(before.toUnicode.get(code), `ToUnicode of ${code}`).toBe(text);
  }, 60_000);

  it("a simple TrueType font with WinAnsiEncoding is subset through its cmap", async () => {
    const input = await simpleTrueTypeDocument();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const after = await fontsOf(output);
    expect(after.get("DejaVuSansMono")!.baseFont).toMatch(/^[A-Z]{6}\+DejaVuSansMono$/);
    expect(after.get("DejaVuSansMono")!.programBytes).toBeLessThan(readFileSync(MONO).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a simple font over a bare CFF (FontFile3 /Type1C) on two pages, by WinAnsi and Differences, is subset", async () => {
    const input = await type1cDocument();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect(report.fonts.bytesAfter).toBeLessThan(report.fonts.bytesBefore / 5);
    const doc = await PDFDocument.load(output, { updateMetadata: false });
    const fonts = doc.context
      .enumerateIndirectObjects()
      .map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.has(PDFName.of("Widths")));
    expect(fonts).toHaveLength(2);
    const program = fonts[0]!.lookup(PDFName.of("FontDescriptor"), PDFDict).lookup(PDFName.of("FontFile3"));
    if (!(program instanceof PDFRawStream)) throw new Error("no FontFile3");
    expect(program.dict.lookup(PDFName.of("Subtype"))).toBe(PDFName.of("Type1C"));
    const cff = readNamedCff(decodeStreamData(program, 1 << 24)!)!;
    const whole = readNamedCff(unwrapCff(readFileSync(NIMBUS))!)!;
    // The glyphs drawn keep their ids and names (the others are emptied, or cut off the end).
    for (const name of ["T", "y", "eacute", "Euro", "j", "Q", "B", "C"]) {
      expect(cff.glyphOfName.get(name), name).toBe(whole.glyphOfName.get(name));
    }
    expect(cff.glyphs).toBeLessThanOrEqual(whole.glyphs);
    for (const font of fonts) expect(font.lookup(PDFName.of("BaseFont"), PDFName).decodeText()).toMatch(/^[A-Z]{6}\+/);
    expectSameLook(input, output);
  }, 60_000);

  it("a Type 1 font (FontFile) on two pages becomes CFF (FontFile3 /Type1C), then is subset", async () => {
    const input = await type1Document();
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.converted).toBe(1);
    expect(report.fonts.subset).toBe(1);
    const doc = await PDFDocument.load(output, { updateMetadata: false });
    const descriptors = doc.context
      .enumerateIndirectObjects()
      .map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.has(PDFName.of("FontName")));
    expect(descriptors).toHaveLength(1);
    const descriptor = descriptors[0]!;
    expect(descriptor.has(PDFName.of("FontFile"))).toBe(false);
    const program = descriptor.lookup(PDFName.of("FontFile3"));
    if (!(program instanceof PDFRawStream)) throw new Error("no FontFile3");
    expect(program.dict.lookup(PDFName.of("Subtype"))).toBe(PDFName.of("Type1C"));
    expect(program.dict.has(PDFName.of("Length1"))).toBe(false);
    // The whole font is some 120 KB as Type 1; its subset in CFF a few KB.
    expect(program.contents.length).toBeLessThan(readFileSync(NIMBUS_T1).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a Type 1 font converted but not subset (nothing drawn) is stored as its CFF, deflated once the pass ends", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const { context } = doc;
    const program = new Uint8Array(readFileSync(NIMBUS_T1));
    const fontFile = context.register(context.flateStream(program, type1Lengths(program)));
    const descriptor = context.register(
      context.obj({ Type: "FontDescriptor", FontName: "NimbusSans-Regular", Flags: 32, FontFile: fontFile }),
    );
    const font = context.register(
      context.obj({ Type: "Font", Subtype: "Type1", BaseFont: "NimbusSans-Regular", FontDescriptor: descriptor }),
    );
    doc.addPage([100, 100]).node.setFontDictionary(PDFName.of("F1"), font);
    const report = await subsetFonts(context);
    expect(report).toMatchObject({ converted: 1, subset: 0 });
    const stream = context.lookup(fontFile);
    if (!(stream instanceof PDFRawStream)) throw new Error("no program");
    expect(stream.dict.lookup(PDFName.of("Subtype"))).toBe(PDFName.of("Type1C"));
    const cff = convertType1(program)!;
    // The bytes a conversion stored before the deflate was deferred: the CFF at level 9, memLevel 9.
    expect(Buffer.from(stream.contents).equals(deflateSync(cff, { level: 9, memLevel: 9 }))).toBe(true);
    expect(Buffer.from(decodeStreamData(stream, 1 << 24)!).equals(Buffer.from(cff))).toBe(true);
  });

  it("every glyph of a Type 1 font converts to CFF with its name and encoding", () => {
    const program = new Uint8Array(readFileSync(NIMBUS_T1));
    const type1 = readType1(program)!;
    const cff = convertType1(program)!;
    const named = readNamedCff(cff)!;
    expect(named.glyphs).toBe(type1.charStrings.size);
    for (const name of type1.charStrings.keys()) expect(named.glyphOfName.has(name), name).toBe(true);
    // The font's encoding is StandardEncoding: its codes reach the same names.
    expect(type1.encoding).toBe("standard");
    for (const [code, name] of STANDARD_ENCODING) expect(named.glyphOfCode.get(code)).toBe(named.glyphOfName.get(name));
    // The same program with its eexec section in hex (as PFA files and some producers store it).
    const { Length1, Length2 } = type1Lengths(program);
    const hex = Buffer.from(program.subarray(Length1, Length1 + Length2))
      .toString("hex")
      .replace(/(.{64})/g, "$1\n");
    const pfa = Buffer.concat([
      program.subarray(0, Length1),
      Buffer.from(hex, "latin1"),
      program.subarray(Length1 + Length2),
    ]);
    expect(Buffer.from(convertType1(new Uint8Array(pfa))!).equals(Buffer.from(cff))).toBe(true);
    // Smaller, and unlike the encrypted Type 1 program it compresses: under half the size stored.
    expect(cff.length).toBeLessThan(program.length);
    expect(deflateSync(cff).length).toBeLessThan(deflateSync(program).length / 2);
  });
  it("a simple TrueType font with MacRomanEncoding is subset through its cmap; its ToUnicode keeps the drawn codes", async () => {
    const input = await simpleTrueTypeDocument("DejaVuSansMono", "MacRomanEncoding");
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect(await simpleToUnicodeCodes(input)).toHaveLength(97);
    // "Monospaced: café • 100", "Kerned", "array": the codes drawn, and nothing else.
    const drawn = new Set(Buffer.from("Monospaced: caf\x8e \xa5 100Kernedarray", "latin1"));
    expect(await simpleToUnicodeCodes(output)).toEqual(
      [...drawn].map((c) => c.toString(16).toUpperCase().padStart(2, "0")).sort(),
    );
    expect((await fontsOf(output)).get("DejaVuSansMono")!.programBytes).toBeLessThan(readFileSync(MONO).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a simple TrueType font tagged as subset but embedded whole is subset again", async () => {
    const input = await simpleTrueTypeDocument("QWERTY+DejaVuSansMono");
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const after = (await fontsOf(output)).get("DejaVuSansMono")!;
    expect(after.baseFont).toMatch(/^[A-Z]{6}\+DejaVuSansMono$/);
    expect(after.baseFont).not.toBe("QWERTY+DejaVuSansMono");
    expect(after.programBytes).toBeLessThan(readFileSync(MONO).length / 10);
    expectSameLook(input, output);
  }, 60_000);

  it("a document of more than 20,000 objects whose fonts all carry a subset tag is not walked", async () => {
    const doc = await PDFDocument.load(await simpleTrueTypeDocument("QWERTY+DejaVuSansMono"));
    const { context } = doc;
    const filler = Array.from({ length: 20_001 }, (_, i) => context.register(context.obj({ Filler: i })));
    doc.catalog.set(PDFName.of("Filler"), context.obj(filler));
    const { output, report } = await compress(await doc.save({ useObjectStreams: true }), "lossless");
    expect(report.fonts.subset).toBe(0);
    expect((await fontsOf(output)).get("DejaVuSansMono")).toEqual({
      baseFont: "QWERTY+DejaVuSansMono",
      programBytes: readFileSync(MONO).length,
    });
  }, 120_000);

  it("a CID font with CFF outlines (FontFile3 /OpenType, Identity-H) is subset", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.registerFontkit(fontkit);
    const nimbus = await doc.embedFont(readFileSync(NIMBUS), { subset: false });
    const page = doc.addPage([500, 300]);
    page.drawText("CFF outlines: Sphinx of black quartz", { x: 30, y: 220, size: 20, font: nimbus });
    page.drawText("judge my vow 1234567890", { x: 30, y: 180, size: 20, font: nimbus });
    const input = await doc.save({ useObjectStreams: false });
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    expect(report.fonts.bytesAfter).toBeLessThan(report.fonts.bytesBefore / 5);
    const loaded = await PDFDocument.load(output);
    const names = loaded.context
      .enumerateIndirectObjects()
      .map(([, object]) => (object instanceof PDFDict ? object.lookup(PDFName.of("BaseFont")) : undefined))
      .filter((name): name is PDFName => name instanceof PDFName)
      .map((name) => name.decodeText());
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/^[A-Z]{6}\+NimbusSans-Regular/);
    expectSameLook(input, output);
  }, 60_000);

  it("a form without resources that nothing draws, and that shows no text, does not stop subsetting", async () => {
    const doc = await PDFDocument.load(await twoPagesAndAField());
    const { context } = doc;
    const orphan = context.register(
      context.flateStream("0 0 1 1 re f", { Type: "XObject", Subtype: "Form", BBox: [0, 0, 1, 1] }),
    );
    doc.catalog.set(PDFName.of("Orphan"), orphan);
    const { report } = await compress(await doc.save({ useObjectStreams: false }), "lossless");
    expect(report.fonts.subset).toBe(1);
  }, 60_000);

  it("a font whose use cannot be read completely stays whole", async () => {
    // A Form XObject without resources that nothing draws could show any glyph of any font.
    const doc = await PDFDocument.load(await twoPagesAndAField());
    const { context } = doc;
    const orphan = context.register(
      context.flateStream("BT /F1 12 Tf (anything) Tj ET", { Type: "XObject", Subtype: "Form", BBox: [0, 0, 1, 1] }),
    );
    doc.catalog.set(PDFName.of("Orphan"), orphan);
    const input = await doc.save({ useObjectStreams: false });
    const { report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(0);
  }, 60_000);

  it("runs in the warm engine processes (the stripped JavaScript copy)", async () => {
    const input = await twoPagesAndAField();
    const inputPath = write(input);
    const outputPath = path.join(poppler.dir, "runner-out.pdf");
    const runner = createRunner({ concurrency: 1, queueLimit: 1, timeoutMs: 60_000, memoryMb: 512 });
    try {
      const result = await runner.run({ kind: "compress", inputPath, outputPath, profile: "lossless" });
      expect(result.ok).toBe(true);
    } finally {
      await runner.close();
    }
    const output = readFileSync(outputPath);
    expect((await fontsOf(output)).get("DejaVuSans")!.baseFont).toMatch(/^[A-Z]{6}\+/);
    expectSameLook(input, output);
  }, 60_000);
});

/** Every BaseFont and FontName of the document with a subset tag, as producers that subset write them. */

const CORPUS = corpusDir();
if (!CORPUS)
  console.log("engine-fonts.test.ts: corpus cases skipped, the PDF corpus is not there (set PDF_CORPUS_DIR).");

describe.skipIf(!CORPUS || !POPPLER)("font subsetting on the corpus", () => {
  it.each([
    // A DejaVuSans CIDFontType2 (Identity-H) embedded whole beside unembedded fonts.
    ["text_mixedfonts_truetype.pdf", 0.125],
    // A bare CID-keyed CFF (FontFile3 /CIDFontType0C, Identity-H) of 1.9 MB embedded whole.
    ["text_cjk_cidfont_issue6286.pdf", 0.05],
  ])(
    "%s: the whole font is subset, text and pixels unchanged",
    async (name, ratio) => {
      const input = readFileSync(path.join(CORPUS!, "files", name));
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.subset).toBe(1);
      expect(output.length).toBeLessThan(input.length * ratio);
      expectSameLook(input, output);
    },
    60_000,
  );

  it.each([
    // Six subset Type 1 fonts (pdfTeX): gs /ebook, which converts them to CFF too, writes 34,672 bytes.
    ["text_multicolumn_type1.pdf", 6, 34_672],
    // Fifteen of them over 14 pages beside images (kept as they are by lossless): gs /ebook writes 770,963 bytes.
    ["text_tracemonkey_14p_type1.pdf", 15, 770_963],
  ])(
    "%s: the Type 1 fonts become CFF, text and pixels unchanged",
    async (name, fonts, bound) => {
      const input = readFileSync(path.join(CORPUS!, "files", name));
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.converted).toBe(fonts);
      expect(output.length).toBeLessThan(bound);
      expectSameLook(input, output);
    },
    120_000,
  );

  it.each([
    // Word: TrueType (WinAnsi) and CID TrueType programs tagged as subset that still hold 4,685
    // glyph slots, names in many languages; gs /ebook writes 92,992 bytes.
    ["cv_word_tagged_1p.pdf", 5, 92_992],
    // Word for Mac through Quartz: tagged TrueType fonts drawn through a Mac (1,0) cmap alone,
    // three of them MacRomanEncoding; the input is 106,704 bytes.
    ["cv_word_mac_quartz.pdf", 6, 60_000],
    // Google Docs: tagged CID TrueType programs with GSUB/GPOS/GDEF; gs /ebook writes 25,685 bytes.
    ["cv_gdocs_coverletter.pdf", 5, 25_685],
    // Scribus: four whole programs, each shared by six font dictionaries of which some are never
    // drawn; with the photo kept lossless, 366,190 bytes here (the input is 760,831).
    ["cv_scribus_wholefonts_photo.pdf", 5, 400_000],
  ])(
    "%s: programs the producer tagged as subset are subset again, text and pixels unchanged",
    async (name, fonts, bound) => {
      const input = readFileSync(path.join(CORPUS!, "files", name));
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.subset).toBe(fonts);
      expect(output.length).toBeLessThan(bound);
      expectSameLook(input, output);
    },
    120_000,
  );

  it.each([
    // Seven simple fonts over bare CFF (FontFile3 /Type1C) embedded whole, Symbol and ZapfDingbats
    // with their built-in encodings among them; its publisher signed it (the signature, whose
    // removal takes its seal off page 1, is removed first, so that the pages are compared as they are).
    ["text_federal_register_15p.pdf", 7],
    // Nine of them (WinAnsi, and /Differences over the built-in encoding) beside a bare CID-keyed CFF.
    ["text_redbook_18p_cff.pdf", 10],
  ])(
    "%s: the simple fonts over bare CFF are subset, text and pixels unchanged",
    async (name, fonts) => {
      const signed = await PDFDocument.load(readFileSync(path.join(CORPUS!, "files", name)), { updateMetadata: false });
      handleSignatures(signed.context, "remove");
      const input = await signed.save({ useObjectStreams: false });
      const { output, report } = await compress(input, "lossless");
      expect(report.fonts.subset).toBeGreaterThanOrEqual(fonts);
      expect(report.fonts.bytesAfter).toBeLessThan(report.fonts.bytesBefore / 3);
      expectSameLook(input, output);
    },
    120_000,
  );
});
