// A failing property prints its seed (fast-check's `seed: …` in the failure): FUZZ_SEED=<that>
// replays the same cases in every fast-check suite (docs/development.md).
import fc from "fast-check";

const seed = Number(process.env["FUZZ_SEED"]);
if (process.env["FUZZ_SEED"] !== undefined && Number.isInteger(seed)) fc.configureGlobal({ seed });
