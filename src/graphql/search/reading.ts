// How `q` is read (issue 40): its syntax (./syntax.ts), a known place or a public company named in
// it (taken as that filter), the curated synonyms (./synonyms.ts), and for every word the forms
// people write it in: hyphenated or joined ("data-engineer", "frontend"), any case and accents,
// the last word unfinished ("pyth"), a typo or two ("pyhton"). The reading lists, per term, the
// sets of lexemes any of which finds it; ./conditions-sql.ts turns it into conditions on the jobs'
// stored lexeme arrays. It also says how the words were understood, for the answer.
import type { GraphQLContext } from "../context.ts";
import { badArgument } from "../paging.ts";
import { prismaSql, type SqlQuery } from "../sql.ts";
import { parseQuery, QuerySyntaxError, type Term } from "./syntax.ts";
import { phraseKey, plainWord, SYNONYM_MAX_WORDS, synonymsOf, SYNONYMS_VERSION } from "./synonyms.ts";
import { typoDistance, typosAllowed } from "./typos.ts";
import {
  analyse,
  completionsOf,
  entriesWithPlain,
  heldByPublicJobs,
  nearestEntries,
  type Analysed,
  type Entry,
} from "./vocabulary.ts";
import { companiesNamed, placeNamed, type NamedCompanies, type NamedPlace } from "./names-in-query.ts";

export const SEARCH_MAX_LENGTH = 200;

/** How a word was widened, for the answer. */
export interface Expansion {
  /** The word or words as typed. */
  word: string;
  kind: "JOINED" | "SYNONYM" | "COMPLETION" | "CORRECTION";
  /** What they were also taken for: lexemes of the vocabulary, or the synonyms' expressions. */
  to: string[];
}

/** A term to find: any of `alternatives` (each a set of lexemes that must all occur); a phrase also in order. */
export interface ReadTerm {
  text: string;
  alternatives: string[][];
  phrase?: { lexemes: string[] };
}

export interface SearchReading {
  /** Every group must hold: any of its terms. Empty when q named only a place or a company. */
  groups: ReadTerm[][];
  /** No job holding any of these is listed. */
  excluded: ReadTerm[];
  place: NamedPlace | null;
  company: NamedCompanies | null;
  /** The report: what was searched for and how. */
  words: string[];
  phrases: string[];
  excludedWords: string[];
  ignored: string[];
  expansions: Expansion[];
  synonymsVersion: number;
}

export interface ReadingOptions {
  /** Whether a place in q may become the place filter (not when location or near is given). */
  places: boolean;
  /** Whether a company in q may become the company filter (not when company is given). */
  companies: boolean;
}

// A reading depends on the vocabulary and on which jobs are public: remembered a minute per
// database and text (a search box repeats; a new word or job is seen within the minute).
const READING_CACHE_MS = 60_000;
const READING_CACHE_SIZE = 1_000;
const readings = new WeakMap<object, Map<string, { at: number; reading: Promise<SearchReading> }>>();

