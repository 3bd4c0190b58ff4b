// The curated synonyms and abbreviations of the trade. Each group's expressions are equivalent: a
// query holding one of them (a word, or words side by side) also finds the others. Reported in a
// search's reading with SYNONYMS_VERSION, so a client can tell which list answered. Change the list
// by a reviewed commit that raises the version; never per request. An expression of several words
// is also recognised with a typo in a word of 4 letters or more (./typos.ts) and, when the query
// ends with it, with its last word unfinished ("natural language proces").
import { typoDistance, typosAllowed } from "./typos.ts";

export const SYNONYMS_VERSION = 1;

export const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ["ML", "machine learning"],
  ["AI", "artificial intelligence"],
  ["SRE", "site reliability engineer", "site reliability engineering"],
  ["k8s", "Kubernetes"],
  ["JS", "JavaScript"],
  ["TS", "TypeScript"],
  ["dev", "developer"],
  ["frontend", "front end"],
  ["backend", "back end"],
  ["fullstack", "full stack"],
  ["PM", "product manager"],
  ["EM", "engineering manager"],
  ["QA", "quality assurance"],
  ["UX", "user experience"],
  ["UI", "user interface"],
  ["NLP", "natural language processing"],
  ["CV", "computer vision"],
  ["LLM", "large language model"],
  ["RAG", "retrieval augmented generation"],
  ["golang", "Go"],
  ["postgres", "PostgreSQL"],
  ["GCP", "Google Cloud"],
  ["AWS", "Amazon Web Services"],
  ["SWE", "software engineer"],
  ["DevRel", "developer advocate"],
  ["pentest", "penetration testing"],
  ["IAM", "identity and access management"],
  ["MLOps", "machine learning operations"],
  ["sklearn", "scikit-learn"],
  ["RN", "React Native"],
];

/** A word as synonyms and places compare it: lowercase, accents folded, only letters and digits. */
export const plainWord = (word: string): string =>
  word
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "");

/** An expression as a key: its words' plain forms, space-separated ("machine learning"). */
export const phraseKey = (words: readonly string[]): string => words.map(plainWord).filter(Boolean).join(" ");

const groupOfKey = new Map<string, readonly string[]>();
for (const group of SYNONYM_GROUPS) {
  for (const expression of group) groupOfKey.set(phraseKey(expression.split(/\s+/u)), group);
}

/** The longest number of words of an expression in the list. */
export const SYNONYM_MAX_WORDS = Math.max(...SYNONYM_GROUPS.flat().map((e) => e.split(/\s+/u).length));

/** Whether a typed word stands for a word of an expression: the same, within its typos, or begun by it. */
function standsFor(typed: string, word: string, unfinished: boolean): boolean {
  if (typed === word) return true;
  const allowed = typosAllowed(typed);
  if (!unfinished) return allowed > 0 && typoDistance(typed, word, allowed) <= allowed;
  if (typed.length >= 3 && word.startsWith(typed)) return true;
  return (
    allowed > 0 && [0, 1, -1].some((k) => typoDistance(typed, word.slice(0, typed.length + k), allowed) <= allowed)
  );
}

/**
 * The other expressions equivalent to these words, or null when the list has none. Words spelled
 * as an expression of the list find its group's other expressions; words that stand for an
 * expression of two or more words (a typo, or the last word unfinished when `unfinished`) find
 * every expression of its group, the one they stand for too.
 */
export function synonymsOf(words: readonly string[], unfinished = false): string[] | null {
  const key = phraseKey(words);
  const group = groupOfKey.get(key);
  if (group) return group.filter((e) => phraseKey(e.split(/\s+/u)) !== key);
  const typed = key.split(" ");
  if (typed.length < 2) return null;
  const found = new Set<string>();
  for (const [expression, members] of groupOfKey) {
    const target = expression.split(" ");
    if (target.length !== typed.length) continue;
    if (typed.every((w, i) => standsFor(w, target[i]!, unfinished && i === typed.length - 1))) {
      for (const member of members) found.add(member);
    }
  }
  return found.size > 0 ? [...found] : null;
}
