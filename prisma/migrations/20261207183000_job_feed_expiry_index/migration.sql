-- The change feed's sweep (job_feed_sweep, every 30 s on every instance) looks for the open jobs
-- whose valid_through passed since the last sweep. No index led with valid_through after the gate's
-- columns, so the planner read it from the middle of a wider index, every entry of the open jobs:
-- 224 ms and 6,400 blocks a sweep at a million jobs (EXPLAIN ANALYZE), and once past the statement
-- limit on a freshly seeded database. This index holds only the open jobs that expire: 3.5 MB at a
-- million jobs, and the sweep's search a seek (0.09 ms).
-- Prisma's schema cannot describe a partial index: schema.prisma does not name this one, and the
-- drift check keeps it (scripts/lib/schema-engine.ts, INDEXES_BEYOND_PRISMA).
CREATE INDEX "jobs_open_valid_through_idx" ON "jobs" ("valid_through")
  WHERE "status" = 'published' AND NOT "filled" AND "valid_through" IS NOT NULL;
