// `Expect: 100-continue`: Node answers 100 on its own unless the server handles
// 'checkContinue'. The server (./server.ts) handles it by marking the request and
// passing it on; a route that wants the body sends the 100 itself once its checks pass, and
// every other route gets it at once (src/app.ts).
// HTTP/2 has the same event and the same writeContinue() (a 100 HEADERS frame on the stream).
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

const marked = new WeakSet<IncomingMessage | Http2ServerRequest>();

export function markExpectsContinue(req: IncomingMessage | Http2ServerRequest): void {
  marked.add(req);
}

/** True once per request: the caller must then send the 100 (res.writeContinue()). */
export function expectsContinue(req: IncomingMessage | Http2ServerRequest): boolean {
  return marked.delete(req);
}
