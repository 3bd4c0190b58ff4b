// hb-subset's instance (src/pdf/fonts/harfbuzz.ts): made once per job, or ahead of it by warmUp
// (prepareSubsetter), so that the job does not instantiate; a prepared instance subsets as one made
// on demand, and a failed preparation is not handed on.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { prepareSubsetter, releaseSubsetter, subsetFontProgram } from "../../../src/pdf/fonts/harfbuzz.ts";
import { MONO } from "../helpers/fonts.ts";

const request = { glyphs: [0, 36, 37, 38, 70, 71], unicodes: [0x41, 0x42], dropTables: ["DSIG"] };
const subset = async () => Buffer.from((await subsetFontProgram(new Uint8Array(readFileSync(MONO)), request))!);

describe("the subsetter's instance", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    releaseSubsetter();
  });

  it("is made by prepareSubsetter once, and the subsets that follow use it until it is released", async () => {
    releaseSubsetter();
    const onDemand = await subset();
    releaseSubsetter();
    const instantiate = vi.spyOn(WebAssembly, "instantiate");
    await prepareSubsetter();
    await prepareSubsetter();
    expect(instantiate).toHaveBeenCalledTimes(1);
    expect((await subset()).equals(onDemand)).toBe(true);
    expect((await subset()).equals(onDemand)).toBe(true);
    expect(instantiate).toHaveBeenCalledTimes(1);
    releaseSubsetter();
    expect((await subset()).equals(onDemand)).toBe(true);
    expect(instantiate).toHaveBeenCalledTimes(2);
  });

  it("is made again after a preparation that failed", async () => {
    releaseSubsetter();
    const instantiate = vi.spyOn(WebAssembly, "instantiate").mockRejectedValueOnce(new Error("out of memory"));
    await expect(prepareSubsetter()).rejects.toThrow("out of memory");
    expect((await subset()).length).toBeGreaterThan(0);
    expect(instantiate).toHaveBeenCalledTimes(2);
  });
});
