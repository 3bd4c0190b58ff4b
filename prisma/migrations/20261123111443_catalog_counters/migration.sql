-- CreateTable
CREATE TABLE "catalog_counters" (
    "scope_id" UUID NOT NULL,
    "open_jobs" INTEGER NOT NULL DEFAULT 0,
    "companies" INTEGER NOT NULL DEFAULT 0,
    "talents" INTEGER NOT NULL DEFAULT 0,
    "agents" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "catalog_counters_pkey" PRIMARY KEY ("scope_id")
);

-- CreateTable
CREATE TABLE "job_count_events" (
    "scope_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "delta" INTEGER NOT NULL,

    CONSTRAINT "job_count_events_pkey" PRIMARY KEY ("scope_id","at")
);

-- CreateTable
CREATE TABLE "job_count_settled" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "job_count_settled_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "job_count_events_at_idx" ON "job_count_events"("at");

-- CreateIndex
CREATE INDEX "jobs_status_filled_work_model_published_at_valid_through_idx" ON "jobs"("status", "filled", "work_model", "published_at", "valid_through");

-- CreateIndex
CREATE INDEX "jobs_status_filled_employment_type_published_at_valid_throu_idx" ON "jobs"("status", "filled", "employment_type", "published_at", "valid_through");

-- CreateIndex
CREATE INDEX "jobs_status_filled_updated_at_published_at_valid_through_idx" ON "jobs"("status", "filled", "updated_at", "published_at", "valid_through");

-- Everything below is written by hand: Prisma cannot declare functions or triggers. The design
-- (docs/ARCHITECTURE.md, "Counts"): every relation count of the public read model is kept in
-- catalog_counters by the triggers below, in the same transaction as the change.
--   companies, talents, agents: the gates of companies, talents and agents are columns of the row
--     (has_public_page; visibility and account_state; status), so a plain counter is exact.
--   open_jobs: a job's gate also depends on the clock (published_at <= now < valid_through), so a
--     job that goes live or expires changes the count without any row changing. A statically
--     public job (published, not filled, valid_through after published_at) is an event +1 at
--     published_at and -1 at valid_through; the count at instant t is the sum of the events at or
--     before t. Events at or before job_count_settled.at are summed into open_jobs; later ones
--     wait in job_count_events, one row per scope and instant. A read at t >= settled is
--     open_jobs + the pending deltas at or before t (a short index range); catalog_job_counts_settle()
--     folds the events that have passed into open_jobs, off the request path.
-- Scopes: the nil UUID is the whole catalog; otherwise the id of a sector, skill or company.

-- How far behind the database clock the settled instant stays. A read asks for the count at its
-- request's instant (taken on the application's clock when the request starts); events folded in
-- are at least this old, so no read is ever earlier than a folded event.
CREATE FUNCTION catalog_settle_margin() RETURNS interval
  LANGUAGE sql IMMUTABLE AS $$ SELECT interval '5 minutes' $$;

INSERT INTO "job_count_settled" ("id", "at") VALUES (true, date_trunc('milliseconds', now() - catalog_settle_margin()));

-- True when the job is public for the whole of [published_at, valid_through) and never outside it.
CREATE FUNCTION catalog_job_counted(p_status "JobStatus", p_filled boolean, p_published_at timestamptz, p_valid_through timestamptz)
  RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT p_status = 'published' AND NOT p_filled AND p_published_at IS NOT NULL
     AND (p_valid_through IS NULL OR p_valid_through > p_published_at)
$$;

-- One event of one scope: into the counter when it falls at or before the settled instant, else
-- pending. A scope without a counter row (a sector, skill or company being deleted) is skipped.
CREATE FUNCTION catalog_job_event(p_scope uuid, p_at timestamptz, p_delta integer) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  IF p_at <= (SELECT s."at" FROM "job_count_settled" s) THEN
    UPDATE "catalog_counters" SET "open_jobs" = "open_jobs" + p_delta WHERE "scope_id" = p_scope;
  ELSIF EXISTS (SELECT 1 FROM "catalog_counters" WHERE "scope_id" = p_scope) THEN
    INSERT INTO "job_count_events" AS e ("scope_id", "at", "delta") VALUES (p_scope, p_at, p_delta)
      ON CONFLICT ("scope_id", "at") DO UPDATE SET "delta" = e."delta" + EXCLUDED."delta";
    -- An event undone before its time (a job unpublished, then published again) leaves nothing.
    DELETE FROM "job_count_events" WHERE "scope_id" = p_scope AND "at" = p_at AND "delta" = 0;
  END IF;
