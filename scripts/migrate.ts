// Applies pending migrations to the configured database (DATABASE_URL, or the embedded one).
//   npm run db:migrate
import { loadConfig } from "../src/config/env.ts";
import { openDatabase } from "../src/db/database.ts";
import { applyMigrations } from "../src/db/migrate.ts";

const config = loadConfig();
const db = await openDatabase(config.database);
try {
  const applied = await applyMigrations(db.sql);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
} finally {
  await db.close();
}
