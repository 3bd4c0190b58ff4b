-- CreateEnum
CREATE TYPE "JobChangeKind" AS ENUM ('published', 'updated', 'removed');

-- CreateTable
CREATE TABLE "job_changes" (
    "seq" BIGSERIAL NOT NULL,
    "txid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "job_id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "kind" "JobChangeKind" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "job_changes_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "job_feed_state" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "swept_at" TIMESTAMPTZ(3) NOT NULL,
    "pruned_txid" BIGINT NOT NULL DEFAULT 0,
    "pruned_seq" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "job_feed_state_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "job_changes_txid_seq_idx" ON "job_changes"("txid", "seq");

-- CreateIndex
CREATE INDEX "job_changes_job_id_seq_idx" ON "job_changes"("job_id", "seq" DESC);

-- CreateIndex
CREATE INDEX "job_changes_at_idx" ON "job_changes"("at");

-- Everything below is written by hand: Prisma cannot declare functions or triggers.
-- The feed's state of a job is its last event: published or updated means listed, removed (or
-- none yet, for a job older than the feed: then whether it was public before the change) means
-- not. job_feed_reconcile compares that with whether the job is public now and writes the
-- difference: published (entered the public set), updated (changed while public; a new slug is a
-- removal of the old one and a publication of the new), removed (left it: filled, closed,
-- unpublished, expired or deleted; the event names the slug and the time, nothing else).

-- The gate of src/graphql/gates.ts publicJobWhere, at instant t.
CREATE FUNCTION job_is_public(status "JobStatus", filled boolean, published_at timestamptz,
                              valid_through timestamptz, t timestamptz) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS $$
    SELECT status = 'published' AND NOT filled AND published_at IS NOT NULL AND published_at <= t
       AND (valid_through IS NULL OR valid_through > t)
  $$;

CREATE FUNCTION job_feed_reconcile(p_job uuid, p_slug text, p_public boolean, p_was_public boolean,
                                   p_changed boolean, p_at timestamptz) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  last_kind "JobChangeKind";
  last_slug text;
  listed boolean;
BEGIN
  SELECT kind, slug INTO last_kind, last_slug FROM job_changes
   WHERE job_id = p_job ORDER BY seq DESC LIMIT 1;
  listed := COALESCE(last_kind <> 'removed', p_was_public);
  last_slug := COALESCE(last_slug, p_slug);
  IF p_public AND NOT listed THEN
    INSERT INTO job_changes (job_id, slug, kind, at) VALUES (p_job, p_slug, 'published', p_at);
  ELSIF NOT p_public AND listed THEN
    INSERT INTO job_changes (job_id, slug, kind, at) VALUES (p_job, last_slug, 'removed', p_at);
  ELSIF p_public AND p_changed THEN
    IF last_slug <> p_slug THEN
      INSERT INTO job_changes (job_id, slug, kind, at) VALUES (p_job, last_slug, 'removed', p_at);
      INSERT INTO job_changes (job_id, slug, kind, at) VALUES (p_job, p_slug, 'published', p_at);
    ELSE
      INSERT INTO job_changes (job_id, slug, kind, at) VALUES (p_job, p_slug, 'updated', p_at);
    END IF;
  END IF;
END $$;

-- A written job: in the same transaction, at the transaction's instant (the gates' "now").
CREATE FUNCTION job_feed_on_write() RETURNS trigger
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
    TG_OP = 'UPDATE', t);
  RETURN NEW;
END $$;

CREATE TRIGGER catalog_feed_jobs AFTER INSERT OR UPDATE OR DELETE ON jobs
  FOR EACH ROW EXECUTE FUNCTION job_feed_on_write();

INSERT INTO job_feed_state (id, swept_at) VALUES (true, now());

-- What the clock changed since the last sweep: jobs going live (published_at) or expiring
-- (valid_through) in (swept_at, now], each reconciled at that instant; one sweep at a time
-- (the state row is locked), each job row locked against a concurrent write. Returns the number
-- of jobs looked at.
CREATE FUNCTION job_feed_sweep() RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  since timestamptz;
  t timestamptz := now();
  j record;
  n integer := 0;
BEGIN
  SELECT swept_at INTO since FROM job_feed_state WHERE id FOR UPDATE;
  FOR j IN
    SELECT id, slug, status, filled, published_at, valid_through FROM jobs
     WHERE status = 'published' AND NOT filled
       AND ((published_at > since AND published_at <= t) OR (valid_through > since AND valid_through <= t))
     ORDER BY id FOR UPDATE
  LOOP
    PERFORM job_feed_reconcile(j.id, j.slug,
      job_is_public(j.status, j.filled, j.published_at, j.valid_through, t),
      job_is_public(j.status, j.filled, j.published_at, j.valid_through, since), false,
      CASE WHEN j.valid_through > since AND j.valid_through <= t THEN j.valid_through ELSE j.published_at END);
    n := n + 1;
  END LOOP;
  UPDATE job_feed_state SET swept_at = t WHERE id;
  RETURN n;
END $$;

-- Events older than `keep` are deleted, up to the latest such position in (txid, seq) order;
-- pruned_txid/pruned_seq remember it, so a resume position before it is answered 410 (a client
-- must sync again from the list).
CREATE FUNCTION job_feed_prune(keep interval) RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  p_txid xid8;
  p_seq bigint;
  n integer;
BEGIN
  SELECT txid, seq INTO p_txid, p_seq FROM job_changes
   WHERE at < now() - keep ORDER BY txid DESC, seq DESC LIMIT 1;
  IF NOT FOUND THEN RETURN 0; END IF;
  DELETE FROM job_changes WHERE (txid, seq) <= (p_txid, p_seq);
  GET DIAGNOSTICS n = ROW_COUNT;
  UPDATE job_feed_state SET pruned_txid = p_txid::text::bigint, pruned_seq = p_seq
   WHERE id AND (pruned_txid, pruned_seq) < (p_txid::text::bigint, p_seq);
  RETURN n;
END $$;
