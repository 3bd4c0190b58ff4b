// Every request body, whatever the route, HTTP/1.1 or HTTP/2, is received under two limits (the
// policy: docs/process-policy.md):
// - a progress (idle) timeout: once no byte of the body arrived for `idleMs`, the request is cut
//   off. A 300 MB upload may take as long as it keeps sending; a client that stops (or never
//   sends the body it announced) holds the connection `idleMs` at most. nginx's
//   client_body_timeout and Apache's mod_reqtimeout work the same way;
// - a total timeout, `totalMs` from the request's start, however the body trickles in.
// Cut off: a 408 in the error shape when no answer has begun (then the connection or the HTTP/2
// stream is closed), else the connection or stream is just closed. The route reading the body then
// sees the client go away and cleans up as for any client that left.
//
// A reader that answers its own idle timeout (the multipart upload: 408 upload_timeout, its quota
// unit released before the answer) claims the body; the idle limit is then its own until its answer
// is written: it releases the claim when it stops reading, and its answer may still be a database
// round trip away (the server's 408 body_timeout once came first on the PostgreSQL server).
import { randomUUID } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { guarded } from "../callbacks.ts";
import { errorBody, type ErrorCode } from "../errors.ts";

export interface BodyLimits {
  idleMs: number;
  totalMs: number;
}

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;

/** Bodies whose idle limit a reader took over: held while it reads, released once it stopped. */
const claims = new WeakMap<object, "held" | "released">();

/** Takes over the idle limit of `req`'s body (the total one stays); returns the release. */
export function claimBodyTimeout(req: object): () => void {
  claims.set(req, "held");
  return () => claims.set(req, "released");
}

/** Whether the idle limit is a reader's: while it reads, and after it stopped until its answer is written. */
function claimed(req: Request, res: Response): boolean {
  const claim = claims.get(req);
  return claim === "held" || (claim === "released" && !res.writableEnded);
}

const { NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE, NGHTTP2_STREAM_STATE_CLOSED, NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } =
  http2.constants;
// After a 408 the connection is closed; a client still writing gets a moment to read the answer
// before the socket goes (closing at once with unread data in the socket would reset it).
const LINGER_MS = 1000;

/**
 * True once the client has sent the whole body, whether or not the route read it, or once it can
 * send no more. `socket` is the connection as it was when the watch began: a reader that gives up
 * destroys the request, and Node then detaches it (`req.socket` becomes null; issue 39).
 */
function received(req: Request, socket: Socket | null): boolean {
  if (req instanceof http.IncomingMessage) return req.complete || req.destroyed || !socket || socket.destroyed;
  const { stream } = req;
  if (stream.destroyed || stream.closed) return true;
  const state = stream.state.state;
  return state === NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE || state === NGHTTP2_STREAM_STATE_CLOSED;
}

/** Watches the body of `req` until it is received or its connection (stream) closes. */
export function watchBody(req: Request, res: Response, limits: BodyLimits): void {
  const socket = req instanceof http.IncomingMessage ? req.socket : null;
  if (received(req, socket)) return;
  const total = setTimeout(
    guarded("body-watch", () => {
      if (received(req, socket)) return;
      const seconds = Math.round(limits.totalMs / 1000);
      cutOff(
        req,
        socket,
        res,
        "request_timeout",
        `The request took longer than ${seconds} s to arrive; it was cut off.`,
      );
    }),
    limits.totalMs,
  );
  total.unref();
  const stalled = () =>
    cutOff(
      req,
      socket,
      res,
      "body_timeout",
      `No byte of the request body arrived for ${limits.idleMs / 1000} s; it was cut off.`,
    );
  const watcher = { stalled, done: () => clearTimeout(total), claimed: () => claimed(req, res) };
  if (req instanceof http.IncomingMessage) watchHttp1(req, socket!, limits.idleMs, watcher);
  else watchStream(req, limits.idleMs, watcher);
}

interface Watcher {
  stalled: () => void;
  done: () => void;
  /** Whether a reader answers the body's stall itself (claimBodyTimeout). */
  claimed: () => boolean;
}

/**
 * Whether anything reads the body yet (a route, or Node draining it after the answer). Until then
 * the connection is not read either, so silence is the server's doing, not the client's: the idle
 * clock starts when reading does.
 */
const beingRead = (req: Request) => req.readableFlowing !== null;

/**
 * HTTP/1.1: the bytes the connection has read (one request at a time reads it), checked a few
 * times per idle period, so the cut comes between idleMs - tick and idleMs after the last byte.
 */
function watchHttp1(req: http.IncomingMessage, socket: Socket, idleMs: number, watcher: Watcher): void {
  const tick = Math.max(10, Math.min(1000, Math.floor(idleMs / 4)));
  let seen = socket.bytesRead;
  let seenAt = Date.now();
  const timer = setInterval(
    guarded("body-watch", () => {
      if (received(req, socket)) {
        clearInterval(timer);
        return watcher.done();
      }
      const now = Date.now();
      if (socket.bytesRead !== seen || !beingRead(req)) [seen, seenAt] = [socket.bytesRead, now];
      if (now - seenAt >= idleMs - tick && !watcher.claimed()) {
        clearInterval(timer);
        watcher.done();
        watcher.stalled();
      }
    }),
    tick,
  );
  timer.unref();
}

/**
 * HTTP/2: the stream's own inactivity timer, which every frame read on the stream restarts (the
 * connection carries other streams, so its bytes say nothing of this one's).
 */
function watchStream(req: http2.Http2ServerRequest, idleMs: number, watcher: Watcher): void {
  const { stream } = req;
  let over = false;
  const stop = () => {
    over = true;
    stream.setTimeout(0);
    watcher.done();
  };
  const onIdle = guarded("body-watch", () => {
    if (over) return;
    if (received(req, null)) return stop();
    // Not read yet, or the upload watches its own idle time: look again later.
    if (!beingRead(req) || watcher.claimed()) return void stream.setTimeout(idleMs, onIdle);
    stop();
    watcher.stalled();
  });
  stream.setTimeout(idleMs, onIdle);
  stream.once("close", guarded("body-watch", stop));
}

/**
 * Answers 408 if no answer has begun, then closes the connection (HTTP/1.1: once the answer is out)
 * or the stream (HTTP/2: RST_STREAM NO_ERROR after a complete answer, RFC 9113 section 8.1, which
 * Node sends once the answer is flushed; CANCEL when an answer was under way).
 */
function cutOff(req: Request, socket: Socket | null, res: Response, code: ErrorCode, message: string): void {
  const answering = !(res.headersSent || res.writableEnded || res.destroyed);
  if (answering) writeError(res, 408, code, message);
  if (socket) {
    if (answering)
      res.once(
        "finish",
        guarded("body-watch", () => endConnection(socket)),
      );
    else endConnection(socket);
  } else if ("stream" in req && !req.stream.destroyed) {
    req.stream.close(answering ? NGHTTP2_NO_ERROR : NGHTTP2_CANCEL);
  }
}

/** Writes the error shape on a response no one has begun: the server's own answers, outside Koa. */
export function writeError(res: Response, status: number, code: ErrorCode, message: string): void {
  const requestId = res.getHeader("x-request-id");
  const body = JSON.stringify(errorBody(code, message, typeof requestId === "string" ? requestId : randomUUID()));
  if (res instanceof http.ServerResponse) res.shouldKeepAlive = false;
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", String(Buffer.byteLength(body)));
  res.setHeader("cache-control", "no-store");
  res.setHeader("x-error-code", code);
  res.setHeader("x-error-message", message);
  res.end(body);
}

function endConnection(socket: Duplex): void {
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
