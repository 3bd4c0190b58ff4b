// Local stand-in for Cloud Storage: objects in a directory, downloaded through this service at
// /v1/files/<name> with an HMAC-signed, expiring query (expires, filename, signature), checked
// in constant time. The signing secret comes from DOWNLOAD_SIGNING_SECRET or is generated once
// and kept beside the objects, so URLs survive restarts.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, link, mkdir, open, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { BOOT_ID } from "../holds.ts";
import { INPUT_NAME, type ObjectStorage, type SignedObjectVerdict, type StoredObject } from "./storage.ts";

export const LOCAL_DOWNLOAD_PREFIX = "/v1/files/";
/** Where a direct upload is PUT on the embedded default (the signed path of POST /v1/uploads). */
export const LOCAL_UPLOAD_PREFIX = "/v1/uploads/content/";
const NAME = /^[A-Za-z0-9_-]{16,64}\.pdf$/;

export interface LocalStorage extends ObjectStorage {
  readonly kind: "local";
  /** Checks a download request; the file to send, or the reason it is refused. */
  verify(
    name: string,
    query: URLSearchParams,
    now?: Date,
  ): Promise<{ ok: true; file: string; downloadName: string } | { ok: false; reason: "invalid" | "expired" | "gone" }>;
  /**
   * Checks a signed upload path; the file to write (through `partial`, renamed to `file` once
   * whole), the size limit, or the reason it is refused.
   */
  verifyUpload(
    name: string,
    query: URLSearchParams,
    now?: Date,
  ): { ok: true; file: string; partial: string; maxBytes: number } | { ok: false; reason: "invalid" | "expired" };
  /** Removes the partial uploads of the processes of these boot ids (dead: boot.ts); returns how many. */
  removePartialUploads(bootIds: string[]): Promise<number>;
}

/** A partial upload's name: the input's, then the boot id of the process writing it. */
const partialName = (name: string, bootId: string) => `${name}.${bootId}.${randomBytes(6).toString("hex")}.part`;

async function signingKey(dir: string, configured: string | null): Promise<Buffer> {
  if (configured) return Buffer.from(configured);
  const file = path.join(dir, ".signing-key");
  try {
    return await readFile(file);
  } catch {
    const key = randomBytes(32);
    await writeFile(file, key, { mode: 0o600, flag: "wx" }).catch(() => undefined);
    return readFile(file);
  }
}

/** Why a signed address is refused (its name's form, its signature in constant time, its expiry), or null. */
function refusal(
  nameOk: boolean,
  query: URLSearchParams,
  expected: string,
  expires: string,
  now: Date,
): "invalid" | "expired" | null {
  const given = Buffer.from(query.get("signature") ?? "");
  const wanted = Buffer.from(expected);
  if (!nameOk || given.length !== wanted.length || !timingSafeEqual(given, wanted)) return "invalid";
  return Number(expires) * 1000 <= now.getTime() ? "expired" : null;
}

type LocalInputs = Pick<
  LocalStorage,
  "putInput" | "fetchInput" | "inputInfo" | "deleteInput" | "signedUploadUrl" | "verifyUpload" | "removePartialUploads"
>;

/** Job inputs and direct uploads in `inputs`, their upload addresses signed with `key`. */
function localInputs(inputs: string, key: Buffer): LocalInputs {
  const inputFile = (name: string) => {
    if (!INPUT_NAME.test(name)) throw new Error(`bad input name ${name}`);
    return path.join(inputs, name);
  };
  const signUpload = (name: string, expires: string, maxBytes: string) =>
    createHmac("sha256", key).update(`upload\n${name}\n${expires}\n${maxBytes}`).digest("base64url");
  return {
    async putInput(name, file) {
      await copyFile(file, inputFile(name));
    },
    async fetchInput(name, file) {
      // The same file system: a link costs nothing where a copy of 300 MB takes a while.
      await link(inputFile(name), file).catch(() => copyFile(inputFile(name), file));
    },
    async inputInfo(name, headBytes) {
      let handle;
      try {
        handle = await open(inputFile(name), "r");
      } catch {
        return null;
      }
      try {
        const { size } = await handle.stat();
        const head = Buffer.alloc(Math.min(size, headBytes));
        await handle.read(head, 0, head.length, 0);
        return { size, head };
      } finally {
        await handle.close();
      }
    },
    async deleteInput(name) {
      await rm(inputFile(name), { force: true });
    },
    signedUploadUrl(name, limits, origin) {
      const expires = String(Math.floor(Date.now() / 1000) + limits.expiresInSeconds);
      const max = String(limits.maxBytes);
      const query = new URLSearchParams({ expires, max, signature: signUpload(name, expires, max) });
      return Promise.resolve({
        url: `${origin}${LOCAL_UPLOAD_PREFIX}${name}?${query.toString()}`,
        headers: { "Content-Type": "application/pdf" },
      });
    },
    verifyUpload(name, query, now = new Date()) {
      const expires = query.get("expires") ?? "";
      const max = query.get("max") ?? "";
      const refused = refusal(INPUT_NAME.test(name), query, signUpload(name, expires, max), expires, now);
      if (refused) return { ok: false, reason: refused };
      const file = inputFile(name);
      return { ok: true, file, partial: path.join(inputs, partialName(name, BOOT_ID)), maxBytes: Number(max) };
    },
    async removePartialUploads(bootIds) {
      let removed = 0;
      for (const entry of await readdir(inputs)) {
        if (!entry.endsWith(".part") || !bootIds.some((bootId) => entry.includes(`.${bootId}.`))) continue;
        await rm(path.join(inputs, entry), { force: true });
        removed++;
      }
      return removed;
    },
  };
}

