// The OpenAPI description of the compression resources (compressions.ts): the list, one
// compression, DELETE, the download kept until its first complete read, and the `retention` field
// every compression takes; merged into /v1/openapi.json by openapi.ts.
import { progressSchema, type Shared } from "./openapi-jobs.ts";
import { reportProperty } from "./openapi-report.ts";

type Json = Record<string, unknown>;

/** The `retention` field of every compression (a form field, or a member of a direct upload's JSON). */
export const retentionField = (maxSeconds: number) => ({
  type: "integer",
  minimum: 0,
  // Empty: the account's default (Swagger UI would otherwise fill in the minimum, 0).
  default: "",
  description: `Seconds the result is kept, from when it is ready; then it is deleted from storage (its URL answers 404 or 410). 0: until the first complete download (the url is then this service's /v1/results/… address, which deletes the result once it was sent whole; a download cut short leaves it), and at most the maximum if it never comes. Left out: the account's default (set in the dashboard, Settings → Webhooks), else the maximum. More than the maximum (${maxSeconds} s here) is kept for the maximum.`,
});

const dateTime = { type: "string", format: "date-time" };
const nullableDateTime = { type: ["string", "null"], format: "date-time" };

export const compressionSchemas = {
  Compression: {
    type: "object",
    additionalProperties: false,
    required: [
      "id",
      "object",
      "operation",
      "status",
      "profile",
      "job_id",
      "filename",
      "original_size",
      "compressed_size",
      "created_at",
      "finished_at",
      "retention",
      "expires_at",
      "deleted_at",
      "deleted_by",
    ],
    description:
      "One compression (or unlock) of the key's account, synchronous or a job. A succeeded one read alone (GET /v1/compressions/{id}) carries a url signed at that read, while its result is kept; the list carries none. Once the result is deleted (deleted_at), filename is null: the record stays, as it is what was charged.",
    properties: {
      id: { type: "string", format: "uuid" },
      object: { type: "string", const: "compression" },
      operation: { type: "string", enum: ["compress", "unlock"] },
      status: { type: "string", enum: ["queued", "running", "succeeded", "failed"] },
      profile: { type: "string" },
      job_id: { type: ["string", "null"], format: "uuid", description: "The job's id when it was one." },
      progress: { ...progressSchema, description: `A job's only. ${progressSchema.description}` },
      filename: {
        type: ["string", "null"],
        description:
          "The name the file was sent with (a failed call's too); null once the result is deleted, and for a failed call once RESULT_RETENTION_HOURS have passed.",
      },
      original_size: { type: ["integer", "null"], minimum: 1 },
      compressed_size: { type: ["integer", "null"], minimum: 1 },
      created_at: dateTime,
      finished_at: nullableDateTime,
      retention: {
        type: ["integer", "null"],
        minimum: 0,
        description:
          "Seconds the result is kept (0: until its first complete download); null before retention existed.",
      },
      expires_at: { ...nullableDateTime, description: "When the result is deleted at the latest." },
      deleted_at: nullableDateTime,
      deleted_by: { type: ["string", "null"], enum: ["request", "retention", "download", null] },
      savings_percentage: { type: "number", maximum: 100 },
      url: { type: "string", format: "uri" },
      expires_in: { type: "integer", description: "Seconds the url stays valid." },
      ...reportProperty,
      error: {
        type: "object",
        required: ["code", "message"],
        properties: { code: { type: "string" }, message: { type: "string" } },
      },
    },
  },
  CompressionList: {
    type: "object",
    additionalProperties: false,
    required: ["object", "data", "has_more", "next_cursor"],
    properties: {
      object: { type: "string", const: "list" },
      data: { type: "array", items: { $ref: "#/components/schemas/Compression" } },
      has_more: { type: "boolean" },
      next_cursor: {
        type: ["string", "null"],
        description: "Pass as cursor (with the same filters) for the next page; null on the last.",
      },
    },
  },
};

const idParameter = {
  name: "id",
  in: "path",
  required: true,
  description: "The compression's id, or its job's (a job's URL and its compression's name one resource).",
  schema: { type: "string" },
};

const query = (name: string, schema: Json, description: string) => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
});

