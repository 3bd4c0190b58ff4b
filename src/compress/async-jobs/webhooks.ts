// Webhooks: when a job with a callback_url ends, its resource is POSTed there, signed with the
// subscriber's secret (signature.ts), and retried with exponential backoff until the receiver
// answers 2xx (at most MAX_ATTEMPTS calls over about a day). Deliveries are rows of
// `webhook_deliveries`, claimed like jobs (FOR UPDATE SKIP LOCKED plus a lease), so any instance
// sends them and a crash only delays one.
//
// SSRF (address-policy.ts; docs/webhooks-and-sign-in.md): the URL is checked when the job is
// accepted (https only, no credentials, no host the policy refuses), again at each call, and every
// address its name resolves to is checked when the call connects (the check is the connection's
// own DNS lookup, so a name that resolves to a public address at acceptance and to 10.0.0.1 later
// is refused: no rebinding). Redirects are not followed. WEBHOOK_ALLOW_PRIVATE=true lets tests and
// local receivers use http:// and loopback or private addresses, never link-local or metadata ones;
// unset, development allows this machine alone (loopback, http:// to it too), and production nothing.
import { randomBytes } from "node:crypto";
import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { HttpError } from "../../errors.ts";
import {
  checkedLookup,
  checkOutboundUrl,
  hostOf,
  mayName,
  type Resolver,
  type WebhookTargets,
} from "../address-policy.ts";
import type { JobResource } from "./resource.ts";
import { webhookHeaders } from "./signature.ts";
import { guarded } from "../../callbacks.ts";

/** Calls of one delivery before it is given up. */
export const MAX_ATTEMPTS = 8;
const CALL_TIMEOUT_MS = 10_000;
const MAX_URL_LENGTH = 2048;

/** The delay before call n+1 (n >= 1): base x 4^(n-1), at most 6 hours (10 s, 40 s, 160 s, …). */
export function backoffMs(attempts: number, baseMs: number): number {
  return Math.min(6 * 3_600_000, baseMs * 4 ** Math.max(0, attempts - 1));
}

/** The subscriber's signing secret, created on first use. */
export async function webhookSecret(prisma: PrismaClient, subscriberId: string): Promise<string> {
  await prisma.webhookSecret.createMany({ data: [{ subscriberId, secret: newSecret() }], skipDuplicates: true });
  const row = await prisma.webhookSecret.findUniqueOrThrow({ where: { subscriberId } });
  return row.secret;
}

/** The secret, and the one a rotation replaced while it still signs (null after its window). */
export interface SecretState {
  secret: string;
  previousUntil: Date | null;
}

/** The secret with its rotation's state (created on first use). */
export async function webhookSecretState(
  prisma: PrismaClient,
  subscriberId: string,
  now = new Date(),
): Promise<SecretState & { secrets: string[] }> {
  await webhookSecret(prisma, subscriberId);
  const row = await prisma.webhookSecret.findUniqueOrThrow({ where: { subscriberId } });
  const overlapping = row.previousSecret !== null && row.previousUntil !== null && row.previousUntil > now;
  return {
    secret: row.secret,
    previousUntil: overlapping ? row.previousUntil : null,
    // What a call is signed with: the secret, then the one it replaced while its window lasts.
    secrets: overlapping ? [row.secret, row.previousSecret!] : [row.secret],
  };
}

/**
 * Replaces the subscriber's secret. The one it replaces keeps signing calls beside it for `overlapMs`
 * (Standard Webhooks' rotation: a receiver still on the old secret accepts every call until it is
 * updated). One statement, so two rotations at once each keep what the other replaced; a rotation
 * within the window drops the oldest secret (two at most sign a call).
 */
export async function rotateWebhookSecret(
  prisma: PrismaClient,
  subscriberId: string,
  overlapMs: number,
): Promise<SecretState> {
  await webhookSecret(prisma, subscriberId);
  const secret = newSecret();
  const rows = await prisma.$queryRaw<{ previous_until: Date | null }[]>`
    UPDATE webhook_secrets
       SET previous_secret = secret, previous_until = now() + make_interval(secs => ${overlapMs / 1000}),
           secret = ${secret}, created_at = now()
     WHERE subscriber_id = ${subscriberId}::uuid
 RETURNING previous_until`;
  return { secret, previousUntil: overlapMs > 0 ? (rows[0]?.previous_until ?? null) : null };
}

