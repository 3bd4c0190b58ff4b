// Direct uploads (POST /v1/uploads, then POST /v1/compress with {"upload_id"}): their rows and the
// checks of their files, below the routes, which only read the request and answer. An upload is
// the subscriber's own, checked again whatever stored its file (at most 300 MB, %PDF- in its first
// 1024 bytes), taken once, given back when its compression fails before it started, and tied to the
// compression that took it, so deleting that compression deletes the upload with it.
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { AuthenticatedKey } from "../../auth/authenticate.ts";
import { usedThisMonth } from "../../auth/quota.ts";
import type { Config } from "../../config/env.ts";
import { HttpError, isStorageUnavailable, storageUnavailable } from "../../errors.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { quotaExceeded } from "../compression.ts";
import type { LocalStorage } from "../storage/local.ts";
import { newObjectName, type ObjectStorage } from "../storage/storage.ts";
import { UUID } from "./compressions.ts";
import { UploadAborted } from "./failure.ts";
import { hasPdfHeader, notPdf, pdfSniffer, SNIFF_BYTES } from "./pdf-signature.ts";
import { tooLarge } from "./upload.ts";

interface UploadDeps {
  prisma: PrismaClient;
  storage: ObjectStorage;
  config: Pick<Config, "compress" | "jobs">;
}

/** A direct upload taken for a compression. */
export interface TakenUpload {
  id: string;
  objectName: string;
  filename: string;
  size: number;
}

const uploadUsed = () => new HttpError(409, "upload_used", "This upload was already compressed.");
const uploadNotFound = () =>
  new HttpError(404, "upload_not_found", "No direct upload with this id belongs to this API key's subscriber.");
const uploadUrlExpired = () =>
  new HttpError(403, "url_expired", "This upload address has expired; ask POST /v1/uploads for another.");

/** Checks a direct upload and marks it taken (once: a second request for it gets 409). */
export async function takeDirectUpload(
  deps: UploadDeps,
  key: Pick<AuthenticatedKey, "subscriberId">,
  uploadId: string,
): Promise<TakenUpload> {
  const row = UUID.test(uploadId)
    ? await deps.prisma.directUpload.findFirst({ where: { id: uploadId, subscriberId: key.subscriberId } })
    : null;
  if (!row) throw uploadNotFound();
  // Before the file: a used upload's file is gone (or its job's), which is not "incomplete".
  if (row.usedAt) throw uploadUsed();
  const info = await deps.storage.inputInfo(row.objectName, SNIFF_BYTES);
  if (!info) throw new HttpError(409, "upload_incomplete", "Nothing has been uploaded to this upload's URL yet.");
  if (info.size > deps.config.compress.maxUploadBytes) throw tooLarge(deps.config.compress.maxUploadBytes);
  if (info.size === 0) throw new HttpError(422, "not_a_pdf", "The file is empty.");
  if (!hasPdfHeader(info.head)) throw notPdf();
  const taken = await deps.prisma.directUpload.updateMany({
    where: { id: row.id, usedAt: null },
    data: { usedAt: new Date() },
  });
  if (taken.count !== 1) throw uploadUsed();
  return { id: row.id, objectName: row.objectName, filename: row.filename, size: info.size };
}

/** Not taken after all (its compression was refused before it started): the client may use it again. */
export async function giveBackUpload(prisma: PrismaClient, uploadId: string): Promise<void> {
  await prisma.directUpload.update({ where: { id: uploadId }, data: { usedAt: null, compressionId: null } });
}

/** Ties a taken upload to the compression that took it (deleted with it). */
export async function tieUpload(prisma: PrismaClient, uploadId: string, compressionId: string): Promise<void> {
  await prisma.directUpload.update({ where: { id: uploadId }, data: { compressionId } });
}

/** What POST /v1/uploads answers. */
export interface CreatedUpload {
  upload_id: string;
  upload_url: string;
  method: "PUT";
  headers: Record<string, string>;
  max_bytes: number;
  expires_at: string;
}

