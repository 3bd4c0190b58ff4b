// What a request's body said, as one hash: its form fields (or JSON members) and its file's bytes'
// SHA-256, recorded by whoever read the body (the multipart reader, the JSON reader) against the
// request. A retry of the same request, whatever its multipart boundary, has the same digest; the
// Idempotency-Key check (../api/idempotency.ts) compares it.
import { createHash } from "node:crypto";

const digests = new WeakMap<object, string>();

/** Records the digest of a body read from `req`: its fields and, for an upload, its file's SHA-256. */
export function recordBodyDigest(
  req: object,
  body: { fields: Readonly<Record<string, unknown>>; fileSha256?: string },
): void {
  const fields = Object.keys(body.fields)
    .sort()
    .map((name) => [name, body.fields[name]]);
  const digest = createHash("sha256")
    .update(JSON.stringify({ fields, file: body.fileSha256 ?? null }))
    .digest("hex");
  digests.set(req, digest);
}

/** The digest of the body read from `req`, or undefined when nothing read it (whole). */
export const bodyDigestOf = (req: object): string | undefined => digests.get(req);
