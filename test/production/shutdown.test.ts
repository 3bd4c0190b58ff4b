// Graceful shutdown (src/lifecycle.ts, src/main.ts).
// 1. The real service as a process (HTTP_PROTOCOL=h2c, so HTTP/1.1 and HTTP/2 clients both): a
//    stream of GETs on keep-alive connections and on an HTTP/2 session, readiness probes, a slow
//    upload and a compression in flight, then SIGTERM. Every request sent before the signal gets a
//    complete answer; readiness turns 503; the compression finishes (charged); the upload that
//    cannot finish is answered 503 at the deadline and not charged; no temporary file is left; the
//    process exits 0 within 9 s, its last log line written.
// 2. The same app and lifecycle in this process, with an engine that only stops when aborted:
//    a compression still running at the deadline is answered 503 `shutting_down`, its quota unit
//    given back and its files removed, while one that finishes in time succeeds; idle HTTP/1.1
//    connections are closed and HTTP/2 sessions get GOAWAY.
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { accounts } from "../../src/auth/accounts.ts";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { loadConfig } from "../../src/config/env.ts";
import { createServiceServer } from "../../src/http/server.ts";
import { createLifecycle } from "../../src/http/drain.ts";
import { shutdown } from "../../src/lifecycle.ts";
import { createLogger } from "../../src/logger.ts";
import { makePdf, multipart, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase } from "../helpers/database.ts";
import { h2connect, h2request } from "../helpers/h2.ts";
import {
  createServiceDatabase,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";

const SIGNING_SECRET = "shutdown-test-signing-secret-of-32-chars";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  /** When the request was fully written (undefined: never was). */
  sentAt?: number;
  status?: number;
  error?: string;
  kind: string;
}

/** GET on a shared keep-alive agent; resolves with what happened, never rejects. */
function get(agent: http.Agent | false, url: string, kind: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { kind };
    const req = http.get(url, { agent, timeout: 15_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        try {
          JSON.parse(body); // complete, not cut off
          outcome.status = res.statusCode;
        } catch {
          outcome.error = `incomplete body (${body.length} chars)`;
        }
        resolve(outcome);
      });
      res.on("error", (error) => resolve({ ...outcome, error: error.message }));
    });
    req.on("finish", () => (outcome.sentAt = Date.now()));
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ ...outcome, error: error.code ?? error.message }));
  });
}

const BOUNDARY = "----shutdown-test";

/** A multipart upload whose body the test writes when it likes. */
function openUpload(url: string, token: string, declaredLength: number) {
  const target = new URL(url);
  let req!: http.ClientRequest;
  const response = new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders; at: number }>(
    (resolve, reject) => {
      req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: "/v1/compress",
          method: "POST",
          agent: false,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
            "content-length": String(declaredLength),
          },
        },
        (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, at: Date.now() }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
    },
  );
  const { head, tail } = uploadShape();
  // Awaited by the test when it gets there; a failure before that must not go unhandled.
  response.catch(() => undefined);
  // Awaited by the test when it gets there; a failure before that must not go unhandled.
  response.catch(() => undefined);
  return { req, response, head, tail };
}

