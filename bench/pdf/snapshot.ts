// A frozen copy of the engine for one benchmark run. The engine's sources change while people
// work on them, and a run takes many minutes: without a copy, files measured early and late
// could meet different code, or code caught half-saved. The copy holds src/pdf
// (which imports only npm packages), the child scripts at the same relative places (the
// benchmark's own, and the service's src/compress/isolation/child.ts with the protocol it
// imports and the report it writes, which the runner's warm processes run), package.json (ESM) and
// a link to node_modules; its hash names the engine code measured.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

export interface EngineSnapshot {
  /** The copy of bench/pdf/engine-child.ts, to run instead of the original. */
  childPath: string;
  /** The copy of src/compress/isolation/child.ts, for the runner's childModule option. */
  runnerChildPath: string;
  /** sha256 (12 hex digits) of the engine's source files, by name and content. */
  hash: string;
  files: number;
  remove(): Promise<void>;
}

export async function snapshotEngine(): Promise<EngineSnapshot> {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-engine-"));
  try {
    const source = path.join(REPO, "src/pdf");
    const target = path.join(dir, "src/pdf");
    await cp(source, target, { recursive: true, filter: (file) => !file.endsWith(".test.ts") });
    await mkdir(path.join(dir, "bench/pdf"), { recursive: true });
    const childPath = path.join(dir, "bench/pdf/engine-child.ts");
    await cp(fileURLToPath(new URL("./engine-child.ts", import.meta.url)), childPath);
    const isolation = path.join(dir, "src/compress/isolation");
    await mkdir(isolation, { recursive: true });
    for (const name of ["child.ts", "protocol.ts"]) {
      await cp(path.join(REPO, "src/compress/isolation", name), path.join(isolation, name));
    }
    // The child writes the public report (src/compress/report.ts, which imports only the engine).
    await cp(path.join(REPO, "src/compress/report.ts"), path.join(dir, "src/compress/report.ts"));
    await cp(path.join(REPO, "package.json"), path.join(dir, "package.json"));
    await symlink(path.join(REPO, "node_modules"), path.join(dir, "node_modules"), "dir");

    const hash = createHash("sha256");
    const names = (await readdir(target, { recursive: true })).filter((name) => name.endsWith(".ts")).sort();
    for (const name of names) hash.update(`${name}\0`).update(await readFile(path.join(target, name)));
    return {
      childPath,
      runnerChildPath: path.join(isolation, "child.ts"),
      hash: hash.digest("hex").slice(0, 12),
      files: names.length,
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
