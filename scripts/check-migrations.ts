// Fails when prisma/schema.prisma and prisma/migrations disagree, printing the missing SQL.
// Run with --experimental-wasm-modules (npm run db:migration:check does).
import { diffMigrationsToSchema } from "./lib/schema-engine.ts";

const drift = await diffMigrationsToSchema();
if (drift) {
  console.error("schema.prisma has changes no migration carries. Create one with");
  console.error("  npm run db:migration:create -- <name>\nMissing SQL:\n");
  console.error(drift);
  process.exit(1);
}
console.log("migrations match schema.prisma");
