// Asynchronous compression and direct upload over HTTP:
//   POST /v1/compress with `Prefer: respond-async` (RFC 7240): 202 Accepted, `Location: /v1/jobs/{id}`
//     and the job resource, as soon as the upload is stored; the quota unit is reserved then
//   POST /v1/compress with a JSON body {"upload_id", "profile", "callback_url", …options}: the same from a
//     direct upload, synchronous without the preference
//   GET  /v1/jobs/{id}: the job, to the subscriber who made it only (anyone else: 404)
//   POST /v1/uploads: a direct upload's short-lived signed PUT URL
//   PUT  /v1/uploads/content/{name}: the embedded default's signed upload path (Cloud Storage
//     takes the PUT itself in production)
//   GET  /v1/webhook-secret, POST /v1/webhook-secret (rotate): the key webhooks are signed with
import type { ParameterizedContext } from "koa";
import type { AuthenticatedKey } from "../../auth/authenticate.ts";
import { HttpError } from "../../errors.ts";
import { expectsContinue } from "../../http/continue.ts";
import { publicOrigin } from "../../http/origin.ts";
import { withRequestInfo } from "../../http/request-info.ts";
import { setHeaders } from "../../http/rate-limit.ts";
import type { AppState } from "../../http/state.ts";
import { jobResource, type JobResource } from "../async-jobs/resource.ts";
import type { LocalStorage } from "../storage/local.ts";
import { recordBodyDigest } from "../workflow/body-digest.ts";
import { findJob } from "../workflow/compressions.ts";
import { createDirectUpload as createUpload, receiveLocalUpload } from "../workflow/direct-uploads.ts";
import type { EngineJob } from "../isolation/protocol.ts";
import { invalidFileUrl } from "../workflow/file-url.ts";
import { notFound } from "../workflow/results.ts";
import { FILE_NAMING, ROUTE_FIELDS } from "../workflow/options.ts";
import type { Answer, CompressDeps, CompressService, SyncAnswer } from "../workflow/service.ts";
import { isBodyOf, readBody } from "../../http/read-body.ts";

/** ctx.state of the routes behind the key's authentication, which only go on with a key. */
export interface KeyedState extends AppState {
  apiKey: AuthenticatedKey;
}
export type KeyedContext = ParameterizedContext<KeyedState>;

/** What a job takes besides its file (multipart) or upload_id (JSON). */
export const JOB_FIELDS = ROUTE_FIELDS.compress;

const JSON_BODY_MAX = 16 * 1024;

/** True when the client asked for `Prefer: respond-async` (RFC 7240, any of its preferences). */
export function prefersAsync(ctx: KeyedContext): boolean {
  return ctx
    .get("Prefer")
    .split(",")
    .some((preference) => /^\s*respond-async\s*(;|=|$)/i.test(preference));
}

/** Answers the service's answer: its body, with its headers. */
export function answer<T>(ctx: KeyedContext, answered: Answer<T>): void {
  setHeaders(ctx, answered.headers);
  ctx.body = answered.body;
}

/**
 * Answers a queued job: 202 with its Location, and Preference-Applied when it was asked for (a
 * synchronous call queued past the OCR limit says why in the body's async_reason instead).
 */
export function answerJob(ctx: KeyedContext, queued: Answer<JobResource>): void {
  ctx.status = 202;
  ctx.set("Location", `/v1/jobs/${queued.body.id}`);
  if (!queued.body.async_reason) ctx.set("Preference-Applied", "respond-async");
  answer(ctx, queued);
}

/** Answers a synchronous call: its result, or the job it was queued as. */
export function answerSync(ctx: KeyedContext, answered: SyncAnswer): void {
  if ("job" in answered) answerJob(ctx, answered.job);
  else answer(ctx, answered.now);
}

/** GET /v1/jobs/{id}: the job, to its subscriber only. */
export async function getJob(deps: CompressDeps, ctx: KeyedContext, id: string): Promise<void> {
  const job = await findJob(deps.prisma, ctx.state.apiKey.subscriberId, id);
  if (!job) throw notFound("job");
  const origin = publicOrigin(ctx, deps.config.publicApiBaseUrl);
  ctx.set("Cache-Control", "no-store");
  if (job.status === "queued" || job.status === "running") ctx.set("Retry-After", "2");
  ctx.body = await jobResource(job, deps, { origin });
}

/** Reads a small JSON object body (400 invalid_json when it is not one). */
export async function readJsonObject(ctx: KeyedContext): Promise<Record<string, unknown>> {
  const body = await readBody(ctx.req, JSON_BODY_MAX, jsonTooLarge);
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    throw new HttpError(400, "invalid_json", "The body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "invalid_json", "The body must be a JSON object.");
  }
  recordBodyDigest(ctx.req, { fields: value as Record<string, unknown> });
  return value as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string") throw new HttpError(400, `invalid_${name}`, `${name} must be a string.`);
  return value;
}

