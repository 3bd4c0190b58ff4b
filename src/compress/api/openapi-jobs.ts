// The OpenAPI description of asynchronous jobs, direct uploads and webhook secrets (jobs.ts),
// merged into /v1/openapi.json by openapi.ts.
import { outputOptionFields } from "./openapi-options.ts";
import { reportProperty } from "./openapi-report.ts";
import { webhookSecretAnswer } from "./openapi-webhooks.ts";

type Json = Record<string, unknown>;

export interface Shared {
  error: (description: string, extra?: Json) => Json;
  retryAfter: Json;
  common: Record<string, Json>;
  profileField: Json;
}

const preferHeader = {
  name: "Prefer",
  in: "header",
  required: false,
  description:
    "`respond-async` (RFC 7240): answer 202 with Location as soon as the file is stored, and compress it as a job. Without it the call answers the result when the compression is done.",
  schema: { type: "string", examples: ["respond-async"] },
};

/** Idempotency-Key (idempotency.ts): a retry of the same request gets the first answer. */
export const idempotencyKeyHeader = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Up to 255 visible ASCII characters (a UUID is a good choice), unique per request you mean to make once. A retry with the same key and the same request (route, fields and file) within 24 hours gets the first answer again, status, body and headers, with `Idempotent-Replayed: true`, without running or charging again. The same key with another request: 409 idempotency_key_reused; while the first request still runs: 409 idempotency_key_in_use with Retry-After. Answers given before the body was read whole (401, 402, 413, 429, a file refused while uploading) and failures of ours (5xx) do not keep the key.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

const idempotencyConflicts =
  "idempotency_key_reused: the Idempotency-Key was used for another request in the last 24 hours; idempotency_key_in_use: a request with it still runs (Retry-After).";

const callbackField = {
  type: "string",
  format: "uri",
  maxLength: 2048,
  // An empty default rather than a sample address: Swagger UI fills a field without one with an
  // example URL, which a synchronous call (no Prefer: respond-async) refuses.
  default: "",
  description:
    "Only with `Prefer: respond-async`; leave it empty otherwise (a synchronous call refuses a callback_url: 400 unexpected_field). Called (POST, the job resource as body, signed; see the Job schema) when the job ends. https:// and a public host (private hosts only where the operator allows them; link-local and metadata hosts never).",
};

const retryAfterOptional = { "Retry-After": { schema: { type: "integer", minimum: 1 } } };

/** file_url (workflow/file-url.ts): the file by its address, fetched under the webhook address policy. */
export const fileUrlField = {
  type: "string",
  format: "uri",
  maxLength: 2048,
  description:
    "The PDF's address, instead of the file: https, a public host (never loopback, private, link-local or metadata addresses, checked again at connect time), at most 3 redirects, at most 300 MB, %PDF- within its first 1024 bytes; or an address this service signed for the same account (a result's url, a local upload_url), read from storage directly. Refused as 400 invalid_file_url (also an altered or expired signature) or file_url_forbidden (also another account's file), 413 file_url_too_large, 422 file_url_not_pdf, file_url_unreachable or file_url_timeout, never charged. Not with file or upload_id.",
};

/** The JSON body of POST /v1/compress or /v1/unlock naming the file by its address. */
export const fileUrlBody = (fields: Json, required: string[] = []) => ({
  type: "object",
  required: ["file_url", ...required],
  additionalProperties: false,
  properties: { file_url: fileUrlField, ...fields },
});

/** The JSON body of POST /v1/compress from a direct upload. */
export const directUploadBody = (profileField: Json, signaturesField: Json, retention: Json) => ({
  type: "object",
  required: ["upload_id"],
  additionalProperties: false,
  properties: {
    upload_id: { type: "string", format: "uuid", description: "From POST /v1/uploads, after the PUT." },
    retention,
    profile: profileField,
    signatures: signaturesField,
    ...outputOptionFields,
    callback_url: callbackField,
  },
});

/** A job's progress (Job.progress, and Compression.progress of a compression that is a job). */
export const progressSchema = {
  type: "object",
  required: ["pages_done", "pages_total"],
  additionalProperties: false,
  description:
    "How far the job is: pages done of the document's pages, as the engine reports them while it runs (OCR reports each page it has read; the pages it does not read count as done when it starts; without OCR the pages are done when the job ends). pages_total is null until the engine has opened the document (a queued job: 0 of null). A succeeded job has done them all.",
  properties: {
    pages_done: { type: "integer", minimum: 0 },
    pages_total: { type: ["integer", "null"], minimum: 0 },
  },
};

