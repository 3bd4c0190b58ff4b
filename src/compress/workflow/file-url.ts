// Files by URL: `file_url` instead of an uploaded file (POST /v1/compress, /v1/unlock, jobs). The
// service fetches it into the compression's workspace under the webhook address policy
// (../address-policy.ts): the URL checked as given (https, no credentials, a host the policy may
// name), every address its name resolves to checked by the connection's own lookup (no second lookup
// to rebind), each redirect followed by hand and checked again (at most 3). The body is streamed to the
// workspace's input with the upload's limits: its bytes counted and the fetch cut off past the
// largest upload, %PDF- sniffed on the first bytes (./pdf-signature.ts), a pause longer than the
// upload's idle limit (also while waiting for the answer) and a whole fetch longer than
// FILE_URL_TIMEOUT_SECONDS ended. Every refusal is the HttpError to answer (docs/compression-api.md,
// "Files by URL"); the caller releases the unit and removes the workspace.
import { lookup as dnsLookup } from "node:dns";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { HttpError, isStorageUnavailable, storageUnavailable } from "../../errors.ts";
import {
  ADDRESS_REFUSED,
  checkedLookup,
  checkOutboundUrl,
  hostOf,
  type Resolver,
  type WebhookTargets,
} from "../address-policy.ts";
import { pdfSniffer } from "./pdf-signature.ts";

/** Redirects followed, each checked as the URL was. */
export const MAX_REDIRECTS = 3;
export const MAX_FILE_URL_LENGTH = 2048;

export interface FileUrlPolicy {
  /** What the URL may reach beside public addresses: the webhooks' setting (WEBHOOK_ALLOW_PRIVATE). */
  targets: WebhookTargets;
  maxBytes: number;
  /** The longest wait for the answer, and the longest pause between two pieces of its body. */
  idleTimeoutMs: number;
  /** The whole fetch, redirects included. */
  totalTimeoutMs: number;
  /** The DNS lookup (tests answer what they choose); dns.lookup by default. */
  resolver?: Resolver | undefined;
}

export interface FetchedFile {
  size: number;
  /** The last segment of the URL's path, or "document.pdf". */
  filename: string;
}

export const invalidFileUrl = (why: string) => new HttpError(400, "invalid_file_url", `file_url ${why}.`);
export const forbidden = (why: string) =>
  new HttpError(
    400,
    "file_url_forbidden",
    `file_url ${why}: the service fetches files from public addresses only (never loopback, private, link-local or metadata ones).`,
  );
export const unreachable = (why: string) =>
  new HttpError(422, "file_url_unreachable", `file_url could not be fetched: ${why}. Nothing was charged.`);
const timedOut = (why: string) =>
  new HttpError(422, "file_url_timeout", `file_url could not be fetched in time: ${why}. Nothing was charged.`);
export const tooLarge = (maxBytes: number) =>
  new HttpError(
    413,
    "file_url_too_large",
    `The file at file_url is larger than ${maxBytes.toLocaleString("en")} bytes, the most one request may carry. Nothing was charged.`,
  );
export const notPdf = () =>
  new HttpError(
    422,
    "file_url_not_pdf",
    "The file at file_url is not a PDF: it has no %PDF- header in its first 1024 bytes. Nothing was charged.",
  );

/**
 * Checks a file_url as given (and each redirect's target): answers the URL, or throws 400
 * invalid_file_url (malformed, not https, credentials) or 400 file_url_forbidden (a host the policy
 * refuses by its name or address).
 */
export function checkFileUrl(raw: string, targets: WebhookTargets): URL {
  if (raw.length > MAX_FILE_URL_LENGTH) throw invalidFileUrl(`must be at most ${MAX_FILE_URL_LENGTH} characters`);
  const verdict = checkOutboundUrl(raw, targets);
  if ("url" in verdict) return verdict.url;
  switch (verdict.problem) {
    case "malformed":
      throw invalidFileUrl("is not an absolute URL");
    case "scheme":
      throw invalidFileUrl(
        verdict.protocol === "http:"
          ? "must be an https: URL (http: only from this machine in development, or with WEBHOOK_ALLOW_PRIVATE=true)"
          : "must be an https: URL",
      );
    case "credentials":
      throw invalidFileUrl("must not carry credentials");
    case "host": {
      const host = hostOf(new URL(raw));
      throw forbidden(`names ${host.slice(0, 100)}, which is not a public host`);
    }
  }
}

/** The name the client's file goes by: the URL path's last segment, else document.pdf. */
export function fileNameOf(url: URL): string {
  const last = path.posix.basename(url.pathname);
  let name: string;
  try {
    name = decodeURIComponent(last);
  } catch {
    name = last;
  }
  name = path.posix.basename(name.replace(/\\/g, "/")).slice(0, 255);
  return name === "" || name === "." || name === ".." ? "document.pdf" : name;
}

/**
 * Fetches file_url into `dest`; a refused, failed, cut or stalled fetch throws its HttpError (what
 * was written is removed), and `signal` (the client gone, the service shutting down) stops it with
 * its reason.
 */
