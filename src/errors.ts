// The errors of the service's HTTP surfaces, on the ground floor: this file imports nothing, so
// every layer (auth, graphql, rest, compress, dashboard, http) may use it without an import
// running back up. It holds the one registry of error codes (the contract: the tables of docs/ and both
// OpenAPI documents are generated from or tested against it), HttpError (which takes only a
// registered code), the error body, Retry-After, and the errors several layers answer alike.

/**
 * The surfaces that answer errors in the `{error: {code, message, request_id}}` shape (/graphql
 * only before an operation runs: its access gate, rate limit and dependency faults). `server`: the
 * HTTP server itself, on any path, before or around the routes (src/http/server.ts).
 */
export type Api = "catalog" | "compression" | "dashboard" | "graphql" | "mcp" | "server";

interface CodeEntry {
  /** The status each surface answers the code with (one code may differ between surfaces). */
  readonly status: Readonly<Partial<Record<Api, number>>>;
  readonly meaning: string;
}

const everywhere = (status: number) => ({
  catalog: status,
  compression: status,
  dashboard: status,
  graphql: status,
  mcp: status,
});

/**
 * Every error code of the catalog (/api/v1), the compression API (/v1) and the dashboard, with
 * the status each answers it with. `invalid_<parameter>` is a family: `invalid_` and the name of a
 * catalog query parameter (invalid_limit, invalid_q, …).
 */
