-- AlterTable
ALTER TABLE "compressions" ADD COLUMN     "options" JSONB;
