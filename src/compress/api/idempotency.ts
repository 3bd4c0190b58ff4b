// `Idempotency-Key` on POST /v1/compress and POST /v1/uploads, with Stripe's semantics
// (docs/compression-api.md). Behind the key's authentication and rate limit:
//   no header                  the request runs as always
//   a key not seen in 24 h     claimed, the request runs; its answer (2xx and 4xx once the body
//                              was read) is kept for 24 h; a failure of ours (5xx), a client gone or
//                              a refusal before the body (401, 402, 413, 429) lets the key go
//   the key, still running     409 idempotency_key_in_use, Retry-After: 1, before the body is read
//   the key, answered          the body is read (not run, not charged) and fingerprinted: the same
//                              request gets the first answer again, status, body and headers, with
//                              `Idempotent-Replayed: true`; another request, 409 idempotency_key_reused
// The fingerprint: SHA-256 of the API key's id, the method, the path and the body's digest (its
// fields and its file's SHA-256, ../workflow/body-digest.ts).
import { createHash } from "node:crypto";
import type { Next } from "koa";
import { errorBody, HttpError, retryAfter } from "../../errors.ts";
import { setHeaders } from "../../http/rate-limit.ts";
import {
  claimIdempotencyKey,
  releaseIdempotencyKey,
  storeIdempotentAnswer,
  type StoredAnswer,
} from "../idempotency.ts";
import { bodyDigestOf } from "../workflow/body-digest.ts";
import type { CompressDeps } from "../workflow/service.ts";
import type { KeyedContext } from "./jobs-and-uploads.ts";

/** The answer's headers a replay repeats (the rest are the connection's, the request's or the limits'). */
const KEPT_HEADERS = [
  "cache-control",
  "location",
  "preference-applied",
  "x-quota-limit",
  "x-quota-remaining",
  "x-quota-reset",
];

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's fingerprint, once its body was read whole; undefined before. */
function fingerprintOf(ctx: KeyedContext): string | undefined {
  const digest = bodyDigestOf(ctx.req);
  if (digest === undefined) return undefined;
  return createHash("sha256").update([ctx.state.apiKey.id, ctx.method, ctx.path, digest].join("\n")).digest("hex");
}

function keptHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!KEPT_HEADERS.includes(name.toLowerCase())) continue;
    if (typeof value === "string" || typeof value === "number") kept[name] = String(value);
  }
  return kept;
}

/** The answer to keep, or null when the key must go back (our failure, or a refusal before the body). */
function answerOf(ctx: KeyedContext, error: unknown): Omit<StoredAnswer, "fingerprint"> | null {
  if (error === undefined) {
    if (ctx.status >= 500) return null;
    return { status: ctx.status, body: ctx.body, headers: keptHeaders(ctx.response.headers) };
  }
  if (!(error instanceof HttpError) || error.status >= 500 || error.status === 429) return null;
  return {
    status: error.status,
    body: errorBody(error.code, error.message, ctx.state.requestId),
    headers: keptHeaders(error.headers),
  };
}

/** Answers a kept answer again. */
function replay(ctx: KeyedContext, answer: StoredAnswer): void {
  setHeaders(ctx, answer.headers);
  ctx.set("Idempotent-Replayed", "true");
  ctx.status = answer.status;
  ctx.body = answer.body;
}

/**
 * The middleware; `readBody` reads the route's body without running it (for a replay's fingerprint).
 */
export function idempotent(prisma: CompressDeps["prisma"], readBody: (ctx: KeyedContext) => Promise<unknown>) {
  return async (ctx: KeyedContext, next: Next): Promise<void> => {
    const key = ctx.get("Idempotency-Key");
    if (!key) {
      await next();
      return;
    }
    if (!KEY.test(key)) {
      throw new HttpError(
        400,
        "invalid_idempotency_key",
        "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice).",
      );
    }
    const claim = await claimIdempotencyKey(prisma, ctx.state.apiKey.id, key);
    if (claim.kind === "in_flight") {
      throw new HttpError(
        409,
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still running; retry shortly to get its answer.",
        retryAfter(1),
      );
    }
    if (claim.kind === "answered") {
      await readBody(ctx);
      if (fingerprintOf(ctx) !== claim.fingerprint) throw reused();
      return replay(ctx, claim);
    }
    let failure: unknown;
    try {
      await next();
    } catch (error) {
      failure = error ?? new Error("unknown failure");
      throw error;
    } finally {
      // Neither throws: a database that is away now gets the release later (../idempotency.ts).
      const fingerprint = fingerprintOf(ctx);
      const answer = fingerprint === undefined ? null : answerOf(ctx, failure);
      if (answer && fingerprint) await storeIdempotentAnswer(prisma, claim.id, { ...answer, fingerprint });
      else await releaseIdempotencyKey(prisma, claim.id);
    }
  };
}

const reused = () =>
  new HttpError(
    409,
    "idempotency_key_reused",
    "This Idempotency-Key was used in the last 24 hours for another request (route, fields or file); send a new key.",
  );