/**
 * A 202 with the job: asked for (Prefer: respond-async, Preference-Applied), or a synchronous call with
 * ocr past its limit (the body's async_reason; docs/compression-api.md#ocr-sync-limit).
 */
export const queuedAnswer = (description: string) => ({
  description,
  headers: {
    Location: { description: "/v1/jobs/{id}", schema: { type: "string" } },
    "Preference-Applied": {
      description: "Only when the client asked for a job (Prefer: respond-async).",
      schema: { type: "string", const: "respond-async" },
    },
  },
  content: { "application/json": { schema: { $ref: "#/components/schemas/Job" } } },
});

/** What /v1/compress answers beyond the synchronous call: the job's 202 and the direct upload's refusals. */
export function compressExtras(shared: Shared) {
  return {
    parameters: [preferHeader, idempotencyKeyHeader],
    callbackField,
    responses: {
      "202": queuedAnswer(
        "Accepted as a job (Prefer: respond-async), or a synchronous call with ocr whose file has more scanned pages than a synchronous call reads (async_reason says so); poll Location or wait for the webhook.",
      ),
      "404": shared.error("upload_not_found: no direct upload of this id is the subscriber's."),
      "409": shared.error(
        `upload_incomplete: nothing was PUT to the upload's URL yet; upload_used: already compressed (also when reused after its file was deleted); ${idempotencyConflicts}`,
        retryAfterOptional,
      ),
      "410": shared.error(
        "result_deleted: the kept answer of this Idempotency-Key named a result deleted since (on request, at the end of its retention, or after its first complete download). Not charged; a new key compresses again.",
      ),
    },
  };
}

export function jobPaths(shared: Shared, deleteJob: Json): Json {
  const { error, common, retryAfter } = shared;
  const keyed = {
    "401": common["401"],
    "429": common["429"],
    "503": error("rate_limit_unavailable or database_unavailable.", retryAfter),
  };
  return {
    "/v1/jobs/{id}": {
      get: {
        operationId: "getJob",
        tags: ["Jobs"],
        summary: "An asynchronous compression job",
        description: "Only to keys of the subscriber that made the job; to anyone else 404, as if it did not exist.",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": {
            description: "The job; while queued or running, Retry-After suggests when to ask again.",
            headers: { "Retry-After": { schema: { type: "integer", minimum: 1 } } },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Job" } } },
          },
          "404": error("not_found: no job with this id is this key's subscriber's."),
          ...keyed,
        },
      },
      delete: deleteJob,
    },
    "/v1/uploads": {
      post: {
        operationId: "createUpload",
        tags: ["Direct uploads"],
        summary: "A direct upload: a short-lived signed URL to PUT a file to",
        description:
          "PUT the PDF to upload_url with the headers given, then POST /v1/compress with {upload_id}. In production upload_url is Cloud Storage's (a V4 signed PUT whose signature covers the 300 MB limit in x-goog-content-length-range); on the embedded default it is this service's signed path /v1/uploads/content/{name}, which answers 200 {size}, 403 invalid_signature or url_expired (also once the upload was swept), 409 upload_used (the upload was already compressed: its address takes no more writes), 413 file_too_large, 422 not_a_pdf (no %PDF- in the first 1024 bytes). Refused with 402 when the month's quota is used up, as the compression would be.",
        parameters: [idempotencyKeyHeader],
        requestBody: {
          required: false,
          content: {
            "application/json": {
              schema: { type: "object", properties: { filename: { type: "string", maxLength: 255 } } },
            },
          },
        },
        responses: {
          "201": {
            description: "The upload and its URL.",
            content: { "application/json": { schema: { $ref: "#/components/schemas/DirectUpload" } } },
          },
          "400": error("invalid_json, invalid_filename or invalid_idempotency_key."),
          "402": common["402"],
          "409": error(idempotencyConflicts, retryAfterOptional),
          "413": error("body_too_large: the JSON body is over 16 KiB."),
          ...keyed,
        },
      },
    },
    "/v1/webhook-secret": {
      get: {
        operationId: "getWebhookSecret",
        tags: ["Webhooks"],
        summary: "The secret webhooks are signed with (created on first use), and the headers they carry",
        responses: { "200": webhookSecretAnswer, ...keyed },
      },
      post: {
        operationId: "rotateWebhookSecret",
        tags: ["Webhooks"],
        summary:
          "Rotate the webhook secret: the new one signs from now on, the old one beside it for the overlap window",
        responses: { "200": webhookSecretAnswer, ...keyed },
      },
    },
  };
}

