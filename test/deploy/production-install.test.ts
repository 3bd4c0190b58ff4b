// SLOW (a minute and a half, more on a busy machine; opt-in with TEST_PRODUCTION_INSTALL=1, which CI sets on its
// PostgreSQL pass only). Runs the Dockerfile without Docker: every stage's COPY, ENV, WORKDIR and
// RUN, in a temporary directory per stage, from the build context .dockerignore leaves (so a file
// the image lacks is missing here too), with this machine's Node 22 standing in for the base
// image's. Then, in the final stage's directory and environment, the exact commands the
// deployment runs: cloudbuild.yaml's migration job against a fresh PostgreSQL database, and the
// Dockerfile's CMD, which must answer /healthz, /readyz and /api/v1/jobs and exit 0 on SIGTERM
// within Cloud Run's 10 seconds. Needs the npm registry and a PostgreSQL server (skipped, with a
// message, without either); the database and the directory are removed afterwards.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import http2 from "node:http2";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildContext, copyArguments, parseEnv, readDockerfile, repoRoot, type Stage } from "./dockerfile.ts";

const enabled = process.env["TEST_PRODUCTION_INSTALL"] === "1";
const adminUrl =
  process.env["TEST_POSTGRES_URL"] ?? process.env["DATABASE_URL"] ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const registry = process.env["npm_config_registry"] ?? "https://registry.npmjs.org/";

async function registryReachable(): Promise<boolean> {
  try {
    const response = await fetch(new URL("-/ping", registry), { signal: AbortSignal.timeout(5_000) });
    return response.ok;
  } catch {
    return false;
  }
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

let skipReason: string | null = null;
if (!enabled) skipReason = "set TEST_PRODUCTION_INSTALL=1 to run it (CI does, on its PostgreSQL pass)";
else if (Number(process.versions.node.split(".")[0]) < 22)
  skipReason = `it needs Node 22 (the image's), not ${process.version}`;
else if (!(await registryReachable())) skipReason = `the npm registry (${registry}) is not reachable`;
else if (!(await postgresReachable())) skipReason = `no PostgreSQL server at ${adminUrl} (set TEST_POSTGRES_URL)`;
if (skipReason) console.warn(`production-install.test.ts: skipped, ${skipReason}.`);

// What the commands see of this machine: the Node 22 running the tests first on PATH (the base
// image's node), HOME for npm's cache (the Dockerfile's cache mount), and what reaching the
// registry may need. Nothing else leaks in: not NODE_ENV=test, not DATABASE_URL.
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: `${path.dirname(process.execPath)}:${process.env["PATH"] ?? "/usr/bin:/bin"}`,
  };
  const passThrough =
    /^(HOME|USER|LANG|TMPDIR|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO)_PROXY|npm_config_(registry|userconfig|cache))$/i;
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && passThrough.test(name)) env[name] = value;
  }
  return env;
}

// cloudbuild.yaml's migration job command, and the protocol its deploy sets (HTTP_PROTOCOL).
const cloudbuild = parse(readFileSync(path.join(repoRoot, "cloudbuild.yaml"), "utf8")) as {
  steps: { args?: string[] }[];
};
function gcloudFlag(prefix: string, name: string): string {
  const args = cloudbuild.steps.map((s) => s.args ?? []).find((a) => a.join(" ").startsWith(prefix));
  const value = args?.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (value === undefined) throw new Error(`cloudbuild.yaml: no ${prefix} --${name}`);
  return value;
}
const migrateCommand = [gcloudFlag("run jobs deploy", "command"), ...gcloudFlag("run jobs deploy", "args").split(",")];
const deployedProtocol = Object.fromEntries(
  gcloudFlag("run deploy", "set-env-vars")
    .split(",")
    .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
)["HTTP_PROTOCOL"];

/** GET over cleartext HTTP/2 with prior knowledge, as Cloud Run's front end talks with --use-http2. */
function h2cGet(session: http2.ClientHttp2Session, pathname: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = session.request({ ":path": pathname });
    let status = 0;
    let body = "";
    request.on("response", (headers) => (status = Number(headers[":status"])));
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => resolve({ status, body }));
    request.on("error", reject);
    request.end();
  });
}

interface Built {
  appDir: string;
  env: Record<string, string>;
  cmd: string[];
  timings: Record<string, number>;
}

function run(
  argv: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; shell?: boolean },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      shell: options.shell ?? false,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Runs the Dockerfile's stages in `workspace`, one directory per stage standing for its filesystem. */
