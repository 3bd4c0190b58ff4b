// Where compression results live until they are downloaded: an interface with two
// implementations, Google Cloud Storage in production and a local directory by default.
export interface StoredObject {
  contentType: string;
  /** The file name a browser saves the download as. */
  downloadName: string;
}

export interface ObjectStorage {
  readonly kind: "gcs" | "local";
  /** Stores the file at path under name. */
  put(name: string, path: string, meta: StoredObject): Promise<void>;
  /** A URL that downloads the object until it expires. origin: the API's public origin (local only). */
  signedUrl(name: string, meta: StoredObject, expiresInSeconds: number, origin: string): Promise<string>;
  /** Deletes objects stored before the cutoff; returns how many. */
  deleteOlderThan(cutoff: Date): Promise<number>;
}

/** RFC 6266: an ASCII fallback plus the exact name in RFC 5987 encoding. */
export function contentDisposition(downloadName: string): string {
  const ascii = downloadName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(downloadName)}`;
}
