// The engine process's modules as plain JavaScript. Node runs .ts files by stripping their types
// with a WebAssembly build of swc (amaro), which stays loaded in every process that ran one: some
// 15-18 MiB of each engine process's resident memory before it holds any job (58 MiB for an empty
// .ts script against 43 for an empty .js one, on Node 22 here), and part of the time it takes to
// start. The pool strips the child script and the modules it imports (relative .ts imports,
// followed) once, in its own process, which already runs TypeScript, into a private temporary
// directory, and forks its processes on that copy: they load no TypeScript at all. The copy keeps
// the modules' relative layout and links node_modules, so that packages resolve as from the
// sources. When anything fails (an older Node, an import that leaves the copied tree), the pool
// runs the .ts sources as they are.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { processAlive } from "../../process-lock.ts";

/**
 * Relative imports of .ts modules: `from "./x.ts"`, `import "./x.ts"`, `import("./x.ts")`, and the
 * module URLs worker threads are started on: `new URL("./x.ts", import.meta.url)`.
 */
const RELATIVE_TS_IMPORT = /(\bfrom\s*|\bimport\s*\(?\s*|\bnew URL\(\s*)(["'])(\.{1,2}\/[^"'\n]+?)\.ts\2/g;

/** A copy's directory name leads with its process's pid: a later start removes a dead process's copies. */
const COPY_PREFIX = "compress-engine-";
const COPY_OF_PID = /^compress-engine-(\d+)-/;

/** Copies not yet removed: removed when the process exits, if their pool was never closed. */
const live = new Set<string>();
let exitHook = false;

export interface CompiledChild {
  /** The copy of the child script to fork. */
  module: string;
  /** Removes the copy (once no process will load a module from it). */
  remove(): void;
}

function nodeModulesAbove(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    const candidate = path.join(at, "node_modules");
    if (existsSync(candidate)) return candidate;
    if (path.dirname(at) === at) return undefined;
  }
}

/** The child script and what it imports, stripped of types; undefined when that cannot be done. */
export function compileChild(childModule: string): CompiledChild | undefined {
  if (!childModule.endsWith(".ts")) return undefined;
  const sources = new Map<string, string>();
  let dir: string | undefined;
  try {
    const pending = [path.resolve(childModule)];
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (sources.has(file)) continue;
      const code = stripTypeScriptTypes(readFileSync(file, "utf8"), { mode: "strip" });
      const js = code.replace(RELATIVE_TS_IMPORT, (_, lead: string, quote: string, specifier: string) => {
        pending.push(path.resolve(path.dirname(file), `${specifier}.ts`));
        return `${lead}${quote}${specifier}.mjs${quote}`;
      });
      sources.set(file, js);
    }
    // The directory the modules share: the copy mirrors the tree below it.
    const root = [...sources.keys()].reduce(
      (common, file) => {
        while (!file.startsWith(common + path.sep)) common = path.dirname(common);
        return common;
      },
      path.dirname(path.resolve(childModule)),
    );
    const nodeModules = nodeModulesAbove(root);
    if (!nodeModules) return undefined;
    dir = mkdtempSync(path.join(tmpdir(), `${COPY_PREFIX}${process.pid}-`));
    for (const [file, js] of sources) {
      const target = path.join(dir, path.relative(root, file)).replace(/\.ts$/, ".mjs");
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, js, { mode: 0o600 });
    }
    symlinkSync(nodeModules, path.join(dir, "node_modules"), "dir");
    const copy = dir;
    live.add(copy);
    if (!exitHook) {
      exitHook = true;
      process.once("exit", () => {
        for (const left of live) rmSync(left, { recursive: true, force: true });
      });
    }
    return {
      module: path.join(copy, path.relative(root, path.resolve(childModule))).replace(/\.ts$/, ".mjs"),
      remove: () => {
        live.delete(copy);
        rmSync(copy, { recursive: true, force: true });
      },
    };
  } catch {
    if (dir) rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

/**
 * Removes the copies of processes that no longer run (a SIGKILL skips the exit hook); returns how
 * many. A copy without a pid in its name (an older version's) is left alone: its owner is unknown.
 */
export function removeOrphanedCopies(root = tmpdir()): number {
  let removed = 0;
  for (const entry of readdirSync(root)) {
    const pid = Number(COPY_OF_PID.exec(entry)?.[1] ?? 0);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    rmSync(path.join(root, entry), { recursive: true, force: true });
    removed++;
  }
  return removed;
}
