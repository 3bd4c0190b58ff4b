-- AlterTable
ALTER TABLE "compressions" ADD COLUMN     "boot_id" UUID,
ADD COLUMN     "held_until" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "compressions_status_held_until_idx" ON "compressions"("status", "held_until");