export const jobSchemas = {
  Job: {
    type: "object",
    required: [
      "id",
      "object",
      "status",
      "profile",
      "options",
      "created_at",
      "started_at",
      "finished_at",
      "attempts",
      "compression_id",
      "progress",
    ],
    description:
      "A succeeded job also has the synchronous call's result fields (success, original_size, compressed_size, savings_percentage, url signed afresh at each read, expires_in, report); a failed one has error. Webhooks post this resource with the event's type first (type: compression_job.succeeded or compression_job.failed) and the headers of Standard Webhooks: webhook-id (the delivery's id, kept by its retries: drop duplicates by it), webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of '<id>.<timestamp>.<raw body>' keyed by the base64-decoded secret after whsec_); also Marketplace-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>' under the webhook secret>.",
    properties: {
      id: { type: "string", format: "uuid" },
      object: { type: "string", const: "compression_job" },
      status: { type: "string", enum: ["queued", "running", "succeeded", "failed"] },
      profile: { type: "string" },
      options: {
        type: "object",
        description:
          "What the job was asked besides the profile: signatures, and each option that was set (target_size, grayscale, max_image_ppi, remove_metadata, linearize), as the request named it; an option asked false is left out.",
        required: ["signatures"],
        additionalProperties: false,
        properties: {
          signatures: { type: "string", enum: ["refuse", "remove"] },
          ...Object.fromEntries(
            Object.entries(outputOptionFields).map(([name, field]) => [name, { type: field.type }]),
          ),
        },
      },
      created_at: { type: "string", format: "date-time" },
      started_at: { type: ["string", "null"], format: "date-time" },
      finished_at: { type: ["string", "null"], format: "date-time" },
      attempts: { type: "integer", minimum: 0, description: "Attempts started (a worker that died counts one)." },
      compression_id: {
        type: "string",
        format: "uuid",
        description: "Its compression (GET or DELETE /v1/compressions/{id}; the job's own id names it too).",
      },
      progress: progressSchema,
      deleted_at: {
        type: "string",
        format: "date-time",
        description:
          "A succeeded job whose result was deleted (on request, at the end of its retention, after its first download): no url.",
      },
      success: { type: "boolean", const: true },
      original_size: { type: "integer", minimum: 1 },
      compressed_size: { type: "integer", minimum: 1 },
      savings_percentage: { type: "number", minimum: 0, maximum: 100 },
      url: { type: "string", format: "uri" },
      expires_in: { type: "integer" },
      ...reportProperty,
      error: {
        type: "object",
        required: ["code", "message"],
        properties: { code: { type: "string" }, message: { type: "string" } },
      },
      async_reason: {
        type: "object",
        description:
          "Only on the 202 of a synchronous call (POST /v1/compress or /v1/unlock without Prefer: respond-async) queued as this job: ocr_page_limit, the file has more scanned pages to read with ocr (ocr_pages) than a synchronous call reads (sync_ocr_page_limit, COMPRESS_SYNC_OCR_MAX_PAGES, 5 by default). Nothing to upload again: the job runs with the same options, charged once. An unlock's job compresses the decrypted file.",
        required: ["code", "message", "ocr_pages", "sync_ocr_page_limit"],
        properties: {
          code: { type: "string", const: "ocr_page_limit" },
          message: { type: "string" },
          ocr_pages: { type: "integer", minimum: 1 },
          sync_ocr_page_limit: { type: "integer", minimum: 0 },
        },
      },
    },
  },
  DirectUpload: {
    type: "object",
    required: ["upload_id", "upload_url", "method", "headers", "max_bytes", "expires_at"],
    properties: {
      upload_id: { type: "string", format: "uuid" },
      upload_url: { type: "string", format: "uri" },
      method: { type: "string", const: "PUT" },
      headers: { type: "object", additionalProperties: { type: "string" }, description: "Send these with the PUT." },
      max_bytes: { type: "integer" },
      expires_at: { type: "string", format: "date-time" },
    },
  },
};
