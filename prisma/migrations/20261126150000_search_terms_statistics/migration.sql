-- Written by hand: Prisma cannot declare a column's statistics target.
-- The planner estimates how many jobs hold a word of `q` from the most common elements of these
-- arrays. With the default target (100) it keeps about 1,000 words; any other word is guessed at
-- 0.5 % of the table, so a page of a rare word walked the date index looking for 50 matches
-- (seconds at a million jobs: a cold request over 1 s, or a 503 at the statement limit) instead of
-- reading the few matches from the GIN index and sorting them. At 1000 the statistics keep about
-- 10,000 words with their frequencies, and a word outside them is estimated as rarer than all of
-- them. ANALYZE samples 300,000 rows instead of 30,000 for these columns.
ALTER TABLE "jobs" ALTER COLUMN "search_terms" SET STATISTICS 1000;
ALTER TABLE "jobs" ALTER COLUMN "title_terms" SET STATISTICS 1000;
ALTER TABLE "jobs" ALTER COLUMN "head_terms" SET STATISTICS 1000;
ANALYZE "jobs" ("search_terms", "title_terms", "head_terms");
