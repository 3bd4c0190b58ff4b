-- AlterTable
ALTER TABLE "compression_jobs" ADD COLUMN     "linearize" BOOLEAN NOT NULL DEFAULT false;
