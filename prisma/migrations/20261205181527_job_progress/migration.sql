-- Issue 43: a job's progress, pages done of the document's pages (src/compress/async-jobs/progress.ts).
ALTER TABLE "compression_jobs" ADD COLUMN     "pages_done" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "pages_total" INTEGER;
