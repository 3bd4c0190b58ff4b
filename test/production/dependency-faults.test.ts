// Dependency faults against the real service process. The machine's PostgreSQL and Redis are
// shared with other tests, so they are never stopped: the service reaches them through TCP
// proxies (test/helpers/tcp-proxy.ts) that the test cuts in two ways, refused (the server is down)
// and black-holed (nothing answers, connections hang). For each: REST, GraphQL, the compression
// API's authentication and readiness answer 503 with Retry-After within 2 s, liveness still
// answers and the process lives; then the proxy is restored and the service recovers by itself.
// On the PGlite pass (no DATABASE_URL) the database is in-process: only Redis is cut.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { accounts } from "../../src/auth/accounts.ts";
import { makePdf, multipart } from "../helpers/compress.ts";
import { factories } from "../helpers/factories.ts";
import {
  createServiceDatabase,
  expectSameProcessHealthy,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.ts";

const REDIS_URL = TEST_REDIS_URL;
// The service's statement limit here, and the budget of a 503: the limit, plus a second for the
// rest (a new connection's handshake, the client's deadline sweep, a CI machine at load 10). With
// the default limit (1.5 s) the margin was 0.5 s, and a loaded CI pass took 2.9 s once.
const QUERY_LIMIT_MS = 1_000;
const BUDGET_MS = QUERY_LIMIT_MS + 1_000;
const REDIS_PREFIX = `test:faults:${randomUUID()}:`;

const redisUp = await redisReachable(REDIS_URL);
const redisMissing = `Redis is not reachable at ${REDIS_URL} (set TEST_REDIS_URL): skipping the Redis faults.`;
const pgliteOnly =
  "No DATABASE_URL: the database is embedded PGlite, in the service's own process, so it cannot be cut; " +
  "the database faults run on the PostgreSQL pass.";
if (!redisUp) console.warn(redisMissing);

let work: string;
let database: ServiceDatabase;
let service: ServiceProcess;
let dbProxy: TcpProxy | null = null;
let redisProxy: TcpProxy | null = null;
let token: string;
let upload: { body: Buffer; contentType: string };

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "faults-"));
  database = await createServiceDatabase(work);
  const db = await database.open();
  try {
    await factories(db.prisma).job("fault-job");
    const admin = accounts(db.prisma, null);
    const email = `faults-${process.pid}@example.com`;
    await admin.createSubscriber({ name: "faults", email, plan: "corporate", quota: 100 });
    token = (await admin.issueKey(email, "test")).token;
  } finally {
    await db.close();
  }
  upload = multipart([{ name: "file", value: await makePdf(1), filename: "a.pdf" }]);

  const env: Record<string, string> = {
    ...database.env,
    UPLOAD_TMP_DIR: path.join(work, "uploads"),
    LOCAL_STORAGE_DIR: path.join(work, "objects"),
    DOWNLOAD_SIGNING_SECRET: "faults-test-signing-secret-of-32-chars-x",
    RATE_LIMIT_REQUESTS: "1000000",
    LIST_TOTAL_CACHE_SECONDS: "0",
    DATABASE_QUERY_TIMEOUT_MS: String(QUERY_LIMIT_MS),
  };
  if (database.kind === "postgres") {
    const target = new URL(database.env["DATABASE_URL"]!);
    dbProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    env["DATABASE_URL"] = dbProxy.url(database.env["DATABASE_URL"]!);
  }
  if (redisUp) {
    const target = new URL(REDIS_URL);
    redisProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    env["REDIS_URL"] = redisProxy.url(REDIS_URL);
    env["REDIS_KEY_PREFIX"] = REDIS_PREFIX;
  }
  service = await startService(env, { name: "faults service" });
});

