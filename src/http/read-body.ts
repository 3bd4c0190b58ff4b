// Reading a small request body (a form, JSON, a GraphQL or MCP message) with a size limit, in one
// way for every route, and what happens to a body a route did not read to its end.
//
// A body over the limit is refused (413) without destroying the request: `for await` over a request
// destroys it when the loop is left early, Node then cuts the connection before the 413 is written,
// and detaches the request from its socket (which the body watch once read, and crashed on:
// issue 39). Here the reader just stops listening; `finishUnreadBody` then lets the rest of the body
// drain after the answer, so the client reads its 413 (nginx's lingering close does the same).
import http2 from "node:http2";
import type { Socket } from "node:net";
import type { Next, ParameterizedContext } from "koa";
import { guarded } from "../callbacks.ts";
import type { HttpError } from "../errors.ts";

type Request = ParameterizedContext["req"];

/** The client went away before its body arrived whole: nobody is left to answer. */
export class BodyAborted extends Error {
  constructor() {
    super("the client went away before its body arrived");
    this.name = "BodyAborted";
  }
}

/**
 * Whether the request's body is of the media type `type` (e.g. "application/json"), by its
 * Content-Type alone. Koa's ctx.is() also asks for Content-Length or Transfer-Encoding, which an
 * HTTP/2 request need not carry (its body is framed by the stream): it answered "no body" there, and
 * a form sent over h2c without a length got 415 (issue 39).
 */
export function isBodyOf(req: Request, type: string): boolean {
  const mediaType = (req.headers["content-type"] ?? "").split(";", 1)[0]!.trim().toLowerCase();
  return mediaType === type;
}

/** The whole body of `req`, at most `max` bytes; a longer one (declared or sent) rejects with `tooLarge()`. */
export function readBody(req: Request, max: number, tooLarge: () => HttpError): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (declared > max) return Promise.reject(tooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onGone);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      stop();
      req.pause();
      reject(tooLarge());
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onGone = () => {
      stop();
      reject(new BodyAborted());
    };
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onGone);
    req.once("close", onGone);
  });
}

// How long the rest of an unread body is taken in and thrown away after the answer before the
// connection is closed on it (nginx's lingering_time is 30 s); the body watch still cuts it off when
// it stalls.
const LINGER_MS = 30_000;

/**
 * Middleware: once the route has answered, a body it did not read to its end is let go without
 * losing the answer. HTTP/2: RST_STREAM NO_ERROR after the answer tells the client to stop sending
 * (RFC 9113 section 8.1) while the connection carries on. HTTP/1.1: the rest is read and discarded
 * for up to LINGER_MS (a client that sent the body without waiting for 100 Continue is still writing
 * it, and a connection closed under it would reset before it read the answer), then cut.
 */
export async function finishUnreadBody(ctx: ParameterizedContext, next: Next): Promise<void> {
  try {
    await next();
  } finally {
    letGo(ctx);
  }
}

function letGo(ctx: ParameterizedContext): void {
  const req = ctx.req;
  if (req.complete || req.destroyed) return;
  if (req.httpVersionMajor < 2) return discardRest(req);
  if (ctx.res.writableFinished) resetAfterAnswer(req);
  else
    ctx.res.once(
      "finish",
      guarded("body-watch", () => resetAfterAnswer(req)),
    );
}

function resetAfterAnswer(req: Request): void {
  const { stream } = req as unknown as http2.Http2ServerRequest;
  if (req.complete || stream.destroyed) return;
  setImmediate(guarded("body-watch", () => stream.close(http2.constants.NGHTTP2_NO_ERROR)));
}

/** Started before the answer is written: a client writing its body reads nothing until it is done. */
function discardRest(req: Request): void {
  const giveUp = setTimeout(
    guarded("body-watch", () => req.destroy()),
    LINGER_MS,
  );
  giveUp.unref();
  req.once("end", () => clearTimeout(giveUp));
  req.once("close", () => clearTimeout(giveUp));
  lingerOnClose(req.socket);
  req.resume();
}

/**
 * Node closes a connection whose answer is its last (the client sent `Connection: close`, or the
 * answer says it) with `socket.destroySoon()`: end, then destroy as soon as the answer is handed
 * to the kernel. With the client's bytes still unread, the kernel then resets the connection and
 * drops what it had not sent yet, the answer among them: a client still writing its body got no
 * 413 at all (CI, `POST /mcp` chunked at three times its limit). Here the connection is only half
 * closed (FIN after the answer) and read until the client closes its side, or LINGER_MS.
 */
function lingerOnClose(socket: Socket | null): void {
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    const cut = setTimeout(
      guarded("body-watch", () => this.destroy()),
      LINGER_MS,
    );
    cut.unref();
    this.once("close", () => clearTimeout(cut));
    this.once("end", () => this.destroy());
    this.end();
  };
}

const lingering = new WeakSet<Socket>();
