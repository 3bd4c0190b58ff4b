// The curated synonyms and abbreviations of the trade. Each group's expressions are equivalent: a
// query holding one of them (a word, or words side by side) also finds the others. Reported in a
// search's reading with SYNONYMS_VERSION, so a client can tell which list answered. Change the list
// by a reviewed commit that raises the version; never per request.

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

/** The other expressions equivalent to these words, or null when the list has none. */
export function synonymsOf(words: readonly string[]): string[] | null {
  const key = phraseKey(words);
  const group = groupOfKey.get(key);
  return group ? group.filter((e) => phraseKey(e.split(/\s+/u)) !== key) : null;
}
