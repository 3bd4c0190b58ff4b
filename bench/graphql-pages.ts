// Times a 50-job page through the read model (in-process GraphQL, with company, sector and
// skills) at several offsets, on the configured database. Seed first, e.g.
//   DATABASE_URL=... npm run db:seed -- --jobs 1000000 --reset
//   DATABASE_URL=... npm run bench:graphql
// Flags: --runs N (default 30), --offsets 0,100000
import { parseArgs } from "node:util";
import { execute, parse } from "graphql";
import { loadConfig } from "../src/config/env.ts";
import { openDatabase } from "../src/db/database.ts";
import { createContext } from "../src/graphql/context.ts";
import { schema } from "../src/graphql/schema.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "30" }, offsets: { type: "string", default: "0,100000" } },
});
const runs = Number(values.runs);
const offsets = values.offsets.split(",").map(Number);

const document = parse(`query ($offset: Int!) { jobs(limit: 50, offset: $offset) { total items {
  id slug title workModel employmentType location { city state } salary { min max currency period }
  company { slug name } sector { slug name } skills { slug name } publishedAt } } }`);

const config = loadConfig();
const db = await openDatabase(config.database);
const [{ jobs } = { jobs: 0 }] = await db.sql.query<{ jobs: number }>(`SELECT count(*)::int AS jobs FROM jobs`);
console.log(`database: ${db.kind}, ${jobs.toLocaleString("en")} jobs; ${runs} runs per offset after 3 warm-up runs`);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
for (const offset of offsets) {
  const times: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const started = performance.now();
    const result = await execute({
      schema,
      document,
      variableValues: { offset },
      contextValue: createContext({ prisma: db.prisma, sql: db.sql }),
    });
    if (result.errors?.[0]) throw result.errors[0];
    if (i >= 3) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(
    `offset ${String(offset).padStart(7)}: p50 ${percentile(times, 0.5).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms`,
  );
}
await db.close();