export const ERROR_CODES = {
  "invalid_<parameter>": {
    status: { catalog: 400 },
    meaning:
      "the named query parameter is malformed, out of range, empty or repeated, e.g. invalid_limit, invalid_offset, invalid_q, invalid_work_model, invalid_updated_since.",
  },
  invalid_cursor: {
    status: { catalog: 400, compression: 400 },
    meaning:
      "the cursor was not issued by this API, was altered or cut short, belongs to another list or filter, or was given with an offset other than the one it stands for; start again from meta.self without cursor.",
  },
  unknown_parameter: {
    status: { catalog: 400, compression: 400 },
    meaning: "the route does not take a parameter of this name.",
  },
  since_expired: {
    status: { catalog: 410 },
    meaning:
      "the change feed's since is older than the changes kept (30 days); sync again from the list, then follow the feed from its next_since.",
  },
  not_found: {
    status: everywhere(404),
    meaning: "no public resource has this identifier, or no route has this path.",
  },
  method_not_allowed: {
    status: everywhere(405),
    meaning: "the path exists but not for this method; see the Allow header.",
  },
  rate_limited: {
    status: everywhere(429),
    meaning:
      "this client (the catalog: its IP; the compression API: its key) used up its requests for the window; retry after Retry-After seconds.",
  },
  internal_error: { status: everywhere(500), meaning: "an unexpected fault; quote request_id when reporting it." },
  database_unavailable: {
    status: everywhere(503),
    meaning: "the database cannot be reached; retry after Retry-After seconds.",
  },
  range_not_satisfiable: {
    status: { compression: 416 },
    meaning: "a download's Range starts past the end of the file (Content-Range says its size).",
  },
  storage_unavailable: {
    status: everywhere(503),
    meaning:
      "the service's disk or file storage is full or cannot take files now (nothing was kept or charged), or could not be reached to delete a result (nothing was marked deleted); retry after Retry-After seconds.",
  },
  rate_limit_unavailable: {
    status: everywhere(503),
    meaning: "the shared rate-limit store cannot be reached; retry after Retry-After seconds.",
  },
  shutting_down: {
    status: everywhere(503),
    meaning: "this instance is shutting down; retry the request (another instance answers it).",
  },

  invalid_profile: {
    status: { compression: 400 },
    meaning: "profile is not lossless, balanced or extreme, or was sent more than once.",
  },
  invalid_password: { status: { compression: 400 }, meaning: "password is too long or was sent more than once." },
  invalid_signatures: {
    status: { compression: 400 },
    meaning: "signatures is not remove, or was sent more than once.",
  },
  invalid_grayscale: {
    status: { compression: 400 },
    meaning: "grayscale is not true or false, was asked with the lossless profile, or was sent more than once.",
  },
  invalid_max_image_ppi: {
    status: { compression: 400 },
    meaning:
      "max_image_ppi is not a whole number from 36 to 2400, was asked with the lossless profile, or was sent more than once.",
  },
  invalid_remove_metadata: {
    status: { compression: 400 },
    meaning: "remove_metadata is not true or false, or was sent more than once.",
  },
  invalid_linearize: {
    status: { compression: 400 },
    meaning: "linearize is not true or false, or was sent more than once.",
  },
  invalid_ocr: {
    status: { compression: 400 },
    meaning: "ocr is not true or false, was asked with target_size, or was sent more than once.",
  },
  invalid_ocr_languages: {
    status: { compression: 400 },
    meaning:
      "ocr_languages names a language OCR does not read (eng, deu, fra, spa, por, ita), more than three or one twice, was sent without ocr=true, or more than once.",
  },
  invalid_target_size: {
    status: { compression: 400 },
    meaning:
      "target_size is not a whole number of bytes of at least 1024, was asked with the lossless profile, or was sent more than once.",
  },
  missing_file: { status: { compression: 400 }, meaning: "the form has no part named file." },
  too_many_files: { status: { compression: 400 }, meaning: "the form has more than one file." },
  unexpected_field: { status: { compression: 400 }, meaning: "the form has a field this endpoint does not take." },
  invalid_multipart: { status: { compression: 400 }, meaning: "the multipart body is malformed." },
  missing_password: { status: { compression: 400 }, meaning: "an unlock request has no password field." },
  missing_api_key: { status: { compression: 401 }, meaning: "no Authorization header." },
  malformed_api_key: {
    status: { compression: 401 },
    meaning: "the Authorization header does not hold a well-formed key.",
  },
  invalid_api_key: { status: { compression: 401 }, meaning: "the key is unknown or revoked." },
  plan_not_eligible: {
    status: { compression: 401, dashboard: 403 },
    meaning: "the key's subscriber is not on a plan that includes the API.",
  },
  quota_exceeded: {
    status: { compression: 402 },
    meaning: "the month's quota is used up; Retry-After and X-Quota-Reset say when it renews.",
  },
  invalid_signature: { status: { compression: 403 }, meaning: "a local download address was altered." },
  url_expired: { status: { compression: 403 }, meaning: "a local download address has expired." },
  result_deleted: {
    status: { compression: 410 },
    meaning:
      "the result was deleted: on request (DELETE), at the end of its retention, or after its first complete download (retention 0).",
  },
  compression_running: {
    status: { compression: 409 },
    meaning: "the compression is running; delete it once it has ended (Retry-After).",
  },
  invalid_retention: {
    status: { compression: 400 },
    meaning:
      "retention is not a whole number of seconds (0: until the first complete download), or was sent more than once.",
  },
  invalid_status: { status: { compression: 400 }, meaning: "status is not queued, running, succeeded or failed." },
  invalid_created_after: { status: { compression: 400 }, meaning: "created_after is not an RFC 3339 date-time." },
  invalid_created_before: { status: { compression: 400 }, meaning: "created_before is not an RFC 3339 date-time." },
  invalid_limit: { status: { compression: 400 }, meaning: "limit is not a whole number from 1 to 100." },
  upload_timeout: { status: { compression: 408 }, meaning: "no data arrived for the upload's idle time limit." },
  file_too_large: { status: { compression: 413 }, meaning: "the file is larger than the most one request may carry." },
  unsupported_media_type: {
    status: { compression: 415, dashboard: 415 },
    meaning: "the body is not of the media type the endpoint takes.",
  },
  not_a_pdf: { status: { compression: 422 }, meaning: "the file is not a PDF." },
  corrupted_pdf: { status: { compression: 422 }, meaning: "the PDF cannot be read." },
  encrypted_pdf: { status: { compression: 422 }, meaning: "the PDF is encrypted (use /v1/unlock)." },
  unsupported_pdf: { status: { compression: 422 }, meaning: "the PDF uses something the engine does not handle." },
  processing_timeout: {
    status: { compression: 422 },
    meaning: "processing took longer than the time limit for the file's size.",
  },
  processing_failed: {
    status: { compression: 422 },
    meaning: "processing exceeded the memory limit or failed.",
  },
  password_required: { status: { compression: 422 }, meaning: "unlock: the file needs a password to open." },
  incorrect_password: { status: { compression: 422 }, meaning: "unlock: the password does not open the file." },
  not_encrypted: { status: { compression: 422 }, meaning: "unlock: the file is not encrypted." },
  signed_document: {
    status: { compression: 422 },
    meaning:
      "the PDF is digitally signed (or certified) and any rewrite would break its signatures; send signatures=remove to compress it without them.",
  },
  target_unreachable: {
    status: { compression: 422 },
    meaning:
      "target_size cannot be reached while every page stays above the quality floor; the message gives the smallest size reached (not charged).",
  },
  busy: {
    status: { compression: 503 },
    meaning: "every compression slot and queue place is taken; retry after Retry-After.",
  },
  invalid_json: { status: { compression: 400 }, meaning: "a JSON body is not a JSON object." },
  invalid_upload_id: { status: { compression: 400 }, meaning: "upload_id is not a string." },
  invalid_callback_url: {
    status: { compression: 400 },
    meaning:
      "callback_url is not an https URL of a public host (http and private hosts only with WEBHOOK_ALLOW_PRIVATE; link-local and metadata hosts never).",
  },
  invalid_filename: { status: { compression: 400 }, meaning: "a direct upload's filename is not a short string." },
  invalid_file_url: {
    status: { compression: 400 },
    meaning:
      "file_url is not an absolute https URL without credentials (http only where WEBHOOK_ALLOW_PRIVATE or development allows it), is longer than 2048 characters, or was sent beside a file or an upload_id.",
  },
  file_url_forbidden: {
    status: { compression: 400 },
    meaning:
      "file_url names, resolves or redirects to an address the service does not fetch from: loopback, private, link-local, metadata or any other address that is not public (the webhook address policy).",
  },
  file_url_unreachable: {
    status: { compression: 422 },
    meaning:
      "file_url could not be fetched: the host was not found or refused the connection, the TLS certificate did not verify, the answer was not 200 (the message gives its status), more than 3 redirects, or the connection closed before the end of the file (not charged).",
  },
  file_url_timeout: {
    status: { compression: 422 },
    meaning:
      "file_url's server stopped sending for the upload's idle limit, or the whole fetch took longer than FILE_URL_TIMEOUT_SECONDS (not charged).",
  },
  file_url_too_large: {
    status: { compression: 413 },
    meaning: "the file at file_url is larger than the most one request may carry (300 MB; not charged).",
  },
  file_url_not_pdf: {
    status: { compression: 422 },
    meaning: "the file at file_url is not a PDF: no %PDF- within its first 1024 bytes (not charged).",
  },
  upload_not_found: { status: { compression: 404 }, meaning: "no direct upload with this id is the subscriber's." },
  upload_incomplete: { status: { compression: 409 }, meaning: "nothing was PUT to the direct upload's URL yet." },
  upload_used: { status: { compression: 409 }, meaning: "the direct upload was already compressed." },
  invalid_idempotency_key: {
    status: { compression: 400 },
    meaning: "the Idempotency-Key header is not 1 to 255 visible ASCII characters.",
  },
  idempotency_key_reused: {
    status: { compression: 409 },
    meaning:
      "this Idempotency-Key was used in the last 24 hours for another request (another route, fields or file); use a new key.",
  },
  idempotency_key_in_use: {
    status: { compression: 409 },
    meaning: "a request with this Idempotency-Key is still running; retry after Retry-After to get its answer.",
  },
  body_too_large: {
    status: { compression: 413, mcp: 413, graphql: 413 },
    meaning: "a JSON body is larger than the endpoint takes (16 KiB; /mcp and /graphql: 64 KiB).",
  },
  interrupted: {
    status: { compression: 500 },
    meaning: "an asynchronous job's worker stopped every attempt (a failed job's error; not charged).",
  },

  invalid_key_id: {
    status: { dashboard: 400 },
    meaning: "Try it: the key chosen is not an active key of the subscriber.",
  },
  signed_out: { status: { dashboard: 401 }, meaning: "the session has ended." },
  invalid_csrf_token: { status: { dashboard: 403 }, meaning: "the form expired or did not come from the dashboard." },
  cross_origin_request: { status: { dashboard: 403 }, meaning: "the form was sent from another site." },
  form_too_large: { status: { dashboard: 413 }, meaning: "the form is larger than 16 KiB." },
  not_served: { status: { dashboard: 503 }, meaning: "this instance does not serve the compression API." },

  missing_identity_token: {
    status: { graphql: 401 },
    meaning: "GRAPHQL_ACCESS is internal and the request carries no Google identity.",
  },
  invalid_identity_token: {
    status: { graphql: 401 },
    meaning: "the ID token or IAP assertion failed verification (signature, issuer, audience or expiry).",
  },
  identity_not_allowed: {
    status: { graphql: 403 },
    meaning: "the verified identity is not in an allowed domain or among the allowed service accounts.",
  },
  identity_keys_unavailable: {
    status: { graphql: 503 },
    meaning: "Google's signing keys could not be fetched to verify an identity; retry after Retry-After.",
  },

  origin_not_allowed: {
    status: { mcp: 403 },
    meaning: "/mcp: a browser page of an origin not in MCP_ALLOWED_ORIGINS (DNS rebinding and cross-site protection).",
  },
  host_not_allowed: {
    status: { mcp: 403 },
    meaning: "/mcp: the Host is not one it answers to (MCP_ALLOWED_HOSTS; on a loopback HOST, loopback names only).",
  },

  bad_request: {
    status: { server: 400 },
    meaning: "the request is not valid HTTP/1.1 (a malformed request line, header or chunk); the connection is closed.",
  },
  request_timeout: {
    status: { server: 408 },
    meaning:
      "the headers took longer than HEADERS_TIMEOUT_SECONDS, or the whole request longer than REQUEST_TIMEOUT_SECONDS.",
  },
  body_timeout: {
    status: { server: 408 },
    meaning: "no byte of the request body arrived for BODY_IDLE_TIMEOUT_SECONDS; the connection is closed.",
  },
  headers_too_large: {
    status: { server: 431 },
    meaning: "the request line and headers are larger than the server takes (16 KiB).",
  },
} as const satisfies Record<string, CodeEntry>;

