// The client's own limit on a statement (src/db/query-deadline.ts), against the PostgreSQL server
// through a TCP proxy the test black-holes: a statement the server never answers is cut a little
// after the limit with an error that means "database unavailable", through the SQL runner and
// through Prisma alike, and the pool serves again once the network is back. Statements that each
// finish in time are never cut, however long their connection stays busy. PostgreSQL pass only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/database.ts";
import { isDatabaseUnavailable, unavailableMessage } from "../../src/db/errors.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const url = process.env["DATABASE_URL"];
const LIMIT_MS = 400;
let proxy: TcpProxy;
let db: Database;

beforeAll(async () => {
  if (!url) return;
  const target = new URL(url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  db = await openDatabase(
    { kind: "postgres", url: proxy.url(url), poolSize: 4, migrateOnStart: false, seedDemoData: false, seed: 1 },
    { timeouts: { connectMs: 1_000, queryMs: LIMIT_MS } },
  );
});

afterAll(async () => {
  await db?.close();
  await proxy?.close();
});

/** How long the call took to reject, and with what. */
async function rejection(call: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await call();
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
  throw new Error("expected the call to reject");
}

describe.skipIf(!url)("the client's statement limit (no DATABASE_URL: PGlite has no network to lose)", () => {
  it("lets statements that each finish in time run back to back on one connection", async () => {
    // Five statements of 150 ms each keep a connection busy for 750 ms, past the 400 ms limit.
    for (let i = 0; i < 5; i++) await db.sql.query("SELECT pg_sleep(0.15)");
    await Promise.all([1, 2, 3].map(() => db.sql.query("SELECT pg_sleep(0.15)")));
  });

  it("leaves the server's statement_timeout to cancel a slow statement on a live connection", async () => {
    const { error } = await rejection(() => db.sql.query("SELECT pg_sleep(5)"));
    expect((error as { code?: string }).code).toBe("57014");
    expect(isDatabaseUnavailable(error)).toBe(true);
    // The client is told the answer took too long, not that the database is out of reach.
    expect(unavailableMessage(error)).toBe("The database did not answer in time; retry shortly.");
    const { error: viaPrisma } = await rejection(() => db.prisma.$queryRaw`SELECT pg_sleep(5)`);
    expect(unavailableMessage(viaPrisma)).toBe("The database did not answer in time; retry shortly.");
  });

  it("does not cut a statement answered in time while this thread was held up past the limit", async () => {
    // Straight to the server, as in production: through this process's proxy the answer would wait
    // for the blocked thread to forward it, so it could not arrive during the block (on a loaded CI
    // machine it did not, and the statement was rightly cut).
    const direct = await openDatabase(
      { kind: "postgres", url: url!, poolSize: 1, migrateOnStart: false, seedDemoData: false, seed: 1 },
      { timeouts: { connectMs: 5_000, queryMs: LIMIT_MS } },
    );
    try {
      await direct.sql.query("SELECT 1"); // a connection open, so the statement is sent at once
      const answer = direct.sql.query<{ done: string }>("SELECT pg_sleep(0.1)::text AS done");
      // The sweep sees the statement running (it runs every 20 ms), then the thread is busy for
      // longer than the limit (as when a module is compiled), while the server answers at 100 ms (a
      // second of margin for a loaded machine). When the loop runs again the sweep is due before the
      // answer is read (timers first): it must not cut it.
      await new Promise((resolve) => setTimeout(resolve, 60));
      const blockedUntil = performance.now() + LIMIT_MS + 1_000;
      while (performance.now() < blockedUntil);
      await expect(answer).resolves.toEqual([{ done: "" }]);
    } finally {
      await direct.close();
    }
  });

  it("cuts a statement the server never answers just after the limit, and serves again after", async () => {
    await db.sql.query("SELECT 1"); // warm connections, then freeze them
    proxy.blackhole();
    try {
      const results = await Promise.all([
        rejection(() => db.sql.query("SELECT 1")),
        rejection(() => db.prisma.$queryRaw`SELECT 1`),
      ]);
      for (const { ms, error } of results) {
        expect(isDatabaseUnavailable(error), String(error)).toBe(true);
        expect(unavailableMessage(error)).toBe("The database is not reachable; retry shortly.");
        // The limit is the server's plus 100 ms (a fifth of it, at least 100 ms); the sweep runs every twentieth of it. A new connection
        // may instead give up at connectMs (1 s): both well under the 2 s the service promises.
        expect(ms).toBeGreaterThanOrEqual(LIMIT_MS);
        expect(ms).toBeLessThan(1_500);
      }
    } finally {
      await proxy.restore();
    }
    const rows = await db.sql.query<{ one: number }>("SELECT 1 AS one");
    expect(rows).toEqual([{ one: 1 }]);
  });
});
