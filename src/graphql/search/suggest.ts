// `suggest` (GET /api/v1/suggest, the MCP tool suggest): completions of what a person or an agent
// is typing, among the names that lead to open jobs (./suggest-names.ts): job titles, skills,
// companies with a public page and known places. The words typed must begin the name's words in
// order (the last one may be unfinished); a word of 4 letters or more may have a typo, of 8 or
// more two (./typos.ts). Exact matches first, then by open jobs, then by name. Each suggestion
// carries the filter of GET /jobs it stands for.
import { builder } from "../builder.ts";
import { listSize } from "../cost.ts";
import { badArgument } from "../paging.ts";
import { suggestableNames, type NamedEntry, type SuggestionKind } from "./suggest-names.ts";
import { phraseKey } from "./synonyms.ts";
import { typoDistance, typosAllowed } from "./typos.ts";

export const SUGGEST_Q_MAX = 100;
export const SUGGEST_LIMIT_DEFAULT = 10;
export const SUGGEST_LIMIT_MAX = 50;

/** How many of `word`'s letters `target` lacks: each one is a typo at least (a cheap bound before measuring). */
function lettersMissing(word: string, target: string): number {
  let missing = 0;
  for (const letter of word) if (!target.includes(letter)) missing++;
  return missing;
}

/** The typos by which a typed word stands for a name's word (the last one: begins it), or null past its allowance. */
function wordTypos(word: string, target: string, last: boolean): number | null {
  const compared = last ? target.slice(0, word.length) : target;
  if (word === compared) return 0;
  const allowed = typosAllowed(word);
  if (allowed === 0 || lettersMissing(word, last ? target.slice(0, word.length + allowed) : target) > allowed) {
    return null;
  }
  // An unfinished word may also be a letter short of or past the name's prefix.
  const d = last
    ? Math.min(...[0, -1, 1].map((k) => typoDistance(word, target.slice(0, word.length + k), allowed)))
    : typoDistance(word, compared, allowed);
  return d > allowed ? null : d;
}

/**
 * The typos of each typed word against a name's word, remembered for one ranking: names share
 * their words (companies' "Labs", "Group"; titles' "Engineer"), so each pair is measured once.
 */
type WordMatcher = (i: number, target: string) => number | null;

function wordMatcher(typed: string[]): WordMatcher {
  const memo = typed.map(() => new Map<string, number | null>());
  return (i, target) => {
    const seen = memo[i]!;
    let typos = seen.get(target);
    if (typos === undefined) {
      typos = wordTypos(typed[i]!, target, i === typed.length - 1);
      seen.set(target, typos);
    }
    return typos;
  };
}

/** Where a word stands among the names: entry, which of its keys, which word of it. */
type Occurrence = { entry: number; key: number; at: number };

// Every distinct word of a names snapshot with where it stands, built once per snapshot (the
// snapshot is kept a minute): a ranking measures each distinct word once against the first typed
// word, and looks further only where one stands for it (4,306 names at a million jobs).
const indexes = new WeakMap<readonly NamedEntry[], Map<string, Occurrence[]>>();

function wordIndex(names: readonly NamedEntry[]): Map<string, Occurrence[]> {
  let index = indexes.get(names);
  if (index) return index;
  index = new Map();
  names.forEach((entry, e) =>
    entry.keys.forEach((key, k) =>
      key.forEach((word, at) => {
        let list = index.get(word);
        if (!list) index.set(word, (list = []));
        list.push({ entry: e, key: k, at });
      }),
    ),
  );
  indexes.set(names, index);
  return index;
}

/** For each name, the fewest typos by which `typed` begins some run of its words (names none begins are absent). */
function typosOfNames(names: readonly NamedEntry[], typed: string[], wanted: Set<SuggestionKind>): Map<number, number> {
  const match = wordMatcher(typed);
  const best = new Map<number, number>();
  for (const [word, occurrences] of wordIndex(names)) {
    const first = match(0, word);
    if (first === null) continue;
    for (const { entry, key, at } of occurrences) {
      if (!wanted.has(names[entry]!.kind)) continue;
      const words = names[entry]!.keys[key]!;
      let typos: number | null = first;
      for (let i = 1; i < typed.length && typos !== null; i++) {
        const target = words[at + i];
        const d = target === undefined ? null : match(i, target);
        typos = d === null ? null : typos + d;
      }
      if (typos !== null && typos < (best.get(entry) ?? Infinity)) best.set(entry, typos);
    }
  }
  return best;
}

