// The OpenAPI 3.1 description of the compression API (/v1), served at /v1/openapi.json. The
// statuses and codes are the ones src/compress/api/routes.ts and upload.ts answer; the tests
// validate responses against this document.
import { surfaceLinks } from "../../http/root.ts";
import { COMPRESS_TIMEOUT_DEFAULTS } from "../../config/env.ts";
import { errorCodeEntry } from "../../errors.ts";
import { COMPRESSION_PROFILES } from "../../pdf/index.ts";
import { compressionPaths, compressionSchemas, jobDelete, retentionField } from "./openapi-compressions.ts";
import {
  compressExtras,
  directUploadBody,
  fileUrlBody,
  fileUrlField,
  jobPaths,
  jobSchemas,
  queuedAnswer,
} from "./openapi-jobs.ts";
import { outputOptionFields } from "./openapi-options.ts";
import { reportProperty, reportSchemas } from "./openapi-report.ts";
import { webhooks } from "./openapi-webhooks.ts";
import { addSuccessExamples } from "./openapi-examples.ts";
import { mcpPath } from "./openapi-mcp.ts";

type Json = Record<string, unknown>;

const errorHeaders = {
  "X-Error-Code": { description: "The error code, as in the body.", schema: { type: "string" } },
  "X-Error-Message": { description: "The message, percent-encoded where not ASCII.", schema: { type: "string" } },
};

/**
 * An error response's example: the first registered code its description names (each begins with
 * its codes), with the registry's meaning as its message (src/errors.ts).
 */
function errorExample(description: string): Json | undefined {
  const code = description.match(/[a-z][a-z0-9_]*/g)?.find((word) => errorCodeEntry(word) !== undefined);
  if (!code) return undefined;
  const meaning = errorCodeEntry(code)!.meaning;
  const message = meaning.charAt(0).toUpperCase() + meaning.slice(1);
  return { error: { code, message, request_id: "4bf92f3577b34da6a3ce929d0e0e4736" } };
}

const error = (description: string, extra: Json = {}) => {
  const example = errorExample(description);
  return {
    description,
    headers: { ...errorHeaders, ...extra },
    content: {
      "application/json": { schema: { $ref: "#/components/schemas/Error" }, ...(example ? { example } : {}) },
    },
  };
};

const retryAfter = { "Retry-After": { schema: { type: "integer", minimum: 1 } } };

const result = {
  description: "The compressed file is stored; url downloads it until it expires.",
  headers: {
    "X-Quota-Limit": { schema: { type: "integer" } },
    "X-Quota-Remaining": { schema: { type: "integer" } },
    "X-Quota-Reset": {
      description: "Start of the next calendar month, UTC.",
      schema: { type: "string", format: "date-time" },
    },
    RateLimit: { schema: { type: "string" } },
    "RateLimit-Policy": { schema: { type: "string" } },
    "Idempotent-Replayed": {
      description: "true when this is the kept answer of an earlier request with the same Idempotency-Key.",
      schema: { type: "string", const: "true" },
    },
  },
  content: { "application/json": { schema: { $ref: "#/components/schemas/CompressionResult" } } },
};

