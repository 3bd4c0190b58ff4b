// The counters the database keeps (catalog_counters, job_count_events) against a direct COUNT
// through the gates of src/graphql/gates.ts, after every kind of change a row can go through,
// and at instants later than now (a job that expires, a job that goes live). Runs on PGlite, and
// on the PostgreSQL server with DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../src/generated/prisma/client.ts";
import { createContext } from "../../src/graphql/context.ts";
import {
  CATALOG_SCOPE,
  countJobs,
  jobCounterScope,
  readCounts,
  settleJobCounts,
  type Counts,
} from "../../src/graphql/counters.ts";
import { listedAgentWhere, publicCompanyWhere, publicJobWhere, publicTalentWhere } from "../../src/graphql/gates.ts";
import { seedCatalog } from "../../src/db/seed/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";

let db: TestDatabase;
let f: ReturnType<typeof factories>;
const hour = 3_600_000;
const start = Date.now();
const at = (ms: number) => new Date(start + ms);
const ids: Record<string, string> = {};

/** What the gates say, counted through gates.ts by Prisma: every scope's counts at `now`. */
async function direct(on: TestDatabase, now: Date): Promise<Map<string, Counts>> {
  const p = on.prisma;
  const jobs = { where: publicJobWhere(now) };
  const [catalog, sectors, skills, companies] = await Promise.all([
    p.job.count(jobs),
    p.sector.findMany({
      select: {
        id: true,
        _count: { select: { jobs, companies: { where: publicCompanyWhere }, talents: { where: publicTalentWhere } } },
      },
    }),
    p.skill.findMany({
      select: {
        id: true,
        _count: { select: { jobs, talents: { where: publicTalentWhere }, agents: { where: listedAgentWhere } } },
      },
    }),
    p.company.findMany({ select: { id: true, _count: { select: { jobs } } } }),
  ]);
  const none = { openJobs: 0, companies: 0, talents: 0, agents: 0 };
  return new Map<string, Counts>([
    [CATALOG_SCOPE, { ...none, openJobs: catalog }],
    ...sectors.map(
      ({ id, _count: c }) => [id, { ...none, openJobs: c.jobs, companies: c.companies, talents: c.talents }] as const,
    ),
    ...skills.map(
      ({ id, _count: c }) => [id, { ...none, openJobs: c.jobs, talents: c.talents, agents: c.agents }] as const,
    ),
    ...companies.map(({ id, _count: c }) => [id, { ...none, openJobs: c.jobs }] as const),
  ]);
}

/** Every scope's counters equal the direct counts now and at later instants. */
const laterInstants = () => [new Date(), at(1.5 * hour), at(3 * hour), at(49 * hour), at(24 * 60 * hour)];

async function expectExact(on: TestDatabase = db, instants = laterInstants()): Promise<void> {
  for (const instant of instants) {
    const expected = await direct(on, instant);
    const kept = await readCounts(on.prisma, [...expected.keys()], instant);
    expect({ instant, counts: Object.fromEntries(kept) }).toEqual({ instant, counts: Object.fromEntries(expected) });
  }
}

const job = (label: string, data: Partial<Prisma.JobUncheckedCreateInput> = {}) =>
  f.job(label, { sectorId: ids["s1"], companyId: ids["c1"], ...data });
const link = (jobId: string, ...skills: string[]) =>
  db.prisma.job.update({ where: { id: jobId }, data: { skills: { connect: skills.map((s) => ({ id: ids[s]! })) } } });
const updateJob = (key: string, data: Prisma.JobUncheckedUpdateInput) =>
  db.prisma.job.update({ where: { id: ids[key]! }, data });

beforeAll(async () => {
  db = await createTestDatabase();
  f = factories(db.prisma);
  for (const key of ["s1", "s2"]) ids[key] = (await f.sector(key)).id;
  for (const key of ["k1", "k2", "k3"]) ids[key] = (await f.skill(key)).id;
  ids["c1"] = (await f.company("c1")).id;
  ids["c2"] = (await f.company("c2")).id;
  ids["c3"] = (await f.company("c3", { hasPublicPage: false })).id;
});

