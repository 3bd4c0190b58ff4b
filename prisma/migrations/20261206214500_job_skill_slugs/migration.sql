-- Written by hand: Prisma cannot declare triggers.
--
-- The `skill` filter reads the job's row: skill_slugs holds the slugs of its skills, kept by the
-- triggers that keep skill_names (migration relevance_and_places), now for both columns. A page
-- of a skill with another filter (skill=airflow&employment_type=contract) walks the filter's
-- list order until 50 jobs match; with the skills in "_JobSkills" each walked job cost a probe of
-- the link table and of skills besides its own row (first calls from disk: 1.5 s, 503s in the
-- cold phase at a million jobs). Where a skill is rare, the GIN index gives its jobs instead.
-- The backfill rewrites every job once (minutes at a million jobs, under an exclusive lock: run it
-- when traffic is low); no feed event follows (job_feed_on_write compares public columns only).
ALTER TABLE "jobs" ADD COLUMN "skill_slugs" TEXT[] NOT NULL DEFAULT '{}';
UPDATE "jobs" j SET "skill_slugs" = s.slugs
  FROM (SELECT js."A" AS job_id, array_agg(k.slug ORDER BY k.slug) AS slugs
          FROM "_JobSkills" js JOIN "skills" k ON k.id = js."B" GROUP BY js."A") s
 WHERE s.job_id = j.id;
CREATE INDEX "jobs_skill_slugs_idx" ON "jobs" USING GIN ("skill_slugs");

-- skill_slugs of one job, from its links (sorted, as skill_names is).
CREATE OR REPLACE FUNCTION job_skill_slugs(job uuid) RETURNS text[]
  LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(k.slug ORDER BY k.slug), '{}')
    FROM "_JobSkills" js JOIN "skills" k ON k.id = js."B" WHERE js."A" = job
$$;

CREATE OR REPLACE FUNCTION job_skill_names_on_link() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "jobs" SET "skill_names" = job_skill_names(OLD."A"), "skill_slugs" = job_skill_slugs(OLD."A")
     WHERE id = OLD."A";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "jobs" SET "skill_names" = job_skill_names(NEW."A"), "skill_slugs" = job_skill_slugs(NEW."A")
     WHERE id = NEW."A";
  END IF;
  RETURN NULL;
END $$;

-- A skill renamed or given a new slug: its jobs' names and slugs follow.
CREATE OR REPLACE FUNCTION job_skill_names_on_rename() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "jobs" j SET "skill_names" = job_skill_names(j.id), "skill_slugs" = job_skill_slugs(j.id)
   WHERE j.id IN (SELECT js."A" FROM "_JobSkills" js WHERE js."B" = NEW.id);
  RETURN NULL;
END $$;

DROP TRIGGER job_skill_names_rename ON "skills";
CREATE TRIGGER job_skill_names_rename AFTER UPDATE OF "name", "slug" ON "skills"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name" OR OLD."slug" IS DISTINCT FROM NEW."slug")
  EXECUTE FUNCTION job_skill_names_on_rename();
