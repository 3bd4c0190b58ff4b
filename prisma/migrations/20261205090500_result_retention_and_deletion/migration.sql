-- CreateEnum
CREATE TYPE "CompressionKind" AS ENUM ('compress', 'unlock');

-- CreateEnum
CREATE TYPE "ResultDeletion" AS ENUM ('request', 'retention', 'download');

-- AlterTable
ALTER TABLE "compressions" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "deleted_by" "ResultDeletion",
ADD COLUMN     "expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "kind" "CompressionKind" NOT NULL DEFAULT 'compress',
ADD COLUMN     "retention_seconds" INTEGER;

-- AlterTable
ALTER TABLE "direct_uploads" ADD COLUMN     "compression_id" UUID;

-- AlterTable
ALTER TABLE "subscribers" ADD COLUMN     "retention_seconds" INTEGER;

-- CreateIndex
CREATE INDEX "compressions_expires_at_idx" ON "compressions"("expires_at");

-- CreateIndex
CREATE INDEX "compressions_object_name_idx" ON "compressions"("object_name");

-- CreateIndex
CREATE INDEX "direct_uploads_compression_id_idx" ON "direct_uploads"("compression_id");

-- AddForeignKey
ALTER TABLE "direct_uploads" ADD CONSTRAINT "direct_uploads_compression_id_fkey" FOREIGN KEY ("compression_id") REFERENCES "compressions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
