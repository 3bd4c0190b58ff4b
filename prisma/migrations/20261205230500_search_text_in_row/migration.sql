-- Keep what search reads row by row in the row: jobs.search_terms and description_text compressed
-- in line (MAIN), so that description_html goes out of line first. A relevance page of a word found
-- only in descriptions walks the newest jobs and checks each row's search_terms; out of line it was
-- three more blocks a row from the TOAST table (a word in 0.9 % of a million jobs: 24,361 blocks
-- for a page, 1.1-1.3 s as a first call; at 100,000 jobs 3.35 blocks a walked row before, 1.01
-- after). A phrase's check reads description_text of its candidates the same way. The HTML is
-- read only by a job's detail, one row. ALTER ... SET STORAGE rewrites nothing: rows take the
-- new layout as they are written (every job the seed or an update writes).
ALTER TABLE "jobs" ALTER COLUMN "search_terms" SET STORAGE MAIN;
ALTER TABLE "jobs" ALTER COLUMN "description_text" SET STORAGE MAIN;
