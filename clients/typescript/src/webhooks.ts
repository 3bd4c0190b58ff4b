// Verifying the service's webhook calls, with the Web Crypto API (Node 20+, browsers, workers).
// A call carries Standard Webhooks' headers (standardwebhooks.com): webhook-id (the delivery's id,
// kept by its retries), webhook-timestamp and webhook-signature (`v1,<base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>">` keyed by the bytes of the secret after `whsec_`), and the service's
// older Marketplace-Signature (`t=<ts>,v1=<hex HMAC-SHA256 of "<t>.<body>">` keyed by the whole
// secret). Either is accepted; the first one present is checked.

/** The request's headers: a Headers object, or a plain object as Node's http and most frameworks give. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signed time may be from now. Default 300 s, as Standard Webhooks advises. */
  toleranceSeconds?: number;
  now?: number;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

async function hmac(key: Uint8Array<ArrayBuffer>, text: string): Promise<Uint8Array> {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(text)));
}

/** Compares without stopping at the first difference. */
function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

const fromBase64 = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (char) => char.charCodeAt(0));
const fromHex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));

const fresh = (timestamp: number, options: VerifyOptions) =>
  Number.isInteger(timestamp) &&
  Math.abs((options.now ?? Date.now()) / 1000 - timestamp) <= (options.toleranceSeconds ?? 300);

/**
 * True when the call is signed with `secret` at a time within the tolerance. `body` must be the
 * raw body as received (a string), before any JSON parsing.
 */
export async function verifyWebhook(
  body: string,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<boolean> {
  const id = header(headers, "webhook-id");
  const signatures = header(headers, "webhook-signature");
  if (id && signatures) {
    const timestamp = Number(header(headers, "webhook-timestamp"));
    if (!fresh(timestamp, options)) return false;
    const expected = await hmac(fromBase64(secret.replace(/^whsec_/, "")), `${id}.${timestamp}.${body}`);
    return signatures
      .split(" ")
      .some((entry) => entry.startsWith("v1,") && equal(fromBase64(entry.slice(3)), expected));
  }
  const parts = (header(headers, "marketplace-signature") ?? "").split(",").map((part) => part.trim().split("="));
  const timestamp = Number(parts.find(([key]) => key === "t")?.[1]);
  if (!fresh(timestamp, options)) return false;
  const expected = await hmac(encoder.encode(secret), `${timestamp}.${body}`);
  return parts.some(
    ([key, value]) => key === "v1" && /^[0-9a-f]{64}$/.test(value ?? "") && equal(fromHex(value!), expected),
  );
}