const common = {
  "400": error(
    "The form is not as documented: invalid_profile, invalid_signatures, invalid_target_size, invalid_grayscale, invalid_max_image_ppi, invalid_remove_metadata, invalid_linearize, invalid_ocr, invalid_ocr_languages (a value out of its bounds, or an option the profile does not take; the message names the field), missing_file, too_many_files, unexpected_field, invalid_multipart, missing_password; for a job or a direct upload also invalid_json, invalid_upload_id, invalid_callback_url; for a file by its address invalid_file_url (not https, malformed, or sent beside a file or a direct upload) and file_url_forbidden (an address that is not public); retention not a whole number of seconds, invalid_retention; with an Idempotency-Key header, invalid_idempotency_key. Not charged.",
  ),
  "401": error(
    "Missing, malformed, unknown, revoked or non-corporate key: missing_api_key, malformed_api_key, invalid_api_key, plan_not_eligible.",
    {
      "WWW-Authenticate": { schema: { type: "string" } },
    },
  ),
  "402": error("quota_exceeded: the month's quota is used up.", {
    ...retryAfter,
    "X-Quota-Reset": { schema: { type: "string" } },
  }),
  "408": error("upload_timeout: the upload stalled."),
  "413": error(
    "file_too_large: over 314,572,800 bytes (300 MB); exactly that is accepted. file_url_too_large: the same for a file fetched by its address. body_too_large: a JSON body over 16 KiB.",
  ),
  "415": error("unsupported_media_type: the body is neither multipart/form-data nor JSON."),
  "422": error(
    `The file cannot be processed (not charged): not_a_pdf, corrupted_pdf, encrypted_pdf, unsupported_pdf, processing_timeout (processing took longer than the time limit for the file's size: a base plus a rate per MB, by default ${COMPRESS_TIMEOUT_DEFAULTS.baseSeconds} s + ${COMPRESS_TIMEOUT_DEFAULTS.secondsPerMb} s per MB, five times that with a target size), processing_failed, signed_document (the PDF is digitally signed or certified: a rewrite would break its signatures; the message says how many; send signatures=remove to compress it without them), target_unreachable (the target size cannot be reached above the quality floor; the message gives the smallest size reached); for unlock also password_required, incorrect_password, not_encrypted; for a file fetched by its address also file_url_not_pdf, file_url_unreachable (not found, refused, cut, not 200, more than 3 redirects) and file_url_timeout.`,
  ),
  "429": error("rate_limited: over 120 requests a minute for this key.", retryAfter),
  "503": error(
    "busy, rate_limit_unavailable, database_unavailable, storage_unavailable (the file could not be stored, or a file address this service signed could not be read from its storage; nothing kept or charged) or shutting_down.",
    retryAfter,
  ),
};

const form = (fields: Json, required: string[]) => ({
  required: true,
  content: { "multipart/form-data": { schema: { type: "object", required, properties: fields } } },
});

// In the form, an empty default: Swagger UI's "Try it out" fills a uri field without one with a
// sample address, which beside the file would be refused (400 invalid_file_url). Empty is absent.
const fileUrlFormField = { ...fileUrlField, default: "" };

const fileField = {
  type: "string",
  format: "binary",
  description: "The PDF, at most 300 MB. Required unless file_url names it.",
};
/** The `signatures` option (service.ts parseSignatures; docs/signed-documents.md). */
export const signaturesField = {
  type: "string",
  enum: ["refuse", "remove"],
  // A default, so that the docs page's "Try it out" does not pre-select `remove` (Swagger UI
  // fills a field without one with its first allowed value).
  default: "refuse",
  description:
    "What to do with a digitally signed or certified PDF. `refuse` (the default, as when left out): it is refused (422 signed_document, not charged): any rewrite makes its signatures fail to verify. `remove`: it is compressed and its signatures are removed (each signature field is kept, empty, so the document can be signed again); the result's report.signatures_removed says how many.",
};
/** The options of /v1/compress besides its file (callback_url with Prefer: respond-async). */
const compressJsonFields = (profileField: Json, callbackField: Json, retention: Json) => ({
  retention,
  profile: profileField,
  signatures: signaturesField,
  ...outputOptionFields,
  callback_url: callbackField,
});

/** The multipart body of /v1/compress (a file and its options; callback_url with Prefer: respond-async). */
const compressForm = (profileField: Json, callbackField: Json, retention: Json) =>
  form(
    {
      file: fileField,
      file_url: fileUrlFormField,
      ...compressJsonFields(profileField, callbackField, retention),
    },
    [],
  );

const unlockFields = (profileField: Json, retention: Json) => ({
  password: { type: "string", maxLength: 1024 },
  retention,
  profile: profileField,
  signatures: signaturesField,
  ...outputOptionFields,
});

