// Limits decided before a body is read, through real HTTP: a full engine is a 503 busy before the
// upload (no 100 Continue, nothing of the body sent, the reserved unit given back, no directory),
// and the server takes no more than MAX_CONNECTIONS connections at once.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { RunnerBusy } from "../../src/compress/isolation/runner.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import {
  makePdf,
  multipart,
  passThroughRunner,
  postExpectingContinue,
  subscriberWithKey,
} from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let work: string;
let uploads: string;
let server: TestServer;
let busy = false;

// The service's runner says whether it would take a job now (Runner.busy); this one is full on demand.
const runner: EngineRunner & { busy(): RunnerBusy | null } = {
  run: (job, options) => passThroughRunner.run(job, options),
  busy: () => (busy ? new RunnerBusy(7) : null),
};

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "http-limits-"));
  uploads = path.join(work, "uploads");
  const objects = path.join(work, "objects");
  server = await startServer(
    db,
    { UPLOAD_TMP_DIR: uploads, LOCAL_STORAGE_DIR: objects },
    { compress: { storage: await createLocalStorage(objects, null), runner } },
  );
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

describe("503 busy", () => {
  it("is answered before the upload: no 100 Continue, nothing sent, nothing charged, nothing left", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const { body, contentType } = multipart([{ name: "file", value: await makePdf(1), filename: "a.pdf" }]);
    busy = true;
    try {
      const response = await postExpectingContinue(
        `${server.url}/v1/compress`,
        { "content-type": contentType, authorization: `Bearer ${token}` },
        body,
      );
      expect(response.status).toBe(503);
      expect(JSON.parse(response.body)).toMatchObject({ error: { code: "busy" } });
      expect(response.headers["retry-after"]).toBe("7");
      expect(response.continued).toBe(false);
      expect(response.sent).toBe(0);
    } finally {
      busy = false;
    }
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    expect((await readdir(uploads).catch(() => [])).filter((name) => name.startsWith("req-"))).toEqual([]);
    // With room again, the same request goes through.
    const again = await postExpectingContinue(
      `${server.url}/v1/compress`,
      { "content-type": contentType, authorization: `Bearer ${token}` },
      body,
    );
    expect(again.status).toBe(200);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  });
});

describe("MAX_CONNECTIONS", () => {
  // A server of its own: no connection of another test may still count against the cap.
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startServer(db, { MAX_CONNECTIONS: "3" });
  });
  afterAll(() => capped?.close());

  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect(Number(new URL(capped.url).port), "127.0.0.1", () => resolve(socket));
      socket.once("error", reject);
    });
  /** Resolves true when the server closes the socket within ms. */
  const closedWithin = (socket: net.Socket, ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      socket.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.on("error", () => undefined);
      socket.resume();
    });

  it("closes connections beyond the cap on arrival, and takes new ones once some have gone", async () => {
    const held = await Promise.all([connect(), connect(), connect()]);
    const extra = await connect();
    expect(await closedWithin(extra, 2_000)).toBe(true);
    for (const socket of held) expect(socket.destroyed).toBe(false);
    held[0]?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const response = await fetch(`${capped.url}/healthz`, { headers: { connection: "close" } });
    expect(response.status).toBe(200);
    for (const socket of held) socket.destroy();
  });
});
