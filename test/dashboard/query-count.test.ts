// The SQL GET /v1/usage and the dashboard's pages cost, as the tables each statement reads (see
// test/helpers/statement-log.ts): a page that starts sending one more statement shows up as a diff.
// Only reads are compared; the keys' last use was just written, so no background write joins in.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../src/auth/sessions.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { statementLog } from "../helpers/statement-log.ts";

let db: TestDatabase;
let server: TestServer;
let token: string;
let cookie: string;
let objects: string;

beforeAll(async () => {
  db = await createTestDatabase();
  objects = await mkdtemp(path.join(tmpdir(), "dashboard-queries-"));
  server = await startServer(
    db,
    { LOCAL_STORAGE_DIR: objects },
    { compress: { storage: await createLocalStorage(objects, null), runner: passThroughRunner } },
  );
  const subscriber = await subscriberWithKey(db.prisma);
  token = subscriber.token;
  for (let i = 0; i < 3; i++) await subscriber.admin.issueKey(subscriber.email, `key ${i}`);
  await db.prisma.apiKey.updateMany({ data: { lastUsedAt: new Date() } });
  const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
  const opened = await auth.redeemLink((await auth.createLink(subscriber.email))!.token);
  cookie = `mkp_session=${opened!.secret}`;
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(objects, { recursive: true, force: true });
});

async function reads(target: string, headers: Record<string, string>): Promise<string[]> {
  db.queries.length = 0;
  const response = await fetch(`${server.url}${target}`, { headers });
  expect(response.status, target).toBe(200);
  await response.text();
  return statementLog(db.queries.filter((sql) => /^\s*SELECT/i.test(sql)));
}

describe("statements per request", () => {
  it.each([
    ["GET /v1/usage", "/v1/usage", "bearer", ["SELECT api_keys + subscribers", "SELECT quota_usage"]],
    [
      "GET /dashboard/keys",
      "/dashboard/keys",
      "cookie",
      ["SELECT api_keys + subscribers", "SELECT dashboard_sessions + subscribers", "SELECT subscribers"],
    ],
    [
      "GET /dashboard/usage",
      "/dashboard/usage",
      "cookie",
      [
        "SELECT api_keys + compressions",
        "SELECT compressions",
        "SELECT dashboard_sessions + subscribers",
        "SELECT quota_usage",
      ],
    ],
    [
      "GET /dashboard/history",
      "/dashboard/history",
      "cookie",
      ["SELECT compressions + api_keys + compression_jobs", "SELECT dashboard_sessions + subscribers"],
    ],
    [
      "GET /dashboard/webhooks",
      "/dashboard/webhooks",
      "cookie",
      [
        "SELECT dashboard_sessions + subscribers",
        // The account's retention of results, shown on this page since issue 44.
        "SELECT subscribers",
        "SELECT webhook_deliveries + compression_jobs",
        "SELECT webhook_secrets",
      ],
    ],
    [
      "GET /dashboard/try",
      "/dashboard/try",
      "cookie",
      ["SELECT api_keys + subscribers", "SELECT dashboard_sessions + subscribers", "SELECT subscribers"],
    ],
  ])("%s", async (_, target, auth, expected) => {
    const headers: Record<string, string> = auth === "bearer" ? { authorization: `Bearer ${token}` } : { cookie };
    expect(await reads(target, headers)).toEqual(expected);
  });
});
