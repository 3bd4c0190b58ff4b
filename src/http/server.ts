// The HTTP server around the Koa app, shared by src/main.ts and the tests.
//
// Two protocols (HTTP_PROTOCOL):
// - `http1`: HTTP/1.1 only (the default; what Cloud Run speaks to a container unless told otherwise).
// - `h2c`: cleartext HTTP/2 with prior knowledge, which Cloud Run speaks to the container with
//   `--use-http2` (and then puts no 32 MiB limit on request bodies). Node's cleartext
//   `http2.createServer` cannot answer HTTP/1.1 on the same port (`allowHTTP1` is for TLS only), so
//   this listener looks at the first bytes of each connection: the HTTP/2 connection preface goes
//   to the HTTP/2 server, anything else to the HTTP/1.1 one. Local tools and probes that speak
//   HTTP/1.1 keep working.
//
// `Expect: 100-continue` is left to the routes in both (see ./continue.ts).
//
// What a client may hold the server with (HttpLimits, from the environment; the policy:
// docs/process-policy.md): the request line and headers must arrive within headersTimeoutMs
// (Node's headersTimeout; in h2c mode the first bytes too); every body is cut off once no byte of it
// arrived for bodyIdleTimeoutMs, or once the request took requestTimeoutMs in all (./body-timeout.ts:
// a progress timeout, so a 300 MB upload takes as long as it keeps sending; Node's requestTimeout,
// a total one, is the same backstop for HTTP/1.1); at most maxConnections connections at once, and
// as many streams on one HTTP/2 connection. A request that is not valid HTTP/1.1 (bad framing,
// headers over 16 KiB, a timeout before the route) is answered by the server itself, in the error
// shape ('clientError' below: Node's own answers have no body), and its connection closed.
//
// Shutdown (see src/lifecycle.ts) is in two steps: drain() stops accepting connections, makes every
// HTTP/1.1 response the last of its connection (`Connection: close`), closes idle keep-alive
// connections and sends GOAWAY on every HTTP/2 session, which then close once their streams have;
// destroy() ends whatever is still open.
import { randomUUID } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { Duplex } from "node:stream";
import type Koa from "koa";
import { defaultHttpLimits, type Config } from "../config/env.ts";
import { errorBody, type ErrorCode } from "../errors.ts";
import { watchBody, writeError } from "./body-timeout.ts";
import { markExpectsContinue } from "./continue.ts";
import { guarded } from "../callbacks.ts";

export type HttpProtocol = "http1" | "h2c";

/** Every HTTP/2 connection starts with these 24 octets (RFC 9113, section 3.4). */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
// Longer than the idle timeout of Google's front end (600 s), so it never reuses a closed connection.
const IDLE_TIMEOUT_MS = 620_000;
// HTTP/2 flow control: windows large enough for a fast upload, small enough that a stalled reader
// buffers little (the upload's backpressure holds the window closed).
const STREAM_WINDOW_BYTES = 1024 * 1024;
const SESSION_WINDOW_BYTES = 4 * 1024 * 1024;

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (req: Request, res: Response) => unknown;

/** Listeners of one event a response may have before Node warns (see the handler). */
const MAX_RESPONSE_LISTENERS = 20;

export type HttpLimits = Config["httpLimits"];

const bodyLimits = (limits: HttpLimits) => ({ idleMs: limits.bodyIdleTimeoutMs, totalMs: limits.requestTimeoutMs });

function configureHttp1(server: http.Server, handler: Handler, limits: HttpLimits): http.Server {
  // The response in progress on each connection: a framing error while it is open closes the
  // connection after it rather than writing over it.
  const current = new WeakMap<Duplex, http.ServerResponse>();
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Node keeps the first of two Host headers; RFC 9112 section 3.2 says to refuse the request (a
    // proxy in front may have routed it by the other one).
    if (hostHeaders(req.rawHeaders) > 1) {
      return writeError(res, 400, "bad_request", "The request has more than one Host header.");
    }
    current.set(req.socket, res);
    res.once("close", () => current.get(req.socket) === res && current.delete(req.socket));
    watchBody(req, res, bodyLimits(limits));
    void handler(req, res);
  };
  server.on("request", serve);
  server.on("checkContinue", (req: http.IncomingMessage, res: http.ServerResponse) => {
    markExpectsContinue(req);
    serve(req, res);
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, current.get(socket)),
  );
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  server.maxConnections = limits.maxConnections;
  return server;
}

