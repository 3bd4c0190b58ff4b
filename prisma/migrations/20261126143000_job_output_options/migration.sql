-- AlterTable
ALTER TABLE "compression_jobs" ADD COLUMN     "grayscale" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "max_image_ppi" INTEGER,
ADD COLUMN     "remove_metadata" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "target_size" BIGINT;
