-- near walks the public jobs' points (a skip through the coordinates' index) and each point's jobs
-- newest first (a list within a radius) or in id order (sort=distance): src/graphql/types/job/
-- ranked-sql.ts, pointsWithin. Two orders of the same columns, each read from the index alone.
-- Building them reads the jobs table twice (seconds to a minute at a million jobs).
-- DropIndex
DROP INDEX "jobs_status_filled_latitude_longitude_published_at_valid_th_idx";

-- CreateIndex
CREATE INDEX "jobs_status_filled_latitude_longitude_published_at_id_valid_idx" ON "jobs"("status", "filled", "latitude", "longitude", "published_at", "id", "valid_through");

-- CreateIndex
CREATE INDEX "jobs_status_filled_latitude_longitude_id_published_at_valid_idx" ON "jobs"("status", "filled", "latitude", "longitude", "id", "published_at", "valid_through");