/** /v1/compress's body: the form with the file (or its file_url), or JSON naming a direct upload or a file_url. */
const compressBody = (profileField: Json, callbackField: Json, retention: Json) => ({
  required: true,
  content: {
    ...compressForm(profileField, callbackField, retention).content,
    "application/json": {
      schema: {
        oneOf: [
          directUploadBody(profileField, signaturesField, retention),
          fileUrlBody(compressJsonFields(profileField, callbackField, retention)),
        ],
      },
    },
  },
});

/** /v1/unlock's body: the form with the file (or its file_url), or JSON naming a file_url. */
const unlockBody = (profileField: Json, retention: Json) => ({
  required: true,
  content: {
    ...form({ file: fileField, file_url: fileUrlFormField, ...unlockFields(profileField, retention) }, ["password"])
      .content,
    "application/json": { schema: fileUrlBody(unlockFields(profileField, retention), ["password"]) },
  },
});

const schemas = {
  CompressionResult: {
    type: "object",
    required: [
      "id",
      "success",
      "original_size",
      "compressed_size",
      "savings_percentage",
      "url",
      "expires_in",
      "retention",
    ],
    properties: {
      id: {
        type: "string",
        format: "uuid",
        description: "The compression's id: GET or DELETE /v1/compressions/{id}.",
      },
      success: { type: "boolean", const: true },
      original_size: { type: "integer", minimum: 1, description: "Bytes of the uploaded file." },
      compressed_size: {
        type: "integer",
        minimum: 1,
        description: "Bytes of the result; never more than original_size.",
      },
      savings_percentage: {
        type: "number",
        minimum: 0,
        maximum: 100,
        description: "100 × (1 − compressed/original), two decimals.",
      },
      url: { type: "string", format: "uri" },
      expires_in: { type: "integer", const: 3600, description: "Seconds the url stays valid." },
      ...reportProperty,
      retention: {
        type: "integer",
        minimum: 0,
        description: "Seconds the result is kept (0: until its first complete download).",
      },
      expires_at: { type: "string", format: "date-time", description: "When the result is deleted at the latest." },
    },
  },
  Usage: {
    type: "object",
    required: ["plan", "monthly_quota", "used", "remaining", "period_start", "resets_at"],
    properties: {
      plan: { type: "string", enum: ["corporate", "professional", "starter"] },
      monthly_quota: { type: "integer", minimum: 0, description: "Compressions per calendar month (UTC)." },
      used: {
        type: "integer",
        minimum: 0,
        description: "Compressions charged this month; failures are given back, so not counted.",
      },
      remaining: { type: "integer", minimum: 0 },
      period_start: {
        type: "string",
        format: "date-time",
        description: "00:00 UTC on the first day of this month.",
      },
      resets_at: {
        type: "string",
        format: "date-time",
        description: "When the quota renews: 00:00 UTC on the first day of next month.",
      },
    },
  },
  Error: {
    type: "object",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: { code: { type: "string" }, message: { type: "string" }, request_id: { type: "string" } },
      },
    },
  },
};

// One group per resource on the docs page (Swagger UI puts untagged operations under "default").
const tags = [
  { name: "Compression", description: "Compress a PDF, at once or as a job; unlock a password-protected one." },
  {
    name: "Jobs",
    description: "Asynchronous compressions (Prefer: respond-async): poll one, or have it posted to you.",
  },
  {
    name: "Direct uploads",
    description: "Upload a large file straight to storage, then compress it by its upload_id.",
  },
  {
    name: "Webhooks",
    description:
      "Calls to a job's callback_url when it ends (the webhooks section: headers, body, how to verify), and the secret they are signed with.",
  },
  {
    name: "Compressions",
    description:
      "Every result is a resource: list the account's, read one, delete it now; retention keeps one no longer than asked.",
  },
  { name: "Usage", description: "The plan and this month's quota." },
  {
    name: "Agents (MCP)",
    description:
      "The same compressions for AI agents: an MCP endpoint with the key as its Bearer token (tools compress_pdf, get_compression, list_compressions, delete_compression, usage).",
  },
];

const bearer = {
  type: "http",
  scheme: "bearer",
  description: "An mkp_… personal access token, created in the dashboard (/dashboard, Settings → API keys).",
};