export function compressionPaths(shared: Shared): Json {
  const { error, common, retryAfter } = shared;
  const keyed = {
    "401": common["401"],
    "429": common["429"],
    "503": error("rate_limit_unavailable, database_unavailable or storage_unavailable.", retryAfter),
  };
  const notFound = error("not_found: no compression or job with this id is this key's account's.");
  const deleteOperation = (operationId: string, tags: string[]) => ({
    operationId,
    tags,
    summary: "Delete now: the result, its input and any direct upload, from storage",
    description:
      "Removes the result, the job's input and the direct upload it came from, at once, from storage (Cloud Storage in production); their URLs then answer 410 result_deleted (this service's) or 404 (Cloud Storage's). The record stays, as it is what was charged, without the file's name; Idempotency-Key answers that carried the result's URL answer 410 result_deleted from then on. A queued job is cancelled (failed, error deleted, not charged). Deleting again answers 204 again; another account's id is 404.",
    parameters: [idParameter],
    responses: {
      "204": { description: "Deleted (or already deleted)." },
      "404": notFound,
      "409": error("compression_running: it is being compressed; delete it once it has ended.", retryAfter),
      ...keyed,
    },
  });
  return {
    "/v1/compressions": {
      get: {
        operationId: "listCompressions",
        tags: ["Compressions"],
        summary: "The account's compressions, newest first",
        description:
          "Every compression and unlock of the key's account (any of its keys), synchronous or a job, newest first; deleted ones too (deleted_at), without their file names.",
        parameters: [
          query("limit", { type: "integer", minimum: 1, maximum: 100, default: 20 }, "Items per page."),
          query("cursor", { type: "string" }, "next_cursor of the previous page."),
          query("status", { type: "string", enum: ["queued", "running", "succeeded", "failed"] }, "Only these."),
          query("created_after", { type: "string", format: "date-time" }, "Created at or after (RFC 3339)."),
          query("created_before", { type: "string", format: "date-time" }, "Created before (RFC 3339)."),
        ],
        responses: {
          "200": {
            description: "One page.",
            content: { "application/json": { schema: { $ref: "#/components/schemas/CompressionList" } } },
          },
          "400": error(
            "invalid_limit, invalid_cursor, invalid_status, invalid_created_after, invalid_created_before (also when given twice), unknown_parameter.",
          ),
          ...keyed,
        },
      },
    },
    "/v1/compressions/{id}": {
      get: {
        operationId: "getCompression",
        tags: ["Compressions"],
        summary: "One compression, with its report and a download URL",
        parameters: [idParameter],
        responses: {
          "200": {
            description: "The compression; while it runs, Retry-After suggests when to ask again.",
            headers: { "Retry-After": { schema: { type: "integer", minimum: 1 } } },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Compression" } } },
          },
          "404": notFound,
          ...keyed,
        },
      },
      delete: deleteOperation("deleteCompression", ["Compressions"]),
    },
    "/v1/results/{name}": onceDownloadPath(error),
  };
}

/** DELETE /v1/jobs/{id}: the same as DELETE /v1/compressions/{id}, by the job's id. */
export function jobDelete(shared: Shared): Json {
  const paths = compressionPaths(shared) as Record<string, Record<string, Json>>;
  return { ...paths["/v1/compressions/{id}"]!["delete"], operationId: "deleteJob", tags: ["Jobs"] };
}

/** GET /v1/results/{name}: a result kept until its first complete download, read through this service. */
function onceDownloadPath(error: Shared["error"]): Json {
  return {
    get: {
      operationId: "downloadOnce",
      tags: ["Compressions"],
      summary: "A result kept until its first complete download (retention 0)",
      description:
        "The url of a result asked with retention=0 (no key: the address is signed). Sent whole, the result is deleted; a download cut short (or a HEAD) leaves it for another try.",
      security: [],
      parameters: [
        { name: "name", in: "path", required: true, schema: { type: "string" } },
        query("expires", { type: "string" }, "Signed."),
        query("signature", { type: "string" }, "Signed."),
      ],
      responses: {
        "200": {
          description: "The PDF.",
          content: { "application/pdf": { schema: { type: "string", format: "binary" } } },
        },
        "403": error("invalid_signature (altered) or url_expired (ask GET /v1/compressions/{id} for another)."),
        "410": error("result_deleted: already downloaded whole, deleted on request, or past its retention."),
      },
    },
  };
}
