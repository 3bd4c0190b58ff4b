-- AlterTable: a stored generated column (edited by hand: Prisma cannot declare one). The
-- lexemes of to_tsvector('english', ...) as an array, so the `q` filter is array containment,
-- which Prisma expresses as `hasEvery` and the GIN index below answers.
ALTER TABLE "jobs" ADD COLUMN "search_terms" TEXT[] NOT NULL
    GENERATED ALWAYS AS (tsvector_to_array(to_tsvector('english'::regconfig, "title" || ' ' || "description_text"))) STORED;

-- CreateIndex
CREATE INDEX "jobs_search_terms_idx" ON "jobs" USING GIN ("search_terms");
