// Lookups by a unique key run as named prepared statements on the PostgreSQL server
// (src/db/prepared.ts): the gates hold under the server's generic plan, the names a process makes
// are bounded however many selections a client invents, a migration that changes a result's type
// under a prepared statement is answered, and a connection cut between lookups prepares again on
// the next one. On PGlite a lookup is a plain statement: only its answers are checked there.
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/env.ts";
import { openDatabase, type Database } from "../../src/db/database.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { PREPARED_CAPACITY, PreparedNames, runLookup } from "../../src/db/prepared.ts";
import { createServerDatabase, dropServerDatabase, testDatabaseKind } from "../helpers/database.ts";
import { seedGatedCatalog, type GatedCatalog } from "../helpers/gated-catalog.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("PreparedNames", () => {
  it("names a text once, up to its capacity, and never a refused text again", () => {
    const names = new PreparedNames(2);
    const a = names.nameOf("SELECT 1");
    expect(a).toBeDefined();
    expect(names.nameOf("SELECT 1")).toBe(a);
    const b = names.nameOf("SELECT 2");
    expect(b).toBeDefined();
    expect(b).not.toBe(a);
    expect(names.nameOf("SELECT 3")).toBeUndefined();
    names.refuse("SELECT 1");
    expect(names.nameOf("SELECT 1")).toBeUndefined();
    // A refused text does not give its place to another: the names a process made stay bounded.
    expect(names.nameOf("SELECT 4")).toBeUndefined();
  });
});

const onServer = testDatabaseKind() === "postgres";
if (!onServer)
  console.warn(
    "No DATABASE_URL: lookups are plain statements on PGlite; the prepared cases run on the PostgreSQL pass.",
  );

// One connection, so that what the pool prepared is what pg_prepared_statements shows.
let db: Database;
let dropDatabase: () => Promise<void> = async () => {};
let server: TestServer;
let catalog: GatedCatalog;
let databaseUrl = "";

beforeAll(async () => {
  const config = loadConfig().database;
  if (config.kind === "postgres") {
    const { name, url } = await createServerDatabase(config.url, "prepared");
    databaseUrl = url;
    db = await openDatabase({ ...config, url, poolSize: 1 }, { timeouts: { queryMs: 5_000 } });
    dropDatabase = () => dropServerDatabase(config.url, name);
  } else {
    db = await openDatabase({ ...config, dataDir: "memory://" });
  }
  await applyMigrations(db.sql);
  catalog = await seedGatedCatalog(db.prisma);
  server = await startServer(db);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await dropDatabase();
});

const detail = (slug: string) => fetch(`${server.url}/api/v1/jobs/${encodeURIComponent(slug)}`);

interface Prepared {
  name: string;
  statement: string;
  generic_plans: number;
  custom_plans: number;
}
const prepared = () =>
  db.sql.query<Prepared>(
    "SELECT name, statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements ORDER BY name",
  );

describe("a job's page by its slug", () => {
  it("answers the public job and a 404 for every hidden one, ten times over", async () => {
    // Past the server's five custom plans: the later ones may run its generic plan.
    for (let i = 0; i < 10; i++) {
      const open = await detail(catalog.seen["openJob"]!);
      expect(open.status).toBe(200);
      expect(((await open.json()) as { data: { slug: string } }).data.slug).toBe(catalog.seen["openJob"]);
      for (const slug of catalog.hiddenByKind.jobs) expect((await detail(slug)).status, slug).toBe(404);
    }
  });

  it.skipIf(!onServer)(
    "is a named statement, run on the server's generic plan once it has run five times",
    async () => {
      const lookups = (await prepared()).filter(
        (p) => p.statement.includes("FROM jobs j") && p.name.startsWith("lookup_"),
      );
      expect(lookups).toHaveLength(1);
      expect(lookups[0]!.generic_plans).toBeGreaterThan(0);
    },
  );
});

describe.skipIf(!onServer)("prepared lookups on the server", () => {
  it("prepare at most their capacity of texts, whatever selections a client invents", async () => {
    const texts = Array.from({ length: PREPARED_CAPACITY * 2 }, (_, i) => `SELECT $1::int + ${i} AS n`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(texts.length - 1), fc.integer({ min: -1_000_000, max: 1_000_000 })), {
          minLength: 1,
          maxLength: 40,
        }),
        async (calls) => {
          for (const [i, value] of calls) {
            const [row] = await db.sql.lookup<{ n: number }>(texts[i]!, [value]);
            expect(row!.n).toBe(value + i);
          }
        },
      ),
      { numRuns: 30 },
    );
    expect((await prepared()).length).toBeLessThanOrEqual(PREPARED_CAPACITY);
  });

  it("answer after a migration changed the result's type under a prepared statement, unnamed from then on", async () => {
    await db.sql.exec(
      "CREATE TABLE prepared_probe (id text PRIMARY KEY, n int); INSERT INTO prepared_probe VALUES ('a', 1)",
    );
    // Its own database and a fresh text: the earlier case may have used up the process's names.
    const names = new PreparedNames(4);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const text = "SELECT * FROM prepared_probe WHERE id = $1";
      expect(await runLookup(client, names, text, ["a"])).toEqual([{ id: "a", n: 1 }]);
      await db.sql.exec("ALTER TABLE prepared_probe ALTER COLUMN n TYPE bigint");
      // node-postgres answers bigint as a string.
      expect(await runLookup(client, names, text, ["a"])).toEqual([{ id: "a", n: "1" }]);
      expect(names.nameOf(text)).toBeUndefined();
      expect(await runLookup(client, names, text, ["a"])).toEqual([{ id: "a", n: "1" }]);
    } finally {
      await client.end();
    }
  });

  it("prepare again on a new connection after the old one was cut between lookups", async () => {
    const slug = catalog.seen["openJob"]!;
    expect((await detail(slug)).status).toBe(200);
    const [backend] = await db.sql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const killer = new pg.Client({ connectionString: databaseUrl });
    await killer.connect();
    try {
      await killer.query("SELECT pg_terminate_backend($1)", [backend!.pid]);
    } finally {
      await killer.end();
    }
    // The first request may meet the dead connection (a 503, as any cut connection gives); the
    // next ones are answered on a new connection, which prepares the lookup again.
    const first = await detail(slug);
    expect([200, 503]).toContain(first.status);
    for (let i = 0; i < 3; i++) expect((await detail(slug)).status).toBe(200);
    const [now] = await db.sql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    expect(now!.pid).not.toBe(backend!.pid);
    expect((await prepared()).some((p) => p.statement.includes("FROM jobs j"))).toBe(true);
  });
});
