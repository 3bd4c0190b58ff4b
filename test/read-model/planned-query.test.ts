// Plans kept per place in an operation (src/graphql/planned-query.ts): the same answers as Pothos
// planning every request, and a plan that reads the request (its instant, its variables) is never kept.
import { parse, print } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeCompiled } from "../../src/graphql/compiled-operations.ts";
import { createContext } from "../../src/graphql/context.ts";
import { keepPlans, planCounts } from "../../src/graphql/planned-query.ts";
import {
  AgentOperation,
  CompanyOperation,
  JobOperation,
  JobsListOperation,
  TalentOperation,
} from "../../src/rest/operations.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, daysFromNow, factories } from "../helpers/factories.ts";

let db: TestDatabase;
let slugs: { job: string; company: string; talent: string; agent: string };
const day = 86_400_000;

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const [sector, skill] = await Promise.all([f.sector("planned"), f.skill("planned")]);
  const company = await f.company("planned", { sectors: { connect: [{ id: sector.id }] } });
  const job = await f.job("planned", {
    companyId: company.id,
    sectorId: sector.id,
    skills: { connect: [{ id: skill.id }] },
  });
  // Public from tomorrow: a company page asked for after that instant shows it, one before does not.
  await f.job("planned-later", { companyId: company.id, publishedAt: daysFromNow(1) });
  await f.job("planned-older", { companyId: company.id, publishedAt: daysAgo(3) });
  const talent = await f.talent("planned", { skills: { connect: [{ id: skill.id }] } });
  const agent = await f.agent("planned", { vendorCompanyId: company.id, skills: { connect: [{ id: skill.id }] } });
  slugs = { job: job.slug, company: company.slug, talent: talent.handle, agent: agent.slug };
});
afterAll(async () => {
  keepPlans(true);
  await db?.close();
});

const run = <R, V extends Record<string, unknown>>(
  document: Parameters<typeof executeCompiled<R, V>>[0],
  variables: V,
  now = new Date(),
) => executeCompiled(document, variables, createContext({ prisma: db.prisma, sql: db.sql }, now));

describe("plans kept per place", () => {
  it("answers every REST operation as Pothos' per-request planning does, kept or not", async () => {
    const operations = () =>
      Promise.all([
        run(JobOperation, { slug: slugs.job }),
        run(JobsListOperation, { limit: 10, offset: 0 }),
        run(CompanyOperation, { slug: slugs.company, openJobsLimit: 5 }),
        run(TalentOperation, { handle: slugs.talent }),
        run(AgentOperation, { slug: slugs.agent }),
      ]);
    keepPlans(false);
    const planned = await operations();
    keepPlans(true);
    const first = await operations();
    const again = await operations();
    expect(first).toEqual(planned);
    expect(again).toEqual(planned);
    for (const result of planned) expect(result.errors).toBeUndefined();
    const [job] = planned;
    expect(job.data?.job).toMatchObject({ slug: slugs.job, sector: { name: expect.any(String) as string } });
    expect(job.data?.job?.skills).toHaveLength(1);
  });

  it("keeps the plans of a job and of a page of jobs: planned on first use, replayed after", async () => {
    // Documents of their own (new AST nodes, so new places), compiled on first use.
    const job = parse(print(JobOperation)) as typeof JobOperation;
    const list = parse(print(JobsListOperation)) as typeof JobsListOperation;
    const before = { ...planCounts };
    await run(job, { slug: slugs.job });
    await run(list, { limit: 10, offset: 0 });
    expect(planCounts).toEqual({ kept: before.kept + 2, perRequest: before.perRequest });
    const { data } = await run(job, { slug: slugs.job });
    await run(list, { limit: 5, offset: 1, filter: { workModel: ["REMOTE"] } });
    expect(planCounts).toEqual({ kept: before.kept + 2, perRequest: before.perRequest });
    expect(data?.job?.skills).toHaveLength(1);
  });

  it("plans a company's open jobs per request: they read the request's instant and limit", async () => {
    const openJobs = async (now: Date, openJobsLimit: number) => {
      const { data, errors } = await run(CompanyOperation, { slug: slugs.company, openJobsLimit }, now);
      expect(errors).toBeUndefined();
      return data?.company?.openJobs.map((j) => j.slug.replace(/-[^-]+-[^-]+$/, ""));
    };
    expect(await openJobs(new Date(), 5)).toEqual(["planned", "planned-older"]);
    expect(await openJobs(new Date(Date.now() + 2 * day), 5)).toEqual(["planned-later", "planned", "planned-older"]);
    expect(await openJobs(new Date(), 1)).toEqual(["planned"]);
    expect(await openJobs(new Date(Date.now() + 2 * day), 2)).toEqual(["planned-later", "planned"]);
    expect(planCounts.perRequest).toBeGreaterThan(0);
  });
});
