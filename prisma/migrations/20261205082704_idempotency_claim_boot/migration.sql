-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "boot_id" UUID;
