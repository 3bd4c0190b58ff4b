// walkIsCheaper on the statistics of the catalog seeded with a million jobs (pg_stats' shares of
// head_terms, 2026-12-06), against what pgbench measured at 8 connections for each tier statement.
import { describe, expect, it } from "vitest";
import type { ReadTerm, SearchReading } from "../../search/reading.ts";
import { walkBound, walkFloor, walkIsCheaper, walkRows } from "./ranked-sql.ts";

const HEAD_SHARES = new Map([
  ["python", 0.05737],
  ["develop", 0.03846],
  ["kubeflow", 0.05758],
  ["data", 0.16621],
  ["engin", 0.67559],
]);
const ROWS = 1_000_000;
const term = (...alternatives: string[][]): ReadTerm => ({ text: alternatives[0]!.join(" "), alternatives });
const reading = (...groups: ReadTerm[]) => ({ groups: groups.map((t) => [t]) }) as unknown as SearchReading;

describe("walkIsCheaper", () => {
  it("reads the matches of common words that are rare together (python developer: walked 80 ms, read 55)", () => {
    const q = reading(term(["pyhton"], ["python"]), term(["develop"], ["dev"]));
    expect(walkIsCheaper(q, HEAD_SHARES, ROWS, 50)).toBe(false);
  });

  it("walks for a common word alone (python: 4 against 730)", () => {
    expect(walkIsCheaper(reading(term(["python"])), HEAD_SHARES, ROWS, 50)).toBe(true);
    expect(walkIsCheaper(reading(term(["engin"])), HEAD_SHARES, 3 * ROWS, 50)).toBe(true);
  });

  // Their share together is a product only for independent words: kubeflow python's title tier
  // holds no job at a million, and walked 15,100 for nothing (title tier: 56-67 ms, read: 27-37).
  it("reads the matches of two words or more whatever their shares, at any size of the table", () => {
    for (const rows of [ROWS, 3 * ROWS]) {
      expect(walkIsCheaper(reading(term(["kubeflow"]), term(["python"])), HEAD_SHARES, rows, 50)).toBe(false);
      expect(walkIsCheaper(reading(term(["data"]), term(["engin"])), HEAD_SHARES, rows, 50)).toBe(false);
      expect(
        walkIsCheaper(reading(term(["pyhton"], ["python"]), term(["develop"], ["dev"])), HEAD_SHARES, rows, 50),
      ).toBe(false);
    }
  });

  it("reads the matches when a deep offset makes the walk long, and when a word's share is unknown", () => {
    expect(walkIsCheaper(reading(term(["kubeflow"]), term(["python"])), HEAD_SHARES, ROWS, 1_000)).toBe(false);
    expect(walkIsCheaper(reading(term(["kestrel"])), HEAD_SHARES, ROWS, 50)).toBe(false);
  });

  // q=data&offset=20000 read 88,886 matches' rows and sorted them (1.78 s: a 503); said once it
  // walks 308,000 index entries in 0.18-0.70 s. A first page's choice is as measured before.
  it("walks for an offset page deep in a common word, counting the matches' rows fetched", () => {
    const data = reading(term(["data"]));
    expect(walkIsCheaper(data, HEAD_SHARES, ROWS, 20_050)).toBe(false);
    expect(walkIsCheaper(data, HEAD_SHARES, ROWS, 20_050, 20_000)).toBe(true);
    // A word few jobs hold still reads its matches, offset or not.
    const rare = new Map([["kestrel", 0.001]]);
    expect(walkIsCheaper(reading(term(["kestrel"])), rare, ROWS, 70, 20)).toBe(false);
  });

  it("counts a phrase as all its words and a group as any of its terms", () => {
    const phrase: ReadTerm = {
      text: "data engineer",
      alternatives: [["data", "engin"]],
      phrase: { lexemes: ["data", "engin"] },
    };
    expect(walkIsCheaper(reading(phrase), HEAD_SHARES, ROWS, 50)).toBe(true);
    const either = { groups: [[term(["kubeflow"]), term(["python"])]] } as unknown as SearchReading;
    expect(walkIsCheaper(either, HEAD_SHARES, ROWS, 50)).toBe(true);
  });
});

describe("walkFloor", () => {
  const day = 86_400_000;
  // Ten days of publication times, a thousand jobs a day (ten buckets of a day each).
  const published = { bounds: Array.from({ length: 11 }, (_, i) => i * day), rows: 10_000 };

  it("finds the time after which about `rows` jobs were published up to `before`", () => {
    expect(walkFloor(published, 10 * day, 1_000)).toBe(9 * day);
    expect(walkFloor(published, 10 * day, 2_500)).toBe(7.5 * day);
    // From a cursor inside the histogram: 1,500 jobs before day 6.5.
    expect(walkFloor(published, 6.5 * day, 1_500)).toBe(5 * day);
    // Jobs published since the statistics were taken count as if at the newest bound.
    expect(walkFloor(published, 12 * day, 1_000)).toBe(9 * day);
  });

  it("sets no floor where fewer jobs than that came before, or without a histogram", () => {
    expect(walkFloor(published, 10 * day, 10_000)).toBeNull();
    expect(walkFloor(published, 2 * day, 2_000)).toBeNull();
    expect(walkFloor(published, -day, 1)).toBeNull();
    expect(walkFloor(null, 10 * day, 1_000)).toBeNull();
    expect(walkFloor({ bounds: published.bounds, rows: 0 }, 10 * day, 1_000)).toBeNull();
  });
});

// How far a tier's bounded walk may go: the fixed bound for a first page, and in proportion to the
// offset for a page deep in a common word (`q=engineer&offset=9950` read and sorted all 528,000
// matches past the bound: a 503).
describe("walkRows", () => {
  it("keeps the fixed bound for a first page", () => {
    expect(walkRows(reading(term(["engin"])), HEAD_SHARES, 0)).toBe(walkBound.rows);
  });

  it("walks twice what the word's share needs for the rows an offset skips, beyond the bound", () => {
    expect(walkRows(reading(term(["data"])), HEAD_SHARES, 9_950)).toBe(walkBound.rows + Math.ceil(19_900 / 0.16621));
  });

  it("keeps the fixed bound for a word the statistics do not count", () => {
    expect(walkRows(reading(term(["kestrel"])), HEAD_SHARES, 9_950)).toBe(walkBound.rows);
  });
});