END $$;

-- A job's interval counted (p_sign 1) or uncounted (-1) in one scope.
CREATE FUNCTION catalog_job_scope(p_scope uuid, p_published_at timestamptz, p_valid_through timestamptz, p_sign integer)
  RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_scope IS NULL THEN RETURN; END IF;
  PERFORM catalog_job_event(p_scope, p_published_at, p_sign);
  IF p_valid_through IS NOT NULL THEN
    PERFORM catalog_job_event(p_scope, p_valid_through, -p_sign);
  END IF;
END $$;

-- A job counted or uncounted in every scope it belongs to: the catalog, its sector, its company
-- and its skills (in that order, so concurrent writers lock the shared rows in the same order).
CREATE FUNCTION catalog_job_apply(j "jobs", p_sign integer) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  skill uuid;
BEGIN
  IF NOT catalog_job_counted(j."status", j."filled", j."published_at", j."valid_through") THEN RETURN; END IF;
  PERFORM catalog_job_scope('00000000-0000-0000-0000-000000000000', j."published_at", j."valid_through", p_sign);
  PERFORM catalog_job_scope(j."sector_id", j."published_at", j."valid_through", p_sign);
  PERFORM catalog_job_scope(j."company_id", j."published_at", j."valid_through", p_sign);
  FOR skill IN SELECT "B" FROM "_JobSkills" WHERE "A" = j."id" ORDER BY "B" LOOP
    PERFORM catalog_job_scope(skill, j."published_at", j."valid_through", p_sign);
  END LOOP;
END $$;

CREATE FUNCTION catalog_jobs_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM catalog_job_apply(NEW, 1);
  ELSIF TG_OP = 'DELETE' THEN
    -- BEFORE DELETE: the job's skill links are still there (the cascade removes them after).
    PERFORM catalog_job_apply(OLD, -1);
    RETURN OLD;
  ELSIF OLD."status" = NEW."status" AND OLD."filled" = NEW."filled"
    AND OLD."published_at" IS NOT DISTINCT FROM NEW."published_at"
    AND OLD."valid_through" IS NOT DISTINCT FROM NEW."valid_through" THEN
    -- Same interval: only a moved sector or company changes anything.
    IF catalog_job_counted(NEW."status", NEW."filled", NEW."published_at", NEW."valid_through") THEN
      IF OLD."sector_id" IS DISTINCT FROM NEW."sector_id" THEN
        PERFORM catalog_job_scope(OLD."sector_id", OLD."published_at", OLD."valid_through", -1);
        PERFORM catalog_job_scope(NEW."sector_id", NEW."published_at", NEW."valid_through", 1);
      END IF;
      IF OLD."company_id" IS DISTINCT FROM NEW."company_id" THEN
        PERFORM catalog_job_scope(OLD."company_id", OLD."published_at", OLD."valid_through", -1);
        PERFORM catalog_job_scope(NEW."company_id", NEW."published_at", NEW."valid_through", 1);
      END IF;
    END IF;
  ELSE
    PERFORM catalog_job_apply(OLD, -1);
    PERFORM catalog_job_apply(NEW, 1);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_jobs_insert" AFTER INSERT ON "jobs"
  FOR EACH ROW EXECUTE FUNCTION catalog_jobs_changed();
CREATE TRIGGER "catalog_counters_jobs_update" AFTER UPDATE ON "jobs"
  FOR EACH ROW WHEN (
    OLD."status" IS DISTINCT FROM NEW."status" OR OLD."filled" IS DISTINCT FROM NEW."filled"
    OR OLD."published_at" IS DISTINCT FROM NEW."published_at" OR OLD."valid_through" IS DISTINCT FROM NEW."valid_through"
    OR OLD."sector_id" IS DISTINCT FROM NEW."sector_id" OR OLD."company_id" IS DISTINCT FROM NEW."company_id")
  EXECUTE FUNCTION catalog_jobs_changed();
CREATE TRIGGER "catalog_counters_jobs_delete" BEFORE DELETE ON "jobs"
  FOR EACH ROW EXECUTE FUNCTION catalog_jobs_changed();

