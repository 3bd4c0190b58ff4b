// The requests' pool is of a fixed size, opened before the first request (src/db/database.ts,
// warm()): against the PostgreSQL server through a TCP proxy that counts connections and that the
// test refuses, black-holes and cuts. warm() opens every connection and a burst then opens none;
// it never throws (a server down or silent at start is readiness's to report) and gives up within
// the connect limit; connections cut after it are replaced by the next requests, which all succeed.
// PostgreSQL pass only: PGlite has no connections.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/database.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const url = process.env["DATABASE_URL"];
const POOL_SIZE = 4;
const CONNECT_MS = 1_000;
let proxy: TcpProxy;
let db: Database;

/** Settles when the proxy holds `count` open connections (the client side may lag a little). */
async function untilOpen(count: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (proxy.open() !== count) {
    if (Date.now() > deadline) throw new Error(`${proxy.open()} connections open, expected ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const burst = () =>
  Promise.all(Array.from({ length: POOL_SIZE * 2 }, () => db.sql.query<{ one: number }>("SELECT 1 AS one")));

describe.skipIf(!url)("the requests' pool, opened at start (PostgreSQL server)", () => {
  beforeAll(async () => {
    const target = new URL(url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = await openDatabase(
      {
        kind: "postgres",
        url: proxy.url(url!),
        poolSize: POOL_SIZE,
        migrateOnStart: false,
        seedDemoData: false,
        seed: 1,
      },
      { timeouts: { connectMs: CONNECT_MS, queryMs: 1_500 } },
    );
  });

  afterAll(async () => {
    await db?.close();
    await proxy?.close();
  });

  it("opens every connection before the first request, and a burst then opens none", async () => {
    expect(await db.warm()).toBe(POOL_SIZE);
    expect(proxy.open()).toBe(POOL_SIZE);
    const before = proxy.accepted();
    const rows = await burst();
    expect(rows.flat()).toEqual(Array.from({ length: POOL_SIZE * 2 }, () => ({ one: 1 })));
    expect(proxy.accepted()).toBe(before);
    expect(proxy.open()).toBe(POOL_SIZE);
  });

  it("replaces connections cut after it: the next burst is served in full", async () => {
    proxy.cut();
    await untilOpen(0);
    // The pool hears of the cut from each socket's close; give those events their turn.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const rows = await burst();
    expect(rows.flat()).toHaveLength(POOL_SIZE * 2);
    expect(proxy.open()).toBeLessThanOrEqual(POOL_SIZE);
  });

  it("never throws: 0 connections from a server that refuses, and from one that does not answer within the limit", async () => {
    proxy.cut();
    await untilOpen(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await proxy.refuse();
    expect(await db.warm()).toBe(0);
    await proxy.restore();

    proxy.blackhole();
    const started = performance.now();
    expect(await db.warm()).toBe(0);
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThanOrEqual(CONNECT_MS - 50);
    expect(ms).toBeLessThan(CONNECT_MS + 2_000);
    proxy.cut(); // the hanging handshakes
    await proxy.restore();

    expect(await db.warm()).toBe(POOL_SIZE);
    expect((await burst()).flat()).toHaveLength(POOL_SIZE * 2);
  });
});
