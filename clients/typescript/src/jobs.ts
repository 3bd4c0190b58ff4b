// Asynchronous compression and direct upload with the compression client: submit a job
// (`Prefer: respond-async`), wait for it as the service asks (each poll's Retry-After), and send a
// large file straight to storage (POST /v1/uploads, PUT to its signed URL, then compress it by its
// upload_id). Functions over a CompressionClient, like catalogItems over a catalog client.
import { outputFields, uploadName } from "./compression.ts";
import type {
  CompressionClient,
  CompressionComponents,
  CompressionProfile,
  OutputOptions,
  UploadOptions,
} from "./compression.ts";
import { ApiError } from "./errors.ts";
import { retryAfterMs, sleep } from "./retry.ts";

export type CompressionJob = CompressionComponents["schemas"]["Job"];
export type DirectUpload = CompressionComponents["schemas"]["DirectUpload"];

export interface JobOptions extends UploadOptions {
  /** Where the job's end is POSTed, signed (verify it with verifyWebhook). */
  callbackUrl?: string;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** The wait between polls when an answer has no Retry-After. Default 2,000 ms. */
  fallbackPollMs?: number;
  /** Give up (throw) after this long. Default 15 minutes. */
  timeoutMs?: number;
}

const ASYNC = { prefer: "respond-async" };

/** Reads a typed call's result, or throws its documented error as an ApiError. */
function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new ApiError(result.response, result.error);
  return result.data;
}

/** POST /v1/compress with `Prefer: respond-async`: the queued job (202), retried on 429/503 as compress() is. */
export async function submitJob(client: CompressionClient, file: Blob, options: JobOptions = {}) {
  const fields: Record<string, string> = options.callbackUrl ? { callback_url: options.callbackUrl } : {};
  const result = await client.compress(file, { ...options, headers: ASYNC, fields });
  return dataOf(result as { data?: unknown; error?: unknown; response: Response }) as CompressionJob;
}

/**
 * Polls GET /v1/jobs/{id} until the job has succeeded or failed, waiting between polls what each
 * answer's Retry-After asks. Answers the finished job (a failed one has `error`); throws an ApiError
 * when a poll is refused, and when `timeoutMs` passes.
 */
export async function waitForJob(client: CompressionClient, id: string, options: WaitOptions = {}) {
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const result = await client.GET("/v1/jobs/{id}", {
      params: { path: { id } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const job = dataOf(result);
    if (job.status === "succeeded" || job.status === "failed") return job;
    const wait = retryAfterMs(result.response.headers.get("retry-after")) ?? options.fallbackPollMs ?? 2_000;
    if (Date.now() + wait > deadline) throw new Error(`job ${id} still ${job.status} after the wait allowed`);
    await sleep(wait, options.signal);
  }
}

export interface DirectUploadOptions {
  /** The name the result is downloaded under (`<name>-compressed.pdf`). */
  filename?: string;
  signal?: AbortSignal;
  /** The fetch for the PUT to the signed URL (storage, not the API). Default: the global fetch. */
  fetch?: typeof fetch;
}

/**
 * A direct upload: POST /v1/uploads, then the file PUT to its signed URL with the headers it names.
 * Answers the upload, whose upload_id compressUpload() takes.
 */
export async function uploadFile(client: CompressionClient, file: Blob, options: DirectUploadOptions = {}) {
  const upload = dataOf(
    await client.POST("/v1/uploads", {
      body: { filename: uploadName(file, options.filename) },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
  const put = await (options.fetch ?? fetch)(upload.upload_url, {
    method: upload.method,
    headers: upload.headers,
    body: file,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!put.ok) throw new ApiError(put, await put.json().catch(() => undefined));
  await put.body?.cancel().catch(() => undefined);
  return upload;
}

export interface CompressUploadOptions extends OutputOptions {
  profile?: CompressionProfile;
  /** A job (202) instead of the result (200). */
  async?: boolean;
  callbackUrl?: string;
  signal?: AbortSignal;
}

/** POST /v1/compress with `{upload_id}`: the typed result (or, with async, the 202's job). */
export function compressUpload(client: CompressionClient, uploadId: string, options: CompressUploadOptions = {}) {
  return compressJson(client, { upload_id: uploadId }, options);
}

/** POST /v1/compress with a JSON body: the file (its upload_id or file_url) and the options. */
function compressJson(
  client: CompressionClient,
  file: { upload_id: string } | { file_url: string },
  options: CompressUploadOptions,
) {
  return client.POST("/v1/compress", {
    body: {
      ...file,
      ...(options.profile ? { profile: options.profile } : {}),
      ...outputFields(options),
      ...(options.callbackUrl ? { callback_url: options.callbackUrl } : {}),
    },
    headers: { "content-type": "application/json", ...(options.async ? ASYNC : {}) },
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * POST /v1/compress with `{file_url}`: the service fetches the PDF from its https address (public
 * hosts only, at most 3 redirects, 300 MB) and compresses it; the typed result (or, with async, the
 * 202's job). A fetch that failed is a documented 4xx (invalid_file_url, file_url_forbidden,
 * file_url_too_large, file_url_not_pdf, file_url_unreachable, file_url_timeout), never charged.
 */
export function compressUrl(client: CompressionClient, fileUrl: string, options: CompressUploadOptions = {}) {
  return compressJson(client, { file_url: fileUrl }, options);
}

/** POST /v1/unlock with `{file_url, password}`: the PDF fetched as compressUrl() does, decrypted, compressed. */
export function unlockUrl(
  client: CompressionClient,
  fileUrl: string,
  password: string,
  options: Omit<CompressUploadOptions, "async" | "callbackUrl"> = {},
) {
  return client.POST("/v1/unlock", {
    body: {
      file_url: fileUrl,
      password,
      ...(options.profile ? { profile: options.profile } : {}),
      ...outputFields(options),
    },
    headers: { "content-type": "application/json" },
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
