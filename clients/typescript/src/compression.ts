// The compression API (/v1): an openapi-fetch client typed by the generated paths, with the key in
// every request, Retry-After honoured on GET (/v1/usage), and compress()/unlock() for uploads.
//
// Uploads and retrying: POST is not idempotent, so the client's middleware never re-sends it. The
// upload helpers do retry a 429 or 503, by default, because the service documents both as
// refusals that charge nothing (the per-key limit is checked from the headers before the body is
// read; busy and shutting_down give the quota unit back), and because their file is a Blob: each
// attempt builds its form again from it, and fetch streams it from its source (for a file on
// disk, `fs.openAsBlob(path)`: a 300 MB upload never sits in memory, and can be sent again). A
// one-shot stream could be retried only by keeping a copy of up to 300 MB, so the API takes none.
// compress() sends an Idempotency-Key (one per call, the same on every attempt): a retry after an
// answer that was lost is then answered with the first result and charged once, so it is retried
// after a network error too.
import createClient, { type Client, type FetchResponse } from "openapi-fetch";
import type { components, paths } from "./generated/compression.ts";
import { retryMiddleware, withRetry, type RetryOptions } from "./retry.ts";

export type { components as CompressionComponents, paths as CompressionPaths } from "./generated/compression.ts";

export interface CompressionClientOptions {
  /** The service's origin, e.g. `https://pdf.example.com` (the paths start with /v1). */
  baseUrl: string;
  /** A personal access token (`mkp_…`); keep it out of source code. */
  apiKey: string;
  fetch?: (request: Request) => Promise<Response>;
  /** Retry-After handling on 429 and 503 (GET, and the upload helpers); `false` turns it off. */
  retry?: RetryOptions | false;
}

type CompressForm = paths["/v1/compress"]["post"]["requestBody"]["content"]["multipart/form-data"];
type UnlockForm = paths["/v1/unlock"]["post"]["requestBody"]["content"]["multipart/form-data"];
export type CompressionProfile = NonNullable<CompressForm["profile"]>;
type CompressionResult = components["schemas"]["CompressionResult"];
/**
 * compress() and unlock() never send `Prefer: respond-async`, so a success is the 200's result,
 * never the 202's job that POST /v1/compress also documents.
 */
type Synchronous<T> = T extends { error?: never } ? Omit<T, "data"> & { data: CompressionResult } : T;

/**
 * The options that shape the output, named as the engine names them (the API's fields in
 * snake_case: target_size, grayscale, max_image_ppi, remove_metadata, linearize, ocr, ocr_languages), typed
 * from the document.
 */
export interface OutputOptions {
  /** The most bytes the result may have (422 target_unreachable when the quality floor cannot reach it). */
  targetSize?: NonNullable<CompressForm["target_size"]>;
  /** Colour images and the pages' colours made grey (balanced and extreme). */
  grayscale?: NonNullable<CompressForm["grayscale"]>;
  /** The finest an image may stay drawn, in pixels per inch of the page (balanced and extreme). */
  maxImagePpi?: NonNullable<CompressForm["max_image_ppi"]>;
  /** Document information, XMP, thumbnails and private application data removed (every profile). */
  removeMetadata?: NonNullable<CompressForm["remove_metadata"]>;
  /** The result linearized for fast web view (every profile; report.linearization says if it could be). */
  linearize?: NonNullable<CompressForm["linearize"]>;
  /** An invisible text layer on the scanned pages (every profile; report.ocr says how many were read). */
  ocr?: NonNullable<CompressForm["ocr"]>;
  /** The languages the scans are read in (eng, deu, fra, spa, por, ita): ["eng"] unless told. */
  ocrLanguages?: string[];
  /** A signed document: refused (the default) or compressed with its signatures removed. */
  signatures?: NonNullable<CompressForm["signatures"]>;
  /**
   * Seconds the result is kept, then deleted (0: until its first complete download); left out, the
   * account's default (dashboard, Settings → Webhooks), at most the service's maximum.
   */
  retention?: NonNullable<CompressForm["retention"]>;
}

type OutputFields = Pick<
  CompressForm,
  | "target_size"
  | "grayscale"
  | "max_image_ppi"
  | "remove_metadata"
  | "linearize"
  | "ocr"
  | "ocr_languages"
  | "signatures"
  | "retention"
>;

