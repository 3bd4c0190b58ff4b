// Webhook signatures in Stripe's style: the header `Marketplace-Signature: t=<unix seconds>,v1=<hex>`
// where v1 is HMAC-SHA256, under the subscriber's webhook secret, of `<t>.<the raw body>`. The
// timestamp is signed with the body, so a captured call cannot be replayed later than the
// receiver's tolerance (5 minutes by default). verifyWebhook is the helper docs/compression-api.md shows
// receivers (node:crypto only, nothing of this service).
//
// Each call also carries the three headers of Standard Webhooks (standardwebhooks.com, its spec.md):
// `webhook-id` (the delivery's id, the same on every retry of it, so a receiver drops duplicates),
// `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>">` keyed by the secret's bytes (the base64 after `whsec_`), so its
// libraries (`new Webhook(secret).verify(body, headers)`) verify our calls as they are.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "Marketplace-Signature";

/** The headers Standard Webhooks names, in the order GET /v1/webhook-secret lists them. */
export const STANDARD_HEADERS = { id: "webhook-id", timestamp: "webhook-timestamp", signature: "webhook-signature" };

/**
 * The headers of a webhook call: Standard Webhooks' three and our own signature, one timestamp for
 * all. With several secrets (the new one and, in a rotation's overlap window, the one it replaced)
 * each header carries one signature per secret, as both schemes allow: `webhook-signature` space-
 * separated `v1,<sig>` entries, `Marketplace-Signature` several `v1=` parts; a receiver with either
 * secret accepts the call.
 */
export function webhookHeaders(
  secrets: string | readonly string[],
  message: { id: string; body: string },
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const all = typeof secrets === "string" ? [secrets] : secrets;
  const standard = all.map((secret) => {
    // Buffer's base64 decoder reads both alphabets: secrets made before Standard Webhooks were base64url.
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    return `v1,${createHmac("sha256", key).update(`${message.id}.${timestamp}.${message.body}`).digest("base64")}`;
  });
  const ours = all.map((secret) => createHmac("sha256", secret).update(`${timestamp}.${message.body}`).digest("hex"));
  return {
    [STANDARD_HEADERS.id]: message.id,
    [STANDARD_HEADERS.timestamp]: String(timestamp),
    [STANDARD_HEADERS.signature]: standard.join(" "),
    [SIGNATURE_HEADER]: [`t=${timestamp}`, ...ours.map((v1) => `v1=${v1}`)].join(","),
  };
}

/** The header value for a body sent at `timestamp` (unix seconds). */
export function signWebhook(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${v1}`;
}

/**
 * True when `header` signs exactly `body` with `secret`, at a time within `toleranceSeconds` of
 * now. `body` must be the raw bytes received, before any JSON parsing.
 */
export function verifyWebhook(
  body: string | Buffer,
  header: string | undefined,
  secret: string,
  toleranceSeconds = 300,
  now = Date.now(),
): boolean {
  if (!header) return false;
  const parts = header.split(",").map((part) => part.trim().split("="));
  const timestamp = Number(parts.find(([key]) => key === "t")?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
  return parts.some(([key, value]) => {
    if (key !== "v1" || !value || !/^[0-9a-f]{64}$/.test(value)) return false;
    return timingSafeEqual(Buffer.from(value, "hex"), expected);
  });
}
