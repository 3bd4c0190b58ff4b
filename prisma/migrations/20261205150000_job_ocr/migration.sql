-- Issue 43: the ocr and ocr_languages options of a job (src/compress/workflow/options.ts).
ALTER TABLE "compression_jobs" ADD COLUMN     "ocr" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "ocr_languages" TEXT;
