// One structured line per request, written when the response has been sent or the client went
// away, in Cloud Logging's shape: `httpRequest` (method, target with credentials redacted, status,
// latency, sizes, user agent, client address, protocol), the request's trace and span, the
// request id and, on the compression API, the subscriber and API key id (never the key).
//
// Every request is logged, successes at INFO, so that every request id a client quotes can be
// found and every line of a request (errors, warnings) sits under its trace in the Logs Explorer;
// 4xx at WARNING and 5xx at ERROR, as in Cloud Run's own request log. Successful health probes
// are DEBUG: they are many and say nothing. LOG_LEVEL=warn keeps only the failures.
//
// The trace comes from W3C `traceparent` or, failing that, Google's `X-Cloud-Trace-Context`
// (TRACE_ID/SPAN_ID;o=OPTIONS, the span id in decimal); Cloud Run sends both. A header that does
// not parse is ignored: the line is then written without trace fields rather than with a guess.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { Middleware, Next } from "koa";
import type { Config } from "../config/env.ts";
import { redactUrl, withLogFields, type Logger } from "../logger.ts";
import type { AppContext, AppState } from "./state.ts";
import { guarded } from "../callbacks.ts";

export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId?: string;
  sampled?: boolean;
}

const ALL_ZERO = /^0+$/;
const MAX_SPAN = 0xffff_ffff_ffff_ffffn;

/** W3C Trace Context: `version-traceid-parentid-flags` (https://www.w3.org/TR/trace-context/). */
export function parseTraceparent(header: string | undefined): TraceContext | null {
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(header?.trim() ?? "");
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  // Version ff is invalid; version 00 has exactly four fields (later versions may append more).
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** Google's `X-Cloud-Trace-Context: TRACE_ID[/SPAN_ID][;o=OPTIONS]`, its span id a decimal 64-bit number. */
export function parseCloudTraceContext(header: string | undefined): TraceContext | null {
  const match = /^([0-9a-fA-F]{32})(?:\/(\d{0,20}))?(?:;o=(\d{0,10}))?$/.exec(header?.trim() ?? "");
  if (!match) return null;
  const traceId = match[1]!.toLowerCase();
  if (ALL_ZERO.test(traceId)) return null;
  const context: TraceContext = { traceId };
  if (match[2]) {
    const span = BigInt(match[2]);
    if (span === 0n || span > MAX_SPAN) return null;
    context.spanId = span.toString(16).padStart(16, "0");
  }
  if (match[3]) context.sampled = (Number(match[3]) & 1) === 1;
  return context;
}

export function traceContextOf(headers: IncomingHttpHeaders): TraceContext | null {
  const one = (value: string | string[] | undefined) => (Array.isArray(value) ? undefined : value);
  return parseTraceparent(one(headers["traceparent"])) ?? parseCloudTraceContext(one(headers["x-cloud-trace-context"]));
}

/**
 * Cloud Logging's trace fields. The trace is `projects/PROJECT/traces/TRACE_ID` when the project
 * is known (the form Cloud Run's own request log uses, so both group together), else the bare
 * TRACE_ID, which Cloud Logging also accepts.
 */
export function traceFields(trace: TraceContext | null, projectId: string | null): Record<string, unknown> {
  if (!trace) return {};
  return {
    "logging.googleapis.com/trace": projectId ? `projects/${projectId}/traces/${trace.traceId}` : trace.traceId,
    ...(trace.spanId ? { "logging.googleapis.com/spanId": trace.spanId } : {}),
    ...(trace.sampled !== undefined ? { "logging.googleapis.com/trace_sampled": trace.sampled } : {}),
  };
}

/** Who the request is, as far as is known yet: its id and, once authenticated, its API key. */
function identity(ctx: AppContext): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const { requestId, apiKey: key } = ctx.state;
  if (requestId) fields["requestId"] = requestId;
  if (key) {
    fields["apiKeyId"] = key.id;
    fields["apiKeyPrefix"] = key.prefix;
    fields["subscriberId"] = key.subscriberId;
  }
  return fields;
}

/** Counts the bytes of the response body as they are written (streams and HTTP/2 included). */
function countBodyBytes(res: ServerResponse): () => number {
  let bytes = 0;
  const add = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === "string") {
      bytes += Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
    } else if (chunk instanceof Uint8Array) {
      bytes += chunk.byteLength;
    }
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  // HTTP/2's end(chunk) writes its chunk through write(): count it once.
  let ending = false;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!ending) add(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as ServerResponse["write"];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== "function") add(chunk, rest[0]);
    ending = true;
    try {
      return end(chunk, ...rest);
    } finally {
      ending = false;
    }
  }) as ServerResponse["end"];
  return () => bytes;
}

const PROBES = new Set(["/healthz", "/readyz"]);
/** A client that closed the connection before the response was complete (nginx's convention). */
export const CLIENT_CLOSED = 499;

export function requestLog(logger: Logger, config: Pick<Config, "logging">): Middleware<AppState> {
  const projectId = config.logging.projectId;
  return (ctx: AppContext, next: Next) => {
    const started = process.hrtime.bigint();
    const trace = traceFields(traceContextOf(ctx.req.headers), projectId);
    const fields = () => ({ ...trace, ...identity(ctx) });
    const responseBytes = countBodyBytes(ctx.res);
    const target = ctx.originalUrl;

    let logged = false;
    const log = (finished: boolean) => {
      if (logged) return;
      logged = true;
      const res = ctx.res;
      const aborted = !finished;
      const status = aborted && !res.headersSent ? CLIENT_CLOSED : res.statusCode;
      // A client that closed the connection before its answer (a cancelled upload) is an event of the
      // client's, not a fault: info, as any answered request.
      const level =
        status === CLIENT_CLOSED
          ? "info"
          : status >= 500
            ? "error"
            : status >= 400
              ? "warn"
              : PROBES.has(ctx.path) && !aborted
                ? "debug"
                : "info";
      // A line the logger would drop is not built (LOG_LEVEL=warn, or silent in benchmarks).
      if (!logger.isLevelEnabled(level)) return;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const requestSize = ctx.get("Content-Length");
      const userAgent = ctx.get("User-Agent");
      const referer = ctx.get("Referer");
      const httpRequest = {
        requestMethod: ctx.method,
        requestUrl: redactUrl(target),
        status,
        // int64 fields as strings, Duration as seconds with an "s": protobuf's JSON forms.
        ...(/^\d+$/.test(requestSize) ? { requestSize } : {}),
        responseSize: String(responseBytes()),
        ...(userAgent ? { userAgent: userAgent.slice(0, 512) } : {}),
        remoteIp: ctx.ip,
        ...(referer ? { referer: redactUrl(referer).slice(0, 1024) } : {}),
        latency: `${seconds.toFixed(6)}s`,
        protocol: `HTTP/${ctx.req.httpVersion}`,
      };
      const path = target.split("?", 1)[0]!.slice(0, 512);
      const message = `${ctx.method} ${path} ${status}${aborted ? " (client closed the connection)" : ""}`;
      logger[level]({ ...fields(), httpRequest, ...(aborted ? { aborted: true } : {}) }, message);
    };
    // "finish" after end(): the whole response was handed to the OS. "close" first, or (HTTP/2, whose
    // compatibility layer emits "finish" for a reset stream too) "finish" without end(): the client went away.
    ctx.res.once(
      "finish",
      guarded("request-log", () => log(ctx.res.writableEnded)),
    );
    ctx.res.once(
      "close",
      guarded("request-log", () => log(false)),
    );
    return withLogFields(fields, next);
  };
}