-- A job's skill linked or unlinked. A link removed by the cascade of a job's deletion finds no
-- job (already uncounted by the job's own trigger) and changes nothing.
CREATE FUNCTION catalog_job_skills_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  j RECORD;
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    SELECT "status", "filled", "published_at", "valid_through" INTO j FROM "jobs" WHERE "id" = OLD."A";
    IF FOUND AND catalog_job_counted(j."status", j."filled", j."published_at", j."valid_through") THEN
      PERFORM catalog_job_scope(OLD."B", j."published_at", j."valid_through", -1);
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    SELECT "status", "filled", "published_at", "valid_through" INTO j FROM "jobs" WHERE "id" = NEW."A";
    IF FOUND AND catalog_job_counted(j."status", j."filled", j."published_at", j."valid_through") THEN
      PERFORM catalog_job_scope(NEW."B", j."published_at", j."valid_through", 1);
    END IF;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_job_skills" AFTER INSERT OR UPDATE OR DELETE ON "_JobSkills"
  FOR EACH ROW EXECUTE FUNCTION catalog_job_skills_changed();

-- Talents: public when visible and active; counted in their sectors and skills.
CREATE FUNCTION catalog_talent_public(p_visibility "ProfileVisibility", p_state "AccountState")
  RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT p_visibility = 'public' AND p_state = 'active' $$;

CREATE FUNCTION catalog_talents_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  was boolean := catalog_talent_public(OLD."visibility", OLD."account_state");
  now_public boolean := TG_OP = 'UPDATE' AND catalog_talent_public(NEW."visibility", NEW."account_state");
BEGIN
  IF was <> now_public THEN
    UPDATE "catalog_counters" SET "talents" = "talents" + CASE WHEN now_public THEN 1 ELSE -1 END
     WHERE "scope_id" IN (SELECT "A" FROM "_TalentSectors" WHERE "B" = OLD."id"
                          UNION ALL SELECT "A" FROM "_TalentSkills" WHERE "B" = OLD."id");
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NULL END;
END $$;

-- A new talent has no links yet: only updates and deletions (before the links cascade away) count.
CREATE TRIGGER "catalog_counters_talents_update" AFTER UPDATE ON "talents"
  FOR EACH ROW WHEN (OLD."visibility" IS DISTINCT FROM NEW."visibility" OR OLD."account_state" IS DISTINCT FROM NEW."account_state")
  EXECUTE FUNCTION catalog_talents_changed();
CREATE TRIGGER "catalog_counters_talents_delete" BEFORE DELETE ON "talents"
  FOR EACH ROW EXECUTE FUNCTION catalog_talents_changed();

-- _TalentSectors and _TalentSkills: A is the sector or skill, B the talent.
CREATE FUNCTION catalog_talent_links_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "catalog_counters" SET "talents" = "talents" - 1 WHERE "scope_id" = OLD."A"
       AND EXISTS (SELECT 1 FROM "talents" t WHERE t."id" = OLD."B" AND catalog_talent_public(t."visibility", t."account_state"));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "catalog_counters" SET "talents" = "talents" + 1 WHERE "scope_id" = NEW."A"
       AND EXISTS (SELECT 1 FROM "talents" t WHERE t."id" = NEW."B" AND catalog_talent_public(t."visibility", t."account_state"));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_talent_sectors" AFTER INSERT OR UPDATE OR DELETE ON "_TalentSectors"
  FOR EACH ROW EXECUTE FUNCTION catalog_talent_links_changed();
CREATE TRIGGER "catalog_counters_talent_skills" AFTER INSERT OR UPDATE OR DELETE ON "_TalentSkills"
  FOR EACH ROW EXECUTE FUNCTION catalog_talent_links_changed();

-- Agents: listed when published; counted in their skills.
CREATE FUNCTION catalog_agents_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  was boolean := OLD."status" = 'published';
  listed boolean := TG_OP = 'UPDATE' AND NEW."status" = 'published';
BEGIN
  IF was <> listed THEN
    UPDATE "catalog_counters" SET "agents" = "agents" + CASE WHEN listed THEN 1 ELSE -1 END
     WHERE "scope_id" IN (SELECT "B" FROM "_AgentSkills" WHERE "A" = OLD."id");
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NULL END;
END $$;

CREATE TRIGGER "catalog_counters_agents_update" AFTER UPDATE ON "agents"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION catalog_agents_changed();
CREATE TRIGGER "catalog_counters_agents_delete" BEFORE DELETE ON "agents"
  FOR EACH ROW EXECUTE FUNCTION catalog_agents_changed();

-- _AgentSkills: A is the agent, B the skill.
CREATE FUNCTION catalog_agent_skills_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "catalog_counters" SET "agents" = "agents" - 1 WHERE "scope_id" = OLD."B"
       AND EXISTS (SELECT 1 FROM "agents" a WHERE a."id" = OLD."A" AND a."status" = 'published');
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "catalog_counters" SET "agents" = "agents" + 1 WHERE "scope_id" = NEW."B"
       AND EXISTS (SELECT 1 FROM "agents" a WHERE a."id" = NEW."A" AND a."status" = 'published');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_agent_skills" AFTER INSERT OR UPDATE OR DELETE ON "_AgentSkills"
  FOR EACH ROW EXECUTE FUNCTION catalog_agent_skills_changed();

-- Companies: public with a public page; counted in their sectors.
CREATE FUNCTION catalog_companies_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  was boolean := OLD."has_public_page";
  listed_now boolean := TG_OP = 'UPDATE' AND NEW."has_public_page";
BEGIN
  IF was <> listed_now THEN
    UPDATE "catalog_counters" SET "companies" = "companies" + CASE WHEN listed_now THEN 1 ELSE -1 END
     WHERE "scope_id" IN (SELECT "B" FROM "_CompanySectors" WHERE "A" = OLD."id");
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NULL END;
END $$;

CREATE TRIGGER "catalog_counters_companies_update" AFTER UPDATE ON "companies"
  FOR EACH ROW WHEN (OLD."has_public_page" IS DISTINCT FROM NEW."has_public_page")
  EXECUTE FUNCTION catalog_companies_changed();
CREATE TRIGGER "catalog_counters_companies_delete" BEFORE DELETE ON "companies"
  FOR EACH ROW EXECUTE FUNCTION catalog_companies_changed();

-- _CompanySectors: A is the company, B the sector.
CREATE FUNCTION catalog_company_sectors_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "catalog_counters" SET "companies" = "companies" - 1 WHERE "scope_id" = OLD."B"
       AND EXISTS (SELECT 1 FROM "companies" c WHERE c."id" = OLD."A" AND c."has_public_page");
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "catalog_counters" SET "companies" = "companies" + 1 WHERE "scope_id" = NEW."B"
       AND EXISTS (SELECT 1 FROM "companies" c WHERE c."id" = NEW."A" AND c."has_public_page");
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_company_sectors" AFTER INSERT OR UPDATE OR DELETE ON "_CompanySectors"
  FOR EACH ROW EXECUTE FUNCTION catalog_company_sectors_changed();

-- Every sector, skill and company has its counter row from its first instant to its last.
CREATE FUNCTION catalog_scopes_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "catalog_counters" ("scope_id") VALUES (NEW."id") ON CONFLICT DO NOTHING;
  ELSE
    DELETE FROM "catalog_counters" WHERE "scope_id" = OLD."id";
    DELETE FROM "job_count_events" WHERE "scope_id" = OLD."id";
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_sectors" AFTER INSERT OR DELETE ON "sectors"
  FOR EACH ROW EXECUTE FUNCTION catalog_scopes_changed();
CREATE TRIGGER "catalog_counters_skills" AFTER INSERT OR DELETE ON "skills"
  FOR EACH ROW EXECUTE FUNCTION catalog_scopes_changed();
CREATE TRIGGER "catalog_counters_companies" AFTER INSERT OR DELETE ON "companies"
  FOR EACH ROW EXECUTE FUNCTION catalog_scopes_changed();

-- Counts every counter again from the rows: after a bulk load that ran with the triggers
-- disabled (the seeder), a TRUNCATE, or to check the triggers. One pass over jobs and each
-- link table; sharing the advisory lock of catalog_job_counts_settle.
CREATE FUNCTION catalog_counters_rebuild() RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  settled timestamptz := date_trunc('milliseconds', now() - catalog_settle_margin());
BEGIN
  PERFORM pg_advisory_xact_lock(72707370);
  DELETE FROM "job_count_events";
  DELETE FROM "catalog_counters";
  UPDATE "job_count_settled" SET "at" = settled;
  INSERT INTO "catalog_counters" ("scope_id")
    SELECT '00000000-0000-0000-0000-000000000000'::uuid
    UNION ALL SELECT "id" FROM "sectors" UNION ALL SELECT "id" FROM "skills" UNION ALL SELECT "id" FROM "companies";

  WITH counted AS (
    SELECT "id", "sector_id", "company_id", "published_at", "valid_through" FROM "jobs"
     WHERE catalog_job_counted("status", "filled", "published_at", "valid_through")
  ), scoped AS (
    SELECT '00000000-0000-0000-0000-000000000000'::uuid AS scope, "published_at", "valid_through" FROM counted
    UNION ALL SELECT "sector_id", "published_at", "valid_through" FROM counted WHERE "sector_id" IS NOT NULL
    UNION ALL SELECT "company_id", "published_at", "valid_through" FROM counted WHERE "company_id" IS NOT NULL
    UNION ALL SELECT js."B", c."published_at", c."valid_through" FROM counted c JOIN "_JobSkills" js ON js."A" = c."id"
  ), events AS (
    SELECT scope, "published_at" AS at, 1 AS delta FROM scoped
    UNION ALL SELECT scope, "valid_through", -1 FROM scoped WHERE "valid_through" IS NOT NULL
  ), summed AS (
    SELECT scope, at, sum(delta)::integer AS delta FROM events GROUP BY scope, at
  ), pending AS (
    INSERT INTO "job_count_events" ("scope_id", "at", "delta")
      SELECT scope, at, delta FROM summed WHERE at > settled AND delta <> 0
  )
  UPDATE "catalog_counters" c SET "open_jobs" = s.n
    FROM (SELECT scope, sum(delta)::integer AS n FROM summed WHERE at <= settled GROUP BY scope) s
   WHERE c."scope_id" = s.scope;

  UPDATE "catalog_counters" c SET "companies" = s.n
    FROM (SELECT cs."B" AS scope, count(*)::integer AS n FROM "_CompanySectors" cs
            JOIN "companies" co ON co."id" = cs."A" WHERE co."has_public_page" GROUP BY cs."B") s
   WHERE c."scope_id" = s.scope;

  UPDATE "catalog_counters" c SET "talents" = s.n
    FROM (SELECT l."A" AS scope, count(*)::integer AS n
            FROM (SELECT "A", "B" FROM "_TalentSectors" UNION ALL SELECT "A", "B" FROM "_TalentSkills") l
            JOIN "talents" t ON t."id" = l."B"
           WHERE catalog_talent_public(t."visibility", t."account_state") GROUP BY l."A") s
   WHERE c."scope_id" = s.scope;

  UPDATE "catalog_counters" c SET "agents" = s.n
    FROM (SELECT l."B" AS scope, count(*)::integer AS n FROM "_AgentSkills" l
            JOIN "agents" a ON a."id" = l."A" WHERE a."status" = 'published' GROUP BY l."B") s
   WHERE c."scope_id" = s.scope;
END $$;

-- Folds the events that have passed (older than the margin) into the counters. Called by the
-- service off the request path; a second caller while one runs returns at once (-1).
CREATE FUNCTION catalog_job_counts_settle() RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  target timestamptz := date_trunc('milliseconds', now() - catalog_settle_margin());
  folded integer;
BEGIN
  IF NOT pg_try_advisory_xact_lock(72707370) THEN RETURN -1; END IF;
  IF target <= (SELECT "at" FROM "job_count_settled") THEN RETURN 0; END IF;
  UPDATE "job_count_settled" SET "at" = target;
  WITH moved AS (
    DELETE FROM "job_count_events" WHERE "at" <= target RETURNING "scope_id", "delta"
  )
  UPDATE "catalog_counters" c SET "open_jobs" = c."open_jobs" + m.delta
    FROM (SELECT "scope_id", sum("delta")::integer AS delta FROM moved GROUP BY "scope_id") m
   WHERE c."scope_id" = m."scope_id";
  GET DIAGNOSTICS folded = ROW_COUNT;
  RETURN folded;
END $$;

CREATE FUNCTION catalog_counters_truncated() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM catalog_counters_rebuild();
  RETURN NULL;
END $$;

CREATE TRIGGER "catalog_counters_truncate" AFTER TRUNCATE ON "jobs"
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_counters_truncated();
CREATE TRIGGER "catalog_counters_truncate" AFTER TRUNCATE ON "talents"
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_counters_truncated();
CREATE TRIGGER "catalog_counters_truncate" AFTER TRUNCATE ON "agents"
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_counters_truncated();
CREATE TRIGGER "catalog_counters_truncate" AFTER TRUNCATE ON "companies"
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_counters_truncated();
CREATE TRIGGER "catalog_counters_truncate" AFTER TRUNCATE ON "sectors"
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_counters_truncated();
CREATE TRIGGER "catalog_counters_truncate" AFTER TRUNCATE ON "skills"
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_counters_truncated();

-- The counters of the rows already there.
SELECT catalog_counters_rebuild();
