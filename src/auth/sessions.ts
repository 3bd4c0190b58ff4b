// Passwordless sign-in for the subscriber dashboard: one-time links and database sessions.
//
// A link carries 256 random bits; only their SHA-256 is stored (the secret has the entropy that
// makes a slow hash unnecessary, as with API keys). A link works once, within its lifetime: it is
// spent by one conditional UPDATE (used_at IS NULL and not expired), so two clicks racing each
// other make one session. A session is the same: a random secret in an httpOnly cookie, its hash
// in dashboard_sessions, ended by its expiry or by sign-out (revoked_at). The CSRF token of a
// session's forms is derived from the session's secret (HMAC), so it needs no storage and an
// attacker who cannot read the cookie cannot compute it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Plan, PrismaClient } from "../generated/prisma/client.ts";

const secret = () => randomBytes(32).toString("base64url");
const hashOf = (value: string) => createHash("sha256").update(value).digest("hex");
// base64url of 32 bytes: 43 characters. Anything else is refused before a query.
const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface SessionSubscriber {
  sessionId: string;
  subscriberId: string;
  name: string;
  email: string;
  plan: Plan;
  monthlyQuota: number;
  expiresAt: Date;
}

export interface SessionOptions {
  linkTtlMs: number;
  sessionTtlMs: number;
}

export function sessions(prisma: PrismaClient, options: SessionOptions) {
  return {
    /**
     * A new sign-in link's secret for the subscriber with this address, or null when there is
     * none. The caller answers the same either way.
     */
    async createLink(email: string, now = new Date()): Promise<{ token: string; expiresAt: Date } | null> {
      const subscriber = await prisma.subscriber.findUnique({
        where: { email: email.trim().toLowerCase() },
        select: { id: true },
      });
      if (!subscriber) return null;
      const token = secret();
      const expiresAt = new Date(now.getTime() + options.linkTtlMs);
      // Links spent or expired for a day are of no more use, not even to explain a refusal.
      await prisma.signInToken.deleteMany({
        where: { subscriberId: subscriber.id, expiresAt: { lt: new Date(now.getTime() - 86_400_000) } },
      });
      await prisma.signInToken.create({ data: { subscriberId: subscriber.id, hash: hashOf(token), expiresAt } });
      return { token, expiresAt };
    },

    /** The address a usable link signs in, for the page that asks to confirm; null when spent or expired. */
    async peekLink(token: string, now = new Date()): Promise<{ email: string } | null> {
      if (!SHAPE.test(token)) return null;
      const row = await prisma.signInToken.findUnique({
        where: { hash: hashOf(token) },
        select: { usedAt: true, expiresAt: true, subscriber: { select: { email: true } } },
      });
      return row && !row.usedAt && row.expiresAt > now ? { email: row.subscriber.email } : null;
    },

    /** Spends the link and opens a session: its cookie secret and expiry. Null when spent or expired. */
    async redeemLink(token: string, now = new Date()): Promise<{ secret: string; expiresAt: Date } | null> {
      if (!SHAPE.test(token)) return null;
      const hash = hashOf(token);
      const spent = await prisma.signInToken.updateMany({
        where: { hash, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      if (spent.count !== 1) return null;
      const { subscriberId } = await prisma.signInToken.findUniqueOrThrow({ where: { hash } });
      const session = secret();
      const expiresAt = new Date(now.getTime() + options.sessionTtlMs);
      await prisma.dashboardSession.deleteMany({ where: { subscriberId, expiresAt: { lt: now } } });
      await prisma.dashboardSession.create({ data: { subscriberId, hash: hashOf(session), expiresAt } });
      return { secret: session, expiresAt };
    },

    /** The signed-in subscriber of a cookie's secret, or null (unknown, expired or signed out). */
    async resolve(sessionSecret: string, now = new Date()): Promise<SessionSubscriber | null> {
      if (!SHAPE.test(sessionSecret)) return null;
      const row = await prisma.dashboardSession.findUnique({
        where: { hash: hashOf(sessionSecret) },
        include: { subscriber: { select: { name: true, email: true, plan: true, monthlyQuota: true } } },
      });
      if (!row || row.revokedAt || row.expiresAt <= now) return null;
      return {
        sessionId: row.id,
        subscriberId: row.subscriberId,
        ...row.subscriber,
        expiresAt: row.expiresAt,
      };
    },

    /** Sign-out: the session is refused from now on, whoever holds its cookie. */
    async revoke(sessionId: string, now = new Date()): Promise<void> {
      await prisma.dashboardSession.updateMany({ where: { id: sessionId, revokedAt: null }, data: { revokedAt: now } });
    },
  };
}

export type Sessions = ReturnType<typeof sessions>;

/** The CSRF token of a session's forms. */
export function csrfToken(sessionSecret: string): string {
  return createHmac("sha256", sessionSecret).update("dashboard csrf").digest("base64url");
}

export function isCsrfToken(sessionSecret: string, candidate: unknown): boolean {
  if (typeof candidate !== "string") return false;
  const expected = Buffer.from(csrfToken(sessionSecret));
  const given = Buffer.from(candidate);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
