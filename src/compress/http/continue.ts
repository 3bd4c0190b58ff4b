// `Expect: 100-continue`: Node answers 100 on its own unless the server handles
// 'checkContinue'. The server (src/http/server.ts) handles it by marking the request and
// passing it on; a route that wants the body sends the 100 itself once its checks pass, and
// every other route gets it at once (src/app.ts).
import type { IncomingMessage } from "node:http";

const marked = new WeakSet<IncomingMessage>();

export function markExpectsContinue(req: IncomingMessage): void {
  marked.add(req);
}

/** True once per request: the caller must then send the 100 (res.writeContinue()). */
export function expectsContinue(req: IncomingMessage): boolean {
  return marked.delete(req);
}
