// Verifies a Cloud Storage V4 signed URL from the URL alone, per Google's published algorithm
// (canonical request, string to sign, RSA-SHA256), with no library code: the check the tests
// hold our signed URLs to, and the check the fake GCS applies before serving a download.
import { createHash, verify, type KeyObject } from "node:crypto";

const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface V4Verdict {
  ok: boolean;
  reason?: string;
  email?: string;
  expiresSeconds?: number;
}

export function verifyV4SignedUrl(signedUrl: string, publicKey: KeyObject, nowMs = Date.now()): V4Verdict {
  const url = new URL(signedUrl);
  const get = (k: string) => url.searchParams.get(k) ?? "";
  if (get("X-Goog-Algorithm") !== "GOOG4-RSA-SHA256") return { ok: false, reason: "algorithm" };
  const [email = "", ...scopeParts] = get("X-Goog-Credential").split("/");
  const scope = scopeParts.join("/");
  const date = get("X-Goog-Date");
  if (!scope.startsWith(`${date.slice(0, 8)}/auto/storage/goog4_request`)) return { ok: false, reason: "scope" };
  const signedAt = Date.UTC(
    +date.slice(0, 4),
    +date.slice(4, 6) - 1,
    +date.slice(6, 8),
    +date.slice(9, 11),
    +date.slice(11, 13),
    +date.slice(13, 15),
  );
  const expiresSeconds = Number(get("X-Goog-Expires"));
  if (!(nowMs >= signedAt - 60_000 && nowMs < signedAt + expiresSeconds * 1000)) {
    return { ok: false, reason: "expired", email, expiresSeconds };
  }
  const signedHeaders = get("X-Goog-SignedHeaders").split(";");
  // Production URLs carry no port; the client signs the host name alone (a local endpoint's port
  // is left out too), so compare against that.
  const headers: Record<string, string> = { host: url.hostname };
  const canonicalHeaders = signedHeaders.map((h) => `${h}:${headers[h] ?? ""}\n`).join("");
  const canonicalQuery = [...url.searchParams.entries()]
    .filter(([k]) => k !== "X-Goog-Signature")
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonicalRequest = [
    "GET",
    url.pathname,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders.join(";"),
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  const stringToSign = [
    "GOOG4-RSA-SHA256",
    date,
    scope,
    createHash("sha256").update(canonicalRequest).digest("hex"),
  ].join("\n");
  const ok = verify("RSA-SHA256", Buffer.from(stringToSign), publicKey, Buffer.from(get("X-Goog-Signature"), "hex"));
  return ok ? { ok, email, expiresSeconds } : { ok, reason: "signature", email, expiresSeconds };
}
