// The request workspace: a directory of one compression's own under the temporary root, holding its
// input (upload.pdf) and the engine's output (output.pdf). Made, used and removed here and only here:
// whoever runs a compression (a request, the dashboard's Try it, a direct upload, a job's attempt)
// gets one for the length of a callback, and it is gone when the callback settles, whatever happened.
// A process that dies leaves its directories behind; they carry its boot id, and the next start on
// the same machine removes them (removeWorkspacesOf, from ../boot.ts); the housekeeping sweeps any
// older than the interruption limit (sweepWorkspaces, from ../maintenance.ts).
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Config } from "../../config/env.ts";
import { BOOT_ID } from "../holds.ts";

/** Where compressions keep their workspaces, one directory each. */
export const temporaryRoot = (config: Pick<Config, "compress">) =>
  config.compress.tmpDir ?? path.join(tmpdir(), "marketplace-compress");

/** The prefix of this process's workspaces: a restart removes a dead process's by it (boot.ts). */
export const requestDirectoryPrefix = (bootId: string) => `req-${bootId}-`;

export interface Workspace {
  readonly dir: string;
  /** The file to compress (written by the upload, or fetched from storage). */
  readonly input: string;
  /** The engine's result. */
  readonly output: string;
}

/** Runs `work` in a new workspace, removed once it settles. */
export async function withWorkspace<T>(
  config: Pick<Config, "compress">,
  work: (workspace: Workspace) => Promise<T>,
): Promise<T> {
  const root = temporaryRoot(config);
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(path.join(root, requestDirectoryPrefix(BOOT_ID)));
  try {
    return await work({ dir, input: path.join(dir, "upload.pdf"), output: path.join(dir, "output.pdf") });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Removes the workspaces the dead processes of `bootIds` left under root (boot.ts); returns how many. */
export async function removeWorkspacesOf(root: string, bootIds: readonly string[]): Promise<number> {
  const prefixes = bootIds.map(requestDirectoryPrefix);
  let removed = 0;
  for (const entry of await readdir(root)) {
    if (!prefixes.some((prefix) => entry.startsWith(prefix))) continue;
    await rm(path.join(root, entry), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** Removes workspaces under root older than maxAgeMs, whoever left them (the housekeeping); returns how many. */
export async function sweepWorkspaces(root: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(root).catch(() => [] as string[])) {
    if (!entry.startsWith("req-")) continue;
    const dir = path.join(root, entry);
    const info = await stat(dir).catch(() => null);
    if (info && now - info.mtimeMs > maxAgeMs) {
      await rm(dir, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
