-- Written partly by hand: Prisma cannot declare generated columns, triggers or seed rows.
--
-- Relevance (sort=relevance). A job's skills join its searchable text: skill_names holds their
-- names, kept by triggers below (a generated column cannot read another table). search_terms
-- (the `q` filter) now covers the title, the skills and the description; title_terms and
-- head_terms (title and skills) say where a match's words occur, and the ranking takes the best
-- of the three that holds every word. Each is a stored generated column with a GIN index.
-- The columns are written in one statement so a large jobs table is rewritten once (it holds an
-- exclusive lock meanwhile, minutes at a million jobs: run it when traffic is low).
DROP INDEX "jobs_search_terms_idx";
ALTER TABLE "jobs" DROP COLUMN "search_terms";
ALTER TABLE "jobs"
    ADD COLUMN "skill_names" TEXT NOT NULL DEFAULT '',
    ADD COLUMN "latitude" DOUBLE PRECISION,
    ADD COLUMN "longitude" DOUBLE PRECISION;
UPDATE "jobs" j SET "skill_names" = s.names
  FROM (SELECT js."A" AS job_id, string_agg(k.name, ' ' ORDER BY k.name) AS names
          FROM "_JobSkills" js JOIN "skills" k ON k.id = js."B" GROUP BY js."A") s
 WHERE s.job_id = j.id;
ALTER TABLE "jobs"
    ADD COLUMN "search_terms" TEXT[] NOT NULL
        GENERATED ALWAYS AS (tsvector_to_array(to_tsvector('english'::regconfig, "title" || ' ' || "skill_names" || ' ' || "description_text"))) STORED,
    ADD COLUMN "title_terms" TEXT[] NOT NULL
        GENERATED ALWAYS AS (tsvector_to_array(to_tsvector('english'::regconfig, "title"))) STORED,
    ADD COLUMN "head_terms" TEXT[] NOT NULL
        GENERATED ALWAYS AS (tsvector_to_array(to_tsvector('english'::regconfig, "title" || ' ' || "skill_names"))) STORED;

CREATE INDEX "jobs_search_terms_idx" ON "jobs" USING GIN ("search_terms");
CREATE INDEX "jobs_title_terms_idx" ON "jobs" USING GIN ("title_terms");
CREATE INDEX "jobs_head_terms_idx" ON "jobs" USING GIN ("head_terms");

-- skill_names of one job, from its links.
CREATE OR REPLACE FUNCTION job_skill_names(job uuid) RETURNS text
  LANGUAGE sql STABLE AS $$
  SELECT coalesce(string_agg(k.name, ' ' ORDER BY k.name), '')
    FROM "_JobSkills" js JOIN "skills" k ON k.id = js."B" WHERE js."A" = job
$$;

CREATE OR REPLACE FUNCTION job_skill_names_on_link() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "jobs" SET "skill_names" = job_skill_names(OLD."A") WHERE id = OLD."A";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "jobs" SET "skill_names" = job_skill_names(NEW."A") WHERE id = NEW."A";
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER job_skill_names_link AFTER INSERT OR UPDATE OR DELETE ON "_JobSkills"
  FOR EACH ROW EXECUTE FUNCTION job_skill_names_on_link();

CREATE OR REPLACE FUNCTION job_skill_names_on_rename() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "jobs" j SET "skill_names" = job_skill_names(j.id)
   WHERE j.id IN (SELECT js."A" FROM "_JobSkills" js WHERE js."B" = NEW.id);
  RETURN NULL;
END $$;

CREATE TRIGGER job_skill_names_rename AFTER UPDATE OF "name" ON "skills"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name") EXECUTE FUNCTION job_skill_names_on_rename();

