// The size limit of a tool's result. An agent reads all of it (the structured result, and the same
// JSON again as text), so a result is kept under RESULT_MAX_CHARS characters of JSON: a page drops
// items off its end (the next call starts at the first one dropped); a single item over the limit
// (a job with a very long description) has its longest texts cut, each saying so.

/**
 * About 12,000 tokens of JSON. In the demo data a page of 50 jobs is about 36,500 characters (10:
 * 7,500), 50 agents 39,000, a job 2,400 to 3,500, a company with its open jobs up to 8,200.
 */
export const RESULT_MAX_CHARS = 48_000;

/** Appended to a text that was cut. */
export const CUT_MARK = " … [cut to fit the result's size limit; links.self has it in full]";

/** The shortest a cut text is left. */
const KEEP_AT_LEAST = 500;

const jsonLength = (value: unknown) => JSON.stringify(value).length;

/** The longest string leaf of a JSON value: its holder, key and length. */
function longestString(value: unknown): { holder: Record<string, unknown>; key: string; length: number } | null {
  let best: { holder: Record<string, unknown>; key: string; length: number } | null = null;
  const visit = (node: unknown) => {
    if (node === null || typeof node !== "object") return;
    const holder = node as Record<string, unknown>;
    for (const [key, child] of Object.entries(holder)) {
      if (typeof child === "string") {
        if (!best || child.length > best.length) best = { holder, key, length: child.length };
      } else visit(child);
    }
  };
  visit(value);
  return best;
}

/** `value`, or a copy with its longest strings cut until its JSON fits in `maxChars` (or nothing long is left). */
export function cutLongTexts<T>(value: T, maxChars = RESULT_MAX_CHARS): { value: T; cut: boolean } {
  let length = jsonLength(value);
  if (length <= maxChars) return { value, cut: false };
  const copy = structuredClone(value);
  for (let round = 0; round < 50 && length > maxChars; round++) {
    const longest = longestString(copy);
    if (!longest || longest.length <= KEEP_AT_LEAST + CUT_MARK.length) break;
    const text = longest.holder[longest.key] as string;
    // JSON escapes make the text longer than its characters: the loop cuts again if needed.
    const keep = Math.max(KEEP_AT_LEAST, text.length - (length - maxChars) - CUT_MARK.length);
    longest.holder[longest.key] = `${text.slice(0, keep)}${CUT_MARK}`;
    length = jsonLength(copy);
  }
  return { value: copy, cut: true };
}

/** How many of a page's items fit, with the rest of the result, in `maxChars` (at least one). */
export function itemsThatFit(result: { items: unknown[] }, maxChars = RESULT_MAX_CHARS): number {
  const overhead = jsonLength({ ...result, items: [] });
  let length = overhead;
  let count = 0;
  for (const item of result.items) {
    length += jsonLength(item) + (count > 0 ? 1 : 0);
    if (length > maxChars && count > 0) break;
    count++;
  }
  return count;
}
