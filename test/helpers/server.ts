// Starts the real Koa app on an ephemeral loopback port and speaks HTTP to it.
import type { AddressInfo } from "node:net";
import type { Redis } from "ioredis";
import { createApp, type AppDeps } from "../../src/app.ts";
import { loadConfig, type Config } from "../../src/config/env.ts";
import type { Database } from "../../src/db/database.ts";
import { createHttpServer } from "../../src/http/server.ts";
import { createLogger } from "../../src/logger.ts";

export interface TestServer {
  url: string;
  config: Config;
  graphql<T = unknown>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export interface GraphQLResponse<T> {
  status: number;
  data?: T;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
}

export interface ServerOptions {
  /** Rate limits in this Redis (the caller creates and closes it) instead of in memory. */
  redis?: Redis | null;
  /** Serve /v1 with this storage and engine runner. */
  compress?: AppDeps["compress"];
  /** Verifies /graphql's Google identities (a stand-in with local keys: test/helpers/google-keys.ts). */
  googleAuth?: AppDeps["googleAuth"];
  /** The app's cache of list totals, instead of one from LIST_TOTAL_CACHE_SECONDS. */
  totalsCache?: AppDeps["totalsCache"];
}

export async function startServer(
  db: Database,
  env: Record<string, string> = {},
  options: ServerOptions = {},
): Promise<TestServer> {
  // Tests of other features must not hit the per-IP rate limit: all their requests come from 127.0.0.1.
  const config = loadConfig({
    NODE_ENV: "test",
    LOG_LEVEL: process.env["TEST_LOG_LEVEL"] ?? "silent",
    RATE_LIMIT_REQUESTS: "1000000",
    // Tests add rows between requests: count every time unless a test is about the cache.
    LIST_TOTAL_CACHE_SECONDS: "0",
    // The app gets the test's database (db above); this only keeps NODE_ENV=production from asking
    // for a DATABASE_URL.
    PGLITE_DATA_DIR: "memory://",
    ...env,
  });
  const app = createApp({
    config,
    db,
    logger: createLogger(config),
    redis: options.redis ?? null,
    compress: options.compress ?? null,
    googleAuth: options.googleAuth ?? null,
    ...(options.totalsCache !== undefined ? { totalsCache: options.totalsCache } : {}),
  });
  const server = createHttpServer(app, config.httpLimits).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    config,
    async graphql(query: string, variables?: Record<string, unknown>) {
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...((await response.json()) as object) };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