/** The title and introduction, with where a key comes from (the dashboard, on the API's origin). */
const info = (serverUrl: string) => ({
  title: "Marketplace document compression API",
  version: "1.0.0",
  description:
    `Compresses PDFs for corporate subscribers. **Keys** come from the [dashboard](${serverUrl}/dashboard): sign in with the e-mail address on record (a one-time link is mailed), open Settings → API keys and create one (its secret is shown once; corporate plan only); then press Authorize on this page, or send \`Authorization: Bearer <key>\`. ` +
    "Checks run from the headers before the body is read (key, per-key rate limit, declared size, monthly quota), so a client sending `Expect: 100-continue` uploads nothing that would be refused. Sizes are bytes. Errors carry `X-Error-Code` and `X-Error-Message` headers and a `{error: {code, message, request_id}}` body. The monthly quota counts compressions per calendar month in UTC; failures are not charged.\n\n" +
    surfaceLinks(new URL(serverUrl).origin, "compression_docs"),
});

export function buildCompressOpenApi(serverUrl: string, maxRetentionSeconds = 86_400): Json {
  const profileField = { type: "string", enum: [...COMPRESSION_PROFILES], default: "balanced" };
  const retention = retentionField(maxRetentionSeconds);
  const shared = { error, retryAfter, common, profileField };
  const extras = compressExtras(shared);
  const document = {
    openapi: "3.1.0",
    info: info(serverUrl),
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    tags,
    paths: {
      "/v1/compress": {
        post: {
          operationId: "compress",
          tags: ["Compression"],
          summary: "Compress a PDF (at once, or as a job with Prefer: respond-async)",
          description:
            "multipart/form-data with the file (or its address as file_url), or JSON naming a direct upload (POST /v1/uploads) or a file_url. With `Prefer: respond-async` the answer is 202 with Location: /v1/jobs/{id} as soon as the file is stored; the quota unit is reserved then and given back if the job fails. Without it, a call with ocr whose file has more scanned pages than a synchronous call reads (5 unless the operator says otherwise) is answered the same 202, with async_reason: no second upload, charged once.",
          parameters: extras.parameters,
          requestBody: compressBody(profileField, extras.callbackField, retention),
          responses: { "200": result, ...extras.responses, ...common },
        },
      },
      ...jobPaths(shared, jobDelete(shared)),
      ...compressionPaths(shared),
      "/v1/usage": {
        get: {
          operationId: "usage",
          tags: ["Usage"],
          summary: "This key's subscriber's plan and quota this month",
          description:
            "The numbers the dashboard's Usage page shows. Counts against the per-key rate limit like every request with a key; never against the quota.",
          responses: {
            "200": {
              description: "Usage of the current calendar month (UTC).",
              headers: {
                "X-Quota-Limit": result.headers["X-Quota-Limit"],
                "X-Quota-Remaining": result.headers["X-Quota-Remaining"],
                "X-Quota-Reset": result.headers["X-Quota-Reset"],
                RateLimit: result.headers.RateLimit,
                "RateLimit-Policy": result.headers["RateLimit-Policy"],
              },
              content: { "application/json": { schema: { $ref: "#/components/schemas/Usage" } } },
            },
            "401": common["401"],
            "429": common["429"],
            "503": error("rate_limit_unavailable or database_unavailable.", retryAfter),
          },
        },
      },
      "/v1/unlock": {
        post: {
          operationId: "unlock",
          tags: ["Compression"],
          summary: "Decrypt a password-protected PDF with its user or owner password, then compress it",
          requestBody: unlockBody(profileField, retention),
          responses: {
            "200": result,
            "202": queuedAnswer(
              "With ocr, a file with more scanned pages than a synchronous call reads: decrypted, then queued as a job that compresses the decrypted file (async_reason says so); poll Location.",
            ),
            ...common,
          },
        },
      },
      ...mcpPath(shared),
    },
    webhooks,
    components: {
      securitySchemes: { bearer },
      schemas: { ...schemas, ...jobSchemas, ...compressionSchemas, ...reportSchemas },
    },
  };
  addSuccessExamples(document.paths);
  return document;
}
