-- A search's words are looked up as company names (src/graphql/search/names-in-query.ts:
-- q=hegmann and sons is the company's filter). The lookup compares search_plain(name), name
-- without case, accents and punctuation, with each run of the words; without an index it computed
-- that for every public company on every request with q: 50-70 ms at 5,000 companies (a bitmap
-- scan of 451 blocks), for every keystroke of search as you type. With it: 0.4 ms, 6 blocks.
-- Prisma's schema cannot describe an index on an expression: schema.prisma does not name this one,
-- and the drift check keeps it (scripts/lib/schema-engine.ts, INDEXES_BEYOND_PRISMA).
CREATE INDEX "companies_search_plain_name_idx" ON "companies" (search_plain("name")) WHERE "has_public_page";
