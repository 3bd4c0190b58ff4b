// warmUp (src/pdf/warm-up.ts), run by each engine process before its job: it keeps nothing of a
// document, so what a job makes does not depend on it (issue 42: it takes the compiling of code
// off the job's time).
import { describe, expect, it } from "vitest";
import { compressPdf, warmUp } from "../../src/pdf/index.ts";
import { photoPdf, textPdf } from "./fixtures.ts";

describe("warmUp", () => {
  it("changes no output: documents compress to the same bytes before and after it", async () => {
    const inputs = [await textPdf(2), (await photoPdf()).bytes];
    const before = await Promise.all(inputs.map(async (input) => (await compressPdf(input, "balanced")).output));
    await warmUp();
    await warmUp();
    for (const [i, input] of inputs.entries()) {
      expect(Buffer.from((await compressPdf(input, "balanced")).output).equals(Buffer.from(before[i]!))).toBe(true);
    }
  }, 120_000);
});