/**
 * A direct upload and its signed PUT URL, valid UPLOAD_URL_TTL_SECONDS. Refused (402) when the
 * month's quota is used up: the upload could not be compressed.
 */
export async function createDirectUpload(
  deps: UploadDeps,
  key: Pick<AuthenticatedKey, "id" | "subscriberId" | "monthlyQuota">,
  request: { filename: string | undefined; origin: string },
): Promise<CreatedUpload> {
  if ((await usedThisMonth(deps.prisma, key.subscriberId)) >= key.monthlyQuota) {
    throw quotaExceeded(key.monthlyQuota);
  }
  const filename = request.filename ?? "document.pdf";
  if (filename.length > 255) throw new HttpError(400, "invalid_filename", "filename is too long.");
  const { maxUploadBytes } = deps.config.compress;
  const ttl = deps.config.jobs.uploadUrlTtlSeconds;
  const objectName = newObjectName();
  const expiresAt = new Date(Date.now() + ttl * 1000);
  const row = await deps.prisma.directUpload.create({
    data: {
      subscriberId: key.subscriberId,
      apiKeyId: key.id,
      objectName,
      filename: path.basename(filename),
      expiresAt,
    },
  });
  const signed = await deps.storage.signedUploadUrl(
    objectName,
    { maxBytes: maxUploadBytes, expiresInSeconds: ttl },
    request.origin,
  );
  return {
    upload_id: row.id,
    upload_url: signed.url,
    method: "PUT",
    headers: signed.headers,
    max_bytes: maxUploadBytes,
    expires_at: expiresAt.toISOString(),
  };
}

/** A direct upload's address takes writes only while its upload is unused (and not yet swept). */
async function checkUploadOpen(prisma: PrismaClient, objectName: string): Promise<void> {
  const row = await prisma.directUpload.findUnique({ where: { objectName }, select: { usedAt: true } });
  if (!row) throw uploadUrlExpired();
  if (row.usedAt) throw uploadUsed();
}

/** A PUT to the local signed upload path: its address, declared length and body. */
export interface LocalPut {
  name: string;
  query: URLSearchParams;
  contentLength: number;
  body: Readable;
  /** Sends 100 Continue when the client waits for it, once the checks from the headers passed. */
  invite: () => void;
}

/**
 * The local signed upload path: the body streamed to the inputs directory under the signed size
 * limit, refused (and removed) past it or without %PDF- in its first 1024 bytes, and refused once
 * the upload was used (409 upload_used) or swept (403 url_expired). Answers the bytes written.
 */
export async function receiveLocalUpload(local: LocalStorage, prisma: PrismaClient, put: LocalPut): Promise<number> {
  const verdict = local.verifyUpload(put.name, put.query);
  if (!verdict.ok) {
    throw verdict.reason === "expired"
      ? uploadUrlExpired()
      : new HttpError(403, "invalid_signature", "This upload address is not valid.");
  }
  if (put.contentLength > verdict.maxBytes) throw tooLarge(verdict.maxBytes);
  await checkUploadOpen(prisma, put.name);
  put.invite();
  const part = verdict.partial;
  let size = 0;
  const sniffer = pdfSniffer();
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > verdict.maxBytes) return done(tooLarge(verdict.maxBytes));
      if (sniffer.push(chunk) === "not_pdf") return done(notPdf());
      done(null, chunk);
    },
  });
  try {
    await pipeline(put.body, check, createWriteStream(part, { flags: "wx", mode: 0o600 }));
    if (size === 0 || sniffer.end() !== "pdf") throw notPdf();
    await checkUploadOpen(prisma, put.name); // used while this body was on its way
    await rename(part, verdict.file);
  } catch (error) {
    await rm(part, { force: true });
    if (error instanceof HttpError) throw error;
    throw isStorageUnavailable(error) ? storageUnavailable() : new UploadAborted();
  }
  return size;
}

/** A direct upload by its object's name (a file_url that is its upload_url): whose it is, and its name. */
export function uploadOfObject(prisma: PrismaClient, objectName: string) {
  return prisma.directUpload.findUnique({ where: { objectName }, select: { subscriberId: true, filename: true } });
}
