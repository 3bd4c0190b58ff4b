// The container image's recipe: official Node base at the tested version, multi-stage with only
// production dependencies at the end, non-root, exec-form CMD, and nothing copied that the build
// context does not hold (or should not: node_modules, .data, .git, secrets).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/env.ts";
import {
  buildContext,
  copyArguments,
  isIgnored,
  parseDockerfile,
  parseDockerignore,
  parseEnv,
  readDockerfile,
  readDockerignore,
  repoRoot,
  type Stage,
} from "./dockerfile.ts";

const stages = readDockerfile();
const final = stages.at(-1)!;
const rules = readDockerignore();
const context = buildContext();
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
  devDependencies: Record<string, string>;
};

const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const finalEnv = Object.assign({}, ...all(final, "ENV").map((i) => parseEnv(i.rest))) as Record<string, string>;

describe("the Dockerfile reader", () => {
  it("joins continuations, drops comments, reads flags, exec form and stages", () => {
    const parsed = parseDockerfile(
      [
        "# syntax=docker/dockerfile:1",
        "FROM node:22-bookworm-slim AS build",
        "RUN --mount=type=cache,target=/root/.npm npm ci \\",
        "  # a comment inside a continuation",
        "  && echo done",
        "FROM node:22-bookworm-slim",
        "COPY --from=build /app/x ./x",
        'CMD ["node", "main.ts"]',
      ].join("\n"),
    );
    expect(parsed.map((s) => [s.base, s.name])).toEqual([
      ["node:22-bookworm-slim", "build"],
      ["node:22-bookworm-slim", null],
    ]);
    expect(parsed[0]!.instructions[1]).toMatchObject({
      keyword: "RUN",
      flags: { mount: "type=cache,target=/root/.npm" },
      rest: "npm ci && echo done",
    });
    expect(parsed[1]!.instructions[1]!.flags).toEqual({ from: "build" });
    expect(parsed[1]!.instructions[2]!.exec).toEqual(["node", "main.ts"]);
    expect(parseEnv('A=1 B="two words"')).toEqual({ A: "1", B: "two words" });
    expect(parseEnv("LEGACY some value")).toEqual({ LEGACY: "some value" });
  });

  it("applies .dockerignore as Docker does: parents, globstar, exceptions, last match wins", () => {
    const ignore = parseDockerignore("*\n!src/\nsrc/generated\n**/*.test.ts\n");
    expect(isIgnored(ignore, "node_modules/x/index.js")).toBe(true);
    expect(isIgnored(ignore, "src/main.ts")).toBe(false);
    expect(isIgnored(ignore, "src/generated/prisma/client.ts")).toBe(true);
    expect(isIgnored(ignore, "src/config/env.test.ts")).toBe(true);
    expect(isIgnored(parseDockerignore("/.data\n"), ".data/pglite/PG_VERSION")).toBe(true);
  });
});

