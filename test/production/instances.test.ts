// Several instances: three processes of the real service on loopback, sharing one PostgreSQL
// database (fresh for this file) and one Redis (under a key prefix of this run's own), with small
// limits. Concurrent requests spread round-robin over the three show that every limit is one limit
// for the whole service, exactly: the per-client-IP rate limit (the client IP being the last
// X-Forwarded-For entry, which Cloud Run's front end appends), the per-key rate limit, and the
// monthly quota. PGlite cannot be shared by processes: without DATABASE_URL this file is skipped.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../src/auth/accounts.ts";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { testDatabaseKind } from "../helpers/database.ts";
import { makePdf, multipart } from "../helpers/compress.ts";
import { factories } from "../helpers/factories.ts";
import {
  createServiceDatabase,
  expectSameProcessHealthy,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.ts";

const REDIS_URL = TEST_REDIS_URL;
const PREFIX = `test:instances:${randomUUID()}:`;
const IP_LIMIT = 30;
const KEY_LIMIT = 10;
const QUOTA = 7;

const skipReason =
  testDatabaseKind() !== "postgres"
    ? "No DATABASE_URL: PGlite is one process's own database, so instances cannot share it; this runs on the PostgreSQL pass."
    : !(await redisReachable(REDIS_URL))
      ? `Redis is not reachable at ${REDIS_URL} (set TEST_REDIS_URL): instances share their limits through it.`
      : null;
if (skipReason) console.warn(`test/production/instances.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)("three instances sharing PostgreSQL and Redis", () => {
  let work: string;
  let database: ServiceDatabase;
  let instances: ServiceProcess[] = [];
  let limited: { token: string };
  let quota: { subscriberId: string; tokens: string[] };
  let pdf: Buffer;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), "instances-"));
    database = await createServiceDatabase(work);
    const db = await database.open();
    try {
      await factories(db.prisma).job("instances-job");
      const admin = accounts(db.prisma, null);
      await admin.createSubscriber({ name: "limited", email: "limited@example.com", plan: "corporate", quota: 1000 });
      limited = { token: (await admin.issueKey("limited@example.com", "one")).token };
      // Two keys, so the per-key limit (10 a minute) stays out of the quota's way (7 a month).
      const subscriber = await admin.createSubscriber({
        name: "quota",
        email: "quota@example.com",
        plan: "corporate",
        quota: QUOTA,
      });
      quota = {
        subscriberId: subscriber.id,
        tokens: [
          (await admin.issueKey("quota@example.com", "a")).token,
          (await admin.issueKey("quota@example.com", "b")).token,
        ],
      };
    } finally {
      await db.close();
    }
    pdf = await makePdf(1);
    instances = await Promise.all(
      [0, 1, 2].map((i) =>
        startService(
          {
            ...database.env,
            DATABASE_POOL_SIZE: "4",
            // What is tallied is the limits, not how fast a connection opens: CI runs this file beside
            // npm installs (production-install.test.ts), and the default second to connect once ran
            // out there (a 503 in the per-key tally, 2026-12-07).
            DATABASE_CONNECT_TIMEOUT_MS: "10000",
            // Behind a front end that appends the client's address, as on Cloud Run.
            TRUST_PROXY: "true",
            REDIS_URL,
            REDIS_KEY_PREFIX: PREFIX,
            RATE_LIMIT_REQUESTS: String(IP_LIMIT),
            RATE_LIMIT_WINDOW_SECONDS: "60",
            COMPRESS_RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT),
            UPLOAD_TMP_DIR: path.join(work, `uploads-${i}`),
            LOCAL_STORAGE_DIR: path.join(work, `objects-${i}`),
            DOWNLOAD_SIGNING_SECRET: "instances-test-signing-secret-32-chars-x",
          },
          { name: `instance ${i}` },
        ),
      ),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop(5_000)));
    await database?.drop();
    if (work) await rm(work, { recursive: true, force: true });
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** As Cloud Run's front end forwards it: whatever the client claimed, then the client's address. */
  const forwardedFor = (clientIp: string, i: number) => ({
    "x-forwarded-for": `10.0.${i % 250}.${i % 7}, ${clientIp}`,
  });

  const tally = (values: (number | string)[]) => {
    const counts: Record<string, number> = {};
    for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
    return counts;
  };

  /** "<status>", or "<status> <error code>" for an error: tallied, a stray answer says what it was. */
  const answerOf = async (response: Response) => {
    const text = await response.text();
    if (response.ok) return String(response.status);
    return `${response.status} ${(JSON.parse(text) as { error: { code: string } }).error.code}`;
  };

  /** What the instances logged as warnings and errors: the failure message of a tally. */
  const loggedErrors = () =>
    instances
      .flatMap((instance) => instance.records())
      .filter((record) => ["WARNING", "ERROR", "CRITICAL"].includes(String(record["severity"])))
      // Not the request lines of the refusals the test expects (429, 402, 400).
      .filter((record) => Number((record["httpRequest"] as { status?: number } | undefined)?.status ?? 500) >= 500)
      .map((record) => JSON.stringify(record))
      .join("\n");

  it("holds the per-client-IP limit exactly across the three", async () => {
    const answers = await Promise.all(
      Array.from({ length: IP_LIMIT * 3 }, async (_, i) => {
        const response = await fetch(`${instances[i % 3]!.url}/api/v1/jobs?limit=1`, {
          headers: forwardedFor("203.0.113.50", i),
        });
        const rateLimit = response.headers.get("ratelimit") ?? "";
        return { answer: await answerOf(response), status: response.status, rateLimit };
      }),
    );
    expect(tally(answers.map((a) => a.answer)), loggedErrors()).toEqual({
      "200": IP_LIMIT,
      "429 rate_limited": IP_LIMIT * 2,
    });
    // One counter: the 30 admitted saw every remaining count from 29 down to 0 exactly once.
    const remaining = answers
      .filter((a) => a.status === 200)
      .map((a) => Number(/r=(\d+)/.exec(a.rateLimit)?.[1]))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: IP_LIMIT }, (_, i) => i));
    // Another client IP behind the same proxy has a budget of its own.
    const other = await fetch(`${instances[0]!.url}/api/v1/jobs?limit=1`, { headers: forwardedFor("203.0.113.51", 0) });
    expect(other.status).toBe(200);
  });

  it("holds the per-key limit exactly across the three", async () => {
    const noFile = multipart([{ name: "profile", value: "balanced" }]);
    const answers = await Promise.all(
      Array.from({ length: KEY_LIMIT * 3 }, async (_, i) => {
        const response = await fetch(`${instances[i % 3]!.url}/v1/compress`, {
          method: "POST",
          // A client IP per request: only the key's limit applies here.
          headers: {
            authorization: `Bearer ${limited.token}`,
            "content-type": noFile.contentType,
            ...forwardedFor(`198.51.100.${i + 1}`, i),
          },
          body: new Uint8Array(noFile.body),
        });
        return answerOf(response);
      }),
    );
    expect(tally(answers), loggedErrors()).toEqual({
      "400 missing_file": KEY_LIMIT,
      "429 rate_limited": KEY_LIMIT * 2,
    });
  });

  it("holds the monthly quota exactly across the three: 12 concurrent compressions, quota 7", async () => {
    const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "a.pdf" }]);
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const response = await fetch(`${instances[i % 3]!.url}/v1/compress`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${quota.tokens[i % 2]!}`,
            "content-type": contentType,
            ...forwardedFor(`192.0.2.${i + 1}`, i),
          },
          body: new Uint8Array(body),
        });
        return answerOf(response);
      }),
    );
    expect(tally(answers), loggedErrors()).toEqual({ "200": QUOTA, "402 quota_exceeded": 12 - QUOTA });
    const db = await database.open();
    try {
      expect(await usedThisMonth(db.prisma, quota.subscriberId)).toBe(QUOTA);
      const rows = await db.prisma.compression.groupBy({
        by: ["status"],
        where: { subscriberId: quota.subscriberId },
        _count: true,
      });
      expect(rows.map((r) => [r.status, r._count])).toEqual([["succeeded", QUOTA]]);
    } finally {
      await db.close();
    }
  }, 60_000);

  it("ends with the same three processes, each answering /healthz, none logged at CRITICAL", async () => {
    for (const instance of instances) await expectSameProcessHealthy(instance);
  });
});
