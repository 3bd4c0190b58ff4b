// What a process that died left behind, cleared at the next start on the same machine. Every
// process writes a marker in the temporary root, `.boot-<boot id>`, holding its pid; its
// reservations, Idempotency-Key claims, job leases (async-jobs/worker.ts), request directories
// (`req-<boot id>-…`) and partial direct uploads carry the same boot id. At start, a marker whose pid no longer runs names a dead
// process: its running compressions are failed and their units released, its jobs' leases end
// now (the next claim takes them over), and its files are removed. A marker whose process still
// runs (two instances sharing a temporary directory) is left alone. Cloud Run starts an instance
// on an empty disk: there, a dead instance's units are released when their hold lapses (holds.ts).
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { PrismaClient } from "../generated/prisma/client.ts";
import { processAlive } from "../process-lock.ts";
import { BOOT_ID } from "./holds.ts";
import { releaseClaimsOf } from "./idempotency.ts";
import { removeWorkspacesOf } from "./workflow/workspace.ts";
import { reconcileInterrupted } from "./maintenance.ts";
import type { ObjectStorage } from "./storage/storage.ts";
import type { LocalStorage } from "./storage/local.ts";

const MARKER = /^\.boot-([0-9a-f-]{36})$/;
const markerOf = (bootId: string) => `.boot-${bootId}`;

export interface Recovery {
  /** Boot ids of the dead processes found. */
  deadBoots: string[];
  /** Quota units released. */
  released: number;
  /** Job leases ended, for the jobs to be taken over now. */
  jobs: number;
  /** Idempotency-Key claims let go (their requests died with their process). */
  claims: number;
  /** Request directories and partial direct uploads removed. */
  files: number;
}

/** The boot ids of the markers in root whose process is gone. */
export async function deadBoots(root: string): Promise<string[]> {
  const dead: string[] = [];
  for (const entry of await readdir(root).catch(() => [] as string[])) {
    const bootId = MARKER.exec(entry)?.[1];
    if (!bootId || bootId === BOOT_ID) continue;
    const pid = Number((await readFile(path.join(root, entry), "utf8").catch(() => "")).trim());
    // This very pid in another boot's marker: that process is gone and its pid was reused by ours.
    if (pid === process.pid || !processAlive(pid)) dead.push(bootId);
  }
  return dead;
}

/**
 * Clears what the dead processes of root left (quota units, job leases, request directories, the
 * local storage's partial uploads), then writes this process's marker. Answers what was done.
 */
export async function recoverDeadBoots(prisma: PrismaClient, root: string, storage: ObjectStorage): Promise<Recovery> {
  const dead = await deadBoots(root);
  let released = 0;
  let jobs = 0;
  let files = 0;
  let claims = 0;
  if (dead.length > 0) {
    released = await reconcileInterrupted(prisma, new Date(0), { bootId: { in: dead } });
    claims = await releaseClaimsOf(prisma, dead);
    const freed = await prisma.compressionJob.updateMany({
      where: { status: "running", OR: dead.map((bootId) => ({ lockedBy: { startsWith: `${bootId}:` } })) },
      data: { lockedUntil: new Date() },
    });
    jobs = freed.count;
    files = await removeWorkspacesOf(root, dead);
    if (storage.kind === "local") files += await (storage as LocalStorage).removePartialUploads(dead);
    for (const bootId of dead) await rm(path.join(root, markerOf(bootId)), { force: true });
  }
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, markerOf(BOOT_ID)), `${process.pid}\n`, { mode: 0o600 });
  return { deadBoots: dead, released, jobs, claims, files };
}

/** Removes this process's marker (a clean stop: nothing of it is left to recover). */
export async function removeBootMarker(root: string): Promise<void> {
  await rm(path.join(root, markerOf(BOOT_ID)), { force: true });
}
