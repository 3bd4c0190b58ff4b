-- CreateTable
CREATE TABLE "sign_in_tokens" (
    "id" UUID NOT NULL,
    "subscriber_id" UUID NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "sign_in_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dashboard_sessions" (
    "id" UUID NOT NULL,
    "subscriber_id" UUID NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "dashboard_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "sign_in_tokens_hash_key" ON "sign_in_tokens"("hash");

-- CreateIndex
CREATE INDEX "sign_in_tokens_subscriber_id_idx" ON "sign_in_tokens"("subscriber_id");

-- CreateIndex
CREATE UNIQUE INDEX "dashboard_sessions_hash_key" ON "dashboard_sessions"("hash");

-- CreateIndex
CREATE INDEX "dashboard_sessions_subscriber_id_idx" ON "dashboard_sessions"("subscriber_id");

-- AddForeignKey
ALTER TABLE "sign_in_tokens" ADD CONSTRAINT "sign_in_tokens_subscriber_id_fkey" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_subscriber_id_fkey" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE CASCADE ON UPDATE CASCADE;