describe("the service process on SIGTERM", () => {
  let work: string;
  let database: ServiceDatabase;
  let service: ServiceProcess | undefined;
  const tokens: Record<"slow" | "quick", { token: string; subscriberId: string }> = {} as never;
  let pdf: Buffer;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), "shutdown-"));
    database = await createServiceDatabase(work);
    const db = await database.open();
    try {
      const admin = accounts(db.prisma, null);
      for (const name of ["slow", "quick"] as const) {
        const email = `${name}-${process.pid}@example.com`;
        const subscriber = await admin.createSubscriber({ name, email, plan: "corporate", quota: 10 });
        tokens[name] = { token: (await admin.issueKey(email, "test")).token, subscriberId: subscriber.id };
      }
    } finally {
      await db.close();
    }
    pdf = await makePdf(2);
  });

  afterAll(async () => {
    await service?.stop(2_000);
    await database?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("answers every request sent before the signal, cuts off what cannot finish, and exits 0 before Cloud Run's SIGKILL", async () => {
    const uploads = path.join(work, "uploads");
    service = await startService(
      {
        ...database.env,
        HTTP_PROTOCOL: "h2c",
        UPLOAD_TMP_DIR: uploads,
        LOCAL_STORAGE_DIR: path.join(work, "objects"),
        DOWNLOAD_SIGNING_SECRET: SIGNING_SECRET,
        RATE_LIMIT_REQUESTS: "1000000",
        // For the warm compression processes' "ready" lines (below).
        LOG_LEVEL: "debug",
      },
      { name: "shutdown service" },
    );
    const { url } = service;

    // Streams of GETs: three HTTP/1.1 loops on keep-alive connections, one HTTP/2 session.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 3 });
    const outcomes: Outcome[] = [];
    let running = true;
    const loop = async (path: string) => {
      while (running) {
        const outcome = await get(agent, `${url}${path}`, path);
        outcomes.push(outcome);
        if (outcome.error) await sleep(20);
      }
    };
    const session = await h2connect(url);
    session.on("error", () => undefined);
    let goaway = false;
    session.on("goaway", () => (goaway = true));
    const h2loop = async () => {
      while (running && !session.closed && !session.destroyed) {
        const outcome: Outcome = { kind: "h2", sentAt: Date.now() };
        try {
          const response = await h2request(session, { ":path": "/api/v1/jobs?limit=3" }, { timeoutMs: 15_000 });
          JSON.parse(response.body);
          outcome.status = response.status;
        } catch (error) {
          outcome.error = (error as NodeJS.ErrnoException).code ?? String(error);
        }
        outcomes.push(outcome);
      }
    };
    // Readiness probes: two loops on keep-alive connections, back to back, noting when each answer came.
    const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    const probes: { answeredAt: number; status?: number; code?: string }[] = [];
    const probe = async () => {
      while (running) {
        const answer = await new Promise<{ status?: number; code?: string }>((resolve) => {
          http
            .get(`${url}/readyz`, { agent: probeAgent }, (res) => {
              let body = "";
              res.on("data", (c: Buffer) => (body += c.toString()));
              res.on("end", () => {
                const parsed = JSON.parse(body) as { error?: { code: string } };
                resolve({ status: res.statusCode, code: parsed.error?.code });
              });
            })
            .on("error", () => resolve({}));
        });
        probes.push({ answeredAt: Date.now(), ...answer });
        await sleep(answer.status === undefined ? 50 : 10);
      }
    };
    const loops = [
      loop("/api/v1/jobs?limit=5"),
      loop("/graphql?query=%7Bjobs(limit%3A2)%7Btotal%7D%7D"),
      loop("/healthz"),
      h2loop(),
      probe(),
      probe(),
    ];

    // An upload too slow to finish in time, and a compression that can.
    const slow = openUpload(url, tokens.slow.token, 5 * 1024 * 1024);
    slow.req.write(slow.head);
    slow.req.write("%PDF-1.7\n");
    let trickling = true;
    const trickle = (async () => {
      while (trickling) {
        slow.req.write(Buffer.alloc(1024, 0x20));
        await sleep(250);
      }
    })();
    const quick = openUpload(url, tokens.quick.token, quickLength(pdf));
    quick.req.write(quick.head);
    quick.req.write(pdf.subarray(0, 200));

    // Until the streams are flowing (the first requests of a fresh process are slow), and the warm
    // compression processes (COMPRESS_CONCURRENCY 2 + 1) have loaded the engine: on a loaded CI
    // machine a job that had to wait for one took the quick compression past the deadline.
    await expect.poll(() => outcomes.filter((o) => o.status === 200).length, { timeout: 20_000 }).toBeGreaterThan(20);
    const warmReady = () => service!.records().filter((r) => r["message"] === "a warm compression process is ready");
    await expect.poll(() => warmReady().length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    const killedAt = service.kill("SIGTERM");
    // The rest of the compression's upload arrives after the signal: it is still taken and done.
    await sleep(100);
    quick.req.end(Buffer.concat([pdf.subarray(200), quick.tail]));

    const exit = await service.exited;
    running = false;
    trickling = false;
    await trickle;
    await Promise.all(loops);
    agent.destroy();
    probeAgent.destroy();
    session.destroy();
    const exitMs = exit.at - killedAt;
    const logs = service.logs().join("\n");

    // Exit 0: the service finished before its own hard limit (grace + 1.5 s), by its own clock
    // within 9 s of the signal; and the process was gone before Cloud Run's SIGKILL (10 s). The
    // time between the two (the signal reaching a busy event loop, the process's exit) is the
    // machine's: up to 0.65 s on a loaded 2-core CI machine.
    expect(exit, logs).toEqual({ code: 0, signal: null, at: exit.at });
    const report = service.records().find((r) => r["message"] === "shut down");
    expect(report?.["ms"], logs).toBeLessThan(9_000);
    expect(exitMs, logs).toBeLessThan(10_000);

    // Every request written before the signal was answered, completely, with 200.
    const sentBefore = outcomes.filter((o) => o.sentAt !== undefined && o.sentAt < killedAt);
    expect(sentBefore.length).toBeGreaterThan(10);
    expect(sentBefore.filter((o) => o.status !== 200)).toEqual([]);
    // After it, what failed was refused (the listener closed), never cut off mid-answer.
    for (const o of outcomes.filter((x) => x.error)) expect(o.error, JSON.stringify(o)).not.toMatch(/incomplete/);
    expect(outcomes.some((o) => o.error === "ECONNREFUSED")).toBe(true);
    // HTTP/2: GOAWAY, not a reset connection.
    expect(goaway).toBe(true);

    // Readiness turned 503 shutting_down at once (the listener stays open a moment longer), and never back.
    const answered = probes.filter((p) => p.status !== undefined).sort((a, b) => a.answeredAt - b.answeredAt);
    const firstDown = answered.findIndex((p) => p.status === 503);
    expect(firstDown, JSON.stringify(answered.slice(-10))).toBeGreaterThan(0);
    expect(answered[firstDown]!.answeredAt).toBeGreaterThanOrEqual(killedAt);
    expect(answered.slice(0, firstDown).every((p) => p.status === 200)).toBe(true);
    expect(answered.slice(firstDown).every((p) => p.status === 503 && p.code === "shutting_down")).toBe(true);

    // The compression in flight finished; the upload that could not was answered 503 at the deadline.
    const done = await quick.response;
    expect(done.status, done.body).toBe(200);
    const cut = await slow.response;
    expect(cut.status, cut.body).toBe(503);
    expect(JSON.parse(cut.body)).toMatchObject({ error: { code: "shutting_down" } });
    expect(cut.headers["retry-after"]).toBe("1");
    expect(cut.headers["connection"]).toBe("close");
    expect(cut.at - killedAt).toBeGreaterThan(7_500);

    // No temporary file left; the logs were written to the end.
    expect(await readdir(uploads).catch(() => [])).toEqual([]);
    const messages = service.records().map((r) => r["message"]);
    expect(messages).toContain("stopped accepting connections");
    expect(messages.at(-1), logs).toBe("shut down");

    // The cut-off upload was not charged; the finished compression was.
    const db = await database.open();
    try {
      expect(await usedThisMonth(db.prisma, tokens.slow.subscriberId)).toBe(0);
      expect(await usedThisMonth(db.prisma, tokens.quick.subscriberId)).toBe(1);
      const rows = await db.prisma.compression.findMany({ where: { subscriberId: tokens.slow.subscriberId } });
      expect(rows.map((r) => [r.status, r.errorCode])).toEqual([["failed", "shutting_down"]]);
    } finally {
      await db.close();
    }
    console.info(`exit ${exitMs} ms after SIGTERM; ${sentBefore.length} requests sent before it, all answered`);
  }, 90_000);
});

function quickLength(pdf: Buffer): number {
  const { head, tail } = uploadShape();
  return head.length + pdf.length + tail.length;
}

function uploadShape() {
  return {
    head: Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="doc.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    tail: Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  };
}

describe("the lifecycle in this process", () => {
  it("aborts a compression still running at the deadline with 503, uncharged, and lets one that finishes in time succeed", async () => {
    const db = await createTestDatabase();
    const work = await mkdtemp(path.join(tmpdir(), "shutdown-inproc-"));
    const uploads = path.join(work, "uploads");
    const objects = path.join(work, "objects");
    await mkdir(objects, { recursive: true });
    const config = loadConfig({
      NODE_ENV: "test",
      LOG_LEVEL: "silent",
      RATE_LIMIT_REQUESTS: "1000000",
      UPLOAD_TMP_DIR: uploads,
      LOCAL_STORAGE_DIR: objects,
      DOWNLOAD_SIGNING_SECRET: SIGNING_SECRET,
    });
    const logger = createLogger(config);
    // "lossless" finishes after 300 ms; anything else runs until it is aborted.
    let running = 0;
    const runner: EngineRunner = {
      async run(job, { signal } = {}) {
        running++;
        if (job.profile === "lossless") {
          await sleep(300);
          await copyFile(job.inputPath, job.outputPath);
          return { ok: true, outputSize: (await stat(job.outputPath)).size, pages: 1 };
        }
        return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason as Error)));
      },
    };
    const lifecycle = createLifecycle();
    const app = createApp({
      config,
      db,
      logger,
      lifecycle,
      compress: { storage: await createLocalStorage(objects, SIGNING_SECRET), runner },
    });
    const server = createServiceServer(app, "h2c");
    const { port } = await server.listen(0, "127.0.0.1");
    const url = `http://127.0.0.1:${port}`;
    let session: http2.ClientHttp2Session | undefined;
    try {
      const pdf = await makePdf(1);
      const stuck = await subscriberWithKey(db.prisma);
      const fine = await subscriberWithKey(db.prisma);
      const post = (token: string, profile: string) => {
        const { body, contentType } = multipart([
          { name: "file", value: pdf, filename: "a.pdf" },
          { name: "profile", value: profile },
        ]);
        return fetch(`${url}/v1/compress`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": contentType },
          body: new Uint8Array(body),
        });
      };

      // An idle keep-alive connection and an idle HTTP/2 session, both open before the signal.
      const agent = new http.Agent({ keepAlive: true });
      const idleSocket = await new Promise<net.Socket>((resolve, reject) => {
        let socket: net.Socket | undefined;
        http
          .get(`${url}/healthz`, { agent }, (res) => {
            res.resume();
            res.on("end", () => resolve(socket!));
          })
          .on("socket", (s) => (socket = s))
          .on("error", reject);
      });
      const socketClosed = new Promise<number>((resolve) => idleSocket.once("close", () => resolve(Date.now())));
      session = await h2connect(url);
      const goaway = new Promise<number>((resolve) => session!.once("goaway", (code: number) => resolve(code)));
      expect((await h2request(session, { ":path": "/readyz" })).status).toBe(200);

      const stuckAnswer = post(stuck.token, "balanced");
      await expect.poll(() => running).toBe(1);
      const started = Date.now();
      const done = shutdown({ lifecycle, server, graceMs: 1_500, logger, steps: [] });
      // Readiness says so at once (the HTTP/2 session is still open during the accept grace).
      const ready = await h2request(session, { ":path": "/readyz" });
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toMatchObject({ error: { code: "shutting_down" } });
      expect(ready.headers["retry-after"]).toBe("1");
      // Work that can finish in time still does.
      const fineAnswer = await post(fine.token, "lossless");
      expect(fineAnswer.status).toBe(200);

      const cut = await stuckAnswer;
      expect(cut.status).toBe(503);
      expect(cut.headers.get("x-error-code")).toBe("shutting_down");
      expect(cut.headers.get("retry-after")).toBe("1");
      expect(await cut.json()).toMatchObject({ error: { code: "shutting_down" } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);

      const report = await done;
      expect(report).toMatchObject({ aborted: 1, failed: [] });
      expect(await goaway).toBe(0);
      // The idle keep-alive connection was closed when the listener closed, not at the end.
      expect((await socketClosed) - started).toBeLessThan(1_000);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();

      expect(await usedThisMonth(db.prisma, stuck.subscriber.id)).toBe(0);
      expect(await usedThisMonth(db.prisma, fine.subscriber.id)).toBe(1);
      const row = await db.prisma.compression.findFirstOrThrow({ where: { subscriberId: stuck.subscriber.id } });
      expect([row.status, row.errorCode]).toEqual(["failed", "shutting_down"]);
      expect(await readdir(uploads)).toEqual([]);
      agent.destroy();
    } finally {
      session?.destroy();
      await server.destroy();
      await db.close();
      await rm(work, { recursive: true, force: true });
    }
  }, 30_000);
});