afterAll(async () => {
  await service?.stop(3_000);
  await dbProxy?.close();
  await redisProxy?.close();
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
  if (redisUp) {
    // The rate-limit keys of this run, under its own prefix.
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${REDIS_PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
});

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

async function call(path: string, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${service.url}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  return {
    status: response.status,
    ms: Math.round(performance.now() - started),
    retryAfter: response.headers.get("retry-after"),
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

const probes = {
  rest: () => call("/api/v1/jobs?limit=2"),
  // Counted on the counting and sampling pools (a sample while the first count runs), not the requests'.
  facets: () => call("/api/v1/jobs/facets?q=fault&work_model=remote"),
  graphql: () =>
    call("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: "{ jobs(limit: 2) { total } }" }),
    }),
  compress: () =>
    call("/v1/compress", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": upload.contentType },
      body: new Uint8Array(upload.body),
    }),
  readyz: () => call("/readyz"),
};
type Probe = keyof typeof probes;

/** What the answer carries as its code: the error shape's, or GraphQL's extensions.code. */
function codeOf(answer: Answer): string | undefined {
  const error = answer.body["error"] as { code?: string } | undefined;
  if (error) return error.code;
  const errors = answer.body["errors"] as { extensions?: { code?: string } }[] | undefined;
  return errors?.[0]?.extensions?.code;
}

async function expectAllUp() {
  for (const [name, probe] of Object.entries(probes)) {
    const answer = await probe();
    expect(answer.status, `${name}: ${JSON.stringify(answer.body)}`).toBe(200);
  }
}

/** Every probe, at once and then once more, answers 503 with Retry-After within the budget. */
async function expectAllUnavailable(expected: Record<Probe, string>): Promise<number> {
  let slowest = 0;
  for (let round = 0; round < 2; round++) {
    const answers = await Promise.all(
      (Object.keys(probes) as Probe[]).map(async (name) => [name, await probes[name]()] as const),
    );
    for (const [name, answer] of answers) {
      const label = `${name} (round ${round + 1}): ${answer.ms} ms ${JSON.stringify(answer.body)}`;
      slowest = Math.max(slowest, answer.ms);
      expect(answer.status, label).toBe(503);
      expect(answer.ms, label).toBeLessThan(BUDGET_MS);
      expect(Number(answer.retryAfter), label).toBeGreaterThan(0);
      expect(codeOf(answer), label).toBe(expected[name]);
      // GraphQL's own shape when the fault is met while executing; the service's error shape when
      // the request was refused before reaching GraphQL (the rate limiter without its store).
      if (expected[name] === "DATABASE_UNAVAILABLE") expect(answer.body, label).toMatchObject({ data: null });
      else expect(Object.keys(answer.body["error"] as object).sort(), label).toEqual(["code", "message", "request_id"]);
    }
  }
  // Alive: liveness answers, the process has not exited.
  expect((await call("/healthz")).status).toBe(200);
  expect(await Promise.race([service.exited.then(() => "exited"), Promise.resolve("running")])).toBe("running");
  return slowest;
}

/** After the dependency returns: everything answers 200 again within a few seconds, without a restart. */
async function expectRecovery() {
  const started = Date.now();
  await expect
    .poll(
      async () => {
        const statuses = await Promise.all(Object.values(probes).map(async (probe) => (await probe()).status));
        return statuses.every((s) => s === 200);
      },
      { timeout: 10_000, interval: 250 },
    )
    .toBe(true);
  const ms = Date.now() - started;
  // And it stays up: more rounds, all 200.
  for (let i = 0; i < 2; i++) await expectAllUp();
  return ms;
}

const DB_DOWN: Record<Probe, string> = {
  rest: "database_unavailable",
  facets: "database_unavailable",
  graphql: "DATABASE_UNAVAILABLE",
  compress: "database_unavailable",
  readyz: "database_unavailable",
};
const REDIS_DOWN: Record<Probe, string> = {
  rest: "rate_limit_unavailable",
  facets: "rate_limit_unavailable",
  graphql: "rate_limit_unavailable",
  compress: "rate_limit_unavailable",
  readyz: "rate_limit_unavailable",
};

describe("dependency faults", () => {
  it("is healthy to begin with", async () => {
    await expectAllUp();
  });

  describe.each(["refused", "black-holed"] as const)("the database %s", (mode) => {
    it("gives 503 with Retry-After within 2 s everywhere, stays alive, and recovers by itself", async (ctx: TestContext) => {
      if (!dbProxy) ctx.skip(pgliteOnly);
      if (mode === "refused") await dbProxy.refuse();
      else dbProxy.blackhole();
      let slowest: number;
      try {
        slowest = await expectAllUnavailable(DB_DOWN);
      } finally {
        await dbProxy.restore();
      }
      const recovered = await expectRecovery();
      console.info(`database ${mode}: slowest 503 in ${slowest} ms; all 200 again ${recovered} ms after the restore`);
    }, 40_000);
  });

  // A failover, or a database closed to new connections: the server answers every new connection
  // with SQLSTATE 55000 (issue 39: every request answered 500 for 12 s).
  it("the database not accepting connections (ALLOW_CONNECTIONS false): 503 everywhere, then recovers", async (ctx: TestContext) => {
    if (!dbProxy) ctx.skip(pgliteOnly);
    const name = new URL(database.env["DATABASE_URL"]!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env["DATABASE_URL"] });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
      try {
        await expectAllUnavailable(DB_DOWN);
      } finally {
        await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      }
    } finally {
      await admin.end();
    }
    await expectRecovery();
  }, 40_000);

  describe.each(["refused", "black-holed"] as const)("Redis %s", (mode) => {
    it("gives 503 with Retry-After within 2 s everywhere, stays alive, and recovers by itself", async (ctx: TestContext) => {
      if (!redisProxy) ctx.skip(redisMissing);
      if (mode === "refused") await redisProxy.refuse();
      else redisProxy.blackhole();
      let slowest: number;
      try {
        slowest = await expectAllUnavailable(REDIS_DOWN);
        // Long enough for the client to notice a connection that will never answer again.
        if (mode === "black-holed") {
          await new Promise((resolve) => setTimeout(resolve, 3_000));
          slowest = Math.max(slowest, await expectAllUnavailable(REDIS_DOWN));
        }
      } finally {
        await redisProxy.restore();
      }
      const recovered = await expectRecovery();
      console.info(`Redis ${mode}: slowest 503 in ${slowest} ms; all 200 again ${recovered} ms after the restore`);
    }, 40_000);
  });

  it("ends as the same process, answering /healthz, nothing logged at CRITICAL", async () => {
    await expectSameProcessHealthy(service);
  });
});
