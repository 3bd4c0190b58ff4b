// Google Cloud Storage: the object is uploaded from the temporary file (streamed, resumable for
// large files) with its content type and download name, and handed out as a V4 signed URL.
// Credentials come from the environment as usual for Google's client (on Cloud Run: the service
// account, which then signs through IAM signBlob and needs roles/iam.serviceAccountTokenCreator
// on itself). Objects are deleted by a bucket lifecycle rule (docs/deployment.md); the sweep
// here is a fallback.
import { timingSafeEqual } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { Storage, type Bucket, type StorageOptions } from "@google-cloud/storage";
import { contentDisposition, type ObjectStorage, type SignedObjectVerdict } from "./storage.ts";

export interface GcsOptions {
  bucket: string;
  apiEndpoint: string | null;
  projectId: string | null;
  /** Explicit credentials (tests); otherwise Application Default Credentials. */
  credentials?: { client_email: string; private_key: string };
}

// Files at or under this size go up in one request; larger ones resumably.
const SINGLE_REQUEST_MAX = 8 * 1024 * 1024;
// Where inputs of asynchronous jobs and direct uploads live in the bucket.
const INPUTS = "inputs/";
const PDF = "application/pdf";
// Where signed URLs point without a custom endpoint.
const GOOGLE = "https://storage.googleapis.com";

/** X-Goog-Date's basic ISO 8601 (20261205T142000Z) as a Date, or null. */
function googDate(value: string | null): Date | null {
  const parts = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? "");
  if (!parts) return null;
  const [year = 0, month = 1, day, hours, minutes, seconds] = parts.slice(1).map(Number);
  return new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
}

/**
 * A result's V4 signed URL (path style, /<bucket>/<name>, as signedUrl makes it): its signature
 * computed again with the service account from the URL's own date, lifetime and response
 * parameters, and compared in constant time (RSA PKCS#1 v1.5 signatures are deterministic). An
 * upload's signed PUT (inputs/) is not read this way: it is fetched as any address would be.
 */
async function signedResult(bucket: Bucket, endpoint: string, url: URL): Promise<SignedObjectVerdict> {
  const prefix = `/${bucket.name}/`;
  if (url.origin !== new URL(endpoint).origin || !url.pathname.startsWith(prefix)) return null;
  const name = decodeURIComponent(url.pathname.slice(prefix.length));
  if (name.startsWith(INPUTS) || !url.searchParams.has("X-Goog-Signature")) return null;
  const query = url.searchParams;
  const signedAt = googDate(query.get("X-Goog-Date"));
  const lifetime = Number(query.get("X-Goog-Expires"));
  if (!signedAt || !Number.isInteger(lifetime) || lifetime <= 0 || lifetime > 7 * 86_400) return "invalid";
  const expires = signedAt.getTime() + lifetime * 1000;
  if (expires <= Date.now()) return "expired";
  const [again] = await bucket.file(name).getSignedUrl({
    version: "v4",
    action: "read",
    accessibleAt: signedAt,
    expires,
    ...(query.has("response-content-disposition")
      ? { responseDisposition: query.get("response-content-disposition")! }
      : {}),
    ...(query.has("response-content-type") ? { responseType: query.get("response-content-type")! } : {}),
  });
  const given = Buffer.from(query.get("X-Goog-Signature") ?? "");
  const wanted = Buffer.from(new URL(again).searchParams.get("X-Goog-Signature") ?? "");
  const same = given.length === wanted.length && timingSafeEqual(given, wanted);
  return same ? { kind: "result", name } : "invalid";
}

export function createGcsStorage(options: GcsOptions): ObjectStorage {
  const storageOptions: StorageOptions = {
    ...(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {}),
    ...(options.projectId ? { projectId: options.projectId } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  };
  const bucket = new Storage(storageOptions).bucket(options.bucket);
  return {
    kind: "gcs",
    async put(name, file, meta) {
      const { size } = await stat(file);
      await pipeline(
        createReadStream(file),
        bucket.file(name).createWriteStream({
          resumable: size > SINGLE_REQUEST_MAX,
          contentType: meta.contentType,
          metadata: { contentDisposition: contentDisposition(meta.downloadName) },
        }),
      );
    },
    async signedUrl(name, meta, expiresInSeconds) {
      const [url] = await bucket.file(name).getSignedUrl({
        version: "v4",
        action: "read",
        expires: Date.now() + expiresInSeconds * 1000,
        responseDisposition: contentDisposition(meta.downloadName),
        responseType: meta.contentType,
      });
      return url;
    },
    async deleteResult(name) {
      await bucket.file(name).delete({ ignoreNotFound: true });
    },
    async openResult(name) {
      const object = bucket.file(name);
      const [exists] = await object.exists();
      if (!exists) return null;
      const [metadata] = await object.getMetadata();
      return { size: Number(metadata.size ?? 0), stream: object.createReadStream({ validation: false }) };
    },
    ...gcsInputs(bucket),
    signedObject: (url) => signedResult(bucket, options.apiEndpoint ?? GOOGLE, url),
    async deleteOlderThan(cutoff) {
      const [files] = await bucket.getFiles({ prefix: "" });
      let deleted = 0;
      for (const file of files) {
        const created = file.metadata.timeCreated ? new Date(file.metadata.timeCreated) : null;
        if (created && created < cutoff) {
          await file.delete({ ignoreNotFound: true });
          deleted++;
        }
      }
      return deleted;
    },
  };
}

/** Job inputs and direct uploads under inputs/ in the bucket; their PUT URLs V4-signed. */
function gcsInputs(
  bucket: Bucket,
): Pick<ObjectStorage, "putInput" | "fetchInput" | "inputInfo" | "deleteInput" | "signedUploadUrl"> {
  return {
    async putInput(name, file) {
      const { size } = await stat(file);
      await pipeline(
        createReadStream(file),
        bucket.file(INPUTS + name).createWriteStream({ resumable: size > SINGLE_REQUEST_MAX, contentType: PDF }),
      );
    },
    async fetchInput(name, file) {
      await pipeline(bucket.file(INPUTS + name).createReadStream({ validation: false }), createWriteStream(file));
    },
    async inputInfo(name, headBytes) {
      const object = bucket.file(INPUTS + name);
      const [exists] = await object.exists();
      if (!exists) return null;
      const [metadata] = await object.getMetadata();
      const size = Number(metadata.size ?? 0);
      if (size === 0) return { size, head: Buffer.alloc(0) };
      const [head] = await object.download({ start: 0, end: Math.min(size, headBytes) - 1, validation: false });
      return { size, head };
    },
    async deleteInput(name) {
      await bucket.file(INPUTS + name).delete({ ignoreNotFound: true });
    },
    async signedUploadUrl(name, limits) {
      // The size limit travels in the signature: Cloud Storage refuses a PUT whose body is outside
      // x-goog-content-length-range, and the client must send that header as signed.
      const headers = { "Content-Type": PDF, "x-goog-content-length-range": `0,${limits.maxBytes}` };
      const [url] = await bucket.file(INPUTS + name).getSignedUrl({
        version: "v4",
        action: "write",
        expires: Date.now() + limits.expiresInSeconds * 1000,
        contentType: PDF,
        extensionHeaders: { "x-goog-content-length-range": headers["x-goog-content-length-range"] },
      });
      return { url, headers };
    },
  };
}