-- Nearby (`near`, `radius_km`, sort=distance). The known places: the seed's cities with their
-- coordinates (WGS 84 degrees, the city centre).
CREATE TABLE "places" (
    "id" SERIAL NOT NULL,
    "city" TEXT NOT NULL,
    "state" TEXT,
    "country" CHAR(2) NOT NULL,
    "name_key" TEXT NOT NULL,
    "latitude" DOUBLE PRECISION NOT NULL,
    "longitude" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "places_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "places_name_key_key" ON "places"("name_key");
CREATE UNIQUE INDEX "places_city_country_key" ON "places"("city", "country");

INSERT INTO "places" ("city", "state", "country", "name_key", "latitude", "longitude") VALUES
  ('San Francisco', 'CA', 'US', 'san francisco', 37.7749, -122.4194),
  ('New York', 'NY', 'US', 'new york', 40.7128, -74.0060),
  ('Seattle', 'WA', 'US', 'seattle', 47.6062, -122.3321),
  ('Austin', 'TX', 'US', 'austin', 30.2672, -97.7431),
  ('Boston', 'MA', 'US', 'boston', 42.3601, -71.0589),
  ('Toronto', 'ON', 'CA', 'toronto', 43.6532, -79.3832),
  ('Montréal', 'QC', 'CA', 'montreal', 45.5019, -73.5674),
  ('London', NULL, 'GB', 'london', 51.5074, -0.1278),
  ('Berlin', 'BE', 'DE', 'berlin', 52.5200, 13.4050),
  ('Munich', 'BY', 'DE', 'munich', 48.1351, 11.5820),
  ('Paris', NULL, 'FR', 'paris', 48.8566, 2.3522),
  ('Amsterdam', NULL, 'NL', 'amsterdam', 52.3676, 4.9041),
  ('Barcelona', NULL, 'ES', 'barcelona', 41.3874, 2.1686),
  ('Lisbon', NULL, 'PT', 'lisbon', 38.7223, -9.1393),
  ('Stockholm', NULL, 'SE', 'stockholm', 59.3293, 18.0686),
  ('Warsaw', NULL, 'PL', 'warsaw', 52.2297, 21.0122),
  ('São Paulo', 'SP', 'BR', 'sao paulo', -23.5505, -46.6333),
  ('Mexico City', NULL, 'MX', 'mexico city', 19.4326, -99.1332),
  ('Bengaluru', 'KA', 'IN', 'bengaluru', 12.9716, 77.5946),
  ('Singapore', NULL, 'SG', 'singapore', 1.3521, 103.8198),
  ('Tokyo', NULL, 'JP', 'tokyo', 35.6762, 139.6503),
  ('Sydney', 'NSW', 'AU', 'sydney', -33.8688, 151.2093),
  ('Dublin', NULL, 'IE', 'dublin', 53.3498, -6.2603),
  ('Zürich', NULL, 'CH', 'zurich', 47.3769, 8.5417);

ALTER TABLE "talents"
    ADD COLUMN "latitude" DOUBLE PRECISION,
    ADD COLUMN "longitude" DOUBLE PRECISION;

-- A job's or talent's coordinates follow its city: those of the place with that city (any case)
-- and country, else null. Set on every write of the location, so they cannot go stale.
CREATE OR REPLACE FUNCTION place_coordinates_on_write() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  p record;
BEGIN
  SELECT pl.latitude, pl.longitude INTO p FROM "places" pl
   WHERE lower(pl.city) = lower(NEW.location_city) AND pl.country = NEW.location_country;
  NEW.latitude := p.latitude;
  NEW.longitude := p.longitude;
  RETURN NEW;
END $$;

CREATE TRIGGER jobs_place_coordinates BEFORE INSERT OR UPDATE OF "location_city", "location_country", "latitude", "longitude" ON "jobs"
  FOR EACH ROW EXECUTE FUNCTION place_coordinates_on_write();
CREATE TRIGGER talents_place_coordinates BEFORE INSERT OR UPDATE OF "location_city", "location_country", "latitude", "longitude" ON "talents"
  FOR EACH ROW EXECUTE FUNCTION place_coordinates_on_write();

-- The rows already there (the trigger sets the values).
UPDATE "jobs" SET "latitude" = NULL WHERE "location_city" IS NOT NULL;
UPDATE "talents" SET "latitude" = NULL WHERE "location_city" IS NOT NULL;

-- The public jobs in a latitude band, read from the index alone (the bounding box's prefilter;
-- the longitude and the gate's instants are checked in the index, the distance computed from it).
CREATE INDEX "jobs_status_filled_latitude_longitude_published_at_valid_th_idx" ON "jobs"("status", "filled", "latitude", "longitude", "published_at", "valid_through", "id");
CREATE INDEX "talents_latitude_longitude_idx" ON "talents"("latitude", "longitude");