// Standard Webhooks' form: whsec_ and the key's bytes in base64 (its libraries decode them so).
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** One webhook message: its id (the delivery's, kept by every retry) and its body. */
export interface WebhookMessage {
  id: string;
  body: string;
}

/**
 * The body of a job's webhook: the job resource, with the event's `type` first
 * (`compression_job.succeeded` or `compression_job.failed`), as Standard Webhooks' payloads name it.
 */
export const webhookBody = (job: JobResource): string =>
  JSON.stringify({ type: `compression_job.${job.status}`, ...job });

const invalidCallback = (why: string) => new HttpError(400, "invalid_callback_url", `callback_url ${why}.`);

/** The startup log's line when webhooks may call more than public hosts; null when they may not. */
export function webhookPolicyNotice(targets: WebhookTargets): string | null {
  if (targets === "loopback") {
    return "webhooks may call this machine (loopback: http://127.0.0.1, http://localhost) because NODE_ENV=development; set WEBHOOK_ALLOW_PRIVATE=false to refuse, or true to allow private networks too; never by default in production";
  }
  if (targets === "private") {
    return "webhooks may call loopback and private-network addresses (WEBHOOK_ALLOW_PRIVATE=true); never link-local or metadata ones";
  }
  return null;
}

// A developer's first webhook is a receiver on their own machine: the refusal names the setting.
const LOCAL_RECEIVERS =
  "; a receiver on this machine or a private network needs the service's WEBHOOK_ALLOW_PRIVATE=true " +
  "(loopback is allowed by default with NODE_ENV=development), never in production";

/** Checks a callback_url at acceptance; answers it normalised, or throws 400 invalid_callback_url. */
export function checkCallbackUrl(raw: string, targets: WebhookTargets): string {
  if (raw.length > MAX_URL_LENGTH) throw invalidCallback(`must be at most ${MAX_URL_LENGTH} characters`);
  const verdict = checkOutboundUrl(raw, targets);
  if ("url" in verdict) return verdict.url.toString();
  const hint = targets === "private" ? "" : LOCAL_RECEIVERS;
  switch (verdict.problem) {
    case "malformed":
      throw invalidCallback("is not an absolute URL");
    case "scheme":
      throw invalidCallback(`must be an https: URL${verdict.protocol === "http:" ? hint : ""}`);
    case "credentials":
      throw invalidCallback("must not carry credentials");
    case "host":
      throw invalidCallback(
        targets === "private" ? "must not name a link-local or metadata host" : `must name a public host${hint}`,
      );
  }
}

/** One signed POST; the status answered, or the reason there was none. */
export function callWebhook(
  url: string,
  message: WebhookMessage,
  secret: string | readonly string[],
  targets: WebhookTargets,
  resolver: Resolver = dnsLookup,
): Promise<{ status: number } | { error: string }> {
  const target = new URL(url);
  const client = target.protocol === "https:" ? https : http;
  // Checked again at each call: the URL was accepted under the policy of its day, and an address
  // literal is connected to without a lookup.
  const host = hostOf(target);
  if (!mayName(host, targets)) return Promise.resolve({ error: `${host} is not an allowed webhook target` });
  return new Promise((resolve) => {
    const request = client.request(
      target,
      {
        method: "POST",
        timeout: CALL_TIMEOUT_MS,
        // A connection of its own: each call resolves and checks afresh.
        agent: false,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(message.body),
          "User-Agent": "marketplace-webhooks/1",
          ...webhookHeaders(secret, message),
        },
        lookup: checkedLookup(targets, resolver),
      },
      (response) => {
        response.resume(); // the answer's body is not read
        resolve({ status: response.statusCode ?? 0 });
      },
    );
    request.on(
      "timeout",
      guarded("webhooks", () => request.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`))),
    );
    request.on(
      "error",
      guarded("webhooks", (error: Error) => resolve({ error: error.message.slice(0, 500) })),
    );
    request.end(message.body);
  });
}
