// The typed client's first hour: every detail route of the catalog read through createCatalogClient
// as the README shows it (fixtures/detail-calls.ts), compiled by TypeScript with the repository's
// options (a union with the JSON-LD JobPosting made `job.data?.data.title` a TS2339), then run
// against the real service; the JSON-LD form through its own method.
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { DETAIL_PATHS, readEveryDetail, type DetailSlugs } from "./fixtures/detail-calls.ts";

const root = path.resolve(import.meta.dirname, "../..");
let db: TestDatabase;
let server: TestServer;
let slugs: DetailSlugs;
let names: Record<"talent" | "agent" | "company" | "sector" | "skill", string>;

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const company = await f.company("detail-co");
  const [job, talent, agent, sector, skill] = await Promise.all([
    f.job("detail-job", { companyId: company.id, title: "Detail Engineer" }),
    f.talent("detail-talent"),
    f.agent("detail-agent"),
    f.sector("detail-sector"),
    f.skill("detail-skill"),
  ]);
  slugs = {
    job: job.slug,
    talent: talent.handle,
    agent: agent.slug,
    company: company.slug,
    sector: sector.slug,
    skill: skill.slug,
  };
  names = {
    talent: talent.displayName,
    agent: agent.name,
    company: company.name,
    sector: sector.name,
    skill: skill.name,
  };
  server = await startServer(db);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

describe("the typed client's detail calls", () => {
  it("compile as written, with the repository's compiler options", () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      path.join(root, "tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => undefined,
      },
    );
    const fixture = path.join(import.meta.dirname, "fixtures/detail-calls.ts");
    const program = ts.createProgram([fixture], { ...config!.options, noEmit: true });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ""}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    expect(problems).toEqual([]);
  }, 120_000);

  it("cover every detail route the served document has", async () => {
    const document = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    const details = Object.keys(document.paths).filter((p) => p.includes("{"));
    expect([...DETAIL_PATHS].sort()).toEqual(details.sort());
  });

  it("read each detail, the JSON-LD posting, and a typed 404", async () => {
    expect(await readEveryDetail(server.url, slugs)).toEqual({
      job: "Detail Engineer",
      ...names,
      posting: "Detail Engineer",
      postingType: "JobPosting",
      missing: "not_found",
    });
  });
});
