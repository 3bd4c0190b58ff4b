// Seeds the configured database with deterministic demo data, at any scale.
//   npm run db:seed                          demo scale, seed from SEED (default 42)
//   npm run db:seed -- --jobs 1000000 --reset --seed 7
// Flags: --seed N, --companies N, --jobs N, --talents N, --agents N, --batch N,
//        --reset (empty the catalog first). Migrations are applied first.
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/env.ts";
import { openDatabase } from "../src/db/database.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { demoScale, isCatalogEmpty, seedCatalog, truncateCatalog } from "../src/db/seed/seed.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    companies: { type: "string" },
    jobs: { type: "string" },
    talents: { type: "string" },
    agents: { type: "string" },
    batch: { type: "string" },
    reset: { type: "boolean", default: false },
  },
});
const count = (value: string | undefined, fallback: number) => {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a count: ${value}`);
  return n;
};

const config = loadConfig();
const db = await openDatabase(config.database);
try {
  await applyMigrations(db.sql);
  if (values.reset) await truncateCatalog(db);
  if (!(await isCatalogEmpty(db))) {
    console.error("The catalog is not empty; pass --reset to replace it.");
    process.exitCode = 1;
  } else {
    const jobs = count(values.jobs, demoScale.jobs);
    const scale = {
      jobs,
      // Larger job counts bring proportionally more companies, so no company has 100,000 jobs.
      companies: count(values.companies, Math.max(demoScale.companies, Math.round(jobs / 200))),
      talents: count(values.talents, demoScale.talents),
      agents: count(values.agents, demoScale.agents),
    };
    const started = performance.now();
    let last = 0;
    const summary = await seedCatalog(db, {
      seed: count(values.seed, config.database.seed),
      scale,
      batchSize: count(values.batch, 5_000),
      onProgress: (table, done, total) => {
        const now = performance.now();
        if (done === total || now - last > 2_000) {
          last = now;
          console.log(
            `${table.padEnd(10)} ${done.toLocaleString("en")} / ${total.toLocaleString("en")}  ${((now - started) / 1000).toFixed(1)} s`,
          );
        }
      },
    });
    const [size] = await db.sql.query<{ size: string }>(
      `SELECT pg_size_pretty(pg_database_size(current_database())) AS size`,
    );
    console.log(
      `seeded ${JSON.stringify(summary)} in ${((performance.now() - started) / 1000).toFixed(1)} s; database size ${size?.size}`,
    );
  }
} finally {
  await db.close();
}
