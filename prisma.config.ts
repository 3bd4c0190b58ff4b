// Configuration of the Prisma CLI. The application does not read it: src/config/env.ts is
// the one reader of the environment at run time, and migrations are applied by
// scripts/migrate.ts (see docs/ARCHITECTURE.md for why).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env["DATABASE_URL"] ?? "postgresql://localhost:5432/unused" },
});
