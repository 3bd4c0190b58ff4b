-- Written partly by hand: Prisma cannot declare extensions, functions, generated columns,
-- triggers or seed values.
--
-- Search that forgives (issue 40). pg_trgm gives the vocabulary below a trigram index, which
-- finds the words nearest a mistyped one (KNN, `<->`) and the words a last, unfinished word
-- begins (LIKE 'pyth%'); unaccent folds accents, so "zurich" finds Zürich. Both ship in
-- PostgreSQL's contrib and in the PGlite build the embedded mode uses (src/db/pglite-extensions.ts).
-- fuzzystrmatch is not used: its levenshtein() counts a swap of two letters ("pyhton") as two
-- typos; the edit distance with transpositions is computed on the few candidates in the service.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- A word as the vocabulary compares it: lowercase, accents folded, only letters and digits
-- ("front-end" and "frontend" alike, "node.js" as "nodejs"). unaccent() is STABLE (its dictionary
-- could change); naming the dictionary makes this IMMUTABLE, as a generated column needs.
CREATE OR REPLACE FUNCTION search_plain(word text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, word)), '[^[:alnum:]]+', '', 'g');

-- AlterTable
ALTER TABLE "places" ADD COLUMN     "alias_keys" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Local and English names of the known cities, as name_key holds names.
UPDATE "places" SET "alias_keys" = v.aliases FROM (VALUES
  ('munich', ARRAY['munchen', 'muenchen']),
  ('zurich', ARRAY['zuerich', 'zuri']),
  ('lisbon', ARRAY['lisboa']),
  ('warsaw', ARRAY['warszawa']),
  ('bengaluru', ARRAY['bangalore']),
  ('mexico city', ARRAY['ciudad de mexico', 'cdmx']),
  ('new york', ARRAY['new york city', 'nyc']),
  ('montreal', ARRAY['montreal']),
  ('sao paulo', ARRAY['sao paulo']),
  ('barcelona', ARRAY['barna']),
  ('tokyo', ARRAY['tokio']),
  ('stockholm', ARRAY['stockholm']),
  ('dublin', ARRAY['baile atha cliath']),
  ('san francisco', ARRAY['sf'])
) AS v(name_key, aliases)
WHERE "places"."name_key" = v.name_key;

-- CreateTable (the column made a stored generated column by hand)
CREATE TABLE "search_words" (
    "word" TEXT NOT NULL,
    "plain" TEXT NOT NULL GENERATED ALWAYS AS (search_plain(word)) STORED,

    CONSTRAINT "search_words_pkey" PRIMARY KEY ("word")
);

-- CreateIndex
CREATE INDEX "search_words_plain_idx" ON "search_words" USING GIST ("plain" gist_trgm_ops);

-- Every word a job's searchable text holds joins the vocabulary when the job is written. Words are
-- never removed (a word no public job holds finds nothing, and is never reported: the service
-- checks what it reports against the public jobs).
CREATE OR REPLACE FUNCTION search_words_on_job_write() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "search_words" ("word") SELECT DISTINCT unnest(NEW."search_terms") ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER job_search_words_on_write AFTER INSERT OR UPDATE OF "title", "description_text", "skill_names" ON "jobs"
  FOR EACH ROW EXECUTE FUNCTION search_words_on_job_write();

-- The whole vocabulary from the jobs (the seed disables the trigger for its bulk load and calls this once).
CREATE OR REPLACE FUNCTION search_words_rebuild() RETURNS void
  LANGUAGE sql AS $$
  INSERT INTO "search_words" ("word") SELECT DISTINCT w FROM "jobs", unnest("search_terms") AS w ON CONFLICT DO NOTHING
$$;

SELECT search_words_rebuild();
