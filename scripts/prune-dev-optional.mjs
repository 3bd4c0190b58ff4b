// Removes from a production install (`npm ci --omit=dev`) the packages npm keeps only because a
// production package names them as an optional peer while we list them as dev dependencies:
// npm marks those "devOptional" in package-lock.json and omits them only when both dev and
// optional dependencies are omitted (npm/cli#7772). Here that is the prisma CLI and TypeScript,
// optional peers of @prisma/client, with ~130 packages of their own (about half of the install).
// `--omit=optional` is not the way out: sharp's native binaries are optional dependencies.
//
//   node scripts/prune-dev-optional.mjs [--dry-run]      (in the directory of package-lock.json)
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import console from "node:console";
import path from "node:path";
import process from "node:process";

const root = process.cwd();
const dryRun = process.argv.includes("--dry-run");
/** @type {unknown} */
const parsed = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8"));
const lock = /** @type {{ packages?: Record<string, { devOptional?: boolean }> }} */ (parsed);

const doomed = Object.entries(lock.packages ?? {})
  .filter(([location, entry]) => location.startsWith("node_modules/") && entry.devOptional === true)
  .map(([location]) => location)
  .filter((location) => existsSync(path.join(root, location)));

if (!dryRun) {
  for (const location of doomed) rmSync(path.join(root, location), { recursive: true, force: true });
}

// The executables of removed packages are left as dangling links.
let links = 0;
const binDir = path.join(root, "node_modules/.bin");
if (!dryRun && existsSync(binDir)) {
  for (const name of readdirSync(binDir)) {
    const file = path.join(binDir, name);
    if (!lstatSync(file).isSymbolicLink()) continue;
    try {
      statSync(file);
    } catch {
      rmSync(file, { force: true });
      links++;
    }
  }
}

console.log(
  `prune-dev-optional: ${dryRun ? "would remove" : "removed"} ${doomed.length} dev packages kept` +
    ` as optional peers of production ones, and ${links} dangling executables`,
);