/**
 * A JSON member as the form field of its name: a string as it is, a boolean or a number (grayscale:
 * true, target_size: 600000) as its text, which the same parsers as a form's then check; null is absent.
 */
function formValue(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  throw new HttpError(400, `invalid_${name}`, `${name} must be a string, a number or true or false.`);
}

/** The JSON members of each route besides the file's (upload_id: compress only; file_url: both). */

/** A JSON body of /v1/compress or /v1/unlock: the file by its upload_id or its file_url, and the fields. */
async function readJsonRequest(ctx: KeyedContext, kind: EngineJob["kind"]) {
  const body = await readJsonObject(ctx);
  const names: readonly string[] = ROUTE_FIELDS[kind];
  const files: readonly string[] = FILE_NAMING.json[kind];
  const unknown = Object.keys(body).filter((name) => ![...files, ...names].includes(name));
  if (unknown.length > 0) {
    throw new HttpError(
      400,
      "unexpected_field",
      `Unexpected field "${unknown[0]}"; send ${files.join(" or ")}, ${names.join(", ")}.`,
    );
  }
  const fileUrl = stringField(body, "file_url", kind === "unlock");
  if (fileUrl !== undefined && body["upload_id"] !== undefined) {
    throw invalidFileUrl("was sent beside upload_id; send one of them");
  }
  const uploadId = fileUrl === undefined ? stringField(body, "upload_id", true)! : undefined;
  const entries = names.flatMap((name) => {
    const value = formValue(body, name);
    return value === undefined ? [] : [[name, value] as const];
  });
  return { uploadId, fileUrl, fields: Object.fromEntries(entries) as Record<string, string> };
}

/**
 * POST /v1/compress or /v1/unlock with a JSON body: {"file_url", …fields} (both), or {"upload_id",
 * "profile"?, "callback_url"?, …options} (a direct upload's compression); at once, or as a job
 * (compress with Prefer: respond-async), through the service.
 */
export async function compressJson(
  service: CompressService,
  ctx: KeyedContext,
  kind: EngineJob["kind"],
  baseUrl: string | null,
) {
  const key = ctx.state.apiKey;
  const { uploadId, fileUrl, fields } = await readJsonRequest(ctx, kind);
  const job = kind === "compress" && prefersAsync(ctx);
  await withRequestInfo(ctx, baseUrl, async (request) => {
    if (fileUrl !== undefined) {
      const url = { fileUrl, fields };
      if (job) answerJob(ctx, await service.enqueue(request, key, { url }));
      else answerSync(ctx, await service.compress(request, key, kind, { url }));
      return;
    }
    const body = { uploadId: uploadId!, fields };
    answerSync(ctx, await service.compressDirectUpload(request, key, body, job ? "job" : "now"));
  });
}

/** POST /v1/uploads' body: a JSON object, or nothing (an empty body is `{}`). */
const jsonTooLarge = () => new HttpError(413, "body_too_large", "A JSON body may carry at most 16 KiB.");

export async function readOptionalJson(ctx: KeyedContext): Promise<Record<string, unknown>> {
  // A body announced by its length, by chunks (HTTP/1.1), or by a JSON type (HTTP/2 frames it).
  const length = ctx.get("Content-Length");
  const announced = length
    ? Number(length) > 0
    : Boolean(ctx.get("Transfer-Encoding")) || isBodyOf(ctx.req, "application/json");
  if (announced) return readJsonObject(ctx);
  recordBodyDigest(ctx.req, { fields: {} });
  return {};
}

/** POST /v1/uploads: a direct upload and its signed PUT URL (workflow/direct-uploads.ts). */
export async function createDirectUpload(deps: CompressDeps, ctx: KeyedContext): Promise<void> {
  const body = await readOptionalJson(ctx);
  const filename = stringField(body, "filename", false);
  const origin = publicOrigin(ctx, deps.config.publicApiBaseUrl);
  ctx.body = await createUpload(deps, ctx.state.apiKey, { filename, origin });
  ctx.status = 201;
  ctx.set("Cache-Control", "no-store");
}

/** PUT to the local signed upload path (workflow/direct-uploads.ts receiveLocalUpload). */
export async function receiveDirectUpload(
  local: LocalStorage,
  deps: Pick<CompressDeps, "prisma">,
  ctx: ParameterizedContext<AppState>,
  name: string,
): Promise<void> {
  const size = await receiveLocalUpload(local, deps.prisma, {
    name,
    query: new URLSearchParams(ctx.querystring),
    contentLength: Number(ctx.get("Content-Length")),
    body: ctx.req,
    invite: () => {
      if (expectsContinue(ctx.req)) ctx.res.writeContinue();
    },
  });
  ctx.status = 200;
  ctx.set("Cache-Control", "no-store");
  ctx.body = { size };
}
