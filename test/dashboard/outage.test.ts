// The dashboard when its database cannot be reached, on both kinds of database whatever the pass:
// a PostgreSQL server that refuses connections, and an embedded PGlite that was closed. It answers
// as the API does, 503 with Retry-After: a page for a browser, the JSON error shape for a client
// that asks for JSON. Signing in says the link was not sent rather than "check your e-mail".
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/database.ts";
import { messagesTo } from "../helpers/outbox.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const common = { migrateOnStart: false, seedDemoData: false, seed: 1 };
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "dashboard-outage-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const downDatabases: [string, () => Promise<Database>][] = [
  [
    "a PostgreSQL server that refuses connections",
    () => openDatabase({ kind: "postgres", url: "postgresql://postgres@127.0.0.1:1/nowhere", poolSize: 1, ...common }),
  ],
  [
    "an embedded PGlite that was closed",
    async () => {
      const db = await openDatabase({ kind: "pglite", dataDir: "memory://", ...common });
      await db.close();
      return db;
    },
  ],
];

describe.each(downDatabases)("the dashboard with %s", (_, open) => {
  let db: Database;
  let server: TestServer;
  let outbox: string;
  // A cookie of the right shape: resolving it needs the database.
  const cookie = `mkp_session=${"A".repeat(43)}`;

  beforeAll(async () => {
    db = await open();
    outbox = await mkdtemp(path.join(work, "outbox-"));
    server = await startServer(db, { MAIL_OUTBOX_DIR: outbox });
  });
  afterAll(async () => {
    await server?.close();
    await db?.close().catch(() => undefined);
  });

  it("answers a browser 503 with Retry-After and a page saying so", async () => {
    const response = await fetch(`${server.url}/dashboard/keys`, { headers: { cookie, accept: "text/html" } });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await response.text()).toContain("The database is not reachable");
  });

  it("answers a client that asks for JSON 503 database_unavailable in the API's error shape", async () => {
    const response = await fetch(`${server.url}/dashboard/usage`, { headers: { cookie, accept: "application/json" } });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    const body = (await response.json()) as { error: { code: string; message: string; request_id: string } };
    expect(body.error).toMatchObject({ code: "database_unavailable", request_id: expect.any(String) as string });
  });

  it("says a sign-in link could not be sent, 503 with Retry-After, and mails nothing", async () => {
    const email = "someone@example.com";
    const response = await fetch(`${server.url}/dashboard/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ email }).toString(),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    const page = await response.text();
    expect(page).toContain("could not be sent");
    expect(page).not.toContain("Check your e-mail");
    expect(await messagesTo(outbox, email)).toEqual([]);
  });
});
