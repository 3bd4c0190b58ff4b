// A folder a newcomer can take in at a glance: no folder of src holds more than 25 source files
// side by side (tests count, as they sit beside their sources); a larger one is split into rooms
// that say what they hold, as src/pdf is (fonts/, images/, structure/…). src/generated is
// Prisma's output, made by `npm run generate`, not read as source.
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const MAX_FILES = 25;
const SOURCE = /\.(ts|tsx|js|mjs|cjs)$/;
const GENERATED = new Set([path.join(root, "src/generated")]);

/** Every folder below `dir` (itself included) with the number of source files directly in it. */
function sourceCounts(dir: string): Array<{ folder: string; files: number }> {
  if (GENERATED.has(dir)) return [];
  const entries = readdirSync(dir, { withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile() && SOURCE.test(entry.name)).length;
  const below = entries
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => sourceCounts(path.join(dir, entry.name)));
  return [{ folder: path.relative(root, dir), files }, ...below];
}

describe("folder size", () => {
  it(`no folder of src holds more than ${MAX_FILES} source files side by side`, () => {
    const counts = sourceCounts(path.join(root, "src"));
    expect(counts.map(({ folder }) => folder)).toContain("src/pdf/fonts");
    expect(counts.filter(({ files }) => files > MAX_FILES)).toEqual([]);
  });
});
