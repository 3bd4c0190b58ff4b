// The server's watch over request bodies and a reader that answers its own stall (the multipart
// upload's 408 upload_timeout): the reader's answer wins even when it comes a while after it stopped
// reading (on the PostgreSQL server the quota unit's release is a round trip before the answer,
// and the server's 408 body_timeout once answered in between).
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { claimBodyTimeout, watchBody } from "../../src/http/body-timeout.ts";
import { exchange } from "./raw-http.ts";

const IDLE_MS = 200;
const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server whose route claims the body, stops reading after its own idle time, answers `delayMs` later. */
async function claimingServer(delayMs: number): Promise<number> {
  const server = http.createServer((req, res) => {
    watchBody(req, res, { idleMs: IDLE_MS, totalMs: 30_000 });
    const release = claimBodyTimeout(req);
    req.resume();
    setTimeout(() => {
      req.pause();
      release();
      setTimeout(() => {
        if (res.headersSent || res.destroyed) return;
        res.writeHead(408, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "upload_timeout" } }));
      }, delayMs);
    }, IDLE_MS * 2);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

const announcedButSilent = [
  "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/pdf\r\nContent-Length: 1000\r\n\r\n",
  "%PDF-1.7\n",
];

describe("a claimed body", () => {
  it("is answered by its claimant, even when the answer comes well after the claim's release", async () => {
    const port = await claimingServer(IDLE_MS * 4);
    const answer = await exchange(port, announcedButSilent, { timeoutMs: 5_000 });
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: "upload_timeout" } });
  });

  it("is watched again once the claimant's answer is out: the silent connection is closed, not kept", async () => {
    const port = await claimingServer(0);
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, "127.0.0.1");
      socket.on("data", () => undefined);
      socket.on("close", () => resolve(Date.now() - started));
      for (const step of announcedButSilent) socket.write(step);
    });
    expect(closed).toBeLessThan(5_000);
  });
});
