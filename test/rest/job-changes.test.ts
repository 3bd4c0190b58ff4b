// GET /api/v1/jobs/changes: the change feed of public jobs through real HTTP. Publication, update,
// each kind of removal (filled, closed, unpublished, expired by an edit and by the clock,
// deleted), a slug change, a job going live by the clock, resuming from next_since without gap or
// repeat, the gates (a draft never appears), bad and expired positions, and, on the server, a
// change committed late by a transaction that started first is still delivered, while a write
// transaction left open in another database of the server holds nothing back.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneJobFeed, sweepJobFeed } from "../../src/db/job-feed.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { loadConfig } from "../../src/config/env.ts";
import { createTestDatabase, testDatabaseKind, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
let f: ReturnType<typeof factories>;

type Change = { kind: string; slug: string; at: string; links: { self: string } | null };
type Feed = { data: Change[]; meta: { since: string | null; next_since: string; has_more: boolean; next: string } };

beforeAll(async () => {
  db = await createTestDatabase();
  f = factories(db.prisma);
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

/** Every change after `since`, following next_since while has_more, in small pages. */
async function changesAfter(since: string | null): Promise<{ changes: Change[]; next: string }> {
  const changes: Change[] = [];
  let position = since;
  for (let calls = 0; calls < 50; calls++) {
    const query = position === null ? "limit=2" : `limit=2&since=${position}`;
    const { status, body } = await api.get<Feed>(`/api/v1/jobs/changes?${query}`);
    expect(status).toBe(200);
    changes.push(...body.data);
    position = body.meta.next_since;
    if (!body.meta.has_more) break;
  }
  return { changes, next: position! };
}

const summary = (changes: Change[]) => changes.map((c) => `${c.kind} ${c.slug.split("-")[0]}`);

/**
 * The feed's position now: everything before it has been read. Read on until a call finds nothing:
 * a call may stop short of what is committed (its horizon held back for a moment by a transaction
 * that ended, in another test file's database, between the statement's snapshot and its look at
 * pg_stat_activity), which is the feed being careful, not a position past those changes.
 */
async function now(): Promise<string> {
  let { next } = await changesAfter(null);
  for (let empty = 0, calls = 0; empty < 2 && calls < 20; calls++) {
    const more = await changesAfter(next);
    empty = more.changes.length === 0 ? empty + 1 : 0;
    next = more.next;
  }
  return next;
}

describe("GET /jobs/changes", () => {
  it("tells publication, updates and every kind of removal, in commit order, nothing private", async () => {
    const start = await now();
    const filled = await f.job("filled");
    const closed = await f.job("closed");
    const unpublished = await f.job("unpublished");
    const expired = await f.job("expired");
    const deleted = await f.job("deleted");
    await f.job("draft", { status: "draft" });
    await db.prisma.job.update({ where: { id: filled.id }, data: { title: "Filled soon" } });
    await db.prisma.job.update({ where: { id: filled.id }, data: { filled: true } });
    await db.prisma.job.update({ where: { id: closed.id }, data: { status: "closed" } });
    await db.prisma.job.update({ where: { id: unpublished.id }, data: { status: "draft" } });
    await db.prisma.job.update({ where: { id: expired.id }, data: { validThrough: daysAgo(1) } });
    await db.prisma.job.delete({ where: { id: deleted.id } });
    await db.prisma.job.update({ where: { id: filled.id }, data: { filled: false } });

    const { changes } = await changesAfter(start);
    expect(summary(changes)).toEqual([
      "published filled",
      "published closed",
      "published unpublished",
      "published expired",
      "published deleted",
      "updated filled",
      "removed filled",
      "removed closed",
      "removed unpublished",
      "removed expired",
      "removed deleted",
      "published filled",
    ]);
    const removal = changes.find((c) => c.kind === "removed")!;
    expect(Object.keys(removal).sort()).toEqual(["at", "kind", "links", "slug"]);
    expect(removal.links).toBeNull();
    expect(changes[0]!.links?.self).toBe(`${server.url}/api/v1/jobs/${filled.slug}`);
  });

  it("tells an update only when something public changed, not a private column alone", async () => {
    const job = await f.job("quiet");
    const start = await now();
    await db.prisma.job.update({ where: { id: job.id }, data: { recruiterEmail: "hr@example.com" } });
    expect(summary((await changesAfter(start)).changes)).toEqual([]);
    await db.prisma.job.update({ where: { id: job.id }, data: { applyUrl: "https://example.com/apply" } });
    await db.prisma.job.update({ where: { id: job.id }, data: { salaryMax: 99_000, salaryCurrency: "EUR" } });
    expect(summary((await changesAfter(start)).changes)).toEqual(["updated quiet", "updated quiet"]);
  });

  it("weighs every column of jobs as public (compared by the trigger) or not", async () => {
    // The Job type shows these (publishedAt falls back to created_at); status, filled and the
    // instants decide whether the job is public at all (published or removed).
    const shown = [
      ...["slug", "title", "description_html", "description_text", "employment_type", "work_model", "seniority"],
      ...["location_city", "location_state", "location_country", "salary_min", "salary_max", "salary_currency"],
      ...["salary_period", "apply_url", "published_at", "valid_through", "created_at", "company_id", "sector_id"],
    ];
    // The key, the gate, the private contact, every write's stamp, and columns generated from shown ones.
    const notCompared = ["id", "status", "filled", "recruiter_email", "updated_at"];
    // Kept by triggers from the skills' names and the place (their own changes are not jobs' events).
    const generated = ["search_terms", "location_terms", "salary_top", "title_terms", "head_terms"];
    generated.push("skill_names", "skill_slugs", "latitude", "longitude");
    const columns = await db.sql.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'jobs'",
    );
    expect(columns.map((c) => c.column_name).sort()).toEqual([...shown, ...notCompared, ...generated].sort());
    const [trigger] = await db.sql.query<{ body: string }>(
      "SELECT pg_get_functiondef('job_feed_on_write'::regproc) AS body",
    );
    for (const column of shown) expect(trigger?.body).toContain(`NEW.${column}`);
    expect(trigger?.body).not.toContain("recruiter_email");
  });

  it("resumes from next_since without repeating or skipping, also after calls that found nothing", async () => {
    const start = await now();
    await f.job("first");
    const middle = await changesAfter(start);
    expect(summary(middle.changes)).toEqual(["published first"]);
    const idle = await api.get<Feed>(`/api/v1/jobs/changes?since=${middle.next}`);
    expect(idle.body.data).toEqual([]);
    expect(idle.body.meta.next).toBe(`${server.url}/api/v1/jobs/changes?since=${idle.body.meta.next_since}&limit=100`);
    const again = await api.get<Feed>(`/api/v1/jobs/changes?since=${idle.body.meta.next_since}`);
    expect(again.body.data).toEqual([]);
    await f.job("second");
    expect(summary((await changesAfter(again.body.meta.next_since)).changes)).toEqual(["published second"]);
  });

  it("treats a new slug as the old one removed and the new one published", async () => {
    const start = await now();
    const job = await f.job("renamed");
    await db.prisma.job.update({ where: { id: job.id }, data: { slug: `moved-${job.slug}` } });
    expect(summary((await changesAfter(start)).changes)).toEqual([
      "published renamed",
      "removed renamed",
      "published moved",
    ]);
  });

  it("sweeps in what the clock changes: a job going live at published_at, one expiring at valid_through", async () => {
    const start = await now();
    const soon = new Date(Date.now() + 1_500);
    const live = await f.job("live", { publishedAt: soon });
    const expiring = await f.job("expiring", { validThrough: soon });
    expect(summary((await changesAfter(start)).changes)).toEqual(["published expiring"]);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await sweepJobFeed(db.sql);
    await sweepJobFeed(db.sql); // a second sweep adds nothing
    const { changes } = await changesAfter(start);
    expect(summary(changes)).toEqual(["published expiring", "published live", "removed expiring"]);
    expect(changes.slice(1).map((c) => c.at)).toEqual([soon.toISOString(), soon.toISOString()]);
    expect([live.slug, expiring.slug]).toEqual([changes[1]!.slug, changes[2]!.slug]);
  });

  it("refuses a since it did not issue (400) and one older than the changes kept (410)", async () => {
    for (const since of ["nonsense", "MTIz", "%00"]) {
      const { status, body } = await api.get<{ error: { code: string } }>(`/api/v1/jobs/changes?since=${since}`);
      expect(status, since).toBe(400);
      expect(body.error.code).toBe("invalid_since");
    }
    const bad = await api.get<{ error: { code: string } }>("/api/v1/jobs/changes?limit=0");
    expect(bad.body.error.code).toBe("invalid_limit");
    const first = await api.get<Feed>("/api/v1/jobs/changes?limit=1");
    await pruneJobFeed(db.sql, 0);
    const { status, body } = await api.get<{ error: { code: string } }>(
      `/api/v1/jobs/changes?since=${first.body.meta.next_since}`,
    );
    expect(status).toBe(410);
    expect(body.error.code).toBe("since_expired");
  });
});

describe.skipIf(testDatabaseKind() !== "postgres")("the change feed under concurrent writers", () => {
  it("never lets a reader pass a change that a transaction still running will commit", async () => {
    const edited = await f.job("early");
    const start = await now();
    let commitEarly: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (commitEarly = resolve));
    let earlyWrote: () => void = () => undefined;
    const wrote = new Promise<void>((resolve) => (earlyWrote = resolve));
    // An earlier transaction writes first and commits last. (An edit that leaves the counts alone:
    // a new job would wait for the first one's lock on the catalog counter.)
    const early = db.prisma.$transaction(
      async (tx) => {
        await tx.job.update({ where: { id: edited.id }, data: { title: "Edited early" } });
        earlyWrote();
        await held;
      },
      { timeout: 20_000 },
    );
    await wrote;
    await f.job("late");
    const during = await changesAfter(start);
    expect(summary(during.changes)).toEqual([]);
    commitEarly();
    await early;
    expect(summary((await changesAfter(during.next)).changes)).toEqual(["updated early", "published late"]);
  });

  it("is not held back by a write transaction still running in another database of the server", async () => {
    const config = loadConfig().database;
    if (config.kind !== "postgres") throw new Error("unreachable: the describe runs on the server only");
    const other = new pg.Client({ connectionString: config.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_current_xact_id()"); // holds a transaction id until it ends
      const start = await now();
      await f.job("beside");
      expect(summary((await changesAfter(start)).changes)).toEqual(["published beside"]);
    } finally {
      await other.query("ROLLBACK").catch(() => undefined);
      await other.end();
    }
  });
});
