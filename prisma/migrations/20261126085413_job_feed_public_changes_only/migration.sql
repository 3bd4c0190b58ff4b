-- Written by hand: Prisma cannot declare functions. A job's update is an `updated` event only when
-- a column the public job shows changed (src/graphql/types/job.ts Job): a change to a private
-- column (recruiter_email) told feed readers that something changed they cannot see, and made
-- them fetch the job again for nothing. updated_at is left out (every write moves it), and so are
-- the stored generated columns (search_terms, location_terms, salary_top: they follow public
-- ones). Whether the job is public (status, filled and the instants) is compared separately, as
-- before: entering or leaving the public set is published or removed.
-- test/rest/job-changes.test.ts holds every column of jobs to one side of this list.
CREATE OR REPLACE FUNCTION job_feed_on_write() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := now();
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM job_feed_reconcile(OLD.id, OLD.slug, false,
      job_is_public(OLD.status, OLD.filled, OLD.published_at, OLD.valid_through, t), false, t);
    RETURN OLD;
  END IF;
  PERFORM job_feed_reconcile(NEW.id, NEW.slug,
    job_is_public(NEW.status, NEW.filled, NEW.published_at, NEW.valid_through, t),
    TG_OP = 'UPDATE' AND job_is_public(OLD.status, OLD.filled, OLD.published_at, OLD.valid_through, t),
    TG_OP = 'UPDATE' AND (
      OLD.slug, OLD.title, OLD.description_html, OLD.description_text, OLD.employment_type,
      OLD.work_model, OLD.seniority, OLD.location_city, OLD.location_state, OLD.location_country,
      OLD.salary_min, OLD.salary_max, OLD.salary_currency, OLD.salary_period, OLD.apply_url,
      OLD.published_at, OLD.valid_through, OLD.created_at, OLD.company_id, OLD.sector_id
    ) IS DISTINCT FROM (
      NEW.slug, NEW.title, NEW.description_html, NEW.description_text, NEW.employment_type,
      NEW.work_model, NEW.seniority, NEW.location_city, NEW.location_state, NEW.location_country,
      NEW.salary_min, NEW.salary_max, NEW.salary_currency, NEW.salary_period, NEW.apply_url,
      NEW.published_at, NEW.valid_through, NEW.created_at, NEW.company_id, NEW.sector_id
    ),
    t);
  RETURN NEW;
END $$;