afterAll(async () => {
  await db?.close();
});

// Each step changes rows, then every counter is compared with the direct count. The steps build
// on each other, in order.
const steps: [string, () => Promise<unknown>][] = [
  [
    "a public job with a sector, a company and skills",
    async () => {
      ids["open"] = (await job("open", { skills: { connect: [{ id: ids["k1"]! }, { id: ids["k2"]! }] } })).id;
    },
  ],
  [
    "jobs that are not public: draft, closed, filled, expired, never live",
    async () => {
      await job("draft", { status: "draft", publishedAt: null });
      await job("closed", { status: "closed" });
      await job("filled", { filled: true });
      await job("expired", { validThrough: at(-hour) });
      await job("inverted", { publishedAt: at(2 * hour), validThrough: at(hour) });
    },
  ],
  [
    "a job that expires in 2 hours and one that goes live in 2 hours",
    async () => {
      ids["expiring"] = (await job("expiring", { validThrough: at(2 * hour) })).id;
      ids["scheduled"] = (await job("scheduled", { publishedAt: at(2 * hour), validThrough: at(48 * hour) })).id;
      await link(ids["expiring"], "k3");
      await link(ids["scheduled"], "k1", "k3");
    },
  ],
  [
    "a job's skills linked and unlinked",
    async () => {
      await link(ids["open"]!, "k3");
      await db.prisma.job.update({
        where: { id: ids["open"]! },
        data: { skills: { disconnect: [{ id: ids["k1"]! }] } },
      });
      await db.prisma.job.update({ where: { id: ids["scheduled"]! }, data: { skills: { set: [{ id: ids["k2"]! }] } } });
    },
  ],
  [
    "status to closed and back to published",
    async () => {
      await updateJob("open", { status: "closed" });
      await updateJob("expiring", { status: "archived" });
      await updateJob("expiring", { status: "published" });
    },
  ],
  [
    "filled and unfilled",
    async () => {
      await updateJob("scheduled", { filled: true });
      await updateJob("open", { status: "published", filled: true });
      await updateJob("open", { filled: false });
    },
  ],
  [
    "publishedAt moved to the future, to the past, and cleared",
    async () => {
      await updateJob("open", { publishedAt: at(hour) });
      await updateJob("scheduled", { filled: false, publishedAt: at(-3 * hour) });
      await updateJob("scheduled", { publishedAt: null });
      await updateJob("scheduled", { publishedAt: at(-hour) });
    },
  ],
  [
    "validThrough set, moved, passed and cleared",
    async () => {
      await updateJob("open", { validThrough: at(30 * hour) });
      await updateJob("expiring", { validThrough: at(hour) });
      await updateJob("scheduled", { validThrough: at(-30 * 60_000) });
      await updateJob("scheduled", { validThrough: null });
    },
  ],
  [
    "sector moved and cleared",
    async () => {
      await updateJob("open", { sectorId: ids["s2"] });
      await updateJob("expiring", { sectorId: null });
    },
  ],
  [
    "company moved, hidden company, cleared",
    async () => {
      await updateJob("open", { companyId: ids["c2"] });
      await updateJob("expiring", { companyId: ids["c3"] });
      await updateJob("scheduled", { companyId: null });
    },
  ],
  [
    "several gate columns at once, and a change of nothing counted",
    async () => {
      await updateJob("expiring", {
        status: "published",
        publishedAt: at(-2 * hour),
        validThrough: at(5 * hour),
        sectorId: ids["s1"],
      });
      await updateJob("open", { title: "renamed" });
    },
  ],
  [
    "many rows in one statement",
    async () => {
      await db.prisma.job.createMany({
        data: [1, 2, 3].map((n) => ({
          slug: `bulk-${n}-${start}`,
          title: "bulk",
          descriptionHtml: "<p>bulk</p>",
          descriptionText: "bulk",
          employmentType: "contract" as const,
          workModel: "hybrid" as const,
          status: "published" as const,
          publishedAt: at(-n * hour),
          validThrough: n === 2 ? at(n * hour) : null,
          sectorId: ids["s2"]!,
          companyId: ids["c1"]!,
        })),
      });
      await db.prisma.job.updateMany({
        where: { title: "bulk", publishedAt: { lt: at(-2.5 * hour) } },
        data: { filled: true },
      });
    },
  ],
  [
    "a job deleted with its skill links",
    async () => {
      await db.prisma.job.delete({ where: { id: ids["scheduled"]! } });
      await db.prisma.job.deleteMany({ where: { title: "bulk", filled: true } });
    },
  ],
  [
    "talents: public with links, hidden, suspended, unlinked, deleted",
    async () => {
      const t1 = await f.talent("t1", {
        sectors: { connect: [{ id: ids["s1"]! }] },
        skills: { connect: [{ id: ids["k1"]! }, { id: ids["k2"]! }] },
      });
      const t2 = await f.talent("t2", { visibility: "private", skills: { connect: [{ id: ids["k1"]! }] } });
      const t3 = await f.talent("t3", { accountState: "suspended", sectors: { connect: [{ id: ids["s2"]! }] } });
      await db.prisma.talent.update({ where: { id: t2.id }, data: { visibility: "public" } });
      await db.prisma.talent.update({ where: { id: t3.id }, data: { accountState: "active" } });
      await db.prisma.talent.update({ where: { id: t1.id }, data: { accountState: "deactivated" } });
      await db.prisma.talent.update({ where: { id: t1.id }, data: { accountState: "active", visibility: "private" } });
      await db.prisma.talent.update({ where: { id: t1.id }, data: { visibility: "public" } });
      await db.prisma.talent.update({ where: { id: t1.id }, data: { skills: { disconnect: [{ id: ids["k2"]! }] } } });
      await db.prisma.talent.delete({ where: { id: t3.id } });
    },
  ],
  [
    "agents: published with skills, unlisted, republished, unlinked, deleted",
    async () => {
      const a1 = await f.agent("a1", { skills: { connect: [{ id: ids["k1"]! }, { id: ids["k3"]! }] } });
      const a2 = await f.agent("a2", { status: "draft", skills: { connect: [{ id: ids["k3"]! }] } });
      await db.prisma.agent.update({ where: { id: a1.id }, data: { status: "unlisted" } });
      await db.prisma.agent.update({ where: { id: a2.id }, data: { status: "published" } });
      await db.prisma.agent.update({ where: { id: a1.id }, data: { status: "published" } });
      await db.prisma.agent.update({ where: { id: a2.id }, data: { skills: { disconnect: [{ id: ids["k3"]! }] } } });
      await db.prisma.agent.delete({ where: { id: a1.id } });
    },
  ],
  [
    "companies: sectors linked, page hidden and shown, unlinked, deleted with jobs",
    async () => {
      await db.prisma.company.update({
        where: { id: ids["c1"]! },
        data: { sectors: { connect: [{ id: ids["s1"]! }, { id: ids["s2"]! }] } },
      });
      await db.prisma.company.update({
        where: { id: ids["c3"]! },
        data: { sectors: { connect: [{ id: ids["s1"]! }] } },
      });
      await db.prisma.company.update({ where: { id: ids["c1"]! }, data: { hasPublicPage: false } });
      await db.prisma.company.update({ where: { id: ids["c3"]! }, data: { hasPublicPage: true } });
      await db.prisma.company.update({ where: { id: ids["c1"]! }, data: { hasPublicPage: true } });
      await db.prisma.company.update({
        where: { id: ids["c1"]! },
        data: { sectors: { disconnect: [{ id: ids["s2"]! }] } },
      });
      await db.prisma.company.delete({ where: { id: ids["c2"]! } });
    },
  ],
  [
    "a skill and a sector deleted (links cascade, jobs keep no sector)",
    async () => {
      await db.prisma.skill.delete({ where: { id: ids["k2"]! } });
      await db.prisma.sector.delete({ where: { id: ids["s2"]! } });
      const [orphans] = await db.sql.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM catalog_counters WHERE scope_id IN ($1, $2))::int
            + (SELECT count(*) FROM job_count_events WHERE scope_id IN ($1, $2))::int AS n`,
        [ids["k2"], ids["s2"]],
      );
      expect(orphans?.n).toBe(0);
    },
  ],
];

describe("catalog counters", () => {
  it.each(steps)("follow the rows: %s", async (_name, change) => {
    await change();
    await expectExact();
  });

  it("follow a job whose validThrough passes and one whose publishedAt arrives, a few ms from now", async () => {
    const soon = new Date(Date.now() + 30);
    const ending = await job("ending", { validThrough: soon });
    const beginning = await job("beginning", { publishedAt: soon });
    const before = (await readCounts(db.prisma, [CATALOG_SCOPE], new Date(soon.getTime() - 1))).get(CATALOG_SCOPE)!;
    await new Promise((resolve) => setTimeout(resolve, 40));
    const after = (await readCounts(db.prisma, [CATALOG_SCOPE], new Date())).get(CATALOG_SCOPE)!;
    // One left and one arrived: the same count, by two different jobs.
    expect(after.openJobs).toBe(before.openJobs);
    expect(
      await db.prisma.job.count({ where: { id: { in: [ending.id, beginning.id] }, ...publicJobWhere(new Date()) } }),
    ).toBe(1);
    await expectExact();
  });

  it("fold passed events into the counters and stay exact", async () => {
    // As if the last fold was a day ago: the events since then are pending until settled.
    await db.sql.query(`UPDATE job_count_settled SET at = now() - interval '1 day'`);
    await job("yesterday", { publishedAt: at(-20 * hour), validThrough: at(-10 * hour) });
    await job("this-morning", { publishedAt: at(-6 * hour) });
    const [pending] = await db.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM job_count_events WHERE at <= now() - interval '5 minutes'`,
    );
    expect(pending?.n).toBeGreaterThan(0);
    expect(await settleJobCounts(db.prisma)).toBeGreaterThan(0);
    const [left] = await db.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM job_count_events WHERE at <= now() - interval '5 minutes'`,
    );
    expect(left?.n).toBe(0);
    await expectExact();
  });

  it("stay exact under concurrent writers and settles", async () => {
    const skills = ["k1", "k3"].map((k) => ({ id: ids[k]! }));
    await Promise.all([
      ...Array.from({ length: 16 }, (_, i) =>
        job(`concurrent-${i}`, {
          publishedAt: at((i % 4) * hour - 2 * hour),
          validThrough: i % 3 === 0 ? at((i + 1) * hour) : null,
          sectorId: ids["s1"],
          skills: { connect: skills.slice(i % 2) },
        }),
      ),
      settleJobCounts(db.prisma),
      settleJobCounts(db.prisma),
    ]);
    const created = await db.prisma.job.findMany({
      where: { title: { startsWith: "concurrent-" } },
      select: { id: true },
    });
    await Promise.all(
      created.map((j, i) =>
        i % 2
          ? db.prisma.job.update({ where: { id: j.id }, data: { filled: true } })
          : db.prisma.job.update({ where: { id: j.id }, data: { skills: { set: [{ id: ids["k3"]! }] } } }),
      ),
    );
    await expectExact();
  });

  it("are the same when rebuilt from the rows", async () => {
    const all = [...(await direct(db, new Date())).keys()];
    const instants = [new Date(), at(3 * hour), at(49 * hour)];
    const kept = await Promise.all(instants.map((i) => readCounts(db.prisma, all, i)));
    await db.sql.exec(`SELECT catalog_counters_rebuild()`);
    const rebuilt = await Promise.all(instants.map((i) => readCounts(db.prisma, all, i)));
    expect(rebuilt).toEqual(kept);
  });

  it("answer the jobs total of no filter, one sector, one skill or one public company", async () => {
    const now = new Date();
    const ctx = createContext({ prisma: db.prisma, sql: db.sql }, now);
    const [sector, skill, company, hidden] = await Promise.all([
      db.prisma.sector.findUniqueOrThrow({ where: { id: ids["s1"]! } }),
      db.prisma.skill.findUniqueOrThrow({ where: { id: ids["k3"]! } }),
      db.prisma.company.findUniqueOrThrow({ where: { id: ids["c1"]! } }),
      db.prisma.company.create({ data: { slug: `hidden-${start}`, name: "hidden", hasPublicPage: false } }),
    ]);
    await job("hidden-company", { companyId: hidden.id });
    const filters: Prisma.JobWhereInput[] = [
      {},
      { sector: { slug: sector.slug } },
      { skills: { some: { slug: skill.slug } } },
      { company: { slug: company.slug, ...publicCompanyWhere } },
      { company: { slug: hidden.slug, ...publicCompanyWhere } },
      { workModel: { in: ["hybrid"] } },
    ];
    for (const filter of filters) {
      const where = { AND: [publicJobWhere(now), ...(Object.keys(filter).length ? [filter] : [])] };
      expect({ filter, total: await countJobs(ctx, where) }).toEqual({
        filter,
        total: await db.prisma.job.count({ where }),
      });
    }
  });
});

describe("catalog counters after a seed", () => {
  it("are rebuilt once after the bulk load, with the triggers back on afterwards", async () => {
    const seeded = await createTestDatabase();
    try {
      // Seeded around today's start, so jobs expire and go live in the hours and days checked.
      await seedCatalog(seeded, { seed: 3, scale: { companies: 8, jobs: 200, talents: 40, agents: 30 } });
      await expectExact(seeded, [new Date(), at(49 * hour)]);
      const [triggers] = await seeded.sql.query<{ on: number; off: number }>(
        `SELECT count(*) FILTER (WHERE tgenabled <> 'D')::int AS on, count(*) FILTER (WHERE tgenabled = 'D')::int AS off
           FROM pg_trigger WHERE tgname LIKE 'catalog\\_counters\\_%'`,
      );
      // Every trigger of the migration catalog_counters.
      expect(triggers).toEqual({ on: 23, off: 0 });
      await factories(seeded.prisma).job("after-seed", { publishedAt: at(-hour) });
      await expectExact(seeded, [new Date()]);
    } finally {
      await seeded.close();
    }
  });
});

describe("jobCounterScope", () => {
  const now = new Date("2026-12-06T05:00:00Z");
  const sector = { sector: { slug: "engineering" } } satisfies Prisma.JobWhereInput;

  it("knows the gate's own filter, alone or with one sector", () => {
    expect(jobCounterScope({ AND: [publicJobWhere(now)] }, now)).toEqual({ kind: "catalog", slug: "" });
    expect(jobCounterScope({ AND: [publicJobWhere(now), sector] }, now)).toEqual({
      kind: "sector",
      slug: "engineering",
    });
  });

  it("counts with the filter what the gate did not make, or made for another instant", () => {
    // A copy looks the same but is not the gate's: counting it with the filter is always right.
    expect(jobCounterScope({ AND: [structuredClone(publicJobWhere(now))] }, now)).toBeNull();
    expect(jobCounterScope({ AND: [publicJobWhere(new Date(now.getTime() - 1))] }, now)).toBeNull();
    expect(jobCounterScope({ AND: [{ status: "published" }] }, now)).toBeNull();
    expect(jobCounterScope({ AND: [] }, now)).toBeNull();
  });

  it("takes the same instant in another Date object", () => {
    expect(jobCounterScope({ AND: [publicJobWhere(now)] }, new Date(now.getTime()))).not.toBeNull();
  });
});
