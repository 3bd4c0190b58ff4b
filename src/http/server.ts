// The HTTP server around the Koa app, shared by src/main.ts and the tests: `Expect:
// 100-continue` is left to the routes (see src/compress/http/continue.ts), and the timeouts suit
// long uploads (each upload has its own idle timeout instead of one deadline for the request).
import http from "node:http";
import type Koa from "koa";
import { markExpectsContinue } from "../compress/http/continue.ts";

export function createHttpServer(app: Koa): http.Server {
  const handler = app.callback();
  const server = http.createServer((req, res) => void handler(req, res));
  server.on("checkContinue", (req, res) => {
    markExpectsContinue(req);
    void handler(req, res);
  });
  // A 300 MB upload on a slow line takes longer than Node's 5 minute default.
  server.requestTimeout = 0;
  server.headersTimeout = 30_000;
  // Longer than the idle timeout of Google's front end (600 s), so it never reuses a closed socket.
  server.keepAliveTimeout = 620_000;
  return server;
}
