import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./env.ts";
import { serviceRunnerOptions } from "../compress/isolation/runner.ts";

describe("loadConfig", () => {
  it("runs on embedded defaults with no environment at all", () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database).toEqual({
      kind: "pglite",
      dataDir: ".data/pglite",
      migrateOnStart: true,
      seedDemoData: true,
      seed: 42,
    });
  });

  it("switches to a PostgreSQL server with DATABASE_URL, migrating only when asked", () => {
    const config = loadConfig({ DATABASE_URL: "postgresql://u@db:5432/app", DB_MIGRATE_ON_START: "true" });
    expect(config.database).toMatchObject({
      kind: "postgres",
      url: "postgresql://u@db:5432/app",
      migrateOnStart: true,
      seedDemoData: false,
    });
  });

  it("reports every problem at once", () => {
    try {
      loadConfig({ PORT: "http", DATABASE_URL: "mysql://x", GRAPHQL_EXPLORER: "maybe" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues.map((i) => i.split(":")[0]).sort()).toEqual([
        "DATABASE_URL",
        "GRAPHQL_EXPLORER",
        "PORT",
      ]);
    }
  });

  it("treats empty values as unset", () => {
    expect(loadConfig({ DATABASE_URL: "", PORT: "" }).database.kind).toBe("pglite");
  });

  it("limits each client IP in memory by default, trusting X-Forwarded-For only on Cloud Run", () => {
    const config = loadConfig({});
    expect(config.redis).toBeNull();
    expect(config.rateLimit).toEqual({ requests: 300, windowSeconds: 60 });
    expect(config.trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
    const cloudRun = { K_SERVICE: "api", DATABASE_URL: "postgresql://db/x", GCS_BUCKET: "bucket" };
    expect(loadConfig(cloudRun).trustProxy).toBe(true);
    expect(loadConfig({ ...cloudRun, TRUST_PROXY: "false" }).trustProxy).toBe(false);
  });

  it("reads the rate limit, its Redis store and the proxy setting", () => {
    const config = loadConfig({
      REDIS_URL: "rediss://:secret@cache.internal:6380/2",
      RATE_LIMIT_REQUESTS: "20",
      RATE_LIMIT_WINDOW_SECONDS: "5",
      TRUST_PROXY: "false",
    });
    expect(config.redis).toEqual({ url: "rediss://:secret@cache.internal:6380/2" });
    expect(config.rateLimit).toEqual({ requests: 20, windowSeconds: 5 });
    expect(config.trustProxy).toBe(false);
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).redis).toEqual({ url: "redis://127.0.0.1:6379" });
    expect(loadConfig({ REDIS_URL: "" }).redis).toBeNull();
  });

  it("refuses rate limit settings that make no sense", () => {
    try {
      loadConfig({
        REDIS_URL: "http://cache:6379",
        RATE_LIMIT_REQUESTS: "0",
        RATE_LIMIT_WINDOW_SECONDS: "1.5",
        TRUST_PROXY: "sometimes",
      });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).issues.map((i) => i.split(":")[0]).sort()).toEqual([
        "RATE_LIMIT_REQUESTS",
        "RATE_LIMIT_WINDOW_SECONDS",
        "REDIS_URL",
        "TRUST_PROXY",
      ]);
    }
  });

  it("requires a PostgreSQL server in production unless the embedded database is chosen on purpose", () => {
    const issues = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).issues;
      }
    };
    expect(issues({ NODE_ENV: "production" })).toEqual([
      expect.stringMatching(/^DATABASE_URL: required with NODE_ENV=production/),
    ]);
    expect(issues({ NODE_ENV: "production", DATABASE_URL: "" })).toHaveLength(1);
    expect(loadConfig({ NODE_ENV: "production", DATABASE_URL: "postgresql://u@db/app" }).database.kind).toBe(
      "postgres",
    );
    expect(loadConfig({ NODE_ENV: "production", PGLITE_DATA_DIR: "/srv/pglite" }).database).toMatchObject({
      kind: "pglite",
      dataDir: "/srv/pglite",
    });
    // Development and tests keep running on embedded defaults.
    expect(issues({ NODE_ENV: "development" })).toEqual([]);
    expect(issues({ NODE_ENV: "test" })).toEqual([]);
  });

  it("requires a database server and a Cloud Storage bucket on Cloud Run, whatever NODE_ENV says", () => {
    try {
      loadConfig({ K_SERVICE: "marketplace-api", NODE_ENV: "development", PORT: "http" });
      expect.unreachable();
    } catch (error) {
      const issues = (error as ConfigError).issues;
      // Listed beside the invalid values, all at once.
      expect(issues.map((i) => i.split(":")[0]).sort()).toEqual(["DATABASE_URL", "GCS_BUCKET", "PORT"]);
      expect(issues.find((i) => i.startsWith("DATABASE_URL"))).toMatch(/on Cloud Run \(K_SERVICE is set\)/);
      expect(issues.find((i) => i.startsWith("GCS_BUCKET"))).toMatch(/instance's memory/);
      expect((error as ConfigError).message).toContain("GCS_BUCKET: required on Cloud Run");
    }
    // An embedded database on purpose still needs the bucket.
    expect(() => loadConfig({ K_SERVICE: "api", PGLITE_DATA_DIR: "memory://" })).toThrow(/GCS_BUCKET/);
    const config = loadConfig({
      K_SERVICE: "marketplace-api",
      NODE_ENV: "production",
      DATABASE_URL: "postgresql://u@db/app",
      GCS_BUCKET: "acme-results",
    });
    expect(config.database.kind).toBe("postgres");
    expect(config.storage).toMatchObject({ kind: "gcs", bucket: "acme-results" });
  });

  it("gives compressions a time limit that grows with the input, warm processes and a resident-memory cap", () => {
    expect(loadConfig({}).compress).toMatchObject({
      timeoutMs: 30_000,
      timeoutMsPerMb: 2000,
      memoryMb: 1536,
      maxRssMb: 3072,
      concurrency: 2,
      warmProcesses: 3,
      quickWarmProcesses: 1,
    });
    const tuned = loadConfig({
      COMPRESS_TIMEOUT_BASE_SECONDS: "10",
      COMPRESS_TIMEOUT_SECONDS_PER_MB: "0.5",
      COMPRESS_MAX_RSS_MB: "2048",
      COMPRESS_CONCURRENCY: "3",
      COMPRESS_WARM_PROCESSES: "0",
    });
    expect(tuned.compress).toMatchObject({ timeoutMs: 10_000, timeoutMsPerMb: 500, maxRssMb: 2048, warmProcesses: 0 });
    expect(loadConfig({ COMPRESS_CONCURRENCY: "4" }).compress.warmProcesses).toBe(5);
  });

  it("makes one of the warm processes a quick one, unless told otherwise; never more than there are", () => {
    expect(loadConfig({ COMPRESS_WARM_PROCESSES: "1" }).compress.quickWarmProcesses).toBe(0);
    expect(loadConfig({ COMPRESS_WARM_PROCESSES: "0" }).compress.quickWarmProcesses).toBe(0);
    expect(loadConfig({ COMPRESS_QUICK_WARM_PROCESSES: "2" }).compress).toMatchObject({
      warmProcesses: 3,
      quickWarmProcesses: 2,
    });
    // The service's runner: the quick ones are part of the warm ones.
    expect(serviceRunnerOptions(loadConfig({}).compress)).toMatchObject({ warmProcesses: 2, quickWarmProcesses: 1 });
    expect(() => loadConfig({ COMPRESS_WARM_PROCESSES: "1", COMPRESS_QUICK_WARM_PROCESSES: "2" })).toThrow(
      /COMPRESS_QUICK_WARM_PROCESSES: 2 is more than the warm processes/,
    );
    expect(() => loadConfig({ COMPRESS_QUICK_WARM_PROCESSES: "4" })).toThrow(/COMPRESS_QUICK_WARM_PROCESSES/);
  });

  it("still reads the old flat COMPRESS_TIMEOUT_SECONDS alone, and refuses it beside the new settings", () => {
    expect(loadConfig({ COMPRESS_TIMEOUT_SECONDS: "120" }).compress).toMatchObject({
      timeoutMs: 120_000,
      timeoutMsPerMb: 0,
    });
    expect(() => loadConfig({ COMPRESS_TIMEOUT_SECONDS: "120", COMPRESS_TIMEOUT_SECONDS_PER_MB: "1" })).toThrow(
      /COMPRESS_TIMEOUT_SECONDS: the old flat time limit cannot be combined/,
    );
  });
});