/** How many Host headers the request carries (rawHeaders: name, value, name, value, …). */
function hostHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === "host") count++;
  return count;
}

// Node looks for requests past headersTimeout or requestTimeout this often (its default, 30 s,
// would let a silent client hold a connection that much longer than the limit says).
const http1Server = (limits: HttpLimits) =>
  http.createServer({ connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs / 4) });

const CLIENT_GONE = new Set(["ECONNRESET", "EPIPE", "HPE_INVALID_EOF_STATE"]);

/** The status, code and message of the server's answer to a request Node's parser refused. */
function clientErrorAnswer(code: string | undefined): [number, ErrorCode, string] {
  if (code === "HPE_HEADER_OVERFLOW") {
    return [431, "headers_too_large", "The request line and headers are larger than 16 KiB."];
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return [408, "request_timeout", "The request did not arrive in time; it was cut off."];
  }
  return [400, "bad_request", "The request is not valid HTTP/1.1."];
}

/**
 * Node's parser refused what arrived on a connection (or timed it out): answered in the error shape
 * and closed. A response already under way for an earlier, complete request on it is let finish
 * first (the refusal concerns what came after); one whose request body was cut by the error answers
 * the refusal itself.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, res: http.ServerResponse | undefined): void {
  const [status, code, message] = clientErrorAnswer(error.code);
  // The connection ended in the middle of a request (HPE_INVALID_EOF_STATE) or broke: the client
  // went away, no one is there to read an answer. The route sees it go (499 in the request log).
  if (CLIENT_GONE.has(error.code ?? "") || !socket.writable) {
    socket.destroy();
    return;
  }
  const closeAfter = () => {
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref();
  };
  if (res && !res.writableEnded) {
    res.shouldKeepAlive = false;
    if (!res.headersSent && !res.req.complete) writeError(res, status, code, message);
    res.once("finish", closeAfter);
    return;
  }
  const body = JSON.stringify(errorBody(code, message, randomUUID()));
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Error-Code: ${code}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** An HTTP/1.1 server for the app (tests listen on it themselves). */
export function createHttpServer(app: Koa, limits: HttpLimits = defaultHttpLimits()): http.Server {
  const handler = app.callback();
  return configureHttp1(http1Server(limits), (req, res) => handler(req, res), limits);
}

export interface ServiceServer {
  readonly protocol: HttpProtocol;
  /** The server that owns the listening socket. */
  readonly listener: net.Server;
  listen(port: number, host: string): Promise<net.AddressInfo>;
  /** Requests whose response has not finished yet. */
  inFlight(): number;
  /** Resolves once no request is in flight (at once if none is). */
  whenIdle(): Promise<void>;
  /** Open connections (HTTP/1.1 sockets and HTTP/2 sessions). */
  connections(): number;
  /** Stops accepting; last responses close their HTTP/1.1 connections; idle ones close; GOAWAY on HTTP/2. */
  drain(): void;
  /** Destroys every connection still open; resolves when the listener has closed. */
  destroy(): Promise<void>;
}

/** The HTTP/2 server of h2c mode: wide flow-control windows, idle sessions closed, each session tracked. */
function createH2c(handler: Handler, sessions: Set<http2.ServerHttp2Session>, limits: HttpLimits): http2.Http2Server {
  const h2 = http2.createServer({
    settings: { initialWindowSize: STREAM_WINDOW_BYTES, maxConcurrentStreams: limits.maxConnections },
  });
  const serve = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    watchBody(req, res, bodyLimits(limits));
    void handler(req, res);
  };
  h2.on("request", serve);
  h2.on("checkContinue", (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    markExpectsContinue(req);
    serve(req, res);
  });
  h2.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    // A session that stays silent this long is closed (GOAWAY), like an idle keep-alive connection.
    session.setTimeout(IDLE_TIMEOUT_MS, () => session.close());
    session.on("error", () => undefined);
    // The connection-level window starts at 64 KiB; widen it to match the streams'.
    if (session.socket) session.setLocalWindowSize(SESSION_WINDOW_BYTES);
    else session.once("connect", () => session.setLocalWindowSize(SESSION_WINDOW_BYTES));
  });
  h2.on("sessionError", () => undefined);
  return h2;
}

