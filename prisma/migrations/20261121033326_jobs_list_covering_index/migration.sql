-- DropIndex
DROP INDEX "jobs_status_filled_published_at_id_idx";

-- CreateIndex
CREATE INDEX "jobs_status_filled_published_at_id_valid_through_idx" ON "jobs"("status", "filled", "published_at" DESC, "id" DESC, "valid_through");
