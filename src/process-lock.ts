// Whether a process still lives, and a lock file that says which process owns a directory (the
// embedded database's data directory: one service at a time). The lock holds the owner's pid; a
// lock whose pid is gone (the owner was killed) is stale and taken over.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** True while a process with this pid exists (one of another user's counts: it answers EPERM). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class DirectoryLocked extends Error {
  readonly dir: string;
  readonly ownerPid: number;
  constructor(dir: string, ownerPid: number) {
    super(`${dir} is in use by another running service (pid ${ownerPid})`);
    this.name = "DirectoryLocked";
    this.dir = dir;
    this.ownerPid = ownerPid;
  }
}

export const lockFileOf = (dir: string) => path.join(dir, ".service.lock");

/**
 * Takes the lock of dir for this process (created exclusively: of two processes starting at once,
 * one wins). Throws DirectoryLocked when a live process holds it; a dead one's lock is taken over.
 */
export async function lockDirectory(dir: string): Promise<{ release(): Promise<void> }> {
  await mkdir(dir, { recursive: true });
  const file = lockFileOf(dir);
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number((await readFile(file, "utf8").catch(() => "")).trim());
      if (attempt > 0 || (owner !== process.pid && processAlive(owner))) throw new DirectoryLocked(dir, owner);
      await rm(file, { force: true }); // stale: its process is gone
    }
  }
  return {
    async release() {
      const owner = Number((await readFile(file, "utf8").catch(() => "")).trim());
      if (owner === process.pid) await rm(file, { force: true });
    },
  };
}