type Registered = keyof typeof ERROR_CODES;
/** A member of the `invalid_<parameter>` family. */
export type ParameterErrorCode = `invalid_${string}`;
/** A code HttpError accepts: a registered one, or one of the `invalid_<parameter>` family. */
export type ErrorCode = Exclude<Registered, "invalid_<parameter>"> | ParameterErrorCode;

const PARAMETER_CODE = /^invalid_[a-z][a-z0-9_]*$/;

/** The registry's entry of a code (a family member's is the family's), or undefined. */
export function errorCodeEntry(code: string): CodeEntry | undefined {
  if (Object.hasOwn(ERROR_CODES, code)) return ERROR_CODES[code as Registered];
  return PARAMETER_CODE.test(code) ? ERROR_CODES["invalid_<parameter>"] : undefined;
}

/** True when the registry has `code` with `status` on some surface. */
export function isRegisteredError(code: string, status: number): boolean {
  const entry = errorCodeEntry(code);
  return entry !== undefined && Object.values(entry.status).includes(status);
}

/** The registry's codes of one surface (families by their pattern name), each with its status. */
export function errorCodesOf(api: Api): { code: string; status: number; meaning: string }[] {
  return Object.entries(ERROR_CODES as Record<string, CodeEntry>).flatMap(([code, entry]) => {
    const status = entry.status[api];
    return status === undefined ? [] : [{ code, status, meaning: entry.meaning }];
  });
}

