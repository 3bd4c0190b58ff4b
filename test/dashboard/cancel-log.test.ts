// Log levels that match events: Cancel during a Try it upload is the client's doing (the request
// line at info, no ERROR, no stack), and a warm compression process that ends with the service
// (Ctrl+C reaches the whole process group) is no warning, while one killed from outside is, with
// no old request's id or key on it.
import http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { sessions } from "../../src/auth/sessions.ts";
import { logRunnerEvents } from "../../src/compress/runner-events.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { loadConfig } from "../../src/config/env.ts";
import { createHttpServer } from "../../src/http/server.ts";
import { createLogger, withLogFields, type Logger } from "../../src/logger.ts";
import { passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

type Line = Record<string, unknown> & { severity: string; message: string; requestId?: string };

const output: string[] = [];
const lines = (): Line[] => output.map((raw) => JSON.parse(raw) as Line);
let db: TestDatabase;
let work: string;
let logger: Logger;
let server: http.Server;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "cancel-log-"));
  const config = loadConfig({
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    LOG_FORMAT: "json",
    PGLITE_DATA_DIR: "memory://",
    RATE_LIMIT_REQUESTS: "1000000",
    UPLOAD_TMP_DIR: path.join(work, "uploads"),
  });
  logger = createLogger(config, {
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        output.push(chunk.toString());
        done();
      },
    }),
  });
  const storage = await createLocalStorage(path.join(work, "objects"), null);
  const app = createApp({ config, db, logger, compress: { storage, runner: passThroughRunner } });
  server = createHttpServer(app, config.httpLimits).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("a client's cancel", () => {
  it("is logged at info with no stack: Try it's upload cut off by Cancel", async () => {
    const { email, key } = await subscriberWithKey(db.prisma, { quota: 10 });
    const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
    const opened = await auth.redeemLink((await auth.createLink(email))!.token);
    const cookie = `mkp_session=${opened!.secret}`;
    const page = await (await fetch(`${url}/dashboard/try`, { headers: { cookie } })).text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const requestId = "cancelled-upload-1";
    const boundary = "cancelboundary";
    const target = new URL(`${url}/dashboard/try`);
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          cookie,
          origin: url,
          "sec-fetch-site": "same-origin",
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "content-length": "900000",
          "x-request-id": requestId,
        },
      });
      req.on("error", () => resolve());
      const field = (name: string, value: string) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      req.write(field("csrf_token", csrf) + field("key_id", key.id) + field("profile", "balanced"));
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n\r\n%PDF-1.7\n`);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    await expect
      .poll(() => lines().some((l) => l.requestId === requestId && l.message.includes("client closed")), {
        timeout: 10_000,
      })
      .toBe(true);
    // Give the route time to find the upload gone and finish (where the ERROR was logged).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const ours = lines().filter((l) => l.requestId === requestId);
    expect(ours.find((l) => l.message.includes("client closed"))?.severity).toBe("INFO");
    expect(ours.filter((l) => l.severity === "ERROR" || l.severity === "WARNING")).toEqual([]);
    expect(ours.filter((l) => "stack_trace" in l || "err" in l)).toEqual([]);
  });
});

describe("a warm process's end", () => {
  it("is no warning with the service (Ctrl+C), a warning from outside, and never carries a request's id", () => {
    let stopping = false;
    const events = logRunnerEvents(logger, () => stopping);
    const before = output.length;
    const exited = (signal: NodeJS.Signals) =>
      withLogFields(
        () => ({ requestId: "an-old-request", apiKeyId: "old-key" }),
        () => events.onEvent({ type: "exited", pid: 4242, idle: true, code: null, signal }),
      );
    exited("SIGINT"); // the terminal's Ctrl+C reached the process group
    stopping = true;
    exited("SIGKILL"); // killed by the pool's own close while stopping
    stopping = false;
    exited("SIGKILL"); // killed from outside while the service runs
    const logged = lines().slice(before);
    expect(logged.map((l) => l.severity)).toEqual(["DEBUG", "DEBUG", "WARNING"]);
    for (const line of logged) {
      expect(line.requestId).toBeUndefined();
      expect(line["apiKeyId"]).toBeUndefined();
    }
  });
});
