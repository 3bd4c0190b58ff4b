// The fault suite of the callbacks the server owns (src/callbacks.ts): src/main.ts as a process
// with every failpoint armed, so that each timer, event handler and stream callback throws once
// after its work. Then traffic that makes each of them run: a synchronous compression (the body
// watch, the upload's stream, the warm engine pool, the request log, the drain's bookkeeping), an
// async job with a webhook to a closed port (the worker, the webhook call), and on the PostgreSQL
// server the pool's handlers and the statement deadline; the Redis heartbeat when Redis is there.
// What must hold: each armed callback logged its fault at ERROR with its name, the same process
// still answers, and nothing was logged at CRITICAL (no uncaught exception).
import { createServer } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACKS, type CallbackName } from "../../src/callbacks.ts";
import { makePdf } from "../helpers/compress.ts";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.ts";
import {
  createServiceDatabase,
  signedInSubscriber,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";

let work: string;
let database: ServiceDatabase;
let service: ServiceProcess;
let token: string;
let withRedis: boolean;
let exited: string | null = null;

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "callback-faults-"));
  database = await createServiceDatabase(work);
  ({ token } = await signedInSubscriber(database, 1_000));
  withRedis = await redisReachable();
  service = await startService(
    {
      ...database.env,
      ...(withRedis ? { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `callback-faults-${process.pid}:` } : {}),
      FAILPOINTS: CALLBACKS.join(","),
      UPLOAD_TMP_DIR: path.join(work, "uploads"),
      LOCAL_STORAGE_DIR: path.join(work, "objects"),
      DOWNLOAD_SIGNING_SECRET: "callback-faults-signing-secret-32-chars",
      WEBHOOK_ALLOW_PRIVATE: "true",
      COMPRESS_WARM_PROCESSES: "1",
    },
    { name: "callback faults service" },
  );
  void service.exited.then((exit) => (exited = `exited (${exit.code ?? exit.signal})`));
}, 120_000);

afterAll(async () => {
  await service?.stop(5_000);
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

const failed = () =>
  new Set(
    service
      .records()
      .filter((record) => record["severity"] === "ERROR" && typeof record["callback"] === "string")
      .map((record) => record["callback"] as CallbackName),
  );

describe("every callback the server owns, made to throw once", () => {
  it("logs each fault with its name, and the same process serves on", async () => {
    const pdf = await makePdf(2);
    const form = () => {
      const body = new FormData();
      body.set("file", new Blob([new Uint8Array(pdf)], { type: "application/pdf" }), "a.pdf");
      return body;
    };
    const auth = { authorization: `Bearer ${token}` };
    const sync = await fetch(`${service.url}/v1/compress`, { method: "POST", headers: auth, body: form() });
    expect(sync.status, await sync.clone().text()).toBe(200);

    const asyncForm = form();
    asyncForm.set("callback_url", `http://127.0.0.1:${await closedPort()}/hooks`);
    const queued = await fetch(`${service.url}/v1/compress`, {
      method: "POST",
      headers: { ...auth, prefer: "respond-async" },
      body: asyncForm,
    });
    expect(queued.status, await queued.clone().text()).toBe(202);

    const expected = CALLBACKS.filter(
      (name) =>
        (database.kind === "postgres" || (name !== "db-pool" && name !== "query-deadline")) &&
        (withRedis || name !== "redis-heartbeat"),
    );
    await expect
      .poll(() => expected.filter((name) => !failed().has(name)), { timeout: 30_000, interval: 250 })
      .toEqual([]);

    expect(exited).toBeNull();
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    const again = await fetch(`${service.url}/v1/compress`, { method: "POST", headers: auth, body: form() });
    expect(again.status).toBe(200);
    expect(service.records().filter((record) => record["severity"] === "CRITICAL")).toEqual([]);
  }, 90_000);
});
