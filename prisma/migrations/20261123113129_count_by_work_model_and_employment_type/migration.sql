-- DropIndex
DROP INDEX "jobs_status_filled_work_model_published_at_valid_through_idx";

-- CreateIndex
CREATE INDEX "jobs_status_filled_work_model_employment_type_published_at__idx" ON "jobs"("status", "filled", "work_model", "employment_type", "published_at", "valid_through");
