// Fixed-window rate limits: a generic limiter (in this instance's memory, or in Redis shared by every
// instance) and the Koa middleware that applies one per client IP. Responses carry the IETF draft
// headers (draft-ietf-httpapi-ratelimit-headers, structured fields):
//   RateLimit-Policy: "<name>";q=<points>;w=<window seconds>
//   RateLimit: "<name>";r=<remaining>;t=<seconds until the window resets>
import type { Context, Middleware, Next } from "koa";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Logger } from "../logger.ts";
import { HttpError, rateLimitUnavailable, retryAfter } from "../errors.ts";
import { withTimeout } from "../with-timeout.ts";

/** A store that answers slower than this counts as down: ioredis' own timeout is 1 s. */
const STORE_TIMEOUT_MS = 1_500;
const STORE_ERROR_LOG_INTERVAL_MS = 60_000;

export interface RateLimitOptions {
  /** Names the policy in the headers and, by default, the keys in the store. */
  name: string;
  /** Requests allowed per window. */
  points: number;
  windowSeconds: number;
  /** Redis shares the limit between instances (atomically); null keeps it in this process. */
  redis: Redis | null;
  /** Store key prefix; defaults to `rate-limit:<name>`. */
  keyPrefix?: string;
  /** Where store failures are reported (at most once a minute). */
  logger?: Logger;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly name: string;
  readonly points: number;
  readonly windowSeconds: number;
  /** Counts one request for key. Throws HttpError 503 `rate_limit_unavailable` when the store fails. */
  consume(key: string): Promise<RateLimitResult>;
}

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { name, points, windowSeconds, redis, logger } = options;
  const settings = { points, duration: windowSeconds, keyPrefix: options.keyPrefix ?? `rate-limit:${name}` };
  // Memory: a record per key, deleted by a timer when its window ends, so old keys do not pile up.
  // Redis: one Lua script per request (SET NX EX, INCRBY, PTTL), atomic across instances; a key
  // expires with its window.
  const store: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ ...settings, storeClient: redis, rejectIfRedisNotReady: true })
    : new RateLimiterMemory(settings);

  let lastLoggedAt = 0;
  function storeFailed(error: unknown): HttpError {
    const now = Date.now();
    if (logger && now - lastLoggedAt >= STORE_ERROR_LOG_INTERVAL_MS) {
      lastLoggedAt = now;
      logger.error({ err: error, limiter: name }, "rate limit store failed; answering 503");
    }
    return rateLimitUnavailable();
  }

  function result(res: RateLimiterRes, allowed: boolean): RateLimitResult {
    return {
      allowed,
      limit: points,
      remaining: Math.max(0, Math.min(points, res.remainingPoints)),
      resetSeconds: Math.min(windowSeconds, Math.max(0, Math.ceil(res.msBeforeNext / 1000))),
    };
  }

  return {
    name,
    points,
    windowSeconds,
    async consume(key) {
      try {
        // Only Redis can fail to answer; the memory store answers in this turn, without a timer.
        const answer = await (redis
          ? withTimeout(store.consume(key), STORE_TIMEOUT_MS, () => {
              throw new Error(`rate limit store gave no answer in ${STORE_TIMEOUT_MS} ms`);
            })
          : store.consume(key));
        return result(answer, true);
      } catch (error) {
        // The store refuses with a RateLimiterRes when the key is over its limit; anything else failed.
        if (error instanceof RateLimiterRes) return result(error, false);
        throw storeFailed(error);
      }
    },
  };
}

/** The draft's structured-field string item: a quoted string with `\` and `"` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Adds this limiter's items to the RateLimit-Policy and RateLimit lists (several limits may apply). */
function appendListHeader(ctx: Context, header: string, item: string): void {
  const existing = ctx.response.get(header);
  ctx.set(header, existing ? `${String(existing)}, ${item}` : item);
}

// A limiter's name as a structured-field string, written once (every response carries it twice).
const quotedNames = new WeakMap<RateLimiter, string>();
function quotedName(limiter: RateLimiter): string {
  let quoted = quotedNames.get(limiter);
  if (quoted === undefined) quotedNames.set(limiter, (quoted = sfString(limiter.name)));
  return quoted;
}
const policyItem = (limiter: RateLimiter) => `${quotedName(limiter)};q=${limiter.points};w=${limiter.windowSeconds}`;
const limitItem = (limiter: RateLimiter, result: RateLimitResult) =>
  `${quotedName(limiter)};r=${result.remaining};t=${result.resetSeconds}`;

export function setRateLimitPolicyHeader(ctx: Context, limiter: RateLimiter): void {
  appendListHeader(ctx, "RateLimit-Policy", policyItem(limiter));
}

export function setRateLimitHeaders(ctx: Context, limiter: RateLimiter, result: RateLimitResult): void {
  setRateLimitPolicyHeader(ctx, limiter);
  appendListHeader(ctx, "RateLimit", limitItem(limiter, result));
}

/** One limiter's items of the two headers, for work that answers without a context (setHeaders adds them). */
export function rateLimitHeaders(limiter: RateLimiter, result: RateLimitResult): Record<string, string> {
  return { "RateLimit-Policy": policyItem(limiter), RateLimit: limitItem(limiter, result) };
}

/** Sets headers on the response; the RateLimit lists are added to, not replaced (several limits may apply). */
export function setHeaders(ctx: Context, headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (name === "RateLimit" || name === "RateLimit-Policy") appendListHeader(ctx, name, value);
    else ctx.set(name, value);
  }
}

/**
 * Applies limiter to requests keyed by keyOf; a request without a key (undefined) is not limited.
 * Sets the headers on every response it lets through or refuses; refuses with 429 `rate_limited`.
 * The headers are set on the context before throwing, and the error middleware keeps them.
 */
export function rateLimitBy(limiter: RateLimiter, keyOf: (ctx: Context) => string | undefined): Middleware {
  return async (ctx: Context, next: Next) => {
    const key = keyOf(ctx);
    if (key === undefined) {
      await next();
      return;
    }
    let result: RateLimitResult;
    try {
      result = await limiter.consume(key);
    } catch (error) {
      setRateLimitPolicyHeader(ctx, limiter);
      throw error;
    }
    setRateLimitHeaders(ctx, limiter, result);
    if (!result.allowed) {
      const seconds = Math.max(1, result.resetSeconds);
      throw new HttpError(
        429,
        "rate_limited",
        `Too many requests: the limit is ${limiter.points} per ${limiter.windowSeconds} s. Retry in ${seconds} s.`,
        retryAfter(seconds),
      );
    }
    await next();
  };
}

/** Health probes are never limited: a busy client must not get the instance taken out of service. */
const UNLIMITED_PATHS = new Set(["/healthz", "/readyz"]);

/** The service-wide limit per client IP (ctx.ip: see the app's `proxy` setting). */
export function rateLimitByClientIp(limiter: RateLimiter): Middleware {
  return rateLimitBy(limiter, (ctx) => (UNLIMITED_PATHS.has(ctx.path) ? undefined : ctx.ip || "unknown"));
}
