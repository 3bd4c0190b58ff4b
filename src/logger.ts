// One JSON object per line on stdout, in Cloud Logging's structured-logging shape: `severity`
// (Cloud Logging's names, not pino's numbers), `message`, `time` as RFC 3339, `stack_trace` beside
// a logged error and `serviceContext` on errors (what Error Reporting reads). Lines written while
// a request is handled also carry its trace, span, request id and API key id: src/http/request-log.ts
// runs the request inside an AsyncLocalStorage context that the `mixin` below reads, so every
// existing `logger.x()` call is correlated without passing a child logger around.
//
// No secret reaches the output: structured fields that hold credentials are censored by path, and
// every serialized line passes a last scrub (URL passwords, API keys, bearer tokens, signed-URL
// and credential query parameters), whatever object or message they came in.
import { AsyncLocalStorage } from "node:async_hooks";
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from "pino";
import type { Config } from "./config/env.ts";
import { prettyDestination } from "./logger-pretty.ts";
import { API_KEY_PREFIX } from "./secret-shapes.ts";

export type { Logger };

// https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry#LogSeverity
const SEVERITY: Record<string, string> = {
  trace: "DEBUG",
  debug: "DEBUG",
  info: "INFO",
  warn: "WARNING",
  error: "ERROR",
  fatal: "CRITICAL",
};

const REDACTED = "[redacted]";

const context = new AsyncLocalStorage<() => Record<string, unknown>>();

/** Runs fn with `fields()` merged into every line logged inside it, asynchronous work included. */
export function withLogFields<T>(fields: () => Record<string, unknown>, fn: () => T): T {
  return context.run(fields, fn);
}

/**
 * Runs fn with no request's fields: for events of something a request only happened to start (a
 * warm process forked while a request was handled carries that request's context in its events,
 * so its exit minutes later was logged with an old request's id and key).
 */
export function outsideRequest<T>(fn: () => T): T {
  return context.exit(fn);
}

// Query parameters that carry credentials: API keys and tokens, passwords, and the signatures and
// credentials of signed URLs (this service's local downloads, Cloud Storage V4, S3).
// `filename` too: not a secret, but the name a subscriber gave a document (personal data, and
// never in the log: docs/data.md); a local download address carries it.
const SECRET_PARAMETER =
  /^(?:filename|api[_-]?key|key|access[_-]?token|id[_-]?token|refresh[_-]?token|token|password|passwd|pwd|secret|client[_-]?secret|signature|sig|code|x-goog-signature|x-goog-credential|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;

/** A request target (path and query) with the values of credential-bearing parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const hash = url.indexOf("#", q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const redacted = query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, " "));
      } catch {
        // A malformed escape: judge the name as written.
      }
      return SECRET_PARAMETER.test(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    })
    .join("&");
  return `${url.slice(0, q)}?${redacted}`;
}

// The last line of defence, on the serialized JSON. Each pattern stops at a quote or backslash,
// so a replacement never splits a JSON escape and the line stays valid JSON.
const SCRUBS: [RegExp, string][] = [
  // scheme://user:password@host (DATABASE_URL, REDIS_URL, any URL with credentials)
  [/([a-z][a-z0-9+.-]*:\/\/[^\s:/@"\\]*):[^\s/@"\\]+@/gi, `$1:${REDACTED}@`],
  // The compression API's keys: a fixed prefix and 36 base62 characters (see src/secret-shapes.ts).
  [new RegExp(`${API_KEY_PREFIX}[0-9A-Za-z]{16,}`, "g"), `${API_KEY_PREFIX}${REDACTED}`],
  // Authorization header values.
  [/\b(Bearer|Basic)\s+(?!realm=)[^\s"\\,]+/gi, `$1 ${REDACTED}`],
  // Credential-bearing query parameters in any URL inside any field.
  [
    /([?&](?:api[_-]?key|key|access[_-]?token|token|password|passwd|secret|signature|sig|x-goog-signature|x-goog-credential|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"\\]*/gi,
    `$1${REDACTED}`,
  ],
];

/** Removes credentials from one serialized log line. */
export function scrubSecrets(line: string): string {
  let out = line;
  for (const [pattern, replacement] of SCRUBS) out = out.replace(pattern, replacement);
  return out;
}

export interface LoggerOptions {
  /** Where lines go instead of stdout (tests capture them). */
  destination?: DestinationStream;
}

export function createLogger(
  config: Pick<Config, "logLevel"> & Partial<Pick<Config, "logging" | "logFormat">>,
  options: LoggerOptions = {},
): Logger {
  const service = config.logging?.service;
  const revision = config.logging?.revision;
  const serviceContext = service ? { service, ...(revision ? { version: revision } : {}) } : null;
  return pino(
    {
      level: config.logLevel,
      messageKey: "message",
      // RFC 3339 in `time`, which Cloud Logging takes as the entry's timestamp.
      timestamp: stdTimeFunctions.isoTime,
      // No pid or hostname: Cloud Run's resource labels say where a line came from.
      base: null,
      formatters: {
        // Errors also name the service and revision (on Cloud Run), by which Error Reporting groups them.
        level: (label) =>
          serviceContext && (label === "error" || label === "fatal")
            ? { severity: SEVERITY[label], serviceContext }
            : { severity: SEVERITY[label] ?? "DEFAULT" },
        log: (object) => {
          // Error Reporting reads a stack from `stack_trace` (or from the message).
          const error = object["err"];
          if (error instanceof Error && error.stack) return { ...object, stack_trace: error.stack };
          return object;
        },
      },
      mixin: () => context.getStore()?.() ?? {},
      redact: {
        paths: [
          "req.headers.authorization",
          "req.headers.cookie",
          'req.headers["x-api-key"]',
          'res.headers["set-cookie"]',
          "headers.authorization",
          "headers.cookie",
          'headers["x-api-key"]',
          "authorization",
          "cookie",
          "password",
          "*.password",
          "token",
          "*.token",
          "secret",
          "*.secret",
        ],
        censor: REDACTED,
      },
      hooks: { streamWrite: scrubSecrets },
    },
    options.destination ??
      (config.logFormat === "pretty" ? prettyDestination() : pino.destination({ dest: 1, sync: false, minLength: 0 })),
  );
}

/**
 * Resolves once every line logged so far has been written, or after timeoutMs at most. pino also
 * flushes synchronously on process `exit`; call this before `process.exit()` at shutdown anyway.
 */
export function flushLogger(logger: Logger, timeoutMs = 500): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      logger.flush(done);
    } catch {
      done(); // a destination that cannot flush has nothing pending
    }
  });
}
