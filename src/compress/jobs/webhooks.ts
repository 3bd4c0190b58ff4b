// Webhooks: when a job with a callback_url ends, its resource is POSTed there, signed with the
// subscriber's secret (signature.ts), and retried with exponential backoff until the receiver
// answers 2xx (at most MAX_ATTEMPTS calls over about a day). Deliveries are rows of
// `webhook_deliveries`, claimed like jobs (FOR UPDATE SKIP LOCKED plus a lease), so any instance
// sends them and a crash only delays one.
//
// SSRF: the URL is checked when the job is accepted (https only, no credentials, no private or
// reserved address literal), and the address it resolves to is checked again when each call
// connects (the check is the connection's own DNS lookup, so a name that resolves to a public
// address at acceptance and to 10.0.0.1 later is refused: no rebinding). Redirects are not
// followed. Outside production, WEBHOOK_ALLOW_PRIVATE lets tests call http://127.0.0.1.
import { randomBytes } from "node:crypto";
import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { HttpError } from "../../errors.ts";
import { signWebhook, SIGNATURE_HEADER } from "./signature.ts";

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

/** Replaces the subscriber's secret; calls from then on are signed with the new one. */
export async function rotateWebhookSecret(prisma: PrismaClient, subscriberId: string): Promise<string> {
  const secret = newSecret();
  await prisma.webhookSecret.upsert({
    where: { subscriberId },
    create: { subscriberId, secret },
    update: { secret, createdAt: new Date() },
  });
  return secret;
}

const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

// Addresses a webhook may never reach in production: this host, private networks, link-local
// (169.254.169.254 is the metadata server), carrier-grade NAT, benchmarking, multicast, reserved.
const FORBIDDEN = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 3],
] as const)
  FORBIDDEN.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  FORBIDDEN.addSubnet(net, bits, "ipv6");

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    // An IPv4-mapped address is judged as the IPv4 address it carries (a ::ffff:0:0/96 rule would
    // also match every plain IPv4 address in a BlockList).
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return !FORBIDDEN.check(mapped[1]!, "ipv4");
  }
  return !FORBIDDEN.check(address, family === 4 ? "ipv4" : "ipv6");
}

const invalidCallback = (why: string) => new HttpError(400, "invalid_callback_url", `callback_url ${why}.`);

/** Checks a callback_url at acceptance; answers it normalised, or throws 400 invalid_callback_url. */
export function checkCallbackUrl(raw: string, allowPrivate: boolean): string {
  if (raw.length > MAX_URL_LENGTH) throw invalidCallback(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidCallback("is not an absolute URL");
  }
  const allowed = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!allowed.includes(url.protocol)) throw invalidCallback(`must be an ${allowed.join(" or ")} URL`);
  if (url.username || url.password) throw invalidCallback("must not carry credentials");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!allowPrivate && (isIP(host) ? !isPublicAddress(host) : host === "localhost" || !host.includes("."))) {
    throw invalidCallback("must name a public host");
  }
  return url.toString();
}

/** A DNS lookup that refuses non-public addresses: the connection itself is checked. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0);
    const usable = addresses.filter((entry) => isPublicAddress(entry.address));
    if (usable.length === 0) {
      const refused = Object.assign(new Error(`${hostname} resolves to no public address`), { code: "EFORBIDDEN" });
      return callback(refused, "", 0);
    }
    if (options.all) return callback(null, usable, 0);
    return callback(null, usable[0]!.address, usable[0]!.family);
  });
};

/** One signed POST; the status answered, or the reason there was none. */
export function callWebhook(
  url: string,
  body: string,
  secret: string,
  allowPrivate: boolean,
): Promise<{ status: number } | { error: string }> {
  const target = new URL(url);
  const client = target.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const request = client.request(
      target,
      {
        method: "POST",
        timeout: CALL_TIMEOUT_MS,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(body),
          "User-Agent": "marketplace-webhooks/1",
          [SIGNATURE_HEADER]: signWebhook(secret, body),
        },
        ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        response.resume(); // the answer's body is not read
        resolve({ status: response.statusCode ?? 0 });
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`)));
    request.on("error", (error) => resolve({ error: error.message.slice(0, 500) }));
    request.end(body);
  });
}
