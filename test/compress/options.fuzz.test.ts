// Any value of any option field, in any combination: parsed, or refused with 400 invalid_<field>
// naming one of the fields sent (never another error, never a throw of anything else). FUZZ_RUNS
// sets the runs for a long run (docs/input-validation.md).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HttpError } from "../../src/errors.ts";
import { fuzzRuns, hostileText, integerEdges } from "../helpers/fuzz.ts";
import { OPTION_FIELDS, parseOptions } from "../../src/compress/workflow/options.ts";

const value = fc.oneof(hostileText, integerEdges, fc.constantFrom("true", "false", "balanced", "lossless", "remove"));
const fields = fc.dictionary(fc.constantFrom(...OPTION_FIELDS), value, { maxKeys: OPTION_FIELDS.length });

describe("option fields, fuzzed", () => {
  it("are parsed or refused with 400 naming a field that was sent", () => {
    fc.assert(
      fc.property(fields, (sent) => {
        try {
          const options = parseOptions(sent);
          expect(["lossless", "balanced", "extreme"]).toContain(options.profile);
        } catch (error) {
          expect(error).toBeInstanceOf(HttpError);
          const { status, code } = error as HttpError;
          expect(status).toBe(400);
          expect(Object.keys(sent).map((field) => `invalid_${field}`)).toContain(code);
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});
