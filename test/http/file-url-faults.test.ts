// file_url fetches that fail mid-way, against the real service (src/main.ts as a child process,
// production mode): a loopback server of faults, reachable because the policy's test switch is on
// (WEBHOOK_ALLOW_PRIVATE=true: private networks and this machine allowed, as for a local receiver).
// It never answers, stalls after the answer's head or mid-body, closes the connection mid-body,
// trickles past FILE_URL_TIMEOUT_SECONDS, or sends more than the largest upload without a length;
// each through a JSON body, a form's file_url field and a job, several at once, in rounds.
//
// What must hold: each is answered 4xx in the error shape with its code (never a 5xx, never
// silence); afterwards the same process answers /healthz and logged no CRITICAL, nothing was
// charged, no request directory (req-*) nor stored input is left in the data directory, and every
// connection the service opened to the fault server is closed (a fetch left running, or a timer
// holding one, would keep its socket open). Bounded: ROUNDS rounds of 18 requests.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
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

const ROUNDS = Number(process.env["FUZZ_RUNS"] ?? 2);
const MAX_UPLOAD = 64 * 1024;

let work: string;
let database: ServiceDatabase;
let service: ServiceProcess;
let faults: Server;
let faultOrigin: string;
let token: string;
let pdf: Buffer;
const sockets = new Set<Socket>();

/** The fault server: each path one way for a fetch to fail. */
function faultServer(): Server {
  const server = createServer((req, res) => {
    const route = req.url ?? "/";
    if (route === "/silent.pdf") return; // never answers
    if (route === "/stall-head.pdf") {
      res.writeHead(200, { "Content-Length": "50000" });
      return res.flushHeaders();
    }
    if (route === "/stall-body.pdf") {
      res.writeHead(200, { "Content-Length": "50000" });
      return res.write(pdf.subarray(0, 200));
    }
    if (route === "/cut.pdf") {
      res.writeHead(200, { "Content-Length": String(pdf.length + 5000) });
      res.write(pdf);
      return setTimeout(() => res.socket?.destroy(), 30);
    }
    if (route === "/trickle.pdf") {
      res.writeHead(200);
      res.write(pdf.subarray(0, 100));
      const timer = setInterval(() => res.write(" "), 200);
      return res.on("close", () => clearInterval(timer));
    }
    if (route === "/endless.pdf") {
      res.writeHead(200);
      res.write("%PDF-1.7\n");
      const chunk = Buffer.alloc(8 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      return pump();
    }
    res.writeHead(404).end();
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return server;
}

const CASES = [
  ["/silent.pdf", 422, "file_url_timeout"],
  ["/stall-head.pdf", 422, "file_url_timeout"],
  ["/stall-body.pdf", 422, "file_url_timeout"],
  ["/cut.pdf", 422, "file_url_unreachable"],
  ["/trickle.pdf", 422, "file_url_timeout"],
  ["/endless.pdf", 413, "file_url_too_large"],
] as const;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "file-url-faults-"));
  database = await createServiceDatabase(work);
  token = await issueCorporateKey(database, "file-url-faults", 1000);
  pdf = await makePdf(1);
  faults = faultServer();
  await new Promise<void>((resolve) => faults.listen(0, "127.0.0.1", resolve));
  faultOrigin = `http://127.0.0.1:${(faults.address() as AddressInfo).port}`;
  service = await startService(
    {
      ...database.env,
      UPLOAD_TMP_DIR: path.join(work, "uploads"),
      LOCAL_STORAGE_DIR: path.join(work, "objects"),
      DOWNLOAD_SIGNING_SECRET: "file-url-faults-signing-secret-32-chars",
      WEBHOOK_ALLOW_PRIVATE: "true",
      UPLOAD_IDLE_TIMEOUT_SECONDS: "1",
      FILE_URL_TIMEOUT_SECONDS: "3",
      COMPRESS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
      COMPRESS_RATE_LIMIT_PER_MINUTE: "100000",
      RATE_LIMIT_REQUESTS: "100000",
      COMPRESS_CONCURRENCY: "1",
      COMPRESS_WARM_PROCESSES: "0",
    },
    { name: "file_url faults service" },
  );
}, 120_000);

afterAll(async () => {
  await service?.stop(5_000);
  for (const socket of sockets) socket.destroy();
  faults?.close();
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** One request naming `url`: a JSON body, a form's file_url field, or a job. */
async function send(url: string, how: "json" | "form" | "job") {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let body: Uint8Array<ArrayBuffer>;
  if (how === "form") {
    const form = multipart([{ name: "file_url", value: url }]);
    headers["content-type"] = form.contentType;
    body = new Uint8Array(form.body);
  } else {
    headers["content-type"] = "application/json";
    if (how === "job") headers["prefer"] = "respond-async";
    body = new Uint8Array(Buffer.from(JSON.stringify({ file_url: url, retention: "60" })));
  }
  const response = await fetch(`${service.url}/v1/compress`, {
    method: "POST",
    headers,
    body,
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return { status: response.status, code: response.headers.get("x-error-code"), text };
}

const used = async () => {
  const response = await fetch(`${service.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { used: number }).used;
};

describe(`file_url fetches cut off or stalled, against the real process (${ROUNDS} rounds)`, () => {
  it("answers each with its code, and the same process serves on: nothing charged, nothing left, no connection held", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        CASES.flatMap(([route, status, code]) =>
          (["json", "form", "job"] as const).map(async (how) => ({
            what: `round ${round}: ${route} as ${how}`,
            expected: [status, code],
            answer: await send(`${faultOrigin}${route}`, how),
          })),
        ),
      );
      for (const { what, expected, answer } of answers) {
        expect([answer.status, answer.code], `${what}: ${answer.text.slice(0, 300)}`).toEqual(expected);
        expect(JSON.parse(answer.text), what).toMatchObject({ error: { code: expected[1] } });
      }
      await expectSameProcessHealthy(service);
    }
    // A file fetched whole afterwards still compresses: the process is not merely alive.
    const files = createServer((_req, res) => res.writeHead(200).end(pdf));
    await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
    try {
      const ok = await send(`http://127.0.0.1:${(files.address() as AddressInfo).port}/cv.pdf`, "json");
      expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    } finally {
      files.closeAllConnections();
      files.close();
    }
    expect(await used()).toBe(1);
    await expect
      .poll(async () =>
        (await readdir(path.join(work, "uploads")).catch(() => [] as string[])).filter((name) =>
          name.startsWith("req-"),
        ),
      )
      .toEqual([]);
    expect(
      (await readdir(path.join(work, "objects", "inputs")).catch(() => [] as string[])).filter((name) =>
        name.endsWith(".pdf"),
      ),
    ).toEqual([]);
    // Every connection to the fault server was closed by the service (each was given up).
    await expect.poll(() => sockets.size, { timeout: 5_000 }).toBe(0);
    await expectSameProcessHealthy(service);
    expect(service.logs().join("\n")).not.toMatch(/MaxListenersExceeded|unhandled/i);
  }, 240_000);
});
