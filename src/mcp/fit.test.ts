// The result size limit: a page keeps the items that fit (at least one), and a single value over
// the limit has its longest texts cut, each saying so, until it fits.
import { describe, expect, it } from "vitest";
import { CUT_MARK, cutLongTexts, itemsThatFit } from "./fit.ts";

describe("the result size limit", () => {
  it("keeps a page's items while they fit, and always the first", () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ id: i, text: "x".repeat(100) }));
    const page: { items: unknown[]; total: number } = { items, total: 10 };
    expect(itemsThatFit(page, 100_000)).toBe(10);
    const one = JSON.stringify(items[0]).length;
    expect(itemsThatFit(page, 3 * one + 40)).toBe(3);
    expect(itemsThatFit(page, 10)).toBe(1);
  });

  it("leaves a value that fits alone, and cuts the longest texts of one that does not", () => {
    const small = { a: "short" };
    expect(cutLongTexts(small, 1_000)).toEqual({ value: small, cut: false });
    const big = {
      title: "A job",
      description_html: `<p>${"word ".repeat(20_000)}</p>`,
      description_text: "y".repeat(30_000),
    };
    const { value, cut } = cutLongTexts(big, 20_000);
    expect(cut).toBe(true);
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(20_000);
    expect(value.title).toBe("A job");
    expect(value.description_html.endsWith(CUT_MARK)).toBe(true);
    expect(value.description_text.endsWith(CUT_MARK)).toBe(true);
    // The original is not changed.
    expect(big.description_text).toHaveLength(30_000);
  });

  it("counts JSON escapes: texts of quotes and newlines still end within the limit", () => {
    const { value } = cutLongTexts({ text: '"\n'.repeat(30_000) }, 10_000);
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(10_000);
  });
});