const byName = new Intl.Collator();

export interface Suggestion extends NamedEntry {
  typos: number;
}

export function rankSuggestions(
  names: NamedEntry[],
  q: string,
  kinds: readonly SuggestionKind[],
  limit: number,
): Suggestion[] {
  const typed = phraseKey(q.split(/\s+/u)).split(" ").filter(Boolean);
  if (typed.length === 0) return [];
  const found: Suggestion[] = [];
  for (const [entry, typos] of typosOfNames(names, typed, new Set(kinds))) found.push({ ...names[entry]!, typos });
  found.sort((a, b) => a.typos - b.typos || b.openJobs - a.openJobs || byName.compare(a.text, b.text));
  return found.slice(0, limit);
}

const SuggestionKindEnum = builder.enumType("SuggestionKind", {
  values: {
    TITLE: { description: "A job title; filter.q finds its jobs." },
    SKILL: { description: "A skill; filter.skill is its slug." },
    COMPANY: { description: "A company with a public page; filter.company is its slug." },
    PLACE: { description: "A known place; filter.location names it." },
  },
});

const SuggestionFilter = builder.objectRef<NamedEntry["filter"]>("SuggestionFilter").implement({
  description: "The filter of jobs (GET /jobs's parameters) a suggestion stands for; one of them is set.",
  fields: (t) => ({
    q: t.exposeString("q", { nullable: true }),
    skill: t.exposeString("skill", { nullable: true }),
    company: t.exposeString("company", { nullable: true }),
    location: t.exposeString("location", { nullable: true }),
  }),
});

const SuggestionRef = builder.objectRef<Suggestion>("Suggestion").implement({
  description: "A completion of what is being typed, leading to open jobs.",
  fields: (t) => ({
    kind: t.field({ type: SuggestionKindEnum, resolve: (s) => s.kind }),
    text: t.exposeString("text", { description: "The name as the catalog spells it." }),
    openJobs: t.exposeInt("openJobs", {
      description:
        "Public open jobs it leads to: exact for skills, companies and places; for a title, how many of the newest 20,000 open jobs hold it.",
    }),
    typos: t.exposeInt("typos", { description: "Typos between what was typed and the name (0: it begins the name)." }),
    filter: t.field({ type: SuggestionFilter, resolve: (s) => s.filter }),
  }),
});

builder.queryFields((t) => ({
  suggest: t.field({
    type: [SuggestionRef],
    ...listSize({ argument: "limit", max: SUGGEST_LIMIT_MAX }),
    description:
      "Completions of q among job titles, skills, companies and places that lead to open jobs: q's words begin the name's words in order, the last may be unfinished, a word of 4+ letters may have a typo (8+: two). Exact matches first, then by open jobs.",
    args: {
      q: t.arg.string({ required: true, description: `What is being typed, 1 to ${SUGGEST_Q_MAX} characters.` }),
      kinds: t.arg({
        type: [SuggestionKindEnum],
        description: "The kinds of names to suggest (default all).",
      }),
      limit: t.arg.int({ defaultValue: SUGGEST_LIMIT_DEFAULT, description: `1 to ${SUGGEST_LIMIT_MAX}.` }),
    },
    resolve: async (_root, args, ctx) => {
      const limit = args.limit ?? SUGGEST_LIMIT_DEFAULT;
      if (limit < 1 || limit > SUGGEST_LIMIT_MAX) throw badArgument("limit", `limit must be 1 to ${SUGGEST_LIMIT_MAX}`);
      if (args.q.length > SUGGEST_Q_MAX || phraseKey(args.q.split(/\s+/u)) === "") {
        throw badArgument("q", `q must hold a letter or digit and be at most ${SUGGEST_Q_MAX} characters`);
      }
      const kinds = args.kinds?.length ? args.kinds : (["TITLE", "SKILL", "COMPANY", "PLACE"] as const);
      return rankSuggestions(await suggestableNames(ctx), args.q, kinds, limit);
    },
  }),
}));
