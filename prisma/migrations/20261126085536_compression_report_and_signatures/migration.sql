-- AlterTable
ALTER TABLE "compression_jobs" ADD COLUMN     "signatures" TEXT;

-- AlterTable
ALTER TABLE "compressions" ADD COLUMN     "report" JSONB;
