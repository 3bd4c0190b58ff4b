// A small reader of the Dockerfile and .dockerignore, enough for the tests to check them and to
// run the Dockerfile's commands without Docker: instructions one per line (continuations joined,
// comments dropped), stages with their base image and name, flags, and exec or shell form.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export const repoRoot = path.resolve(import.meta.dirname, "../..");

export interface Instruction {
  keyword: string;
  /** --name=value flags before the arguments (COPY --from, RUN --mount, ...). */
  flags: Record<string, string>;
  /** The rest of the line after the flags. */
  rest: string;
  /** Exec form (a JSON array), when the arguments are one. */
  exec: string[] | null;
  line: number;
}

export interface Stage {
  base: string;
  name: string | null;
  index: number;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical: { text: string; line: number }[] = [];
  let current: { text: string; line: number } | null = null;
  text.split("\n").forEach((raw, i) => {
    const trimmed = raw.trim();
    // Comments (and parser directives) are whole lines starting with #, also inside continuations.
    if (trimmed.startsWith("#")) return;
    if (!current) {
      if (!trimmed) return;
      current = { text: "", line: i + 1 };
    }
    const continued = /\\\s*$/.test(raw);
    current.text += (current.text ? " " : "") + (continued ? raw.replace(/\\\s*$/, "") : raw).trim();
    if (!continued) {
      logical.push(current);
      current = null;
    }
  });
  if (current) throw new Error("the Dockerfile ends inside a line continuation");

  const stages: Stage[] = [];
  for (const { text: line, line: number } of logical) {
    const match = /^(\w+)\s*(.*)$/.exec(line);
    if (!match) throw new Error(`line ${number}: not an instruction: ${line}`);
    const keyword = match[1]!.toUpperCase();
    let rest = match[2]!;
    const flags: Record<string, string> = {};
    for (let flag = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest); flag; flag = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest)) {
      flags[flag[1]!] = flag[2] ?? "";
      rest = rest.slice(flag[0].length);
    }
    let exec: string[] | null = null;
    if (rest.startsWith("[")) {
      try {
        const parsed: unknown = JSON.parse(rest);
        if (Array.isArray(parsed) && parsed.every((item) => typeof item === "string")) exec = parsed;
      } catch {
        exec = null; // shell form that happens to start with [
      }
    }
    const instruction: Instruction = { keyword, flags, rest, exec, line: number };
    if (keyword === "FROM") {
      const [base, as, name, ...extra] = rest.split(/\s+/);
      if (!base || (as !== undefined && (as.toUpperCase() !== "AS" || !name)) || extra.length) {
        throw new Error(`line ${number}: FROM <image> [AS <name>] expected`);
      }
      stages.push({ base, name: name ?? null, index: stages.length, instructions: [instruction] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`line ${number}: ${keyword} before the first FROM`);
    stage.instructions.push(instruction);
  }
  return stages;
}

export function readDockerfile(file = path.join(repoRoot, "Dockerfile")): Stage[] {
  return parseDockerfile(readFileSync(file, "utf8"));
}

/** Splits ENV's arguments: `ENV A=1 B="two words"` or the old `ENV A value`. */
export function parseEnv(rest: string): Record<string, string> {
  const legacy = /^([A-Za-z_]\w*)\s+([^=]*)$/.exec(rest);
  if (legacy && !rest.includes("=")) return { [legacy[1]!]: legacy[2]!.trim() };
  const env: Record<string, string> = {};
  for (const pair of rest.matchAll(/([A-Za-z_]\w*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const value = pair[2]!;
    env[pair[1]!] = value.startsWith('"') ? (JSON.parse(value) as string) : value;
  }
  return env;
}

/** COPY's sources and destination (shell or exec form). */
export function copyArguments(instruction: Instruction): { sources: string[]; dest: string } {
  const parts = instruction.exec ?? instruction.rest.split(/\s+/);
  if (parts.length < 2) throw new Error(`line ${instruction.line}: COPY needs a source and a destination`);
  return { sources: parts.slice(0, -1), dest: parts.at(-1)! };
}

// ---- .dockerignore, with Docker's rules: patterns relative to the context root, `*` and `?`
// within one path segment, `**` across any number of them, a pattern also excludes everything
// under a directory it matches, `!` re-includes, and the last matching pattern wins.

export interface IgnoreRule {
  negate: boolean;
  pattern: string;
  regex: RegExp;
}

export function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const negate = line.startsWith("!");
      const pattern = path.posix.normalize((negate ? line.slice(1) : line).trim()).replace(/^\/+|\/+$/g, "");
      return { negate, pattern, regex: patternToRegex(pattern) };
    });
}

function patternToRegex(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === "*" && pattern[i + 1] === "*") {
      i++;
      if (pattern[i + 1] === "/") {
        i++;
        source += "(?:.*/)?";
      } else {
        source += ".*";
      }
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** Whether the context path (relative, with /) is excluded from the build context. */
export function isIgnored(rules: IgnoreRule[], file: string): boolean {
  const parts = file.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const rule of rules) {
    if (prefixes.some((prefix) => rule.regex.test(prefix))) ignored = !rule.negate;
  }
  return ignored;
}

export function readDockerignore(root = repoRoot): IgnoreRule[] {
  const file = path.join(root, ".dockerignore");
  return existsSync(file) ? parseDockerignore(readFileSync(file, "utf8")) : [];
}

/**
 * The files of the build context, as Docker would send them: the directory's files minus what
 * .dockerignore excludes. A directory is not descended into when it is excluded and no `!`
 * pattern could re-include something under it (node_modules/ stays unread).
 */
export function buildContext(root = repoRoot, rules = readDockerignore(root)): string[] {
  const files: string[] = [];
  const mayReinclude = (dir: string) =>
    rules.some((rule) => rule.negate && (rule.pattern.startsWith(`${dir}/`) || /[*?]/.test(rule.pattern)));
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (isIgnored(rules, relative) && !mayReinclude(relative)) continue;
        walk(relative);
      } else if (!isIgnored(rules, relative)) {
        files.push(relative);
      }
    }
  };
  walk("");
  return files.sort();
}