export async function createLocalStorage(dir: string, secret: string | null): Promise<LocalStorage> {
  await mkdir(dir, { recursive: true });
  const key = await signingKey(dir, secret);
  const sign = (name: string, expires: string, filename: string) =>
    createHmac("sha256", key).update(`${name}\n${expires}\n${filename}`).digest("base64url");

  const inputs = path.join(dir, "inputs");
  await mkdir(inputs, { recursive: true });

  const storage: LocalStorage = {
    kind: "local",
    ...localInputs(inputs, key),
    async put(name, file) {
      if (!NAME.test(name)) throw new Error(`bad object name ${name}`);
      await copyFile(file, path.join(dir, name));
    },
    signedUrl(name, meta: StoredObject, expiresInSeconds, origin) {
      const expires = String(Math.floor(Date.now() / 1000) + expiresInSeconds);
      const query = new URLSearchParams({ expires, filename: meta.downloadName });
      query.set("signature", sign(name, expires, meta.downloadName));
      return Promise.resolve(`${origin}${LOCAL_DOWNLOAD_PREFIX}${name}?${query.toString()}`);
    },
    async verify(name, query, now = new Date()) {
      const expires = query.get("expires") ?? "";
      const filename = query.get("filename") ?? "";
      const refused = refusal(NAME.test(name), query, sign(name, expires, filename), expires, now);
      if (refused) return { ok: false, reason: refused };
      const file = path.join(dir, name);
      try {
        await stat(file);
      } catch {
        return { ok: false, reason: "gone" }; // deleted on request, or at the end of its retention
      }
      return { ok: true, file, downloadName: filename };
    },
    async deleteResult(name) {
      if (!NAME.test(name)) throw new Error(`bad object name ${name}`);
      await rm(path.join(dir, name), { force: true });
    },
    async openResult(name) {
      if (!NAME.test(name)) return null;
      const file = path.join(dir, name);
      const info = await stat(file).catch(() => null);
      return info ? { size: info.size, stream: createReadStream(file) } : null;
    },
    async deleteOlderThan(cutoff) {
      let deleted = 0;
      for (const entry of await readdir(dir)) {
        if (!NAME.test(entry)) continue;
        const file = path.join(dir, entry);
        const info = await stat(file).catch(() => null);
        if (info && info.mtime < cutoff) {
          await rm(file, { force: true });
          deleted++;
        }
      }
      return deleted;
    },
    signedObject: (url, origin) => signedObject(storage, url, origin),
  };
  return storage;
}

/** An address of the API's origin under /v1/files/ or /v1/uploads/content/: its object, checked as a download or an upload is. */
async function signedObject(storage: LocalStorage, url: URL, origin: string): Promise<SignedObjectVerdict> {
  if (url.origin !== new URL(origin).origin) return null;
  const { pathname, searchParams } = url;
  if (pathname.startsWith(LOCAL_DOWNLOAD_PREFIX)) {
    const name = pathname.slice(LOCAL_DOWNLOAD_PREFIX.length);
    const verdict = await storage.verify(name, searchParams);
    // A result deleted since (reason "gone") is still the result the address names.
    return verdict.ok || verdict.reason === "gone" ? { kind: "result", name } : verdict.reason;
  }
  if (pathname.startsWith(LOCAL_UPLOAD_PREFIX)) {
    const name = pathname.slice(LOCAL_UPLOAD_PREFIX.length);
    const verdict = storage.verifyUpload(name, searchParams);
    return verdict.ok ? { kind: "input", name } : verdict.reason;
  }
  return null;
}
