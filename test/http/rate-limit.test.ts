// The per-client-IP rate limit over real HTTP: draft RateLimit headers on every response, 429 in
// the error shape with CORS, health probes exempt, X-Forwarded-For handling, atomic counting in
// memory and in Redis shared by two instances, and 503 (never a hang) when Redis is down.
import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import net from "node:net";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { createLogger } from "../../src/logger.ts";
import { closeRedis, createRedis } from "../../src/redis.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.ts";

const QUERY = "/graphql?query=%7B__typename%7D";
const REDIS_URL = TEST_REDIS_URL;
const logger = createLogger({ logLevel: "silent" });

const redisUp = await redisReachable(REDIS_URL);
const redisMissing = `Redis is not reachable at ${REDIS_URL} (set TEST_REDIS_URL): skipping the shared-limit cases.`;
if (!redisUp) console.warn(redisMissing);

let db: TestDatabase;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await db?.close();
});

async function server(env: Record<string, string>, redis?: Redis | null): Promise<TestServer> {
  const s = await startServer(db, env, { redis });
  cleanups.push(() => s.close());
  return s;
}

/** A client of the Redis under test, with a key prefix of this run's own, ready to use. */
async function sharedRedis(keyPrefix: string, url = REDIS_URL): Promise<Redis> {
  const redis = createRedis({ redis: { url } }, logger, { keyPrefix })!;
  cleanups.push(() => closeRedis(redis));
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
}

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