/** The API's fields of the options given (those left out are not sent). */
export function outputFields(options: OutputOptions): OutputFields {
  const fields: OutputFields = {
    target_size: options.targetSize,
    grayscale: options.grayscale,
    max_image_ppi: options.maxImagePpi,
    remove_metadata: options.removeMetadata,
    linearize: options.linearize,
    ocr: options.ocr,
    ocr_languages: options.ocrLanguages?.join("+"),
    signatures: options.signatures,
    retention: options.retention,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

export interface UploadOptions extends OutputOptions {
  profile?: CompressionProfile;
  /**
   * The file's name, which names the result (`scan.pdf` → `scan-compressed.pdf`). Default: a File's
   * own name; a Blob has none (`fs.openAsBlob`), so openFile() (files.ts) gives one with its name.
   */
  filename?: string;
  /** Also ends a wait for Retry-After. */
  signal?: AbortSignal;
  /** This call's retrying, instead of the client's; `false`: none. */
  retry?: RetryOptions | false;
  /**
   * compress() (and submitJob()) only: sent as `Idempotency-Key` on every attempt of this call; a new
   * UUID by default. The service answers a retry of the same request with the first answer, run and
   * charged once, so the call is also retried after a network error (no answer), not only 429/503.
   */
  idempotencyKey?: string;
}

/** What submitJob() (jobs.ts) adds to an upload: the preference and the job's fields. */
export interface JobUpload extends UploadOptions {
  headers?: Record<string, string>;
  fields?: Record<string, string>;
}

type FormSerializer = (fields: Record<string, unknown>) => FormData;
type UploadInit = { bodySerializer: FormSerializer; signal?: AbortSignal; headers?: Record<string, string> };

/** The name a file is uploaded under: the one given, a File's own, else `document.pdf`. */
export function uploadName(file: Blob, filename?: string): string {
  return filename ?? (file instanceof File && file.name ? file.name : "document.pdf");
}

/**
 * The multipart form of an upload, its file under `filename` (see uploadName). (Its type takes any
 * body of the two routes, JSON included, as openapi-fetch asks of a route with two media types; the
 * client sends it forms only.)
 */
function formData(filename: string | undefined): FormSerializer {
  return (fields) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      if (value instanceof Blob) form.append(name, value, uploadName(value, filename));
      else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
        form.append(name, String(value));
      }
    }
    return form;
  };
}

/** What compress() and unlock() answer: openapi-fetch's `{data}` or `{error}`, beside the response. */
export type UploadResponse<P extends "/v1/compress" | "/v1/unlock"> = FetchResponse<
  paths[P]["post"],
  object,
  `${string}/${string}`
>;

export interface CompressionClient extends Client<paths> {
  /** POST /v1/compress: the typed result or error, retried on 429/503 (see the file's header). */
  compress(file: Blob, options?: JobUpload): Promise<Synchronous<UploadResponse<"/v1/compress">>>;
  /** POST /v1/unlock: decrypts with the user or owner password, then compresses. */
  unlock(file: Blob, password: string, options?: UploadOptions): Promise<UploadResponse<"/v1/unlock">>;
}

export function createCompressionClient(options: CompressionClientOptions): CompressionClient {
  const client: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: { authorization: `Bearer ${options.apiKey}`, accept: "application/json" },
  });
  // Never replays a POST itself: that would keep a copy of the body (up to 300 MB) in memory.
  if (options.retry !== false) client.use(retryMiddleware({ ...options.retry, nonIdempotent: false }));
  /** Sends an upload built afresh by post() on each attempt, retried as this call or the client says. */
  const upload = <T extends { response: Response }>(
    call: JobUpload,
    post: (init: UploadInit) => Promise<T>,
    idempotencyKey?: string,
  ) => {
    const chosen = call.retry ?? options.retry ?? {};
    const headers = { ...call.headers, ...(idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {}) };
    const init = {
      bodySerializer: formData(call.filename),
      ...(call.signal ? { signal: call.signal } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
    return withRetry(() => post(init), chosen === false ? { retries: 0 } : chosen, {
      method: "POST",
      signal: call.signal ?? null,
      safe: idempotencyKey !== undefined,
    });
  };

  return {
    ...client,
    compress(file: Blob, call: JobUpload = {}) {
      const profile = call.profile ? { profile: call.profile } : {};
      const body: CompressForm = { file, ...profile, ...outputFields(call), ...call.fields };
      const key = call.idempotencyKey ?? crypto.randomUUID();
      const sent = upload(call, (init) => client.POST("/v1/compress", { body, ...init }), key);
      return sent as Promise<Synchronous<UploadResponse<"/v1/compress">>>;
    },
    unlock(file: Blob, password: string, call: UploadOptions = {}) {
      const profile = call.profile ? { profile: call.profile } : {};
      const body: UnlockForm = { file, password, ...profile, ...outputFields(call) };
      return upload(call, (init) => client.POST("/v1/unlock", { body, ...init }));
    },
  };
}