async function buildWithoutDocker(stages: Stage[], workspace: string): Promise<Built> {
  const context = buildContext();
  const roots = new Map<string, string>();
  const timings: Record<string, number> = {};
  let last: Built | null = null;
  for (const stage of stages) {
    const root = path.join(workspace, `stage-${stage.index}`);
    mkdirSync(root, { recursive: true });
    if (stage.name) roots.set(stage.name, root);
    let workdir = "/";
    const env = baseEnv();
    let cmd: string[] = [];
    const inStage = (target: string) => path.join(root, path.posix.resolve(workdir, target));
    for (const instruction of stage.instructions) {
      const where = `Dockerfile line ${instruction.line}`;
      switch (instruction.keyword) {
        case "FROM":
          if (roots.has(instruction.rest.split(/\s+/)[0]!)) throw new Error(`${where}: FROM <stage> is not simulated`);
          break;
        case "WORKDIR":
          workdir = path.posix.resolve(workdir, instruction.rest);
          mkdirSync(inStage("."), { recursive: true });
          break;
        case "ENV":
          Object.assign(env, parseEnv(instruction.rest));
          break;
        case "COPY": {
          const { sources, dest } = copyArguments(instruction);
          const from = instruction.flags["from"];
          const unknown = Object.keys(instruction.flags).filter((f) => !["from", "chown", "chmod", "link"].includes(f));
          if (unknown.length) throw new Error(`${where}: COPY --${unknown[0]} is not simulated`);
          const intoDir = dest.endsWith("/") || sources.length > 1;
          for (const source of sources) {
            if (from !== undefined) {
              const fromRoot = roots.get(from);
              if (!fromRoot) throw new Error(`${where}: no earlier stage named ${from}`);
              const origin = path.join(fromRoot, source);
              if (!existsSync(origin)) throw new Error(`${where}: ${source} does not exist in stage ${from}`);
              // A directory's contents go to the destination; a file goes into it or becomes it.
              const target =
                intoDir && !statSync(origin).isDirectory()
                  ? path.join(inStage(dest), path.basename(source))
                  : inStage(dest);
              cpSync(origin, target, { recursive: true, verbatimSymlinks: true });
              continue;
            }
            const prefix = source.replace(/\/$/, "");
            const files = context.filter((f) => f === prefix || f.startsWith(`${prefix}/`));
            if (!files.length) throw new Error(`${where}: ${source} is not in the build context`);
            for (const file of files) {
              const target =
                file === prefix
                  ? intoDir
                    ? path.join(inStage(dest), path.basename(file))
                    : inStage(dest)
                  : path.join(inStage(dest), file.slice(prefix.length + 1));
              mkdirSync(path.dirname(target), { recursive: true });
              cpSync(path.join(repoRoot, file), target);
            }
          }
          break;
        }
        case "RUN": {
          const mount = instruction.flags["mount"];
          if (mount !== undefined && !mount.startsWith("type=cache,")) throw new Error(`${where}: only cache mounts`);
          const other = Object.keys(instruction.flags).filter((f) => f !== "mount");
          if (other.length || instruction.exec) throw new Error(`${where}: RUN form not simulated`);
          if (/(^|\s)\/(?!dev\/null)/.test(instruction.rest)) {
            throw new Error(`${where}: an absolute path in RUN would touch this machine, not the stage`);
          }
          const started = performance.now();
          const result = await run(["sh", "-c", instruction.rest], { cwd: inStage("."), env, timeoutMs: 600_000 });
          timings[`stage ${stage.name ?? stage.index}: RUN ${instruction.rest.slice(0, 40)}`] = Math.round(
            performance.now() - started,
          );
          if (result.code !== 0) {
            throw new Error(
              `${where} failed (exit ${result.code}): ${instruction.rest}\n${result.output.slice(-4000)}`,
            );
          }
          break;
        }
        case "CMD":
          if (!instruction.exec) throw new Error(`${where}: CMD in shell form`);
          cmd = instruction.exec;
          break;
        case "USER":
        case "EXPOSE":
        case "LABEL":
          break;
        default:
          throw new Error(`${where}: ${instruction.keyword} is not simulated; teach production-install.test.ts`);
      }
    }
    last = { appDir: inStage("."), env, cmd, timings };
  }
  return last!;
}

/**
 * Where the two installs (~1.1 GB, ~60,000 files) go: memory (/dev/shm) when it has room, since
 * deleting them from this machine's disk took over a minute; the system's temporary directory otherwise.
 */
