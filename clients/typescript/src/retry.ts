// Honouring Retry-After (RFC 9110 §10.2.3) on 429 and 503: bounded in attempts and in the wait
// it accepts, cut short by the request's AbortSignal. Two forms share one decision:
// - retryMiddleware(), an openapi-fetch middleware that re-sends idempotent requests (GET, HEAD,
//   OPTIONS, PUT, DELETE) and, only when told (`nonIdempotent: true`), others: their body is then
//   kept in memory to be sent again (Request.clone), so it suits small bodies only;
// - withRetry(), which repeats a whole call: the compression client uses it for its uploads, whose
//   form is rebuilt from the file's Blob on each attempt (no copy in memory).
import type { Middleware } from "openapi-fetch";

export interface RetryOptions {
  /** Attempts after the first one. Default 3; 0 turns retrying off. */
  retries?: number;
  /**
   * The longest wait accepted, in ms. When a Retry-After asks for more, the 429/503 is returned
   * at once, for the caller to schedule. Default 30,000.
   */
  maxWaitMs?: number;
  /** The wait when a 429/503 has no usable Retry-After: doubled on each attempt. Default 1,000 ms. */
  fallbackWaitMs?: number;
  /** Statuses retried. Default 429 and 503. */
  statuses?: readonly number[];
  /** Retry POST and PATCH too (the middleware replays a copy of their body). Default false. */
  nonIdempotent?: boolean;
  /** Told before each wait (for logs or metrics). */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** 1 for the first retry. */
  attempt: number;
  status: number;
  waitMs: number;
  method: string;
  url: string;
}

export const RETRY_DEFAULTS = {
  retries: 3,
  maxWaitMs: 30_000,
  fallbackWaitMs: 1_000,
  statuses: [429, 503],
  nonIdempotent: false,
} as const;

const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/** Retry-After as milliseconds: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date begins with its day name in all three forms (IMF-fixdate, RFC 850, asctime);
  // Date.parse alone would take "-1" or "1.5" for dates. All three are GMT; asctime does not say so.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/.test(text)) return undefined;
  const date = Date.parse(text.endsWith("GMT") ? text : `${text} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before attempt number `attempt` (1-based) after `response`, or undefined when
 * it must not be retried: a status not retried, attempts used up, or a wait longer than allowed.
 */
export function retryWait(response: Response, attempt: number, options: RetryOptions = {}): number | undefined {
  const { retries, maxWaitMs, fallbackWaitMs, statuses } = { ...RETRY_DEFAULTS, ...options };
  if (!statuses.includes(response.status) || attempt > retries) return undefined;
  const wait = retryAfterMs(response.headers.get("retry-after")) ?? fallbackWaitMs * 2 ** (attempt - 1);
  return wait <= maxWaitMs ? wait : undefined;
}

/** Resolves after ms, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function waitBeforeRetry(
  response: Response,
  attempt: number,
  options: RetryOptions,
  request: { method: string; url: string; signal?: AbortSignal | null },
): Promise<boolean> {
  const waitMs = retryWait(response, attempt, options);
  if (waitMs === undefined) return false;
  // The refused answer is not read: release its connection before waiting.
  await response.body?.cancel().catch(() => undefined);
  options.onRetry?.({ attempt, status: response.status, waitMs, method: request.method, url: request.url });
  await sleep(waitMs, request.signal);
  return true;
}

/** An openapi-fetch middleware that honours Retry-After (see the file's header for what it re-sends). */
export function retryMiddleware(options: RetryOptions = {}): Middleware {
  const replays = new Map<string, Request>();
  const retried = (method: string) => IDEMPOTENT.has(method) || (options.nonIdempotent ?? false);
  return {
    onRequest({ request, id }) {
      // A body can be sent once: keep an unsent copy for the attempts after the first.
      if (request.body !== null && retried(request.method) && (options.retries ?? 1) > 0) {
        replays.set(id, request.clone());
      }
      return undefined;
    },
    async onResponse({ request, response, options: client, id }) {
      if (!retried(request.method)) return undefined;
      const pristine = replays.get(id);
      replays.delete(id);
      let current = response;
      for (let attempt = 1; await waitBeforeRetry(current, attempt, options, request); attempt++) {
        current = await client.fetch(pristine ? pristine.clone() : new Request(request));
      }
      return current === response ? undefined : current;
    },
    onError({ id }) {
      replays.delete(id);
      return undefined;
    },
  };
}

/**
 * Repeats `call` (which must build its request afresh each time) while its response is a 429/503
 * that options allow retrying; returns the last result.
 */
export async function withRetry<T extends { response: Response }>(
  call: () => Promise<T>,
  options: RetryOptions,
  request: { method: string; signal?: AbortSignal | null; /** Also re-send after a network error. */ safe?: boolean },
): Promise<T> {
  let result = await attemptCall(call, options, request, 1);
  for (let attempt = 1; ; attempt++) {
    const { response } = result;
    if (!(await waitBeforeRetry(response, attempt, options, { ...request, url: response.url }))) return result;
    result = await attemptCall(call, options, request, attempt + 1);
  }
}

/**
 * One attempt; for a request that is safe to send again (an Idempotency-Key makes a POST so), a
 * network error (no answer: the connection failed or was cut) is retried like a 503 without
 * Retry-After, up to the same number of retries. An abort is never retried.
 */
async function attemptCall<T>(
  call: () => Promise<T>,
  options: RetryOptions,
  request: { signal?: AbortSignal | null; safe?: boolean },
  first: number,
): Promise<T> {
  const { retries, fallbackWaitMs } = { ...RETRY_DEFAULTS, ...options };
  for (let failed = 0; ; failed++) {
    try {
      return await call();
    } catch (error) {
      const networkError = error instanceof TypeError && !request.signal?.aborted;
      if (!request.safe || !networkError || first + failed > retries) throw error;
      await sleep(fallbackWaitMs * 2 ** failed, request.signal);
    }
  }
}