/** The reading of q, remembered for a minute. A malformed q is a BAD_USER_INPUT error on argument q. */
export function readSearch(ctx: GraphQLContext, q: string, options: ReadingOptions): Promise<SearchReading> {
  if (q.length > SEARCH_MAX_LENGTH) throw badArgument("q", `q must be at most ${SEARCH_MAX_LENGTH} characters`);
  let parsed;
  try {
    parsed = parseQuery(q);
  } catch (error) {
    if (error instanceof QuerySyntaxError) throw badArgument("q", `q: ${error.message}`);
    throw error;
  }
  let cache = readings.get(ctx.prisma);
  if (!cache) {
    cache = new Map<string, { at: number; reading: Promise<SearchReading> }>();
    readings.set(ctx.prisma, cache);
  }
  const key = `${options.places ? "p" : "-"}${options.companies ? "c" : "-"}${q}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < READING_CACHE_MS) return hit.reading;
  const reading = readParsed(ctx, parsed.groups, parsed.excluded, options);
  reading.catch(() => cache.delete(key));
  if (cache.size >= READING_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, { at: Date.now(), reading });
  return reading;
}

/** A run of single-word groups, the unit places, companies and synonyms are looked for in. */
type Span = { start: number; words: string[] };

function singleWordRuns(groups: Term[][]): Span[] {
  const runs: Span[] = [];
  let run: Span | null = null;
  groups.forEach((group, index) => {
    const term = group.length === 1 ? group[0] : undefined;
    if (term?.kind === "word") {
      if (!run) runs.push((run = { start: index, words: [] }));
      run.words.push(term.text);
    } else run = null;
  });
  return runs;
}

/** Every span of `n` to 1 consecutive single words, longest first. */
function* spans(groups: Term[][], maxWords: number): Generator<Span> {
  for (const run of singleWordRuns(groups)) {
    for (let n = Math.min(maxWords, run.words.length); n >= 1; n--) {
      for (let i = 0; i + n <= run.words.length; i++) yield { start: run.start + i, words: run.words.slice(i, i + n) };
    }
  }
}

/**
 * A hyphenated or slashed word with an abbreviation or expression of the synonyms inside it
 * ("nlp-engineer", "machine-learning-engineer") as its words, so the synonyms apply to them; other
 * compounds stay whole ("data-engineer" also finds data-engin and the joined "dataengineer").
 */
function splitCompoundWithSynonyms(group: Term[]): Term[][] {
  const term = group.length === 1 ? group[0]! : null;
  if (term?.kind !== "word" || !/[-/]/u.test(term.text) || synonymsOf([term.text])) return [group];
  const parts = term.text.split(/[-/]+/u).filter((p) => /[\p{L}\p{N}]/u.test(p));
  if (parts.length < 2) return [group];
  const hasSynonyms = [
    ...spans(
      parts.map((p) => [{ kind: "word", text: p, prefix: false }]),
      SYNONYM_MAX_WORDS,
    ),
  ].some((span) => synonymsOf(span.words) !== null);
  if (!hasSynonyms) return [group];
  return parts.map((text, i) => [{ kind: "word", text, prefix: term.prefix && i === parts.length - 1 }]);
}

async function readParsed(
  ctx: GraphQLContext,
  parsedGroups: Term[][],
  parsedExcluded: Term[],
  options: ReadingOptions,
): Promise<SearchReading> {
  const sql = ctx.sql ?? prismaSql(ctx.prisma);
  const groups = parsedGroups.flatMap(splitCompoundWithSynonyms);
  const taken = new Set<number>();
  const takeSpan = (span: Span) => span.words.forEach((_, i) => taken.add(span.start + i));
  const isFree = (span: Span) => span.words.every((_, i) => !taken.has(span.start + i));

  let place: NamedPlace | null = null;
  if (options.places) {
    for (const span of spans(groups, 4)) {
      if (!isFree(span)) continue;
      place = await placeNamed(ctx.prisma, span.words.join(" "));
      if (place) {
        takeSpan(span);
        break;
      }
    }
  }
  let company: NamedCompanies | null = null;
  if (options.companies) {
    const candidates = [...spans(groups, 6)].filter(isFree);
    company = await companiesNamed(
      sql,
      candidates.map((s) => s.words),
    );
    const span = company && candidates.find((s) => phraseKey(s.words) === company!.key);
    if (span) takeSpan(span);
  }
  // Synonyms: the longest expression of the list first, each word in one at most.
  const synonymSpans: (Span & { synonyms: string[] })[] = [];
  const lastGroup = groups[groups.length - 1];
  const lastUnfinished = lastGroup?.length === 1 && lastGroup[0]!.kind === "word" && lastGroup[0]!.prefix;
  for (const span of spans(groups, SYNONYM_MAX_WORDS)) {
    const unfinished = lastUnfinished && span.start + span.words.length === groups.length;
    const synonyms = isFree(span) ? synonymsOf(span.words, unfinished) : null;
    if (synonyms) {
      synonymSpans.push({ ...span, synonyms });
      takeSpan(span);
    }
  }
  const synonymAt = new Map(synonymSpans.map((s) => [s.start, s]));
  const kept: { terms: Term[]; synonyms?: string[] }[] = [];
  groups.forEach((group, index) => {
    const syn = synonymAt.get(index);
    if (syn) {
      const prefix = index + syn.words.length === groups.length && group[0]?.kind === "word" && group[0].prefix;
      kept.push({
        terms: [{ kind: "word", text: syn.words.join(" "), prefix: prefix ?? false }],
        synonyms: syn.synonyms,
      });
    } else if (!taken.has(index)) kept.push({ terms: group });
  });
  return readTerms(sql, ctx.now, kept, parsedExcluded, { place, company });
}

/** What a term is typed as, and what the database says of each form of it. */
interface TermForms {
  term: Term;
  synonyms: string[];
  /** Indexes into the analysed texts. */
  whole: number;
  parts: number;
  synonymTexts: number[];
}

/** The terms' texts, analysed in one statement: each as typed, its parts, its synonyms. */
async function analyseTerms(sql: SqlQuery, kept: { terms: Term[]; synonyms?: string[] }[], excludedTerms: Term[]) {
  const texts: string[] = [];
  const add = (text: string) => texts.push(text) - 1;
  const partsOf = (text: string) => text.split(/[^\p{L}\p{N}]+/u).join(" ");
  const formsOf = (term: Term, synonyms: string[] = []): TermForms => ({
    term,
    synonyms,
    whole: add(term.text),
    parts: add(partsOf(term.text)),
    synonymTexts: synonyms.map((s) => add(partsOf(s))),
  });
  const groupForms = kept.map((k) => k.terms.map((t) => formsOf(t, k.synonyms)));
  const excludedForms = excludedTerms.map((t) => formsOf(t));
  return { groupForms, excludedForms, analysed: await analyse(sql, texts) };
}

/** What the vocabulary says of the terms: joined forms, the last word's completions, which words public jobs hold. */
interface Vocabulary {
  analysed: Analysed[];
  /** The entries of each plain form, as sets of lexemes. */
  joinedByPlain: Map<string, string[][]>;
  /** The last word's completions that public jobs hold, as sets of lexemes. */
  completions: string[][];
  held: Set<string>;
}

const hasPunctuation = (text: string) => /[^\p{L}\p{N}]/u.test(text);

/** Whether the last word is completed: when no job holds it as typed, or it ends unfinished ("next."). */
const completesLast = (f: TermForms, v: Vocabulary) =>
  v.completions.length > 0 && (/[^\p{L}\p{N}]$/u.test(f.term.text) || !baseAlternatives(f, v).own.some(isHeldIn(v)));

async function lookUpVocabulary(
  sql: SqlQuery,
  now: Date,
  analysed: Analysed[],
  forms: TermForms[],
  last: TermForms | null,
): Promise<Vocabulary> {
  // Joined forms: the words' plain forms, as typed and as stemmed ("dataengineer", "dataengin").
  const joinedPlains = new Set<string>();
  for (const f of forms) {
    if (f.term.kind !== "word") continue;
    joinedPlains.add(analysed[f.whole]!.plain);
    const parts = analysed[f.parts]!.lexemes;
    if (parts.length === 1) joinedPlains.add(plainWord(parts[0]!));
  }
  const joined = await entriesWithPlain(sql, [...joinedPlains].filter(Boolean));
  const joinedByPlain = new Map<string, string[][]>();
  for (const row of joined) joinedByPlain.set(row.plain, [...(joinedByPlain.get(row.plain) ?? []), row.lexemes]);
  const vocabulary: Vocabulary = { analysed, joinedByPlain, completions: [], held: new Set() };
  const candidates = new Set<string>();
  for (const f of forms) for (const set of baseAlternatives(f, vocabulary).all) for (const w of set) candidates.add(w);
  const completions = last ? await completionsOf(sql, analysed[last.whole]!.plain) : [];
  for (const c of completions) for (const w of c.lexemes) candidates.add(w);
  vocabulary.held = await heldByPublicJobs(sql, [...candidates], now);
  vocabulary.completions = dedupe(completions.map((c) => c.lexemes).filter(isHeldIn(vocabulary)));
  return vocabulary;
}

const isHeldIn = (v: Pick<Vocabulary, "held">) => (set: string[]) => set.length > 0 && set.every((w) => v.held.has(w));

/**
 * The corrections of a word no public job holds in any of its forms: the vocabulary's nearest
 * entries (by trigrams: the stems and the spellings of titles and skills, so "engnieer" is one
 * typo from engineer, not three from engin) within its typos, those with the fewest, held by public
 * jobs. A word with punctuation is measured whole ("noed.js" against node.js), never by one part.
 */
async function correctionsOf(sql: SqlQuery, now: Date, f: TermForms, v: Vocabulary): Promise<string[][]> {
  if (f.term.kind !== "word" || f.synonyms.length > 0) return [];
  if (baseAlternatives(f, v).all.some(isHeldIn(v))) return [];
  const plain = v.analysed[f.whole]!.plain;
  const allowed = typosAllowed(plain);
  if (allowed === 0) return [];
  const partPlains = hasPunctuation(f.term.text) ? [] : v.analysed[f.parts]!.lexemes.map(plainWord);
  const probes = [...new Set([plain, ...partPlains])];
  const near: Entry[] = (await Promise.all(probes.map((p) => nearestEntries(sql, p)))).flat();
  const measured = near
    .map((n) => ({ lexemes: n.lexemes, d: Math.min(...probes.map((p) => typoDistance(p, n.plain, allowed))) }))
    .filter((n) => n.d >= 1 && n.d <= allowed);
  const fewest = Math.min(...measured.map((n) => n.d));
  const best = dedupe(measured.filter((n) => n.d === fewest).map((n) => n.lexemes)).slice(0, 5);
  const held = await heldByPublicJobs(sql, best.flat(), now);
  return best.filter(isHeldIn({ held }));
}

/** One term as read: its alternatives, and what widened it (reported). null: a common word only. */
function readTerm(
  f: TermForms,
  v: Vocabulary,
  widen: { completions: boolean; corrections: string[][] } | null,
  report: { expansions: Expansion[]; ignored: string[] },
): ReadTerm | null {
  if (f.term.kind === "phrase") {
    const lexemes = v.analysed[f.parts]!.lexemes;
    if (lexemes.length === 0) report.ignored.push(f.term.text);
    return lexemes.length === 0 ? null : { text: f.term.text, alternatives: [lexemes], phrase: { lexemes } };
  }
  const { all, joinedForms } = baseAlternatives(f, v);
  const alternatives = [...all];
  const isHeld = isHeldIn(v);
  if (widen) {
    const word = f.term.text;
    if (joinedForms.some(isHeld)) {
      report.expansions.push({ word, kind: "JOINED", to: joinedForms.filter(isHeld).map(spelled) });
    }
    if (f.synonyms.length > 0) report.expansions.push({ word, kind: "SYNONYM", to: f.synonyms });
    // The last word completed when the catalog does not hold it as typed (search as you type).
    if (widen.completions) {
      alternatives.push(...v.completions);
      report.expansions.push({ word, kind: "COMPLETION", to: v.completions.map(spelled) });
    }
    if (widen.corrections.length > 0) {
      alternatives.push(...widen.corrections);
      report.expansions.push({ word, kind: "CORRECTION", to: widen.corrections.map(spelled) });
    }
  }
  if (alternatives.length === 0) report.ignored.push(f.term.text);
  return alternatives.length === 0 ? null : { text: f.term.text, alternatives: dedupe(alternatives) };
}

async function readTerms(
  sql: SqlQuery,
  now: Date,
  kept: { terms: Term[]; synonyms?: string[] }[],
  excludedTerms: Term[],
  found: { place: NamedPlace | null; company: NamedCompanies | null },
): Promise<SearchReading> {
  const { groupForms, excludedForms, analysed } = await analyseTerms(sql, kept, excludedTerms);
  const lastForm = groupForms[groupForms.length - 1]?.at(-1);
  const last = lastForm?.term.kind === "word" && lastForm.term.prefix ? lastForm : null;
  const v = await lookUpVocabulary(sql, now, analysed, [...groupForms.flat(), ...excludedForms], last);
  const report = { expansions: [] as Expansion[], ignored: [] as string[] };
  const groups: ReadTerm[][] = [];
  for (const forms of groupForms) {
    const group: ReadTerm[] = [];
    for (const f of forms) {
      const completes = f === last && completesLast(f, v);
      const corrections = completes ? [] : await correctionsOf(sql, now, f, v);
      const term = readTerm(f, v, { completions: completes, corrections }, report);
      if (term) group.push(term);
    }
    if (group.length > 0) groups.push(group);
  }
  const excluded = excludedForms.map((f) => readTerm(f, v, null, report)).filter((t): t is ReadTerm => t !== null);
  if (groups.length === 0 && !found.place && !found.company) {
    throw badArgument("q", "q must contain at least one word that is not a common word");
  }
  const terms = groups.flat();
  return {
    groups,
    excluded,
    place: found.place,
    company: found.company,
    words: terms.filter((t) => !t.phrase).map((t) => t.text),
    phrases: terms.filter((t) => t.phrase).map((t) => t.text),
    excludedWords: excluded.map((t) => t.text),
    ignored: report.ignored,
    expansions: report.expansions,
    synonymsVersion: SYNONYMS_VERSION,
  };
}

/**
 * A word's forms that need no correction: its parts' lexemes together ("data-engineer": data and
 * engin), its hyphenated compounds as the text holds them ("data-engin"), the vocabulary's words
 * with its joined plain form ("frontend" and "front-end"), and its synonyms' lexemes.
 */
function baseAlternatives(f: TermForms, v: Pick<Vocabulary, "analysed" | "joinedByPlain">) {
  const parts = v.analysed[f.parts]!.lexemes;
  if (f.term.kind === "phrase") {
    const sets = parts.length ? [parts] : [];
    return { all: sets, own: sets, joinedForms: [] as string[][] };
  }
  const own: string[][] = [];
  if (parts.length > 0) own.push(parts);
  for (const lexeme of v.analysed[f.whole]!.lexemes) if (/[^\p{L}\p{N}]/u.test(lexeme)) own.push([lexeme]);
  const plains = new Set([v.analysed[f.whole]!.plain, ...(parts.length === 1 ? parts.map(plainWord) : [])]);
  const ownKeys = new Set(own.map(setKey));
  const joinedForms = [...plains]
    .flatMap((p) => v.joinedByPlain.get(p) ?? [])
    .filter((set) => !ownKeys.has(setKey(set)));
  const synonymSets = f.synonymTexts.map((i) => v.analysed[i]!.lexemes).filter((set) => set.length > 0);
  return { all: dedupe([...own, ...joinedForms, ...synonymSets]), own, joinedForms };
}

/** A set of lexemes as reported: the lexemes, space-separated. */
const spelled = (set: string[]) => set.join(" ");

const setKey = (set: string[]) => [...set].sort().join(" ");

function dedupe(sets: string[][]): string[][] {
  const seen = new Set<string>();
  return sets.filter((set) => {
    const key = setKey(set);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
