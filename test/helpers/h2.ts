// A small HTTP/2 client for tests: cleartext with prior knowledge (h2c), as Cloud Run's front end
// speaks to a container deployed with --use-http2.
import http2 from "node:http2";
import { Readable } from "node:stream";

export interface H2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
  /** Whether the server sent 100 Continue. */
  continued: boolean;
  /** The RST_STREAM code the stream closed with (0: NO_ERROR). */
  rstCode: number;
}

export interface H2RequestOptions {
  /** The body: bytes, or a stream of them (piped with backpressure). */
  body?: Buffer | string | Readable;
  /** With `expect: 100-continue`, the body is sent only after the server's 100. */
  waitForContinue?: boolean;
  /** Rejects if no answer came by then. */
  timeoutMs?: number;
}

export function h2connect(url: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.once("connect", () => {
      session.off("error", reject);
      resolve(session);
    });
    session.once("error", reject);
  });
}

export function h2request(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  options: H2RequestOptions = {},
): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const hasBody = options.body !== undefined;
    const stream = session.request({ ...(hasBody ? { ":method": "POST" } : {}), ...headers }, { endStream: !hasBody });
    let status = 0;
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let continued = false;
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      stream.close(http2.constants.NGHTTP2_CANCEL);
      reject(new Error(`no answer to ${String(headers[":path"])} within ${options.timeoutMs} ms`));
    }, options.timeoutMs ?? 30_000);
    const send = () => {
      const body = options.body;
      if (body === undefined) return;
      if (body instanceof Readable) {
        body.on("error", () => undefined);
        body.pipe(stream);
      } else stream.end(body);
    };
    stream.on("continue", () => {
      continued = true;
      if (options.waitForContinue) send();
    });
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      responseHeaders = h;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    // The server may end the stream (RST_STREAM NO_ERROR) while the body is still being sent.
    stream.on("error", (error: Error) => {
      if (status === 0) {
        clearTimeout(timer);
        reject(error);
      }
    });
    stream.on("close", () => {
      clearTimeout(timer);
      if (status === 0) {
        reject(new Error(`stream closed without an answer (code ${stream.rstCode})`));
        return;
      }
      resolve({
        status,
        headers: responseHeaders,
        body: Buffer.concat(chunks).toString("utf8"),
        continued,
        rstCode: stream.rstCode ?? 0,
      });
    });
    if (!options.waitForContinue) send();
  });
}
