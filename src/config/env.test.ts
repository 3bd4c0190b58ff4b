import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./env.ts";

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
});
