// The REST layer's path into the read model: a typed operation run in-process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { listTotals } from "../../src/graphql/totals.ts";
import { HttpError } from "../../src/errors.ts";
import { contextFactory } from "../../src/graphql/context.ts";
import { runOperation } from "../../src/rest/execute.ts";
import { JobsListOperation, TalentsListOperation } from "../../src/rest/operations.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const company = await f.company("acme");
  await f.job("remote-job", {
    workModel: "remote",
    companyId: company.id,
    salaryMin: 90_000,
    salaryMax: 120_000,
    salaryCurrency: "EUR",
    salaryPeriod: "year",
  });
  await f.job("onsite-job", { workModel: "onsite" });
});
afterAll(async () => {
  await db?.close();
});

/** A counting client whose counts never finish. */
const stuck = {
  job: { count: () => new Promise<number>(() => undefined) },
  talent: { count: () => new Promise<number>(() => undefined) },
} as unknown as PrismaClient;

describe("runOperation", () => {
  it("returns typed data from the read model, with its gates and filters", async () => {
    const { jobs } = await runOperation(contextFactory({ prisma: db.prisma, sql: db.sql }), JobsListOperation, {
      limit: 10,
      offset: 0,
      filter: { workModel: ["REMOTE"] },
    });
    expect(jobs.total).toBe(1);
    const [job] = jobs.items;
    expect(job).toMatchObject({
      workModel: "REMOTE",
      salary: { min: 90_000, max: 120_000, currency: "EUR", period: "YEAR" },
      company: { name: expect.stringContaining("acme") as string },
    });
    expect(job?.publishedAt).toBeInstanceOf(Date);
  });

  it("turns a bad argument into a 400 naming it", async () => {
    const failure = runOperation(contextFactory({ prisma: db.prisma, sql: db.sql }), JobsListOperation, {
      limit: 0,
      offset: 0,
    });
    await expect(failure).rejects.toBeInstanceOf(HttpError);
    await expect(failure).rejects.toMatchObject({ status: 400, code: "invalid_limit" });
  });

  it("answers the first total of a job filter whose full count is stuck from a capped count, exact under the cap", async () => {
    const totals = listTotals(30, stuck, { bounding: db.prisma });
    const { jobs } = await runOperation(contextFactory({ prisma: db.prisma, sql: db.sql, totals }), JobsListOperation, {
      limit: 1,
      offset: 0,
      filter: { workModel: ["REMOTE"] },
    });
    expect(jobs).toMatchObject({ total: 1, totalExact: true });
  });

  it("answers a lower bound (totalExact false) when the capped count reaches its cap and the full count is slow", async () => {
    const totals = listTotals(30, stuck, { bounding: db.prisma, countCap: 1, firstCountBoundedWaitMs: 50 });
    // A counted filter (the kept counters answer no filter, a sector, a skill or a company at once).
    const { jobs } = await runOperation(contextFactory({ prisma: db.prisma, sql: db.sql, totals }), JobsListOperation, {
      limit: 1,
      offset: 0,
      filter: { workModel: ["REMOTE", "ONSITE"] },
    });
    // The cap (1), raised to the rows up to this full page plus one.
    expect(jobs).toMatchObject({ total: 2, totalExact: false });
    expect(jobs.items).toHaveLength(1);
  });

  it("bounds a word's first total off its matches, in no order, within the public gate", async () => {
    const f = factories(db.prisma);
    await f.job("kiln-operator-a", { title: "Kiln operator" });
    await f.job("kiln-operator-b", { title: "Kiln operator", workModel: "hybrid" });
    await f.job("kiln-operator-filled", { title: "Kiln operator", filled: true });
    const context = (countCap: number) =>
      contextFactory({
        prisma: db.prisma,
        sql: db.sql,
        totals: listTotals(30, stuck, { bounding: db.prisma, countCap, firstCountBoundedWaitMs: 200 }),
      });
    const variables = { limit: 1, offset: 0, filter: { q: "kiln" } };
    // Under the cap: the public matches, exact (the filled one is not public).
    const under = await runOperation(context(10), JobsListOperation, variables);
    expect(under.jobs).toMatchObject({ total: 2, totalExact: true });
    // At the cap: a lower bound, raised to the rows up to this full page plus one.
    const at = await runOperation(context(1), JobsListOperation, variables);
    expect(at.jobs).toMatchObject({ total: 2, totalExact: false });
  });

  it("answers a first count of a list without a bound that outlasts its wait with a retryable 503 that says so", async () => {
    // The counts never finish: the request waits its 5 s, then is told to retry.
    const totals = listTotals(30, stuck);
    const failure = runOperation(contextFactory({ prisma: db.prisma, sql: db.sql, totals }), TalentsListOperation, {
      limit: 1,
      offset: 0,
      filter: {},
    });
    await expect(failure).rejects.toMatchObject({
      status: 503,
      code: "database_unavailable",
      message: "This list's total is still being counted; retry shortly.",
      headers: { "Retry-After": "5" },
    });
  }, 15_000);
});