/** Codes constructed against the registry (a cast can get one past the type): logged and kept. */
const unregistered: { status: number; code: string }[] = [];

/** The unregistered codes constructed since the last call, which forgets them. */
export function takeUnregisteredErrors(): { status: number; code: string }[] {
  return unregistered.splice(0);
}

export class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;
  /** False when code and status are not in the registry (the error middleware logs it). */
  readonly registered: boolean;
  constructor(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.headers = headers;
    this.registered = isRegisteredError(code, status);
    if (!this.registered) unregistered.push({ status, code });
  }
}

export function errorBody(code: ErrorCode, message: string, requestId?: string) {
  return { error: { code, message, ...(requestId ? { request_id: requestId } : {}) } };
}

/** The one writer of Retry-After: whole seconds, at least 1 (RFC 9110 §10.2.3). */
export function retryAfter(seconds: number): { "Retry-After": string } {
  return { "Retry-After": String(Math.max(1, Math.ceil(seconds))) };
}

/** How long a client should wait before retrying after a dependency fault. */
export const DEPENDENCY_RETRY_SECONDS = 5;

export const databaseUnavailable = (message = "The database is not reachable; retry shortly.") =>
  new HttpError(503, "database_unavailable", message, retryAfter(DEPENDENCY_RETRY_SECONDS));

// Errors of the file system that say "not now" rather than "never": a full disk or quota, too many
// open files, memory short. On Cloud Run the disk is memory, so a full one frees as requests end.
const STORAGE_UNAVAILABLE_CODES = new Set(["ENOSPC", "EDQUOT", "EMFILE", "ENFILE", "ENOMEM"]);

/** Whether `error` (or its cause) is a storage fault a client may retry: answered as storageUnavailable(). */
export function isStorageUnavailable(error: unknown): boolean {
  for (let depth = 0; error instanceof Error && depth < 4; depth++) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && STORAGE_UNAVAILABLE_CODES.has(code)) return true;
    error = error.cause;
  }
  return false;
}

export const storageUnavailable = () =>
  new HttpError(
    503,
    "storage_unavailable",
    "The service cannot store files right now (its disk is full); nothing was kept or charged. Retry shortly.",
    retryAfter(DEPENDENCY_RETRY_SECONDS),
  );

export const rateLimitUnavailable = () =>
  new HttpError(
    503,
    "rate_limit_unavailable",
    "Rate limiting is temporarily unavailable, so the request was not served. Retry shortly.",
    retryAfter(DEPENDENCY_RETRY_SECONDS),
  );

/** Another instance can answer at once: retry after a second. */
export const shuttingDown = () =>
  new HttpError(503, "shutting_down", "This instance is shutting down; retry the request.", retryAfter(1));
