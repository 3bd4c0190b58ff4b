import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Node loads dependencies such as Pothos and
    // yoga with the CJS build; Vite would give our own files the ESM one, and two copies of
    // graphql cannot share a schema. Point Vite at the file Node uses.
    alias: { graphql: require.resolve("graphql") },
  },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // Fails a file in which an unregistered error code was constructed (src/errors.ts).
    setupFiles: ["test/setup/error-codes.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each file gets its own database; two at a time suits the 2-core machines.
    maxWorkers: 2,
  },
});
