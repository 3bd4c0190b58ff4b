import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);
const root = import.meta.dirname;

const TEST_ROOTS = ["test", "src"];
// What makes a test file depend on the database it is run against: the test database helper, the
// database module itself, the server the environment names, or the production install (which runs
// in the server pass only).
const USES_DATABASE =
  /createTestDatabase|\/db\/database\.ts|process\.env(?:\.DATABASE_URL|\["DATABASE_URL"\])|TEST_PRODUCTION_INSTALL/;
const RELATIVE_IMPORT = /from "(\.{1,2}\/[^"]+)"/g;

function testFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : testFiles(file);
    return file.endsWith(".test.ts") ? [file] : [];
  });
}

/** True when the file, or a test helper it imports (transitively), depends on the database. */
function usesDatabase(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(path.join(root, file), "utf8");
  } catch {
    return false;
  }
  if (USES_DATABASE.test(text)) return true;
  return [...text.matchAll(RELATIVE_IMPORT)].some(([, target = ""]) => {
    const imported = path.join(path.dirname(file), target);
    return imported.startsWith(`test${path.sep}`) && usesDatabase(imported, seen);
  });
}

// Two projects. `database`: files that use the database, run by CI once per database (embedded
// PGlite, then the PostgreSQL server: `vitest run --project database`). `unit`: every other file
// (engine, runner, parameters, configuration, the lint rules, the migration drift check), the same
// on any database, run once. `npm test` runs both.
const databaseFiles = TEST_ROOTS.flatMap(testFiles).filter((file) => usesDatabase(file));

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Node loads dependencies such as Pothos and
    // yoga with the CJS build; Vite would give our own files the ESM one, and two copies of
    // graphql cannot share a schema. Point Vite at the file Node uses.
    alias: { graphql: require.resolve("graphql") },
  },
  test: {
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each file gets its own database; two at a time suits the 2-core machines.
    maxWorkers: 2,
    // Fails a file in which an unregistered error code was constructed (src/errors.ts).
    setupFiles: ["test/setup/error-codes.ts", "test/setup/fuzz-seed.ts"],
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/**/*.test.ts", "src/**/*.test.ts"], exclude: databaseFiles },
      },
      { extends: true, test: { name: "database", include: databaseFiles } },
    ],
  },
});
