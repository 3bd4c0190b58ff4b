// How far a relevance tier's bounded walk may go (ranked-sql.ts, walkRows): the fixed bound for a
// first page, and in proportion to the offset for a page deep in a common word (at a million jobs
// `q=engineer&offset=9950` read and sorted all 528,000 matches past the walk: a 503).
import { describe, expect, it } from "vitest";
import type { SearchReading } from "../../src/graphql/search/reading.ts";
import { walkBound, walkRows } from "../../src/graphql/types/job/ranked-sql.ts";

const oneWord = (word: string) => ({ groups: [[{ text: word, alternatives: [[word]] }]] }) as unknown as SearchReading;

describe("walkRows", () => {
  const shares = new Map([["engin", 0.3]]);

  it("keeps the fixed bound for a first page", () => {
    expect(walkRows(oneWord("engin"), shares, 0)).toBe(walkBound.rows);
  });

  it("walks twice what the word's share needs for the rows an offset skips, beyond the bound", () => {
    expect(walkRows(oneWord("engin"), shares, 9_950)).toBe(walkBound.rows + Math.ceil(19_900 / 0.3));
  });

  it("keeps the fixed bound for a word the statistics do not count", () => {
    expect(walkRows(oneWord("kestrel"), shares, 10_000)).toBe(walkBound.rows);
  });
});
