// Opens the catalog database in one of its two modes: embedded PGlite (in-process PostgreSQL,
// the default) or a PostgreSQL server (DATABASE_URL). Both speak the same schema and
// migrations; the rest of the code sees a PrismaClient and a small SQL runner.
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import type { DatabaseConfig } from "../config/env.ts";
import { PrismaClient } from "../generated/prisma/client.ts";
import { pgliteExtensions } from "./pglite-extensions.ts";
import { PREPARED_CAPACITY, PreparedNames, runLookup } from "./prepared.ts";
import { type QueryDeadline, watchQueryDeadline } from "./query-deadline.ts";
import { guarded } from "../callbacks.ts";

/** Plain SQL for migrations and bulk loads, where Prisma's query builder is the wrong tool. */
export interface SqlRunner {
  /** Runs a script of one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /**
   * A statement whose plan does not depend on its values (a lookup by a unique key): on a server,
   * prepared once per connection (./prepared.ts); elsewhere the same as query.
   */
  lookup<Row = Record<string, unknown>>(sql: string, params: unknown[]): Promise<Row[]>;
  /** Runs fn on one connection inside a transaction, holding a session lock against other migrators. */
  exclusive<T>(fn: (sql: SqlRunner) => Promise<T>): Promise<T>;
}

export interface Database {
  kind: DatabaseConfig["kind"];
  prisma: PrismaClient;
  /**
   * For work off the request path that may take longer than a request's statement limit (list
   * totals recounted in the background): on a server, a small pool of its own with timeouts.countMs;
   * otherwise the same client as prisma.
   */
  counting: PrismaClient;
  /**
   * For a capped first count of a total, which a request waits for only briefly (graphql/totals.ts):
   * on a server, a small pool of its own with timeouts.boundMs, so a count past its use is cancelled
   * by the server and never holds a request's connection; otherwise the same client as prisma.
   */
  bounding: PrismaClient;
  /**
   * For a sample of a list's facets while their first count runs (graphql/totals.ts), which a
   * request waits for up to 5 s: on a server, a small pool of its own with timeouts.sampleMs, longer
   * than a capped count's (a sample of a rare filter reads far more rows than it keeps); otherwise
   * the same client as prisma.
   */
  sampling: PrismaClient;
  sql: SqlRunner;
  /**
   * Opens every connection of the requests' pool now and keeps them open (on a server; a no-op on
   * PGlite): resolves with how many are open, never rejects. See openPostgres for why.
   */
  warm(): Promise<number>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Called with the text of every SQL statement Prisma sends, and of every `sql.query` (tests count them). */
  onQuery?: (sql: string) => void;
  /**
   * A PostgreSQL server's time limits, in ms. connectMs (default 5000) bounds opening a connection,
   * queryMs (default none) one statement: sent as statement_timeout, and enforced by the client
   * too, for a server that no longer answers at all. Migrations run without the statement limit.
   * countMs (default 10000) is the statement limit of the `counting` client, boundMs (default 500)
   * the `bounding` client's, sampleMs (default 4000) the `sampling` client's, when queryMs is set.
   */
  timeouts?: { connectMs?: number; queryMs?: number; countMs?: number; boundMs?: number; sampleMs?: number };
}

// An arbitrary, fixed key for pg_advisory_lock, shared by every instance that migrates.
const MIGRATION_LOCK_KEY = 72_707_369;

export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<Database> {
  const db = config.kind === "pglite" ? await openPglite(config.dataDir, options) : openPostgres(config, options);
  return options.onQuery ? { ...db, sql: reportingQueries(db.sql, options.onQuery) } : db;
}

/** The runner, with every parameterised statement reported as Prisma's are (tests count them). */
function reportingQueries(sql: SqlRunner, onQuery: (sql: string) => void): SqlRunner {
  return {
    ...sql,
    query: (text, params) => {
      onQuery(text);
      return sql.query(text, params);
    },
    lookup: (text, params) => {
      onQuery(text);
      return sql.lookup(text, params);
    },
  };
}

