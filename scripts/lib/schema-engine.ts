// Prisma's schema engine compiled to WebAssembly, driven through an in-memory PGlite.
// This is how migrations are made and drift is checked on machines that cannot reach
// Prisma's binary host (see ../shared/notes/toolchain.md). Needs --experimental-wasm-modules.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import { SchemaEngine } from "@prisma/schema-engine-wasm";
import type { MigrationList } from "@prisma/schema-engine-wasm";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { pgliteExtensions } from "../../src/db/pglite-extensions.ts";

export const projectRoot = path.resolve(import.meta.dirname, "../..");
export const schemaPath = path.join(projectRoot, "prisma/schema.prisma");
export const migrationsDir = path.join(projectRoot, "prisma/migrations");

export async function loadMigrationList(): Promise<MigrationList> {
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const lockPath = path.join(migrationsDir, "migration_lock.toml");
  return {
    baseDir: migrationsDir,
    lockfile: {
      path: "migration_lock.toml",
      content: await readFile(lockPath, "utf8").catch(() => null),
    },
    shadowDbInitScript: "",
    migrationDirectories: await Promise.all(
      dirs.map(async (dir) => ({
        path: dir,
        migrationFile: {
          path: "migration.sql",
          content: await readFile(path.join(migrationsDir, dir, "migration.sql"), "utf8")
            .then((value) => ({ tag: "ok" as const, value }))
            .catch((e: Error) => ({ tag: "error" as const, value: e.message })),
        },
      })),
    ),
  };
}

/**
 * Indexes the migrations make that schema.prisma cannot describe (Prisma has no INCLUDE and no
 * index on an expression): the diff would drop them. Each is named here with the migration that made it.
 */
export const INDEXES_BEYOND_PRISMA = [
  // 20261206014500_list_order_with_terms: the public list order with the title and head words.
  "jobs_public_order_terms_idx",
  // 20261207020000_companies_named_index: public companies by search_plain(name), for q's company names.
  "companies_search_plain_name_idx",
  // 20261207183000_job_feed_expiry_index: the open jobs that expire, by valid_through, for the feed's sweep.
  "jobs_open_valid_through_idx",
];

/** The diff without the statements that would drop INDEXES_BEYOND_PRISMA. */
function withoutKeptIndexes(sql: string): string {
  let kept = sql;
  for (const name of INDEXES_BEYOND_PRISMA) {
    kept = kept.replace(new RegExp(`(-- DropIndex\\n)?DROP INDEX "${name}";\\n?`, "g"), "");
  }
  return kept;
}

/** SQL that takes the database described by the migrations to the one in schema.prisma ("" when none). */
export async function diffMigrationsToSchema(): Promise<string> {
  const schema = { files: [{ path: schemaPath, content: await readFile(schemaPath, "utf8") }] };
  const pglite = new PGlite({ extensions: pgliteExtensions });
  const factory = new PrismaPGlite(pglite);
  // The adapter's shadow database (where the migrations are replayed) is a PGlite of its own,
  // opened without extensions: the migrations' CREATE EXTENSION needs them loaded there too.
  const shadow = new PGlite({ extensions: pgliteExtensions });
  factory.connectToShadowDb = () => new PrismaPGlite(shadow).connect();
  const adapter = bindMigrationAwareSqlAdapterFactory(factory);
  const engine = await SchemaEngine.new({ datamodels: undefined }, () => {}, adapter);
  try {
    const migrations = await loadMigrationList();
    const from =
      migrations.migrationDirectories.length === 0
        ? ({ tag: "empty" } as const)
        : ({ tag: "migrations", ...migrations } as const);
    const result = await engine.diff({
      from,
      to: { tag: "schemaDatamodel", ...schema },
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    });
    const sql = withoutKeptIndexes(result.stdout ?? "");
    return /^\s*(-- This is an empty migration\.)?\s*$/.test(sql) ? "" : sql;
  } finally {
    engine.free();
    await pglite.close();
    await shadow.close();
  }
}
