// HTTP/1.1 spoken byte by byte over a raw loopback socket, for tests of what the server does with
// framing no well-behaved client would send: truncated and lying bodies, broken chunks, stalls.
import net from "node:net";

/** Bytes to write, or a pause (the socket stays open and silent meanwhile). */
export type Step = Buffer | string | { pauseMs: number };

export interface RawAnswer {
  /** 0 when the connection closed (or the wait ended) without a complete response. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte written to the complete response (or the close). */
  ms: number;
}

export interface ExchangeOptions {
  /** Half-close the socket after the last step (the client's FIN). */
  end?: boolean;
  /** Give up waiting for the answer after this long (the answer is then status 0). */
  timeoutMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Writes the steps to a new connection and resolves with the first final (non-1xx) response. */
export function exchange(port: number, steps: Step[], options: ExchangeOptions = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const started = Date.now();
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (answer: Omit<RawAnswer, "ms">) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...answer, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish({ status: 0, headers: {}, body: "" }), options.timeoutMs ?? 15_000);
    socket.on("error", () => finish(parseResponse(received) ?? { status: 0, headers: {}, body: "" }));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parseResponse(received);
      if (answer) finish(answer);
    });
    socket.on("close", () => finish(parseResponse(received, true) ?? { status: 0, headers: {}, body: "" }));
    socket.once("connect", () => {
      void (async () => {
        for (const step of steps) {
          if (done || socket.destroyed) return;
          if (typeof step === "object" && !Buffer.isBuffer(step)) await sleep(step.pauseMs);
          else socket.write(step);
        }
        if (options.end && !socket.destroyed) socket.end();
      })();
    });
  });
}

/** The first final response in `bytes` once it is complete (at the close: whatever body came). */
export function parseResponse(bytes: Buffer, closed = false): Omit<RawAnswer, "ms"> | null {
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) return null;
    const [statusLine = "", ...lines] = rest.subarray(0, end).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const body = rest.subarray(end + 4);
    if (status >= 100 && status < 200) {
      rest = body;
      continue;
    }
    const length = headers["content-length"];
    if (length !== undefined) {
      if (body.length < Number(length)) return closed ? { status, headers, body: body.toString("utf8") } : null;
      return { status, headers, body: body.subarray(0, Number(length)).toString("utf8") };
    }
    if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      const decoded = dechunk(body);
      return decoded !== null || closed ? { status, headers, body: decoded ?? "" } : null;
    }
    return closed ? { status, headers, body: body.toString("utf8") } : null;
  }
}

function dechunk(bytes: Buffer): string | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", at);
    if (lineEnd < 0) return null;
    const size = parseInt(bytes.subarray(at, lineEnd).toString("latin1"), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(parts).toString("utf8");
    if (bytes.length < lineEnd + 2 + size + 2) return null;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** A request head: the request line, the headers given, `Host`, and `Connection: close` unless set. */
export function head(method: string, target: string, headers: Record<string, string | number>): string {
  const all: Record<string, string | number> = { host: "127.0.0.1", connection: "close", ...headers };
  return `${method} ${target} HTTP/1.1\r\n${Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;
}
