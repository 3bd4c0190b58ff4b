// How many typos a word may have, and how many it has. Algolia's defaults: a word of 4 characters
// or more may have one typo, of 8 or more two (Meilisearch waits for 5 and 9; job words are short:
// "rust", "java"). A typo is a letter added, left out, changed, or two neighbours swapped
// ("pyhton"): the optimal string alignment distance, where Levenshtein counts a swap as two.

export const ONE_TYPO_FROM = 4;
export const TWO_TYPOS_FROM = 8;

export const typosAllowed = (word: string): number =>
  word.length >= TWO_TYPOS_FROM ? 2 : word.length >= ONE_TYPO_FROM ? 1 : 0;

/** The optimal string alignment distance of a and b, or max + 1 as soon as it must exceed max. */
export function typoDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, beforePrevious[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    beforePrevious = previous;
    previous = row;
  }
  return Math.min(previous[b.length]!, max + 1);
}