function createPrisma(
  adapter: NonNullable<ConstructorParameters<typeof PrismaClient>[0]["adapter"]>,
  options: OpenOptions,
) {
  const prisma = new PrismaClient({
    adapter,
    log: options.onQuery ? [{ emit: "event", level: "query" }] : [],
  });
  if (options.onQuery) {
    const onQuery = options.onQuery;
    prisma.$on("query" as never, (event: { query: string }) => onQuery(event.query));
  }
  return prisma;
}

async function openPglite(dataDir: string, options: OpenOptions): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) await mkdir(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir, { relaxedDurability: false, extensions: pgliteExtensions });
  const runner = (db: Pick<PGlite, "exec" | "query">): SqlRunner => ({
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <Row>(sql: string, params: unknown[] = []) => (await db.query<Row>(sql, params)).rows,
    lookup: async <Row>(sql: string, params: unknown[]) => (await db.query<Row>(sql, params)).rows,
    exclusive: (fn) => client.transaction((tx) => fn(runner(tx))),
  });
  const prisma = createPrisma(new PrismaPGlite(client), options);
  return {
    kind: "pglite",
    prisma,
    // One in-process connection: there is no other pool, and no statement limit to escape.
    counting: prisma,
    bounding: prisma,
    sampling: prisma,
    sql: runner(client),
    warm: () => Promise.resolve(1),
    close: async () => {
      await prisma.$disconnect();
      await client.close();
    },
  };
}

/** Takes `size` connections of the pool at once and gives them back: how many could be opened. */
async function warmPool(pool: pg.Pool, size: number): Promise<number> {
  const taken = await Promise.allSettled(Array.from({ length: size }, () => pool.connect()));
  let opened = 0;
  for (const result of taken) {
    if (result.status === "fulfilled") {
      result.value.release();
      opened++;
    }
  }
  return opened;
}

/** A failure of the connection itself (not an error the server reported about a statement). */
function isConnectionFault(error: unknown): boolean {
  return error instanceof Error && typeof (error as { severity?: unknown }).severity !== "string";
}

// Every session runs without the server's parallel workers. A page is a LIMIT of 50: a Gather Merge
// for it started two processes on the server and read up to 2.4x the buffers of a plain walk, and
// under the load of many requests at once the workers' start alone cost more than the statement
// (`skill=kotlin&employment_type=contract` at a million jobs on the busy 2-core machine: 163 ms with
// workers, 36 ms without; the cold phase of bench:catalog, alternated: p50 1,032 and 920 ms with,
// 630 and 723 without, over 1 s 31 and 24 against 17 and 16). A first count and a capped one start
// with every new filter, up to four at once, and each took two workers more: twelve processes
// beside the pages on 2 cores. Concurrency, not one statement's speed, is what an API's database
// serves; the server keeps its setting for anything else.
// work_mem 32 MB (the server's default is 4 MB): a page of a common word under a filter that excludes
// its jobs reads the rest from the word's and the filter's indexes together (ranked-sql.ts
// restInTierOrder), and at 4 MB their bitmaps went lossy and every page of them was read again
// (`q=intern&employment_type=full_time` at a million jobs: 61,000 heap blocks, 3.7 s; at 16 MB none).
const SESSION_OPTIONS = "-c max_parallel_workers_per_gather=0 -c work_mem=32MB";

/**
 * The URL and the session options a pool connects with: SESSION_OPTIONS after the URL's own
 * `options`, which node-postgres would otherwise take instead of the pool's (a value parsed from the
 * connection string wins over the same setting given beside it).
 */
function withSessionOptions(url: string): { connectionString: string; options: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: SESSION_OPTIONS };
  }
  const own = parsed.searchParams.get("options");
  if (!own) return { connectionString: url, options: SESSION_OPTIONS };
  parsed.searchParams.delete("options");
  return { connectionString: parsed.href, options: `${own} ${SESSION_OPTIONS}` };
}

