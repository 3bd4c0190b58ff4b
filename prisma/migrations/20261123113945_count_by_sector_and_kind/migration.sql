-- CreateIndex
CREATE INDEX "jobs_status_filled_sector_id_work_model_employment_type_pub_idx" ON "jobs"("status", "filled", "sector_id", "work_model", "employment_type", "published_at", "valid_through");
