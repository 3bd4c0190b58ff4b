// Asking for a sign-in link: the limits on asking, the link, and its mail (docs/webhooks-and-sign-in.md,
// "Sign-in limits").
//
// No one may lock an owner out by asking for links to their address. So the limits that refuse
// (429) are on the one who asks: per client IP, and per address *from that IP*; someone asking for
// another's address elsewhere uses up only their own allowance. What protects the address's
// mailbox is a cap on mails, not on requests, and it is quiet: past SIGN_IN_MAILS_PER_ADDRESS in
// an hour, one mail goes out per ration window (half a link's lifetime, at most 5 minutes) and
// the others are skipped with the same answer. A skipped request always comes within a window in
// which a mail was sent, so the owner has a link in their inbox that still works.
//
// The answer is the same whether or not the address is a subscriber's. It waits for the outcome,
// so a link that could not be made or sent (the database or the mail server is down) is said to
// have failed: an unknown address checks the mailer instead of sending, and fails alike.
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { Sessions } from "../auth/sessions.ts";
import type { Config } from "../config/env.ts";
import { createRateLimiter, type RateLimiter, type RateLimitResult } from "../http/rate-limit.ts";
import type { Logger } from "../logger.ts";
import { withTimeout } from "../with-timeout.ts";
import { html } from "./html.ts";
import type { Mailer } from "./mailer.ts";
import { DASHBOARD } from "./pages.ts";

/** The longest a request waits for its link to be made and mailed before it is said to have failed. */
const DELIVERY_TIMEOUT_MS = 10_000;

export interface SignInLimits {
  /** Requests from one client IP: a 429 past it. */
  perIp: RateLimiter;
  /** Requests for one address from one client IP: a 429 past it, to that IP only. */
  perAddressFromIp: RateLimiter;
  /** Mails to one address in an hour; past it, the ration. Never a 429. */
  mailsPerAddress: RateLimiter;
  /** One mail to an address per window once its hourly mails are spent. */
  mailRation: RateLimiter;
}

/** One mail per this many seconds past the hourly cap: half a link's lifetime, at most 5 minutes. */
export const rationSeconds = (linkTtlMs: number) => Math.max(1, Math.min(300, Math.floor(linkTtlMs / 2000)));

export function signInLimits(settings: Config["dashboard"], redis: Redis | null, logger: Logger): SignInLimits {
  const limit = (name: string, points: number, windowSeconds = 3600) =>
    createRateLimiter({ name, points, windowSeconds, redis, logger });
  return {
    perIp: limit("sign-in-ip", settings.signInPerIp),
    perAddressFromIp: limit("sign-in-address", settings.signInPerAddress),
    mailsPerAddress: limit("sign-in-mails", settings.signInMailsPerAddress),
    mailRation: limit("sign-in-mail-ration", 1, rationSeconds(settings.signInLinkTtlMs)),
  };
}

export interface LinkSender {
  auth: Sessions;
  mailer: Mailer;
  limits: SignInLimits;
  logger: Logger;
  /** Where links point (Config.dashboard.linkOrigin; in development a loopback request's own origin: routes.ts linkOriginOf). */
  origin: string;
  linkMinutes: number;
}

/** A limit that was counted, for the RateLimit headers. */
export interface LimitCheck {
  limiter: RateLimiter;
  result: RateLimitResult;
}

/**
 * answered: "check your e-mail" (mailed, rationed, or no such subscriber: the same answer);
 * limited: the one who asks must wait resetSeconds; failed: no link could be made or sent.
 */
export type LinkOutcome =
  | { kind: "answered"; checks: LimitCheck[] }
  | { kind: "limited"; checks: LimitCheck[]; resetSeconds: number }
  | { kind: "failed"; checks: LimitCheck[]; error: unknown };

/** A request for a link to `email` (trimmed, lower-cased, well-formed) from client address `ip`. */
export async function requestSignInLink(sender: LinkSender, email: string, ip: string): Promise<LinkOutcome> {
  // Hashed: no address is kept in the limiters' store.
  const address = createHash("sha256").update(email).digest("hex");
  const checks: LimitCheck[] = [];
  const { perIp, perAddressFromIp } = sender.limits;
  for (const [limiter, key] of [
    [perIp, ip],
    [perAddressFromIp, `${address}:${ip}`],
  ] as const) {
    const result = await limiter.consume(key);
    checks.push({ limiter, result });
    if (!result.allowed) return { kind: "limited", checks, resetSeconds: result.resetSeconds };
  }
  try {
    await withTimeout(deliver(sender, email, address), DELIVERY_TIMEOUT_MS, () => {
      throw new Error(`the sign-in link was not sent within ${DELIVERY_TIMEOUT_MS / 1000} s`);
    });
    return { kind: "answered", checks };
  } catch (error) {
    return { kind: "failed", checks, error };
  }
}

async function deliver(sender: LinkSender, email: string, address: string): Promise<void> {
  const { auth, mailer, limits } = sender;
  if (!(await mayMail(limits, address))) {
    sender.logger.info({ address }, "sign-in mail skipped: this address had its mails for now");
    return;
  }
  const link = await auth.createLink(email);
  if (!link) return mailer.verify();
  const url = `${sender.origin}${DASHBOARD}/sign-in/link?code=${link.token}`;
  const minutes = sender.linkMinutes;
  await mailer.send(
    {
      to: email,
      subject: "Your sign-in link for the Marketplace dashboard",
      text: `Sign in to the Marketplace dashboard:\n\n${url}\n\nThe link works once, within ${minutes} minutes. If you did not ask for it, ignore this message.\n`,
      html: html`<p>Sign in to the Marketplace dashboard:</p>
        <p><a href="${url}">Sign in</a></p>
        <p>The link works once, within ${minutes} minutes. If you did not ask for it, ignore this message.</p>`.value,
    },
    // Without a mail server the log is where a developer finds the link; never with one.
    mailer.kind === "outbox" ? { link: url } : {},
  );
}

/** Within the hourly mails, or the first of its ration window. */
async function mayMail(limits: SignInLimits, address: string): Promise<boolean> {
  if ((await limits.mailsPerAddress.consume(address)).allowed) return true;
  return (await limits.mailRation.consume(address)).allowed;
}
