-- AlterTable
ALTER TABLE "webhook_secrets" ADD COLUMN     "previous_secret" TEXT,
ADD COLUMN     "previous_until" TIMESTAMPTZ(3);