function scratchDir(): string {
  try {
    const { bavail, bsize } = statfsSync("/dev/shm");
    if (bavail * bsize > 4 * 1024 ** 3) return "/dev/shm";
  } catch {
    // no /dev/shm
  }
  return tmpdir();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

describe.skipIf(skipReason !== null)("the production image's commands (slow: npm installs)", () => {
  // Made by the first test, not here: a skipped suite's body still runs (to collect its tests).
  let workspace: string | null = null;
  const database = `deploy_${randomBytes(6).toString("hex")}`;
  const databaseUrl = (() => {
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    return url.toString();
  })();
  let built: Built | null = null;
  let service: ChildProcess | null = null;
  let databaseCreated = false;

  afterAll(async () => {
    const cleanup = performance.now();
    if (service && service.exitCode === null && service.signalCode === null) service.kill("SIGKILL");
    if (databaseCreated) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    }
    // rm(1), not fs.rmSync: it does not block the event loop, and it is faster over ~60,000 files.
    if (workspace) {
      const removed = await run(["rm", "-rf", workspace], { cwd: tmpdir(), env: baseEnv(), timeoutMs: 240_000 });
      if (removed.code !== 0) rmSync(workspace, { recursive: true, force: true });
    }
    if (built) {
      built.timings["cleanup"] = Math.round(performance.now() - cleanup);
      console.log("production-install timings (ms):", built.timings);
    }
  }, 300_000);

  it("builds every stage of the Dockerfile, leaving a production install without dev tooling", async () => {
    const started = performance.now();
    workspace = mkdtempSync(path.join(scratchDir(), "deploy-install-"));
    built = await buildWithoutDocker(readDockerfile(), workspace);
    built.timings["all stages"] = Math.round(performance.now() - started);
    const modules = path.join(built.appDir, "node_modules");
    for (const runtime of ["koa", "sharp", "@prisma/client", "@google-cloud/storage", "pg"]) {
      expect(existsSync(path.join(modules, runtime)), `${runtime} is installed`).toBe(true);
    }
    for (const dev of ["prisma", "typescript", "vitest", "eslint", "node", "@graphql-codegen/cli"]) {
      expect(existsSync(path.join(modules, dev)), `${dev} is not in the image`).toBe(false);
    }
    expect(existsSync(path.join(built.appDir, "src/generated/prisma/client.ts"))).toBe(true);
    expect(existsSync(path.join(built.appDir, ".data")), "no embedded database in the image").toBe(false);
    expect(built.env["NODE_ENV"]).toBe("production");
  }, 900_000);

  it("migrates a fresh PostgreSQL database with the migration job's command", async () => {
    expect(built, "the build succeeded").not.toBeNull();
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    databaseCreated = true;
    await admin.end();

    const argv = migrateCommand;
    const started = performance.now();
    const env = { ...built!.env, DATABASE_URL: databaseUrl };
    const first = await run(argv, { cwd: built!.appDir, env, timeoutMs: 120_000 });
    built!.timings["migrate"] = Math.round(performance.now() - started);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(/applied: \d{14}_/);
    const again = await run(argv, { cwd: built!.appDir, env, timeoutMs: 120_000 });
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain("database is up to date");
  }, 300_000);

  it("serves with the image's CMD on $PORT as deployed (HTTP/1.1 and h2c) and exits 0 on SIGTERM within 10 s", async () => {
    expect(databaseCreated, "the database was migrated").toBe(true);
    const port = await freePort();
    const [program, ...args] = built!.cmd;
    let output = "";
    const started = performance.now();
    const child = spawn(program!, args, {
      cwd: built!.appDir,
      env: {
        ...built!.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        ...(deployedProtocol ? { HTTP_PROTOCOL: deployedProtocol } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    service = child;
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );

    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    let health = 0;
    while (Date.now() < deadline && child.exitCode === null) {
      health = await fetch(`${base}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      if (health === 200) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(health, `GET /healthz\n${output.slice(-4000)}`).toBe(200);
    built!.timings["start until /healthz"] = Math.round(performance.now() - started);
    expect((await fetch(`${base}/readyz`)).status, output.slice(-4000)).toBe(200);
    const jobs = await fetch(`${base}/api/v1/jobs`);
    expect(jobs.status, output.slice(-4000)).toBe(200);
    expect(((await jobs.json()) as { data: unknown[] }).data).toEqual([]);

    // What Cloud Run sends with --use-http2. The session stays open, idle, through the SIGTERM:
    // the front end keeps its connections, and they must not hold the exit up.
    let session: http2.ClientHttp2Session | null = null;
    if (deployedProtocol === "h2c") {
      session = http2.connect(base);
      session.on("error", () => {});
      expect((await h2cGet(session, "/readyz")).status, output.slice(-4000)).toBe(200);
      const h2Jobs = await h2cGet(session, "/api/v1/jobs");
      expect(h2Jobs.status, output.slice(-4000)).toBe(200);
      expect((JSON.parse(h2Jobs.body) as { data: unknown[] }).data).toEqual([]);
    }

    const stopping = performance.now();
    child.kill("SIGTERM");
    const result = await Promise.race([
      exited,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000)),
    ]);
    built!.timings["SIGTERM until exit"] = Math.round(performance.now() - stopping);
    session?.destroy();
    expect(result, `exited within 10 s of SIGTERM\n${output.slice(-4000)}`).toEqual({ code: 0, signal: null });
  }, 120_000);
});
