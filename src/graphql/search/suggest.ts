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

/** The typos by which `typed` (words, the last unfinished) begins the words of `name` from `at`, or null. */
function typosAt(typed: string[], name: string[], at: number): number | null {
  let typos = 0;
  for (let i = 0; i < typed.length; i++) {
    const word = typed[i]!;
    const target = name[at + i];
    if (target === undefined) return null;
    const last = i === typed.length - 1;
    const compared = last ? target.slice(0, word.length) : target;
    if (word === compared) continue;
    const allowed = typosAllowed(word);
    // An unfinished word may also be a letter short of or past the name's prefix.
    const d = last
      ? Math.min(...[0, -1, 1].map((k) => typoDistance(word, target.slice(0, word.length + k), allowed)))
      : typoDistance(word, compared, allowed);
    if (d > allowed) return null;
    typos += d;
  }
  return typos;
}

/** The fewest typos by which `typed` begins some run of a name's words, or null. */
export function matchTypos(typed: string[], entry: Pick<NamedEntry, "keys">): number | null {
  let best: number | null = null;
  for (const key of entry.keys) {
    for (let at = 0; at < key.length; at++) {
      const t = typosAt(typed, key, at);
      if (t !== null && (best === null || t < best)) best = t;
    }
  }
  return best;
}

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
  const wanted = new Set(kinds);
  const found: Suggestion[] = [];
  for (const entry of names) {
    if (!wanted.has(entry.kind)) continue;
    const typos = matchTypos(typed, entry);
    if (typos !== null) found.push({ ...entry, typos });
  }
  found.sort((a, b) => a.typos - b.typos || b.openJobs - a.openJobs || a.text.localeCompare(b.text));
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
