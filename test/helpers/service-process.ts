// The real service, src/main.ts, as a child process: started with an environment of the test's
// choosing (nothing inherited but PATH and HOME), on a free loopback port, and watched until it
// logs that it listens. Its output is kept for assertions and for failure messages. Plus a
// database for it: a PGlite data directory in a temporary folder, or a fresh database on the
// PostgreSQL server of DATABASE_URL, migrated, that the test can also open itself.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { accounts } from "../../src/auth/accounts.ts";
import { sessions } from "../../src/auth/sessions.ts";
import { loadConfig } from "../../src/config/env.ts";
import { openDatabase, type Database } from "../../src/db/database.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { subscriberWithKey } from "./compress.ts";
import { createServerDatabase, dropServerDatabase } from "./database.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MAIN = path.join(ROOT, "src/main.ts");
// The Node 22 of the `node` dev dependency, whatever Node runs the tests.
const NODE = existsSync(path.join(ROOT, "node_modules/.bin/node"))
  ? path.join(ROOT, "node_modules/.bin/node")
  : process.execPath;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when it exited. */
  at: number;
}

export interface ServiceProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Every line written so far, stdout and stderr. */
  logs(): string[];
  /** The lines that are JSON log records, parsed. */
  records(): Record<string, unknown>[];
  readonly exited: Promise<Exit>;
  /** Sends a signal; returns Date.now() at that moment. */
  kill(signal?: NodeJS.Signals): number;
  /** SIGTERM, then SIGKILL after timeoutMs; resolves on exit. Safe to call more than once. */
  stop(timeoutMs?: number): Promise<Exit>;
}

export interface StartOptions {
  /** How long to wait for "listening" (default 60 s). */
  timeoutMs?: number;
  /** A name for the failure messages. */
  name?: string;
  /** Wait until /readyz answers 200 too (Redis connects in the background); default true. */
  waitReady?: boolean;
}

/** Starts src/main.ts with `env` over a minimal base (production mode, loopback, a free port). */
export async function startService(env: Record<string, string>, options: StartOptions = {}): Promise<ServiceProcess> {
  const child = spawn(NODE, ["--disable-warning=ExperimentalWarning", MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: process.env["HOME"] ?? "/tmp",
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      SEED_DEMO_DATA: "false",
      // Production's /graphql wants a Google identity (test/graphql-access.test.ts tests that).
      GRAPHQL_ACCESS: "public",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let listening: ((port: number) => void) | undefined;
  const collect = (stream: NodeJS.ReadableStream) => {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (text: string) => {
      const parts = (partial + text).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        const port = /"port":(\d+)/.exec(line);
        if (port && line.includes("listening on")) listening?.(Number(port[1]));
      }
    });
    stream.on("end", () => partial && lines.push(partial));
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const name = options.name ?? "service";
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not listen within ${options.timeoutMs ?? 60_000} ms:\n${lines.join("\n")}`));
    }, options.timeoutMs ?? 60_000);
    listening = (p) => {
      clearTimeout(timer);
      resolve(p);
    };
    void exited.then((exit) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${exit.code ?? exit.signal}) before listening:\n${lines.join("\n")}`));
    });
  });
  if (options.waitReady ?? true) {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`${name} did not get ready (/readyz ${status}):\n${lines.join("\n")}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const records = () =>
    lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    logs: () => [...lines],
    records,
    exited,
    kill(signal = "SIGTERM") {
      const at = Date.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return at;
    },
    async stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

export interface ServiceDatabase {
  readonly kind: "pglite" | "postgres";
  /** What the service needs to use it: DATABASE_URL, or PGLITE_DATA_DIR. */
  readonly env: Record<string, string>;
  /** Opens it in this process. PGlite: only while no service has the directory open. */
  open(): Promise<Database>;
  /** Drops the database (the PGlite directory goes with the caller's temporary folder). */
  drop(): Promise<void>;
}

/**
 * A migrated, empty database for service processes: on the server of DATABASE_URL when it is set
 * (a new database, dropped by drop()), else a PGlite data directory under `dir`.
 */
export async function createServiceDatabase(dir: string): Promise<ServiceDatabase> {
  const config = loadConfig().database;
  if (config.kind === "pglite") {
    const dataDir = path.join(dir, "pglite");
    const settings = { ...config, dataDir };
    const db = await openDatabase(settings);
    await applyMigrations(db.sql);
    await db.close();
    return {
      kind: "pglite",
      // Migrated here already: the service need not check again at start.
      env: { PGLITE_DATA_DIR: dataDir, DB_MIGRATE_ON_START: "false" },
      open: () => openDatabase(settings),
      drop: () => Promise.resolve(),
    };
  }
  const { name, url } = await createServerDatabase(config.url, "service");
  const settings = { ...config, url, poolSize: 5 };
  const db = await openDatabase(settings);
  await applyMigrations(db.sql);
  await db.close();
  return {
    kind: "postgres",
    env: { DATABASE_URL: url },
    open: () => openDatabase(settings),
    drop: () => dropServerDatabase(config.url, name),
  };
}

/** A corporate subscriber named `name` with `quota` units a month, and a key of theirs (its token). */
export async function issueCorporateKey(database: ServiceDatabase, name: string, quota: number): Promise<string> {
  const db = await database.open();
  try {
    const admin = accounts(db.prisma, null);
    const email = `${name}-${process.pid}@example.com`;
    await admin.createSubscriber({ name, email, plan: "corporate", quota });
    return (await admin.issueKey(email, "test")).token;
  } finally {
    await db.close();
  }
}

/** A subscriber with a key (its token and id) and a signed-in dashboard session (its cookie), in `database`. */
export async function signedInSubscriber(
  database: ServiceDatabase,
  quota: number,
): Promise<{ token: string; keyId: string; cookie: string }> {
  const db = await database.open();
  try {
    const subscriber = await subscriberWithKey(db.prisma, { quota });
    const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
    const link = await auth.createLink(subscriber.email);
    const session = await auth.redeemLink(link!.token);
    return { token: subscriber.token, keyId: subscriber.key.id, cookie: `mkp_session=${session!.secret}` };
  } finally {
    await db.close();
  }
}

/**
 * What every suite that drives a real process checks at its end: that process never exited, still
 * answers /healthz, and logged nothing at CRITICAL (an uncaught exception).
 */
export async function expectSameProcessHealthy(service: ServiceProcess): Promise<void> {
  // Nothing restarts a test's process: one that exited answers nothing.
  const health = await fetch(`${service.url}/healthz`).then(
    (response) => response.status,
    () => 0,
  );
  if (health !== 200) throw new Error(`/healthz answered ${health}:\n${service.logs().slice(-20).join("\n")}`);
  const critical = service.records().filter((record) => record["severity"] === "CRITICAL");
  if (critical.length) throw new Error(`logged at CRITICAL:\n${critical.map((r) => JSON.stringify(r)).join("\n")}`);
}
