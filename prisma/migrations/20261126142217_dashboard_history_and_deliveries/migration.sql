-- AlterTable
ALTER TABLE "compressions" ADD COLUMN     "filename" TEXT;

-- CreateIndex
CREATE INDEX "webhook_deliveries_job_id_created_at_idx" ON "webhook_deliveries"("job_id", "created_at");
