// How a search read `q`, answered beside a page of jobs (JobPage.search; REST meta.search): the
// words searched, the phrases, the words left out, those ignored, each widening (joined forms,
// synonyms, completions, corrections), and the place or company taken as a filter.
import { builder } from "../builder.ts";
import { listSize } from "../cost.ts";
import { SEARCH_MAX_LENGTH } from "./reading.ts";
import { COMPANIES_NAMED_MAX } from "./names-in-query.ts";
import { COMPLETIONS_MAX } from "./vocabulary.ts";
import { JobPage } from "../types/job/page.ts";
import type { Expansion, SearchReading } from "./reading.ts";

// A q of at most 200 characters holds at most 100 words (a letter and a space each).
const perWord = listSize({ atMost: SEARCH_MAX_LENGTH / 2 });
import type { NamedCompanies, NamedPlace } from "./names-in-query.ts";

const SearchExpansionKind = builder.enumType("SearchExpansionKind", {
  values: {
    JOINED: { description: "The word's hyphenated or joined forms (front-end for frontend, node.js for nodejs)." },
    SYNONYM: { description: "The curated synonyms or abbreviation (ML for machine learning)." },
    COMPLETION: { description: "The last word was unfinished: the words of the catalog it begins." },
    CORRECTION: { description: "No public job holds the word: the nearest words within its typos." },
  },
});

const SearchExpansionRef = builder.objectRef<Expansion>("SearchExpansion").implement({
  description: "A word of q also taken for others.",
  fields: (t) => ({
    word: t.exposeString("word", { description: "The word or words as typed." }),
    kind: t.field({ type: SearchExpansionKind, resolve: (e) => e.kind }),
    to: t.exposeStringList("to", {
      ...listSize({ atMost: COMPLETIONS_MAX }),
      description: "What they were also taken for: words as the catalog stores them (English stems), or the synonyms.",
    }),
  }),
});

const SearchPlaceRef = builder.objectRef<NamedPlace>("SearchPlace").implement({
  description:
    "A known place named in q, taken as a filter: the jobs in that city (at its coordinates, which follow a job's city and country).",
  fields: (t) => ({
    city: t.exposeString("city"),
    state: t.exposeString("state", { nullable: true }),
    country: t.exposeString("country", { description: "ISO 3166-1 alpha-2." }),
    location: t.exposeString("location", {
      description: "The location filter naming the same city (it also matches a state or country of that name).",
    }),
  }),
});

const SearchCompanyRef = builder.objectRef<NamedCompanies>("SearchCompany").implement({
  description: "A public company named in q, taken as the company filter (every public company of that name).",
  fields: (t) => ({
    name: t.exposeString("name"),
    slugs: t.exposeStringList("slugs", listSize({ atMost: COMPANIES_NAMED_MAX })),
  }),
});

export const SearchReadingRef = builder.objectRef<SearchReading>("SearchReading").implement({
  description: "How filter.q was read.",
  fields: (t) => ({
    words: t.exposeStringList("words", { ...perWord, description: "The words (or synonym expressions) searched for." }),
    phrases: t.exposeStringList("phrases", {
      ...perWord,
      description: "Quoted phrases: the words next to each other, in order.",
    }),
    excluded: t.exposeStringList("excludedWords", {
      ...perWord,
      description: "-words and -phrases: no job holding one is listed.",
    }),
    ignored: t.exposeStringList("ignored", {
      ...perWord,
      description: "Common words (the, and) that find nothing by themselves.",
    }),
    expansions: t.field({ type: [SearchExpansionRef], ...perWord, resolve: (r) => r.expansions }),
    place: t.field({ type: SearchPlaceRef, nullable: true, resolve: (r) => r.place }),
    company: t.field({ type: SearchCompanyRef, nullable: true, resolve: (r) => r.company }),
    synonymsVersion: t.exposeInt("synonymsVersion", { description: "The version of the curated synonym list." }),
  }),
});

builder.objectFields(JobPage, (t) => ({
  search: t.field({
    type: SearchReadingRef,
    nullable: true,
    description: "How filter.q was read; null without q.",
    resolve: (page) => (page as { search?: Promise<SearchReading> | null }).search ?? null,
  }),
}));
