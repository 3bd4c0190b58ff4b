// The database cut in the middle of a synchronous compression, against the real service process:
// the service reaches PostgreSQL through a TCP proxy (test/helpers/tcp-proxy.ts) that the test
// cuts once the unit is reserved and while the upload is still on its way. The compression can
// then not be recorded: the request answers 503 database_unavailable with Retry-After, and once the
// database is back the unit is released (the release retried in the background) without waiting
// for the housekeeping: nothing is charged, and no temporary file is left. Its Idempotency-Key was let
// go too (issue 39: it stayed claimed for an hour, and the retry got 409). PostgreSQL pass only:
// on the PGlite pass the database is the service's own, in its process, and cannot be cut.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf, multipart } from "../helpers/compress.ts";
import {
  createServiceDatabase,
  expectSameProcessHealthy,
  issueCorporateKey,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const pgliteOnly =
  "No DATABASE_URL: the database is embedded PGlite, in the service's own process, so it cannot be cut; " +
  "this runs on the PostgreSQL pass.";

let work: string;
let database: ServiceDatabase;
let proxy: TcpProxy | null = null;
let service: ServiceProcess | null = null;
let token: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "database-cut-"));
  database = await createServiceDatabase(work);
  if (database.kind !== "postgres") return;
  token = await issueCorporateKey(database, "cut", 10);
  const target = new URL(database.env["DATABASE_URL"]!);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  service = await startService(
    {
      DATABASE_URL: proxy.url(database.env["DATABASE_URL"]!),
      UPLOAD_TMP_DIR: path.join(work, "uploads"),
      LOCAL_STORAGE_DIR: path.join(work, "objects"),
      DOWNLOAD_SIGNING_SECRET: "database-cut-test-signing-secret-of-32-chars",
      RATE_LIMIT_REQUESTS: "1000000",
      // The test polls usage and the job: the per-key limit is not what is tested here.
      COMPRESS_RATE_LIMIT_PER_MINUTE: "1000000",
      COMPRESS_WARM_PROCESSES: "1",
      COMPRESS_JOB_WORKERS: "0",
    },
    { name: "service behind a database proxy" },
  );
});

afterAll(async () => {
  await service?.stop(5_000);
  await proxy?.close();
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

const usage = async () => {
  const response = await fetch(`${service!.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
  return response.status === 200 ? ((await response.json()) as { used: number }).used : -response.status;
};

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** POSTs body in two writes, the second after `between` ran; resolves with the answer. */
function postInTwo(url: string, headers: Record<string, string>, body: Buffer, between: () => Promise<void>) {
  const target = new URL(url);
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.write(body.subarray(0, body.length - 100));
    between().then(
      () => req.end(body.subarray(body.length - 100)),
      (error: unknown) => reject(error as Error),
    );
  });
}

describe("the database cut during a synchronous compression", () => {
  it("answers 503 with Retry-After, and charges nothing once the database is back", async (context) => {
    if (database.kind !== "postgres") {
      context.skip(pgliteOnly);
      return;
    }
    const upload = multipart([{ name: "file", value: await makePdf(3), filename: "a.pdf" }]);
    const headers = {
      authorization: `Bearer ${token}`,
      "content-type": upload.contentType,
      "content-length": String(upload.body.length),
      "idempotency-key": "cut-and-retried",
    };
    const answer = await postInTwo(`${service!.url}/v1/compress`, headers, upload.body, async () => {
      await until("the reservation", usage, (used) => used === 1);
      await proxy!.refuse();
    });
    expect(answer.status).toBe(503);
    expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe("database_unavailable");

    await proxy!.restore();
    // Released by the request's own release, retried in the background: not an hour later.
    expect(await until("the unit after the outage", usage, (used) => used === 0)).toBe(0);
    // The retry the typed client makes after a 503: it runs (the key was let go), not 409.
    const retry = await fetch(`${service!.url}/v1/compress`, {
      method: "POST",
      headers,
      body: new Uint8Array(upload.body),
    });
    expect(retry.status, await retry.clone().text()).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await usage()).toBe(1);
    const left = await readdir(path.join(work, "uploads"));
    expect(left.filter((name) => name.startsWith("req-"))).toEqual([]);
    const db = await database.open();
    try {
      const records = await db.prisma.compression.findMany({ select: { status: true } });
      expect(records.map((record) => record.status).sort()).toEqual(["failed", "succeeded"]);
    } finally {
      await db.close();
    }
  }, 60_000);

  it("ends as the same process, answering /healthz, nothing logged at CRITICAL", async (context) => {
    if (!service) return context.skip(pgliteOnly);
    await expectSameProcessHealthy(service);
  });
});
