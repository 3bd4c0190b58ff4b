// Where compression results live until they are downloaded: an interface with two
// implementations, Google Cloud Storage in production and a local directory by default.
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";

/** A new object's name: 144 random bits, not to be guessed. */
export const newObjectName = () => `${randomBytes(18).toString("base64url")}.pdf`;

export interface StoredObject {
  contentType: string;
  /** The file name a browser saves the download as. */
  downloadName: string;
}

/** An object named by an address this storage signed (a file_url the service reads itself). */
export interface SignedObject {
  /** A result (downloaded by its url), or a direct upload's input (its upload_url, local storage). */
  kind: "result" | "input";
  name: string;
}

/** What an address is to the storage: an object it signed, a signature refused, or none of its own (null). */
export type SignedObjectVerdict = SignedObject | "invalid" | "expired" | null;

export interface ObjectStorage {
  readonly kind: "gcs" | "local";
  /** Stores the file at path under name. */
  put(name: string, path: string, meta: StoredObject): Promise<void>;
  /** A URL that downloads the object until it expires. origin: the API's public origin (local only). */
  signedUrl(name: string, meta: StoredObject, expiresInSeconds: number, origin: string): Promise<string>;
  /**
   * Whether url is an address this storage signed: a result's download url (local: /v1/files/… on
   * the API's origin; Cloud Storage: the bucket's V4 signed url, its signature computed again), or
   * locally a direct upload's upload_url. The object it names, "invalid" or "expired" when it is
   * such an address whose signature does not hold, null when it is not one. origin: the API's
   * public origin (local only).
   */
  signedObject(url: URL, origin: string): Promise<SignedObjectVerdict>;
  /** Deletes objects stored before the cutoff; returns how many. */
  deleteOlderThan(cutoff: Date): Promise<number>;
  /** Deletes one result now (nothing when it is already gone). */
  deleteResult(name: string): Promise<void>;
  /**
   * Reads a result through this service (a download kept until its first complete read): its size and
   * bytes, or null when it is gone.
   */
  openResult(name: string): Promise<{ size: number; stream: Readable } | null>;

  // Inputs of asynchronous jobs and direct uploads, kept apart from results (`inputs/` in the
  // bucket, a subdirectory locally) until their job has ended.
  /** Stores an input from a local file. */
  putInput(name: string, path: string): Promise<void>;
  /** Copies an input to a local file (a hard link where it is local). */
  fetchInput(name: string, path: string): Promise<void>;
  /** An input's size and first bytes (for the %PDF- check), or null when nothing was uploaded. */
  inputInfo(name: string, headBytes: number): Promise<{ size: number; head: Buffer } | null>;
  deleteInput(name: string): Promise<void>;
  /**
   * A URL a client PUTs an input to until it expires (a V4 signed PUT on Cloud Storage, this
   * service's signed upload path locally), and the headers the PUT must carry.
   */
  signedUploadUrl(
    name: string,
    limits: { maxBytes: number; expiresInSeconds: number },
    origin: string,
  ): Promise<{ url: string; headers: Record<string, string> }>;
}

/** The name of a job's input: a random 144-bit name, like results. */
export const INPUT_NAME = /^[A-Za-z0-9_-]{16,64}\.pdf$/;

/** RFC 6266: an ASCII fallback plus the exact name in RFC 5987 encoding. */
export function contentDisposition(downloadName: string): string {
  const ascii = downloadName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(downloadName)}`;
}
