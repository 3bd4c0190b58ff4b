// The `q` filter's words: the lexemes of a search text, by the same to_tsvector configuration that
// fills jobs.search_terms, remembered (a search box repeats).
import type { GraphQLContext } from "../../context.ts";
import { badArgument } from "../../paging.ts";

const SEARCH_MAX_LENGTH = 200;

/** The lexemes of a search text, by the same to_tsvector configuration that fills jobs.search_terms. */
// The lexemes of a text never change: remember the most recent ones (a search box repeats).
const lexemeCache = new Map<string, string[]>();
const LEXEME_CACHE_SIZE = 1_000;

export async function searchTerms(ctx: GraphQLContext, q: string): Promise<string[]> {
  if (q.length > SEARCH_MAX_LENGTH) throw badArgument("q", `q must be at most ${SEARCH_MAX_LENGTH} characters`);
  let terms = lexemeCache.get(q);
  if (!terms) {
    terms = await lexemesOf(ctx, q);
    if (lexemeCache.size >= LEXEME_CACHE_SIZE) lexemeCache.delete(lexemeCache.keys().next().value!);
    lexemeCache.set(q, terms);
  }
  if (terms.length === 0) throw badArgument("q", "q must contain at least one word that is not a common word");
  return terms;
}

async function lexemesOf(ctx: GraphQLContext, q: string): Promise<string[]> {
  const [row] = await ctx.prisma.$queryRaw<{ terms: string[] }[]>`
    SELECT tsvector_to_array(to_tsvector('english'::regconfig, ${q})) AS terms`;
  return row?.terms ?? [];
}
