// Runs `prisma generate` (the postinstall step) on machines that cannot reach Prisma's binary host.
// Generation itself needs no schema engine, but the CLI tries to download one unless
// PRISMA_SCHEMA_ENGINE_BINARY names an existing file; any file will do for `generate`.
//
// As the postinstall of a production install (`npm ci --omit=dev`, whose scripts npm runs with
// NODE_ENV=production) it does not generate: the client is made where the dev dependencies are
// (the Dockerfile's build stage) and copied in before the install, which only checks it is there.
import { spawnSync } from "node:child_process";
import console from "node:console";
import { existsSync } from "node:fs";
import path from "node:path";
import process from "node:process";

const root = path.resolve(import.meta.dirname, "..");
const generatedClient = path.join(root, "src/generated/prisma/client.ts");
const omitted = (process.env.npm_config_omit ?? "").split(/[\s,]+/);
const production =
  process.env.npm_lifecycle_event === "postinstall" &&
  (omitted.includes("dev") || process.env.NODE_ENV === "production");

if (production) {
  if (existsSync(generatedClient)) {
    console.log("prisma-generate: production install, using the generated client in src/generated/");
    process.exit(0);
  }
  console.error(
    "prisma-generate: production install without a generated Prisma client (src/generated/prisma/client.ts).\n" +
      "Generate it where the dev dependencies are installed (npm ci; npm run generate) and copy src/generated/\n" +
      "in before `npm ci --omit=dev`, as the Dockerfile does.",
  );
  process.exit(1);
}

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync("prisma", ["generate"], { stdio: "inherit", env, shell: false, cwd: root });
if (result.error) {
  console.error(`prisma-generate: could not run the prisma CLI (${result.error.message}); is it installed (npm ci)?`);
}
process.exit(result.status ?? 1);
