// Webhook signatures in Stripe's style: the header `Marketplace-Signature: t=<unix seconds>,v1=<hex>`
// where v1 is HMAC-SHA256, under the subscriber's webhook secret, of `<t>.<the raw body>`. The
// timestamp is signed with the body, so a captured call cannot be replayed later than the
// receiver's tolerance (5 minutes by default). verifyWebhook is the helper docs/compression-api.md shows
// receivers (node:crypto only, nothing of this service).
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "Marketplace-Signature";

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
