-- AlterTable (edited by hand: Prisma cannot declare a generated column). Stored generated columns,
-- written in one statement so a large jobs table is rewritten once (it holds an exclusive lock
-- meanwhile: about a minute at a million jobs; run it when traffic is low).
-- location_terms: the lowercased city, state and country code, so the `location` filter ("has every
-- one of these parts") is array containment, which Prisma expresses as `hasEvery` and a GIN index
-- answers. salary_top: the top of the salary range, which `salary_min` is compared with and
-- `sort=salary` orders by.
ALTER TABLE "jobs"
    ADD COLUMN "location_terms" TEXT[] NOT NULL
        GENERATED ALWAYS AS (array_remove(ARRAY[lower("location_city"), lower("location_state"), lower("location_country"::text)], NULL::text)) STORED,
    ADD COLUMN "salary_top" INTEGER
        GENERATED ALWAYS AS (COALESCE("salary_max", "salary_min")) STORED;

-- AlterTable (edited by hand, as above)
ALTER TABLE "talents"
    ADD COLUMN "location_terms" TEXT[] NOT NULL
        GENERATED ALWAYS AS (array_remove(ARRAY[lower("location_city"), lower("location_state"), lower("location_country"::text)], NULL::text)) STORED;

-- CreateIndex
CREATE INDEX "jobs_location_terms_idx" ON "jobs" USING GIN ("location_terms");

-- CreateIndex
CREATE INDEX "jobs_status_filled_salary_currency_salary_period_published__idx" ON "jobs"("status", "filled", "salary_currency", "salary_period", "published_at" DESC, "id" DESC, "valid_through", "salary_top");

-- CreateIndex
CREATE INDEX "jobs_status_filled_salary_currency_salary_period_salary_top_idx" ON "jobs"("status", "filled", "salary_currency", "salary_period", "salary_top" DESC, "id" DESC, "published_at", "valid_through");

-- CreateIndex
CREATE INDEX "talents_location_terms_idx" ON "talents" USING GIN ("location_terms");