export async function fetchFileUrl(
  raw: string,
  dest: string,
  policy: FileUrlPolicy,
  signal: AbortSignal,
): Promise<FetchedFile> {
  let url = checkFileUrl(raw, policy.targets);
  const overall = new AbortController();
  const deadline = setTimeout(
    () => overall.abort(timedOut(`the fetch took longer than ${policy.totalTimeoutMs / 1000} s`)),
    policy.totalTimeoutMs,
  );
  const stop = AbortSignal.any([signal, overall.signal]);
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await request(url, policy, stop);
      const location = response.headers.location;
      if (isRedirect(response.statusCode) && location) {
        response.destroy();
        if (redirects === MAX_REDIRECTS) throw unreachable(`more than ${MAX_REDIRECTS} redirects`);
        url = checkFileUrl(new URL(location, url).toString(), policy.targets);
        continue;
      }
      if (response.statusCode !== 200) {
        response.destroy();
        throw unreachable(`${url.host} answered ${response.statusCode ?? "nothing"}`);
      }
      const size = await receiveBody(response, dest, policy, stop);
      return { size, filename: fileNameOf(url) };
    }
  } catch (error) {
    await rm(dest, { force: true });
    throw stop.aborted ? (stop.reason as Error) : error;
  } finally {
    clearTimeout(deadline);
  }
}

const isRedirect = (status: number | undefined) => status !== undefined && [301, 302, 303, 307, 308].includes(status);

/** One GET on a connection of its own, checked at connect time; resolves with the answer's head. */
function request(url: URL, policy: FileUrlPolicy, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = client.request(url, {
      method: "GET",
      // A connection of its own: each request resolves and checks afresh.
      agent: false,
      lookup: checkedLookup(policy.targets, policy.resolver ?? dnsLookup),
      headers: { "User-Agent": "marketplace-file-url/1", Accept: "application/pdf, */*;q=0.1" },
      signal,
    });
    const idle = setTimeout(
      () => outgoing.destroy(timedOut(`${url.host} did not answer within ${policy.idleTimeoutMs / 1000} s`)),
      policy.idleTimeoutMs,
    );
    outgoing.on("response", (response) => {
      clearTimeout(idle);
      resolve(response);
    });
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(idle);
      reject(connectionError(url, error));
    });
    outgoing.end();
  });
}

/** What a failed connection answers: its refusal by the policy, our own timeout, or unreachable. */
function connectionError(url: URL, error: NodeJS.ErrnoException): Error {
  if (error instanceof HttpError || error.name === "AbortError") return error;
  if (error.code === ADDRESS_REFUSED) return forbidden(error.message);
  if (error.code === "ENOTFOUND" || error.code === "EAI_AGAIN") return unreachable(`${url.hostname} was not found`);
  return unreachable(`${url.host}: ${error.code ?? error.message}`.slice(0, 300));
}

/** Streams the answer's body to dest: counted (413 past maxBytes), sniffed, and stopped when it stalls. */
function receiveBody(
  response: IncomingMessage,
  dest: string,
  policy: FileUrlPolicy,
  signal: AbortSignal,
): Promise<number> {
  return receiveStream(response, Number(response.headers["content-length"]), dest, policy, signal);
}

/**
 * Streams a file's bytes to dest (an answer's body, or an object read from storage): refused at
 * once when its declared size is over maxBytes, counted (413 past maxBytes), sniffed (422 without
 * %PDF-), and stopped when no bytes come for idleTimeoutMs. Answers its size.
 */
export async function receiveStream(
  source: Readable,
  declared: number,
  dest: string,
  policy: Pick<FileUrlPolicy, "maxBytes" | "idleTimeoutMs">,
  signal: AbortSignal,
): Promise<number> {
  if (declared > policy.maxBytes) {
    source.destroy();
    throw tooLarge(policy.maxBytes);
  }
  let size = 0;
  const sniffer = pdfSniffer();
  const idle = setTimeout(
    () => source.destroy(timedOut(`no data arrived for ${policy.idleTimeoutMs / 1000} s after ${size} bytes`)),
    policy.idleTimeoutMs,
  );
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      idle.refresh();
      size += chunk.length;
      if (size > policy.maxBytes) return done(tooLarge(policy.maxBytes));
      if (sniffer.push(chunk) === "not_pdf") return done(notPdf());
      done(null, chunk);
    },
    flush(done) {
      done(size === 0 || sniffer.end() !== "pdf" ? notPdf() : null);
    },
  });
  try {
    await pipeline(source, check, createWriteStream(dest, { flags: "w", mode: 0o600 }), { signal });
  } catch (error) {
    if (error instanceof HttpError || signal.aborted) throw error;
    if (isStorageUnavailable(error)) throw storageUnavailable();
    throw unreachable(`the connection closed after ${size} bytes`);
  } finally {
    clearTimeout(idle);
  }
  return size;
}
