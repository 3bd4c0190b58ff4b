// Bearer-key authentication for the compression API, from the Authorization header alone:
// nothing of the body is read before it passes. A malformed key (wrong shape or checksum) is
// refused without a database query; an unknown or revoked one, or one whose subscriber is no
// longer on a plan that includes the API, after one indexed lookup.
import type { Middleware, Next, ParameterizedContext } from "koa";
import type { Plan, PrismaClient } from "../generated/prisma/client.ts";
import { HttpError, type ErrorCode } from "../errors.ts";
import { COMPRESSION_PLANS } from "./accounts.ts";
import { hashApiKey, isWellFormedApiKey } from "./api-keys.ts";

export interface AuthenticatedKey {
  id: string;
  prefix: string;
  subscriberId: string;
  plan: Plan;
  monthlyQuota: number;
  /** The account's default retention of results in seconds (0: until the first download); null: the maximum. */
  retentionSeconds?: number | null;
}

/** What authenticateApiKey leaves in ctx.state for the middleware after it. */
export interface ApiKeyState {
  apiKey?: AuthenticatedKey;
}

// last_used_at is written at most this often per key: not one write per request.
const LAST_USED_RESOLUTION_MS = 60_000;

const unauthorized = (code: ErrorCode, message: string, error = "invalid_token") =>
  new HttpError(401, code, message, { "WWW-Authenticate": `Bearer realm="compress", error="${error}"` });

function recordUse(
  prisma: PrismaClient,
  key: { id: string; lastUsedAt: Date | null },
  onError?: (error: unknown) => void,
): void {
  const now = Date.now();
  if (!key.lastUsedAt || now - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    prisma.apiKey
      .update({ where: { id: key.id }, data: { lastUsedAt: new Date(now) } })
      .catch((error: unknown) => onError?.(error));
  }
}

/**
 * One of a signed-in subscriber's keys, chosen by id on the dashboard's Try-it page, under the
 * same rules as a bearer key (not revoked, subscriber on a plan that includes the API) and
 * recorded as used the same way. Null when it is not a usable key of this subscriber's.
 */
export async function subscriberKey(
  prisma: PrismaClient,
  subscriberId: string,
  keyId: string,
  onBackgroundError?: (error: unknown) => void,
): Promise<AuthenticatedKey | null> {
  if (!/^[0-9a-f-]{36}$/i.test(keyId)) return null;
  const key = await prisma.apiKey.findFirst({
    where: { id: keyId, subscriberId, revokedAt: null },
    include: { subscriber: { select: { plan: true, monthlyQuota: true, retentionSeconds: true } } },
  });
  if (!key || !COMPRESSION_PLANS.includes(key.subscriber.plan)) return null;
  recordUse(prisma, key, onBackgroundError);
  return {
    id: key.id,
    prefix: key.prefix,
    subscriberId,
    plan: key.subscriber.plan,
    monthlyQuota: key.subscriber.monthlyQuota,
    retentionSeconds: key.subscriber.retentionSeconds,
  };
}

export function authenticateApiKey(options: {
  prisma: PrismaClient;
  pepper: string | null;
  onBackgroundError?: (error: unknown) => void;
}): Middleware<ApiKeyState> {
  return async (ctx: ParameterizedContext<ApiKeyState>, next: Next) => {
    const header = ctx.get("Authorization");
    if (!header) {
      throw new HttpError(401, "missing_api_key", "Send your API key as Authorization: Bearer <key>.", {
        "WWW-Authenticate": 'Bearer realm="compress"',
      });
    }
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const token = match?.[1] ?? "";
    if (!isWellFormedApiKey(token)) {
      throw unauthorized("malformed_api_key", "The Authorization header does not hold a well-formed API key.");
    }
    const key = await options.prisma.apiKey.findUnique({
      where: { hash: hashApiKey(token, options.pepper) },
      include: { subscriber: { select: { plan: true, monthlyQuota: true, retentionSeconds: true } } },
    });
    if (!key || key.revokedAt) throw unauthorized("invalid_api_key", "The API key is unknown or has been revoked.");
    if (!COMPRESSION_PLANS.includes(key.subscriber.plan)) {
      throw unauthorized(
        "plan_not_eligible",
        `The API is part of the corporate plan; this key's subscriber is on the ${key.subscriber.plan} plan.`,
      );
    }
    recordUse(options.prisma, key, options.onBackgroundError);
    ctx.state.apiKey = {
      id: key.id,
      prefix: key.prefix,
      subscriberId: key.subscriberId,
      plan: key.subscriber.plan,
      monthlyQuota: key.subscriber.monthlyQuota,
      retentionSeconds: key.subscriber.retentionSeconds,
    };
    await next();
  };
}