describe("Dockerfile", () => {
  it("builds on the official Node 22 slim (Debian, glibc) image, at the tests' Node version", () => {
    const nodeVersion = packageJson.devDependencies["node"];
    expect(nodeVersion, "the node devDependency pins the version").toMatch(/^22\.\d+\.\d+$/);
    const stageNames = new Set(stages.map((s) => s.name));
    for (const stage of stages.filter((s) => !stageNames.has(s.base))) {
      expect(stage.base).toBe(`node:${nodeVersion}-bookworm-slim`);
    }
  });

  it("is multi-stage, the final stage taking the generated client from an earlier one", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = stages.slice(0, -1).map((s) => s.name);
    const fromStages = all(final, "COPY").filter((i) => i.flags["from"] !== undefined);
    expect(fromStages.length).toBeGreaterThan(0);
    for (const copy of fromStages) expect(names).toContain(copy.flags["from"]);
    expect(fromStages.some((c) => copyArguments(c).sources.some((s) => s.includes("src/generated")))).toBe(true);
  });

  it("installs production dependencies only in the final stage, after the generated client is in place", () => {
    const runs = all(final, "RUN");
    const installs = runs.filter((r) => /\bnpm (ci|install|i)\b/.test(r.rest));
    expect(installs).toHaveLength(1);
    expect(installs[0]!.rest).toMatch(/\bnpm ci\b[^&|;]*--omit=dev/);
    const generatedAt = final.instructions.findIndex(
      (i) => i.keyword === "COPY" && i.flags["from"] !== undefined && i.rest.includes("src/generated"),
    );
    expect(generatedAt).toBeGreaterThan(-1);
    expect(final.instructions.indexOf(installs[0]!)).toBeGreaterThan(generatedAt);
    // npm keeps dev packages that are optional peers of production ones (npm/cli#7772).
    expect(installs[0]!.rest).toContain("scripts/prune-dev-optional.mjs");
  });

  it("runs with NODE_ENV=production as a non-root user", () => {
    expect(finalEnv["NODE_ENV"]).toBe("production");
    const users = all(final, "USER");
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.rest.split(":")[0]!;
    expect(["root", "0"]).not.toContain(user);
    const cmd = all(final, "CMD").at(-1)!;
    expect(final.instructions.indexOf(users.at(-1)!)).toBeLessThan(final.instructions.indexOf(cmd));
    // Everything the service needs after USER is read-only, nothing needs the user to own it.
    for (const instruction of final.instructions.slice(final.instructions.indexOf(users.at(-1)!))) {
      expect(instruction.keyword, "no RUN/COPY after USER").not.toMatch(/^(RUN|COPY|ADD)$/);
    }
  });

  it("starts node itself in exec form, so SIGTERM reaches it (no npm, no shell)", () => {
    const cmds = all(final, "CMD");
    expect(cmds).toHaveLength(1);
    const cmd = cmds[0]!.exec;
    expect(cmd, "CMD is a JSON array").not.toBeNull();
    expect(cmd![0]).toBe("node");
    expect(cmd!.join(" ")).not.toMatch(/\bnpm\b|\bsh\b/);
    expect(all(final, "ENTRYPOINT")).toHaveLength(0);
  });

  it("listens where Cloud Run expects: 0.0.0.0 and $PORT, exposing the port it defaults to", () => {
    const exposed = all(final, "EXPOSE").map((e) => e.rest);
    expect(exposed).toEqual([finalEnv["PORT"]]);
    // The image alone is not enough: production needs a database server (src/config/env.ts).
    expect(() => loadConfig({ ...finalEnv })).toThrow(/DATABASE_URL: required/);
    const database = { DATABASE_URL: "postgresql://app@db:5432/marketplace" };
    const config = loadConfig({ ...finalEnv, ...database });
    expect(config.port).toBe(Number(finalEnv["PORT"]));
    expect(config.host).toBe("0.0.0.0");
    expect(loadConfig({ ...finalEnv, ...database, PORT: "9123" }).port).toBe(9123);
  });

  it("copies only what the build context holds, and every file its commands start is in the image", () => {
    for (const stage of stages) {
      for (const copy of all(stage, "COPY")) {
        if (copy.flags["from"] !== undefined) continue;
        for (const source of copyArguments(copy).sources) {
          const inContext = context.some((f) => f === source || f.startsWith(`${source.replace(/\/$/, "")}/`));
          expect(inContext, `COPY ${source} (line ${copy.line}) is in the build context`).toBe(true);
        }
      }
    }
    expect(all(final, "ADD"), "COPY, not ADD").toHaveLength(0);

    // Where each context file lands in the final stage (relative to its WORKDIR, /app).
    expect(all(final, "WORKDIR").map((w) => w.rest)).toEqual(["/app"]);
    const landed = new Set<string>();
    for (const copy of all(final, "COPY").filter((c) => c.flags["from"] === undefined)) {
      const { sources, dest } = copyArguments(copy);
      const target = dest.replace(/^\.\/?/, "").replace(/\/$/, "");
      for (const source of sources.map((s) => s.replace(/\/$/, ""))) {
        for (const file of context) {
          if (file.startsWith(`${source}/`)) landed.add(path.posix.join(target, file.slice(source.length + 1)));
          else if (file === source)
            landed.add(dest.endsWith("/") ? path.posix.join(target, path.posix.basename(file)) : target);
        }
      }
    }
    const copied = (file: string) => landed.has(file);
    const cmd = all(final, "CMD")[0]!.exec!;
    const started = cmd.filter((arg) => /\.(ts|mjs|js)$/.test(arg));
    expect(started).toEqual(["src/main.ts"]);
    for (const file of [...started, "scripts/migrate.ts", "scripts/accounts.ts"]) {
      expect(existsSync(path.join(repoRoot, file)), `${file} exists`).toBe(true);
      expect(context, `${file} is in the build context`).toContain(file);
      expect(copied(file), `${file} is copied into the image`).toBe(true);
    }
    for (const run of stages.flatMap((s) => all(s, "RUN"))) {
      for (const script of run.rest.match(/\bscripts\/[\w./-]+/g) ?? []) {
        expect(existsSync(path.join(repoRoot, script)), `${script} (line ${run.line}) exists`).toBe(true);
      }
    }
  });

  it("keeps dependencies, local data, git, secrets, tests and generated files out of the build context", () => {
    for (const file of [
      "node_modules/koa/package.json",
      ".data/pglite/PG_VERSION",
      ".data/objects/x.pdf",
      ".git/config",
      ".env",
      "coverage/index.html",
      "tmp/upload",
      "src/generated/prisma/client.ts",
      "src/config/env.test.ts",
      "test/helpers/api.ts",
      "bench/catalog.ts",
    ]) {
      expect(isIgnored(rules, file), `${file} is not sent to the builder`).toBe(true);
    }
    expect(context.some((f) => f.startsWith("node_modules/") || f.startsWith(".data/") || f.startsWith(".git/"))).toBe(
      false,
    );
    for (const file of ["package.json", "package-lock.json", "src/main.ts", "prisma/schema.prisma"]) {
      expect(context).toContain(file);
    }
    expect(context.some((f) => /^prisma\/migrations\/[^/]+\/migration\.sql$/.test(f))).toBe(true);
  });
});
