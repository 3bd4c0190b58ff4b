-- CreateEnum
CREATE TYPE "CompressionJobStatus" AS ENUM ('queued', 'running', 'succeeded', 'failed');

-- CreateEnum
CREATE TYPE "WebhookDeliveryStatus" AS ENUM ('pending', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "compression_jobs" (
    "id" UUID NOT NULL,
    "subscriber_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "compression_id" UUID NOT NULL,
    "profile" "CompressionProfile" NOT NULL,
    "input_object" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "original_size" BIGINT NOT NULL,
    "callback_url" TEXT,
    "api_origin" TEXT NOT NULL,
    "status" "CompressionJobStatus" NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 3,
    "run_after" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_by" TEXT,
    "locked_until" TIMESTAMPTZ(3),
    "error_code" TEXT,
    "error_message" TEXT,
    "compressed_size" BIGINT,
    "object_name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "compression_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "direct_uploads" (
    "id" UUID NOT NULL,
    "subscriber_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "object_name" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "direct_uploads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_secrets" (
    "subscriber_id" UUID NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_secrets_pkey" PRIMARY KEY ("subscriber_id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "last_status" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "compression_jobs_compression_id_key" ON "compression_jobs"("compression_id");

-- CreateIndex
CREATE INDEX "compression_jobs_status_run_after_idx" ON "compression_jobs"("status", "run_after");

-- CreateIndex
CREATE INDEX "compression_jobs_subscriber_id_created_at_idx" ON "compression_jobs"("subscriber_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "direct_uploads_object_name_key" ON "direct_uploads"("object_name");

-- CreateIndex
CREATE INDEX "direct_uploads_expires_at_idx" ON "direct_uploads"("expires_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- AddForeignKey
ALTER TABLE "compression_jobs" ADD CONSTRAINT "compression_jobs_subscriber_id_fkey" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "compression_jobs" ADD CONSTRAINT "compression_jobs_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "compression_jobs" ADD CONSTRAINT "compression_jobs_compression_id_fkey" FOREIGN KEY ("compression_id") REFERENCES "compressions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "direct_uploads" ADD CONSTRAINT "direct_uploads_subscriber_id_fkey" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "direct_uploads" ADD CONSTRAINT "direct_uploads_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_secrets" ADD CONSTRAINT "webhook_secrets_subscriber_id_fkey" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "compression_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