/** A pool, and the sweep that holds its statements to the client's limit (stopped on close). */
interface LimitedPool {
  pool: pg.Pool;
  deadline: QueryDeadline | null;
}

function createPool(url: string, max: number, connectMs: number, queryMs: number, min = 0): LimitedPool {
  const pool = new pg.Pool({
    ...withSessionOptions(url),
    max,
    // Idle connections beyond min close after idleTimeoutMillis.
    min,
    connectionTimeoutMillis: connectMs,
    idleTimeoutMillis: 30_000,
    // The server cancels a statement past the limit; the client gives up a little later on a
    // server that does not answer at all (./query-deadline.ts; the pool then drops that connection).
    ...(queryMs > 0 ? { statement_timeout: queryMs } : {}),
    keepAlive: true,
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on("error", () => {});
  return { pool, deadline: queryMs > 0 ? watchQueryDeadline(pool, queryMs + clientMarginMs(queryMs)) : null };
}

/**
 * How much longer than the server's statement_timeout the client waits before it ends the
 * connection itself. The server's own cancellation keeps the connection and says "did not answer in
 * time"; a 50 ms margin was too thin on a loaded 2-core machine, where the server's answer came
 * later and the client cut a live connection (CI of 0bc71c1, 2026-12-07). A fifth of the limit, at
 * least 100 ms: 1.8 s for the default 1.5 s.
 */
function clientMarginMs(queryMs: number): number {
  return Math.max(100, Math.round(queryMs / 5));
}

async function endPool({ pool, deadline }: LimitedPool): Promise<void> {
  deadline?.stop();
  await pool.end();
}

// Connections of the counting pool: as many as totals.ts counts at once.
const COUNTING_POOL_SIZE = 2;
// A count's statement limit: the first count of a search word found in half the jobs takes 1.5-3.5 s
// at a million jobs on a busy 2-core server; twice the worst seen.
const COUNT_TIMEOUT_MS = 10_000;
// Connections of the bounding pool: as many capped counts as totals.ts runs at once.
const BOUNDING_POOL_SIZE = 2;
// A request waits 400 ms for its first total (graphql/totals.ts): a capped count still running a
// little after that is of no use to it, and only takes CPU from the requests behind it.
const BOUND_TIMEOUT_MS = 500;
// Connections of the sampling pool: as many samples as totals.ts runs at once.
const SAMPLING_POOL_SIZE = 2;
// A sample's statement limit: under the 5 s a request waits for it. A sample of a rare filter
// (`sector=agriculture&work_model=hybrid` at a million jobs) reads rows until it has found a
// thousand, 0.3-0.7 s alone; beside the first counts of other new filters it passed the bounding
// pool's 500 ms, and its request then waited the 5 s out and answered 503 (bench:catalog's cold
// facets, 2026-12-07: 18 of 60).
const SAMPLE_TIMEOUT_MS = 4_000;

/**
 * When one connection fails, the idle ones probably share its fate (same network, same server):
 * drop them too, rather than have each of the next requests find out by waiting for a timeout.
 */
function dropIdleOnFault(pool: pg.Pool): void {
  const idle = new Set<pg.PoolClient>();
  pool.on(
    "release",
    guarded("db-pool", (error: Error | undefined, client: pg.PoolClient) => {
      if (!error) idle.add(client);
      else if (isConnectionFault(error)) {
        for (const other of idle) {
          idle.delete(other);
          (other as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
        }
      }
    }),
  );
  pool.on(
    "acquire",
    guarded("db-pool", (client: pg.PoolClient) => idle.delete(client)),
  );
  pool.on(
    "remove",
    guarded("db-pool", (client: pg.PoolClient) => idle.delete(client)),
  );
}

/** Statements on one client. */
function clientSql(client: pg.PoolClient | pg.Client): SqlRunner {
  return {
    exec: async (text) => {
      await client.query(text);
    },
    query: async <Row>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as Row[],
    lookup: async <Row>(text: string, params: unknown[]) => (await client.query(text, params)).rows as Row[],
    exclusive: () => Promise.reject(new Error("already exclusive")),
  };
}

/**
 * Statements on the pool; `exclusive` runs fn in one transaction under the migration lock. With a
 * statement limit on the pool (`ownConnectMs` given), on a connection of its own without one:
 * migrations may take as long as they need.
 */
function poolSql(pool: pg.Pool, url: string, ownConnectMs: number | null): SqlRunner {
  const names = new PreparedNames(PREPARED_CAPACITY);
  return {
    exec: async (text) => {
      await pool.query(text);
    },
    query: async <Row>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Row[],
    lookup: <Row>(text: string, params: unknown[]) => runLookup<Row>(pool, names, text, params),
    exclusive: async (fn) => {
      let client: pg.PoolClient | pg.Client;
      if (ownConnectMs !== null) {
        client = new pg.Client({ connectionString: url, connectionTimeoutMillis: ownConnectMs });
        // A connection lost between statements: the statement running rejects; no uncaught 'error'.
        client.on("error", () => undefined);
        await client.connect();
      } else {
        client = await pool.connect();
      }
      try {
        await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
        await client.query("BEGIN");
        try {
          const result = await fn(clientSql(client));
          await client.query("COMMIT");
          return result;
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => {});
        if ("release" in client) client.release();
        else await client.end();
      }
    },
  };
}

function openPostgres(config: Extract<DatabaseConfig, { kind: "postgres" }>, options: OpenOptions): Database {
  const queryMs = options.timeouts?.queryMs ?? 0;
  const connectMs = options.timeouts?.connectMs ?? 5_000;
  // The requests' pool is of a fixed size, its connections opened by warm() at start and kept (as
  // HikariCP advises for spiky load): a burst of requests then finds them open. Opening ten at once
  // in the burst itself, on a busy 2-core machine, took more than the 1 s connect limit and answered
  // 503 database_unavailable (test/production/instances.test.ts in CI, 2026-12-06).
  const main = createPool(config.url, config.poolSize, connectMs, queryMs, config.poolSize);
  const pool = main.pool;
  // Without a statement limit there is nothing to escape: counts share the one pool.
  const countPool = (size: number, limitMs: number) =>
    queryMs > 0 ? createPool(config.url, size, connectMs, limitMs) : null;
  const countingPool = countPool(COUNTING_POOL_SIZE, options.timeouts?.countMs ?? COUNT_TIMEOUT_MS);
  const boundingPool = countPool(BOUNDING_POOL_SIZE, options.timeouts?.boundMs ?? BOUND_TIMEOUT_MS);
  const samplingPool = countPool(SAMPLING_POOL_SIZE, options.timeouts?.sampleMs ?? SAMPLE_TIMEOUT_MS);
  dropIdleOnFault(pool);
  const prisma = createPrisma(new PrismaPg(pool), options);
  const counting = countingPool ? createPrisma(new PrismaPg(countingPool.pool), options) : prisma;
  const bounding = boundingPool ? createPrisma(new PrismaPg(boundingPool.pool), options) : prisma;
  const sampling = samplingPool ? createPrisma(new PrismaPg(samplingPool.pool), options) : prisma;
  const sql = poolSql(pool, config.url, queryMs > 0 ? connectMs : null);
  return {
    kind: "postgres",
    prisma,
    counting,
    bounding,
    sampling,
    sql,
    warm: () => warmPool(pool, config.poolSize),
    close: async () => {
      await prisma.$disconnect();
      await endPool(main);
      for (const [client, own] of [
        [counting, countingPool],
        [bounding, boundingPool],
        [sampling, samplingPool],
      ] as const) {
        if (!own) continue;
        await client.$disconnect();
        await endPool(own);
      }
    },
  };
}
