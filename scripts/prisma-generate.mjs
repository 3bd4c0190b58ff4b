// Runs `prisma generate` on machines that cannot reach Prisma's binary host.
// Generation itself needs no schema engine, but the CLI tries to download one unless
// PRISMA_SCHEMA_ENGINE_BINARY names an existing file; any file will do for `generate`.
import { spawnSync } from "node:child_process";
import process from "node:process";

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync("prisma", ["generate"], { stdio: "inherit", env, shell: false });
process.exit(result.status ?? 1);
