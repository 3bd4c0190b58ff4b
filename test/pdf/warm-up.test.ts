// warmUp (src/pdf/warm-up.ts), run by each engine process before its job: it keeps nothing of a
// document, so what a job makes does not depend on it (issue 42: it takes the compiling of code
// off the job's time).
import { describe, expect, it } from "vitest";
import { compressPdf, warmUp } from "../../src/pdf/index.ts";
import type { CompressionReport } from "../../src/pdf/index.ts";
import { readType1 } from "../../src/pdf/fonts/type1.ts";
import { convertType1 } from "../../src/pdf/fonts/type1-convert.ts";
import { openPdf } from "../../src/pdf/structure/load.ts";
import { sampleDocument, TYPE1_CONVERSIONS, WARM_UP_PARSES } from "../../src/pdf/warm-up.ts";
import { warmUpType1Program } from "../../src/pdf/warm-up-type1.ts";
import { photoPdf, textPdf } from "./fixtures.ts";

describe("warmUp", () => {
  it("changes no output: documents compress to the same bytes before and after it", async () => {
    const inputs = [await textPdf(2), (await photoPdf()).bytes, await sampleDocument()];
    const before = await Promise.all(inputs.map(async (input) => (await compressPdf(input, "balanced")).output));
    await warmUp();
    await warmUp();
    for (const [i, input] of inputs.entries()) {
      expect(Buffer.from((await compressPdf(input, "balanced")).output).equals(Buffer.from(before[i]!))).toBe(true);
    }
  }, 120_000);

  it("its document's Type 1 font is read whole, converted to CFF and subset (so that code is compiled)", async () => {
    const { program } = warmUpType1Program();
    expect(readType1(program)?.charStrings.size).toBe(19);
    expect(convertType1(program)).toBeDefined();
    let report: CompressionReport | undefined;
    await compressPdf(await sampleDocument(), "balanced", (r) => (report = r));
    expect(report?.fonts.converted).toBe(1);
    expect(report?.fonts.subset).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("repeats a conversion that keeps nothing: the warm-up font converts to the same CFF each time", () => {
    expect(TYPE1_CONVERSIONS).toBeGreaterThan(0);
    const { program } = warmUpType1Program();
    const first = convertType1(program);
    expect(first).toBeDefined();
    for (let i = 0; i < 5; i++) expect(Buffer.from(convertType1(program)!).equals(Buffer.from(first!))).toBe(true);
    expect(Buffer.from(warmUpType1Program().program).equals(Buffer.from(program))).toBe(true);
  });

  it("reads its sample's output back as a job's input is read, object streams and all", async () => {
    expect(WARM_UP_PARSES).toBeGreaterThan(0);
    const { output } = await compressPdf(await sampleDocument(), "balanced");
    expect(Buffer.from(output).includes(Buffer.from("/ObjStm"))).toBe(true);
    const { pages, repaired } = await openPdf(output);
    expect(pages).toBe(2);
    expect(repaired).toEqual([]);
  }, 60_000);
});
