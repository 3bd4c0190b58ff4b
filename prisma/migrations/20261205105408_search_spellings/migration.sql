-- Written partly by hand: Prisma cannot declare generated columns or triggers.
--
-- The words of the jobs' titles and skill names as written (issue 40's recall): the vocabulary
-- (search_words) holds stems, and a stem is often much shorter than the word people type
-- ("engin" for engineer, "secur" for security, "serv" for serving), so a typo measured against the
-- stem ("engnieer": three edits from engin) or a prefix that is not the stem's ("servi") found
-- nothing. A mistyped or unfinished word is now also measured against these spellings and then
-- searched by their lexemes. Titles and skill names only: they are the words people search for,
-- and a vocabulary of every description word would be a million-job scan per rebuild.

-- CreateTable (the columns made stored generated columns by hand)
CREATE TABLE "search_spellings" (
    "spelling" TEXT NOT NULL,
    "plain" TEXT NOT NULL GENERATED ALWAYS AS (search_plain(spelling)) STORED,
    "lexemes" TEXT[] GENERATED ALWAYS AS (tsvector_to_array(to_tsvector('english'::regconfig, spelling))) STORED,

    CONSTRAINT "search_spellings_pkey" PRIMARY KEY ("spelling")
);

-- CreateIndex
CREATE INDEX "search_spellings_plain_idx" ON "search_spellings" USING GIST ("plain" gist_trgm_ops);

-- The spellings of a text: its white-space separated words, lowercased, accents folded, with a
-- letter or a digit and a lexeme (a stop word has none).
CREATE OR REPLACE FUNCTION search_spellings_of(text text) RETURNS SETOF text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT DISTINCT w FROM regexp_split_to_table(lower(public.unaccent('public.unaccent'::regdictionary, text)), '\s+') AS w
   WHERE w ~ '[[:alnum:]]' AND length(w) <= 60 AND to_tsvector('english'::regconfig, w) <> ''::tsvector
$$;

CREATE OR REPLACE FUNCTION search_words_on_job_write() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "search_words" ("word") SELECT DISTINCT unnest(NEW."search_terms") ON CONFLICT DO NOTHING;
  INSERT INTO "search_spellings" ("spelling") SELECT search_spellings_of(NEW."title" || ' ' || NEW."skill_names")
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION search_words_rebuild() RETURNS void
  LANGUAGE sql AS $$
  INSERT INTO "search_words" ("word") SELECT DISTINCT w FROM "jobs", unnest("search_terms") AS w ON CONFLICT DO NOTHING;
  INSERT INTO "search_spellings" ("spelling")
    SELECT DISTINCT s FROM (SELECT DISTINCT "title" || ' ' || "skill_names" AS head FROM "jobs") AS j,
           search_spellings_of(j.head) AS s
    ON CONFLICT DO NOTHING;
$$;

SELECT search_words_rebuild();