/** The listener of h2c mode: each connection goes to HTTP/2 or HTTP/1.1 by its first bytes (route). */
function h2cListener(
  h2: http2.Http2Server,
  http1: http.Server,
  accepted: Set<net.Socket>,
  limits: HttpLimits,
): net.Server {
  const listener = net.createServer((socket) => {
    accepted.add(socket);
    socket.once("close", () => accepted.delete(socket));
    route(socket, { h2, http1, headersTimeoutMs: limits.headersTimeoutMs });
  });
  listener.maxConnections = limits.maxConnections;
  // Node tracks an HTTP/1.1 server's connections (headersTimeout, closeIdleConnections()) from its
  // "listening" event on; in h2c mode the HTTP/1.1 server gets its connections from the listener.
  listener.once("listening", () => http1.emit("listening"));
  listener.once("close", () => http1.close());
  return listener;
}

export function createServiceServer(
  app: Koa,
  protocol: HttpProtocol = "http1",
  limits: HttpLimits = defaultHttpLimits(),
): ServiceServer {
  const callback = app.callback();
  const inFlight = new Set<Response>();
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let draining = false;
  let idleWaiters: (() => void)[] = [];

  const settle = () => {
    if (inFlight.size > 0) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  };

  const handler: Handler = (req, res) => {
    // Bounded, not a leak: a streamed body (GraphQL's) gets six "close" listeners from Koa's
    // stream.pipeline, yoga's adapter one, and this server and the request log four; Node's
    // default of 10 warned on every such response.
    res.setMaxListeners(MAX_RESPONSE_LISTENERS);
    inFlight.add(res);
    res.once(
      "close",
      guarded("drain", () => {
        inFlight.delete(res);
        // The connection of an HTTP/1.1 response that just finished is idle now: close it.
        if (draining) setImmediate(guarded("drain", () => http1.closeIdleConnections()));
        settle();
      }),
    );
    if (draining && res instanceof http.ServerResponse) res.shouldKeepAlive = false;
    return callback(req, res);
  };

  const http1 = configureHttp1(http1Server(limits), handler, limits);
  http1.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  const h2 = protocol === "h2c" ? createH2c(handler, sessions, limits) : null;
  // In h2c mode, every connection the listener took (including those still being looked at).
  const accepted = new Set<net.Socket>();
  const listener: net.Server = h2 ? h2cListener(h2, http1, accepted, limits) : http1;
  let closed = false;
  listener.once("close", () => (closed = true));

  return {
    protocol,
    listener,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        listener.once("error", reject);
        listener.listen(port, host, () => {
          listener.off("error", reject);
          resolve(listener.address() as net.AddressInfo);
        });
      });
    },
    inFlight: () => inFlight.size,
    whenIdle() {
      return inFlight.size === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
    connections: () => sockets.size + sessions.size,
    drain() {
      draining = true;
      if (listener.listening) listener.close();
      for (const res of inFlight) {
        if (res instanceof http.ServerResponse && !res.headersSent) res.shouldKeepAlive = false;
      }
      http1.closeIdleConnections();
      // GOAWAY naming the last stream received: those finish, the client opens no new ones.
      for (const session of sessions) session.close();
    },
    async destroy() {
      draining = true;
      for (const session of sessions) session.destroy();
      for (const socket of [...sockets, ...accepted]) socket.destroy();
      if (listener.listening) listener.close();
      idleWaiters = [];
      // net.Server emits "close" once it stopped listening and its last connection has gone.
      if (closed) return;
      await new Promise<void>((resolve) => {
        listener.once("close", () => resolve());
        setTimeout(resolve, 500).unref();
      });
    },
  };
}

/** Hands a new connection to the HTTP/2 server if it opens with the preface, else to HTTP/1.1. */
function route(
  socket: net.Socket,
  { h2, http1, headersTimeoutMs }: { h2: http2.Http2Server; http1: http.Server; headersTimeoutMs: number },
): void {
  let head = Buffer.alloc(0);
  const give = (server: net.Server) => {
    socket.off("data", onData);
    socket.off("error", onError);
    socket.setTimeout(0);
    socket.pause();
    // The servers read what was already received before anything new.
    socket.unshift(head);
    server.emit("connection", socket);
    // The HTTP/1.1 parser reads through the socket's stream, which must flow again; an HTTP/2
    // session reads the socket natively and takes what is buffered by itself.
    if (server === http1) socket.resume();
  };
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const n = Math.min(head.length, PREFACE.length);
    const couldBeH2 = head.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (!couldBeH2) give(http1);
    else if (head.length >= PREFACE.length) give(h2);
  };
  const onError = () => socket.destroy();
  socket.on("data", onData);
  socket.on("error", onError);
  // A connection that says nothing is closed like one that never finishes its headers.
  socket.setTimeout(headersTimeoutMs, () => socket.destroy());
}
