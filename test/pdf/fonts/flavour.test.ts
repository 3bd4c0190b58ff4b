// Fonts the producer already subset, and programs of another flavour (src/pdf/fonts/flavour.ts and the
// CFF and Type 1 readers): subset again to the glyphs drawn, or converted where that is smaller.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PDFName } from "@cantoo/pdf-lib";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { readCff, unwrapCff } from "../../../src/pdf/fonts/cff.ts";
import { flavourOf } from "../../../src/pdf/fonts/flavour.ts";
import { readSfnt } from "../../../src/pdf/fonts/sfnt.ts";
import {
  SANS,
  NIMBUS,
  HAVE_FONTS,
  POPPLER,
  compress,
  tagEveryFont,
  cidFontOf,
  cidFontDocument,
  inkOf,
  cidProgramOf,
  expectSameLook,
} from "../helpers/fonts.ts";

describe.skipIf(!HAVE_FONTS || !POPPLER)("fonts the producer already subset, and programs of another flavour", () => {
  it("a tagged CID TrueType font that still carries unused glyphs, GSUB and GPOS is subset again", async () => {
    const input = await cidFontDocument(SANS, tagEveryFont);
    const before = readSfnt(await cidProgramOf(input))!;
    for (const table of ["GSUB", "GPOS", "cmap", "name"]) expect(before.tables.has(table), table).toBe(true);
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    // Some 40 glyphs drawn of 6,000: what is left is mostly loca and hmtx, kept for every glyph id.
    expect(program.length).toBeLessThan(readFileSync(SANS).length / 10);
    const after = readSfnt(program)!;
    // Glyph ids are kept; what only text layout, character codes or names use is gone.
    expect(after.numGlyphs).toBeLessThanOrEqual(before.numGlyphs);
    for (const table of ["GSUB", "GPOS", "GDEF", "cmap", "name", "post", "OS/2"]) {
      expect(after.tables.has(table), table).toBe(false);
    }
    for (const table of ["glyf", "loca", "head", "hhea", "hmtx", "maxp"])
      expect(after.tables.has(table), table).toBe(true);
    expect(inkOf(input)).toBeGreaterThan(1000);
    expectSameLook(input, output);
  }, 60_000);

  it("a tagged CID font with CFF outlines (FontFile3 /OpenType) is subset again", async () => {
    const input = await cidFontDocument(NIMBUS, tagEveryFont);
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    expect(flavourOf(program)).toBe("opentype-cff");
    expect(program.length).toBeLessThan(readFileSync(NIMBUS).length / 5);
    expectSameLook(input, output);
  }, 60_000);

  // poppler: "Mismatch between font type and embedded font file"; readers go by the bytes.
  it("a CIDFontType2 whose FontFile2 holds an OpenType font with CFF outlines is subset as such", async () => {
    const input = await cidFontDocument(NIMBUS, (doc) => {
      const { cidFont, descriptor, program } = cidFontOf(doc);
      const bytes = decodeStreamData(program, 64 << 20)!;
      descriptor.delete(PDFName.of("FontFile3"));
      descriptor.set(PDFName.of("FontFile2"), doc.context.register(doc.context.flateStream(bytes)));
      cidFont.set(PDFName.of("Subtype"), PDFName.of("CIDFontType2"));
      cidFont.set(PDFName.of("CIDToGIDMap"), PDFName.of("Identity"));
    });
    expect(flavourOf(await cidProgramOf(input))).toBe("opentype-cff");
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    expect(flavourOf(program)).toBe("opentype-cff");
    expect(program.length).toBeLessThan(readFileSync(NIMBUS).length / 5);
    expect(inkOf(input)).toBeGreaterThan(1000);
    expectSameLook(input, output);
  }, 60_000);

  it("a CIDFontType2 whose FontFile2 holds a bare CFF is subset as a CFF and stays bare", async () => {
    const input = await cidFontDocument(NIMBUS, (doc) => {
      const { cidFont, descriptor, program } = cidFontOf(doc);
      const cff = unwrapCff(decodeStreamData(program, 64 << 20)!)!;
      descriptor.delete(PDFName.of("FontFile3"));
      descriptor.set(PDFName.of("FontFile2"), doc.context.register(doc.context.flateStream(cff)));
      cidFont.set(PDFName.of("Subtype"), PDFName.of("CIDFontType2"));
    });
    const { output, report } = await compress(input, "lossless");
    expect(report.fonts.subset).toBe(1);
    const program = await cidProgramOf(output);
    expect(flavourOf(program)).toBe("cff");
    // Glyph ids are kept (those past the last one drawn are left out).
    expect(readCff(program)!.glyphs).toBeLessThanOrEqual(readCff(await cidProgramOf(input))!.glyphs);
    expect(program.length).toBeLessThan(unwrapCff(new Uint8Array(readFileSync(NIMBUS)))!.length / 5);
    expect(inkOf(input)).toBeGreaterThan(1000);
    expectSameLook(input, output);
  }, 60_000);
});
