// Personal access tokens for the compression API, shaped like GitHub's: a recognisable prefix,
// 178 random bits and a CRC32 checksum, all base62. The checksum lets a mistyped or truncated
// key be refused without a database query, and the prefix lets secret scanners find leaked keys.
// Only a hash is stored: a keyed HMAC when a pepper is configured, else SHA-256 (the token's
// entropy makes a slow hash unnecessary).
import { createHash, createHmac, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { API_KEY_PREFIX } from "../secret-shapes.ts";

const BODY_LENGTH = 30; // 30 base62 characters: 178 random bits
const CHECKSUM_LENGTH = 6; // base62 of a CRC32 (up to 4,294,967,295 < 62^6)
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: number, width: number): string {
  let out = "";
  for (let v = value; out.length < width; v = Math.floor(v / 62)) out = ALPHABET[v % 62]! + out;
  return out;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

const checksum = (body: string) => base62(crc32(body), CHECKSUM_LENGTH);

export interface NewApiKey {
  /** The secret, shown once. */
  token: string;
  /** Safe to show and log: identifies the key without revealing it. */
  prefix: string;
}

export function generateApiKey(): NewApiKey {
  const body = randomBase62(BODY_LENGTH);
  const token = `${API_KEY_PREFIX}${body}${checksum(body)}`;
  return { token, prefix: displayPrefix(token) };
}

export function displayPrefix(token: string): string {
  return token.slice(0, API_KEY_PREFIX.length + 6);
}

/** True when the token has the right shape and its checksum matches: worth a database lookup. */
export function isWellFormedApiKey(token: string): boolean {
  if (!SHAPE.test(token)) return false;
  const body = token.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH);
  return token.slice(-CHECKSUM_LENGTH) === checksum(body);
}

export function hashApiKey(token: string, pepper: string | null): string {
  return pepper
    ? createHmac("sha256", pepper).update(token).digest("hex")
    : createHash("sha256").update(token).digest("hex");
}