async function get(base: string, path = QUERY, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(base + path, {
    headers: { accept: "application/json", ...headers },
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The RateLimit header's r and t of the "client-ip" policy. */
function rateLimit(answer: Answer): { r: number; t: number } {
  const match = /^"client-ip";r=(\d+);t=(\d+)$/.exec(answer.headers.get("ratelimit") ?? "");
  expect(match, `RateLimit header: ${answer.headers.get("ratelimit")}`).not.toBeNull();
  return { r: Number(match![1]), t: Number(match![2]) };
}

function statuses(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** Cloud Run appends the real client IP to whatever X-Forwarded-For the client sent. */
function forwardedFor(clientIp: string): Record<string, string> {
  const forged = `10.${randomBytes(3).join(".")}`;
  return { "x-forwarded-for": `${forged}, ${clientIp}` };
}

describe("rate limit per client IP", () => {
  it("sets the draft RateLimit headers on every response and refuses with 429 in the error shape", async () => {
    const s = await server({ RATE_LIMIT_REQUESTS: "3", RATE_LIMIT_WINDOW_SECONDS: "30" });
    const origin = { origin: "https://someone.example" };

    const answers = [
      await get(s.url, QUERY, origin),
      await get(s.url, "/no/such/path", origin),
      await get(s.url, QUERY, origin),
      await get(s.url, QUERY, { ...origin, "x-request-id": "limited-1" }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 404, 200, 429]);
    for (const answer of answers) {
      expect(answer.headers.get("ratelimit-policy")).toBe('"client-ip";q=3;w=30');
      expect(rateLimit(answer).t).toBeGreaterThanOrEqual(1);
      expect(rateLimit(answer).t).toBeLessThanOrEqual(30);
    }
    expect(answers.map((a) => rateLimit(a).r)).toEqual([2, 1, 0, 0]);
    expect(JSON.parse(answers[0]!.body)).toEqual({ data: { __typename: "Query" } });

    const refused = answers[3]!;
    const retryAfter = refused.headers.get("retry-after") ?? "";
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBe(rateLimit(refused).t);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    const { error } = JSON.parse(refused.body) as { error: Record<string, unknown> };
    expect(Object.keys(error).sort()).toEqual(["code", "message", "request_id"]);
    expect(error).toMatchObject({ code: "rate_limited", request_id: "limited-1" });
    expect(error["message"]).toBe("Too many requests: the limit is 3 per 30 s. Retry in " + retryAfter + " s.");
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(refused.headers.get("access-control-expose-headers")).toMatch(/RateLimit-Policy/);
  });

  it("never limits the health probes", async () => {
    const s = await server({ RATE_LIMIT_REQUESTS: "1" });
    expect((await get(s.url)).status).toBe(200);
    expect((await get(s.url)).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      for (const path of ["/healthz", "/readyz"]) {
        const answer = await get(s.url, path);
        expect(answer.status).toBe(200);
        expect(answer.headers.get("ratelimit")).toBeNull();
      }
    }
  });

  it("limits by the IP the proxy appends to X-Forwarded-For, whatever the client put before it", async () => {
    const s = await server({ RATE_LIMIT_REQUESTS: "2", TRUST_PROXY: "true" });
    const spoofer = [];
    for (let i = 0; i < 3; i++) spoofer.push((await get(s.url, QUERY, forwardedFor("203.0.113.7"))).status);
    expect(spoofer).toEqual([200, 200, 429]);

    // Another client IP has a budget of its own, and so has the socket address without the header.
    expect((await get(s.url, QUERY, forwardedFor("203.0.113.8"))).status).toBe(200);
    expect((await get(s.url, QUERY, forwardedFor("203.0.113.8"))).status).toBe(200);
    expect((await get(s.url, QUERY, forwardedFor("203.0.113.8"))).status).toBe(429);
    expect((await get(s.url, QUERY, forwardedFor("203.0.113.7"))).status).toBe(429);
    expect((await get(s.url)).status).toBe(200);
  });

  it.each<Record<string, string>>([{ TRUST_PROXY: "false" }, {}])(
    "ignores X-Forwarded-For with %o (off Cloud Run)",
    async (trust) => {
      const s = await server({ RATE_LIMIT_REQUESTS: "2", ...trust });
      const answers = [
        await get(s.url, QUERY, forwardedFor("203.0.113.7")),
        await get(s.url, QUERY, forwardedFor("203.0.113.8")),
        await get(s.url, QUERY, forwardedFor("203.0.113.9")),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    },
  );

  it("admits exactly the limit of concurrent requests (in memory)", async () => {
    const s = await server({ RATE_LIMIT_REQUESTS: "10" });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => get(s.url, i % 2 ? QUERY : "/no/such/path")),
    );
    const counts = statuses(answers);
    expect(counts[429]).toBe(40);
    expect((counts[200] ?? 0) + (counts[404] ?? 0)).toBe(10);
  });
});

describe("rate limit shared through Redis", () => {
  function requireRedis(ctx: TestContext) {
    if (!redisUp) ctx.skip(redisMissing);
  }

  it("enforces one limit across two instances, exactly, under concurrency", async (ctx) => {
    requireRedis(ctx);
    const prefix = `test:rate-limit:${randomUUID()}:`;
    const env = { RATE_LIMIT_REQUESTS: "20", RATE_LIMIT_WINDOW_SECONDS: "30" };
    const [redisA, redisB] = [await sharedRedis(prefix), await sharedRedis(prefix)];
    const [a, b] = [await server(env, redisA), await server(env, redisB)];

    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => get(i % 2 ? a.url : b.url)));
    expect(statuses(answers)).toEqual({ 200: 20, 429: 40 });
    for (const answer of answers) expect(answer.headers.get("ratelimit-policy")).toBe('"client-ip";q=20;w=30');
    expect(
      answers
        .filter((x) => x.status === 200)
        .map((x) => rateLimit(x).r)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i));

    // The count lives in Redis, under this run's prefix, and expires with its window.
    const key = "rate-limit:client-ip:127.0.0.1";
    expect(Number(await redisA.get(key))).toBe(60);
    expect(await redisA.pttl(key)).toBeGreaterThan(0);
    await redisA.del(key);
  });

  it("answers 503 rate_limit_unavailable at once when Redis is down, and keeps health probes up", async () => {
    const redis = createRedis({ redis: { url: "redis://127.0.0.1:1" } }, logger)!;
    cleanups.push(() => closeRedis(redis));
    const s = await server({}, redis);

    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${s.url}${QUERY}`, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(2_000),
      });
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("5");
      expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      expect(await answer.json()).toMatchObject({ error: { code: "rate_limit_unavailable" } });
    }
    expect((await get(s.url, "/healthz")).status).toBe(200);
  });

  it("answers 503 within 2 s when a connected Redis stops answering", async (ctx) => {
    requireRedis(ctx);
    const proxy = await freezableProxy(new URL(REDIS_URL));
    cleanups.push(() => proxy.close());
    const redis = await sharedRedis(`test:rate-limit:${randomUUID()}:`, proxy.url);
    const s = await server({ RATE_LIMIT_WINDOW_SECONDS: "5" }, redis);
    expect((await get(s.url)).status).toBe(200);

    proxy.freeze();
    const answer = await fetch(`${s.url}${QUERY}`, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(2_000),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(await answer.json()).toMatchObject({ error: { code: "rate_limit_unavailable" } });
    redis.disconnect(); // QUIT would wait for the frozen connection.
  });
});

/** A TCP proxy to Redis that can stop forwarding, like a network that silently drops packets. */
async function freezableProxy(target: URL) {
  const pairs: [net.Socket, net.Socket][] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    pairs.push([client, upstream]);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    freeze() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
      }
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
