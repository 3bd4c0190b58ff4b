// The compression workflow, told once: whoever asks (POST /v1/compress and /v1/unlock, a direct
// upload, an asynchronous job's acceptance, the dashboard's Try it), a compression is
//
//   reserve one unit (402 when the month's quota is used up) → take the file into a workspace of
//   its own (workspace.ts: the multipart body read, or a direct upload fetched from storage) →
//   run and store (produce.ts), or store the input and queue a job → succeed; or fail with the
//   error's code (failure.ts) and release the unit once → remove the workspace
//
// The service takes plain inputs: the request's origin, abort signal and id (RequestInfo), the
// authenticated key, and the upload (the request's body stream) or the stored input; it never sees
// a framework's context. It answers the result's body and the headers to send with it; errors are
// thrown as the HttpError to answer. The worker of asynchronous jobs runs its attempts through
// produce.ts and settles them itself (retries are its own).
import type { IncomingMessage } from "node:http";
import type { Redis } from "ioredis";
import type { AuthenticatedKey } from "../../auth/authenticate.ts";
import { nextMonth, usedThisMonth } from "../../auth/quota.ts";
import type { Config } from "../../config/env.ts";
import { HttpError, retryAfter, shuttingDown } from "../../errors.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { createRateLimiter, rateLimitHeaders, type RateLimiter } from "../../http/rate-limit.ts";
import type { Logger } from "../../logger.ts";
import * as queue from "../async-jobs/queue.ts";
import { jobResource, type JobResource } from "../async-jobs/resource.ts";
import { checkCallbackUrl } from "../async-jobs/webhooks.ts";
import type { Resolver } from "../address-policy.ts";
import * as compression from "../compression.ts";
import { OcrPastSyncLimit, type CompressionResultBody, type EngineRunner, type Reserved } from "../compression.ts";
import type { EngineJob } from "../isolation/protocol.ts";
import type { Runner } from "../isolation/runner.ts";
import { newObjectName, type ObjectStorage } from "../storage/storage.ts";
import { recordAsked, recordRetention } from "./compressions.ts";
import { giveBackUpload, takeDirectUpload, tieUpload } from "./direct-uploads.ts";
import { failureCode, UploadAborted } from "./failure.ts";
import {
  askedOptions,
  FILE_NAMING,
  OPTION_FIELDS,
  parseOperation,
  parseOptions,
  ROUTE_FIELDS,
  type CompressionOptions,
} from "./options.ts";
import { produce, produceFromStorage, type Produced, type Work } from "./produce.ts";
import { checkFileUrl, fetchFileUrl, type FileUrlPolicy } from "./file-url.ts";
import { ownObject, readOwnObject } from "./own-file-url.ts";
import { MULTIPART_OVERHEAD, receiveUpload, tooLarge, type Upload } from "./upload.ts";
import { maxRetentionSeconds, parseRetention, resultUrl } from "./results.ts";
import { withWorkspace, type Workspace } from "./workspace.ts";

export interface CompressDeps {
  config: Config;
  prisma: PrismaClient;
  redis: Redis | null;
  logger: Logger;
  storage: ObjectStorage;
  runner: EngineRunner;
  /**
   * Aborted when the service shuts down and in-flight work must give up: an upload or compression
   * still running is answered 503 `shutting_down` (not charged, its files removed).
   */
  shutdown?: AbortSignal | null;
  /** Called when a job was queued here: the instance's worker looks for it at once. */
  onJobQueued?: () => void;
  /** How a file_url's host is resolved (checked by the address policy); dns.lookup by default. */
  resolver?: Resolver;
}

/** What the service needs of the request besides its file. */
export interface RequestInfo {
  /** The API's public origin, for the download URLs of the local storage. */
  origin: string;
  /** Aborted when the client goes away: the work stops and is not charged. */
  signal: AbortSignal;
  /** For the log lines about this request. */
  requestId: string;
}

/** A multipart upload still to read: the request's body, and its response for `100 Continue`. */
export interface IncomingUpload {
  body: IncomingMessage;
  response?: { writeContinue(): void };
}

/** A direct upload's file, already in storage, and the options its JSON body gave. */
export interface StoredInput {
  objectName: string;
  filename: string;
  size: number;
  options: CompressionOptions;
  /** Seconds the result is kept (0: until its first complete download). */
  retentionSeconds: number;
  /** The direct upload it came from, tied to the compression (deleted with it). */
  uploadId?: string;
  /** The option fields as the request sent them, for the record (askedOptions). */
  fields?: Readonly<Partial<Record<string, string>>>;
}

/** POST /v1/compress's JSON body naming a direct upload: its id and the form fields of its options. */
export interface DirectUploadRequest {
  uploadId: string;
  fields: Readonly<Partial<Record<string, string>>>;
}

/** A JSON body's file_url, to fetch (./file-url.ts), and the form fields beside it. */
export interface UrlInput {
  fileUrl: string;
  fields: Readonly<Record<string, string>>;
}

/** A file the request brings: its multipart upload (a file, or a file_url field), or a JSON body's file_url. */
type Incoming = { upload: IncomingUpload } | { url: UrlInput };

/** Where a compression's file comes from. */
export type Intake = Incoming | { stored: StoredInput };

/** Where a job's file comes from: an upload, a file_url, or a direct upload (with its callback_url). */
export type JobIntake = Incoming | { stored: StoredInput & { callbackUrl: string | null } };

/**
 * The dashboard's Try it form: the key is chosen in the form's fields, which precede the file;
 * `keyOf` checks them (the session's token, the key's owner) and names the key before a byte of the
 * file is read. The service then applies the key's rate limit, quota and the engine's room.
 */
export interface FormIntake {
  upload: IncomingUpload;
  /** The form's own fields besides the options. */
  fields: readonly string[];
  keyOf: (fields: Readonly<Record<string, string>>) => Promise<AuthenticatedKey>;
}

export interface Answer<T> {
  body: T;
  /** Headers to send with it: the quota's, the per-key rate limit's, Cache-Control. */
  headers: Record<string, string>;
}

/**
 * What a synchronous call answers: its result, or the job it was queued as (a file with more scanned
 * pages to read with ocr than a synchronous call reads, or larger than the surface's size limit: its
 * resource carries async_reason).
 */
export type SyncAnswer = { now: Answer<CompressionResultBody> } | { job: Answer<JobResource> };

/** Why a synchronous call was answered with a job. */
export type AsyncReason = NonNullable<JobResource["async_reason"]>;

/**
 * A surface's own limit on its synchronous calls: the MCP tool compress_pdf compresses at most
 * MCP_SYNC_MAX_BYTES within its call (its clients commonly wait 60 s for a tool); a larger file is
 * queued as a job, under the same unit, and answered with async_reason mcp_size_limit.
 */
export interface SyncLimit {
  maxBytes: number;
}

export interface CompressService {
  /** The per-key limit of requests a minute (every surface a key is used from counts). */
  readonly perKey: RateLimiter;
  /** Throws 503 busy when the engine would refuse a job now: checked before an upload is read. */
  assertRoom(): void;
  /** Compresses (or unlocks) a file for key; the result's body, or the job it was queued as. */
  compress(
    request: RequestInfo,
    key: AuthenticatedKey,
    kind: EngineJob["kind"],
    intake: Intake,
    limit?: SyncLimit,
  ): Promise<SyncAnswer>;
  /** The dashboard's Try it: compresses the form's file with the key the form names. */
  compressForm(
    request: RequestInfo,
    form: FormIntake,
  ): Promise<SyncAnswer & { headers: Record<string, string>; filename: string; fields: Record<string, string> }>;
  /**
   * Reads a multipart body of /v1/compress without compressing or charging it: for its digest only
   * (body-digest.ts), when an Idempotency-Key's answer is to be replayed to a retry.
   */
  readForDigest(upload: IncomingUpload): Promise<void>;
  /** Accepts a job: its unit reserved, its file stored, the job queued; the queued job's resource. */
  enqueue(request: RequestInfo, key: AuthenticatedKey, intake: JobIntake): Promise<Answer<JobResource>>;
  /**
   * Compresses a direct upload (its owner's, at most 300 MB, %PDF-; taken once), at once or as a job;
   * refused before it started, the upload is given back for another try.
   */
  compressDirectUpload(
    request: RequestInfo,
    key: AuthenticatedKey,
    body: DirectUploadRequest,
    mode: "now" | "job",
    limit?: SyncLimit,
  ): Promise<SyncAnswer>;
}

/** The multipart fields each surface takes besides the file part (options.ts ROUTE_FIELDS, and file_url). */
const FIELDS = {
  compress: [...ROUTE_FIELDS.compress, ...FILE_NAMING.form],
  unlock: [...ROUTE_FIELDS.unlock, ...FILE_NAMING.form],
  job: [...ROUTE_FIELDS.compress, ...FILE_NAMING.form],
} as const;

export function createCompressService(deps: CompressDeps): CompressService {
  const perKey = createRateLimiter({
    name: "api-key",
    points: deps.config.compress.ratePerMinute,
    windowSeconds: 60,
    redis: deps.redis,
    logger: deps.logger,
  });
  // Runners made for tests may only run; the service's own also says when it is full.
  const { runner } = deps as { runner: EngineRunner & Partial<Pick<Runner, "busy">> };
  const assertRoom = () => {
    const busy = runner.busy?.();
    if (busy) throw compression.busyRefusal(busy);
  };
  return {
    perKey,
    assertRoom,
    compress: (request, key, kind, intake, limit) => compressFile(deps, request, key, kind, intake, assertRoom, limit),
    compressForm: (request, form) => compressForm(deps, request, form, { perKey, assertRoom }),
    enqueue: (request, key, intake) => acceptJob(deps, request, key, intake),
    compressDirectUpload: (request, key, body, mode, limit) =>
      fromDirectUpload(deps, request, key, body, mode, (intake) =>
        compressFile(deps, request, key, "compress", intake, assertRoom, limit),
      ),
    readForDigest: async (upload) => {
      checkDeclaredSize(deps.config, upload);
      await withWorkspace(deps.config, (workspace) => receive(deps, upload, workspace, FIELDS.compress));
    },
  };
}

/** Refuses a body declared larger than the largest upload (413), before a byte of it is read. */
function checkDeclaredSize(config: Config, upload: IncomingUpload): void {
  const max = config.compress.maxUploadBytes;
  if (Number(upload.body.headers["content-length"]) > max + MULTIPART_OVERHEAD) throw tooLarge(max);
}

/** Reads the multipart body into the workspace (the service's shutdown gives it up). */
function receive(
  deps: CompressDeps,
  upload: IncomingUpload,
  workspace: Workspace,
  fields: readonly string[],
  beforeFile?: (fields: Readonly<Record<string, string>>, filename: string) => Promise<void>,
): Promise<Upload> {
  return receiveUpload(upload.body, {
    dir: workspace.dir,
    maxBytes: deps.config.compress.maxUploadBytes,
    idleTimeoutMs: deps.config.compress.uploadIdleTimeoutMs,
    fields,
    ...(upload.response ? { response: upload.response } : {}),
    ...(deps.shutdown ? { signal: deps.shutdown } : {}),
    ...(beforeFile ? { beforeFile } : {}),
  });
}

/** How file_urls are fetched: the webhooks' address policy, the upload's size and idle limits. */
const fileUrlPolicy = (deps: CompressDeps): FileUrlPolicy => ({
  targets: deps.config.webhookTargets,
  maxBytes: deps.config.compress.maxUploadBytes,
  idleTimeoutMs: deps.config.compress.uploadIdleTimeoutMs,
  totalTimeoutMs: deps.config.compress.fileUrlTimeoutMs,
  resolver: deps.resolver,
});

/**
 * Takes the request's file into the workspace: the multipart body read, then a file_url (the form's,
 * or a JSON body's) fetched to the workspace's input; an address this service signed
 * (own-file-url.ts) is read from storage instead, when it names an object of the key's account.
 * A file_url is fetched only once `checkFields` passed the fields beside it: a refused option costs
 * no download.
 */
async function takeFile(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  incoming: Incoming,
  workspace: Workspace,
  fields: readonly string[],
  checkFields: (fields: Readonly<Record<string, string>>) => void,
  beforeFile?: (fields: Readonly<Record<string, string>>, filename: string) => Promise<void>,
): Promise<Upload> {
  const upload =
    "upload" in incoming
      ? await receive(deps, incoming.upload, workspace, fields, beforeFile)
      : {
          path: workspace.input,
          size: 0,
          filename: "",
          fields: { ...incoming.url.fields },
          fileUrl: incoming.url.fileUrl,
        };
  if (upload.fileUrl === undefined) return upload;
  // A file by URL: what was asked is recorded before it is fetched (its name is known after).
  await beforeFile?.(upload.fields, upload.filename);
  checkFields(upload.fields);
  const policy = fileUrlPolicy(deps);
  const own = await ownObject(deps, upload.fileUrl, request.origin);
  const fetched = own
    ? await readOwnObject(deps, own, key.subscriberId, upload.path, policy, cancellation(deps, request))
    : await fetchFileUrl(upload.fileUrl, upload.path, policy, cancellation(deps, request));
  return { ...upload, ...fetched };
}

/** A JSON body's file_url and fields, checked before a unit is reserved (400s cost nothing). */
async function checkUrlInput(
  deps: CompressDeps,
  request: RequestInfo,
  kind: EngineJob["kind"] | "job",
  incoming: Incoming,
): Promise<void> {
  if (!("url" in incoming)) return checkDeclaredSize(deps.config, incoming.upload);
  const { fileUrl, fields } = incoming.url;
  if (!(await ownObject(deps, fileUrl, request.origin))) checkFileUrl(fileUrl, deps.config.webhookTargets);
  if (kind === "job") parseJobOptions(deps.config, fields);
  else parseOperation(kind, fields);
  parseOptions(fields);
  if (kind === "compress") refuseCallback(fields);
  retentionOf(deps.config, fields, { retentionSeconds: null });
}

/**
 * Reserves a unit for key, then does `work` with it; when the work fails, the compression fails with
 * the error's code and the unit is released once, and the error is thrown on (a shutdown's as 503).
 */
async function charged<T>(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  work: (reserved: Reserved) => Promise<T>,
): Promise<T> {
  const reserved = await compression.reserve(deps.prisma, key);
  try {
    return await work(reserved);
  } catch (caught) {
    const clientGone = request.signal.aborted;
    const error = deps.shutdown?.aborted && !clientGone ? shuttingDown() : caught;
    const code = failureCode(error);
    if (error instanceof UploadAborted || clientGone) {
      deps.logger.info({ requestId: request.requestId }, "client went away during compression");
    } else if (code === "shutting_down") {
      deps.logger.warn({ requestId: request.requestId }, "compression cut off by the shutdown");
    }
    await compression.failOrRetryLater(deps.prisma, reserved, code, deps.logger);
    throw error;
  }
}

/** The work is cancelled by the client going away or the service shutting down. */
const cancellation = (deps: CompressDeps, request: RequestInfo) =>
  deps.shutdown ? AbortSignal.any([request.signal, deps.shutdown]) : request.signal;

/** Records the result and answers its body with the quota's headers. */
async function succeed(
  deps: CompressDeps,
  request: RequestInfo,
  reserved: Reserved,
  result: Produced & { work: Work; originalSize: number; retentionSeconds: number },
): Promise<Answer<CompressionResultBody>> {
  const { config } = deps;
  const { work, originalSize, objectName, compressedSize, report, retentionSeconds } = result;
  const kind = work.operation.kind;
  const url = await resultUrl(
    deps,
    { objectName, uploadedName: work.uploadedName, kind, retentionSeconds },
    { ttlSeconds: config.downloadUrlTtlSeconds, origin: request.origin },
  );
  const { expiresAt } = await compression.succeed(
    deps.prisma,
    reserved,
    {
      profile: work.options.profile,
      originalSize,
      compressedSize,
      objectName,
      filename: work.uploadedName,
      kind,
      retentionSeconds,
      ...(report ? { report } : {}),
    },
    { maxSeconds: maxRetentionSeconds(config) },
  );
  const body = {
    id: reserved.id,
    ...compression.resultBody(originalSize, compressedSize, url, config.downloadUrlTtlSeconds, report),
    retention: retentionSeconds,
    ...(expiresAt ? { expires_at: expiresAt.toISOString() } : {}),
  };
  const headers = compression.quotaHeaders(reserved.limit, reserved.limit - reserved.used, nextMonth());
  return { body, headers: { ...headers, "Cache-Control": "no-store" } };
}

/** Runs and records the compression of an upload received into the workspace. */
async function compressUpload(
  deps: CompressDeps,
  request: RequestInfo,
  reserved: Reserved,
  workspace: Workspace,
  upload: Upload,
  work: Work & { retentionSeconds: number },
): Promise<Answer<CompressionResultBody>> {
  const produced = await produce(deps, workspace, work, cancellation(deps, request));
  const { retentionSeconds } = work;
  return succeed(deps, request, reserved, { ...produced, work, originalSize: upload.size, retentionSeconds });
}

/** The retention a request's fields ask (its `retention`, else the account's default), capped by the maximum. */
export const retentionOf = (
  config: Pick<Config, "resultRetentionHours">,
  fields: Readonly<Partial<Record<string, string>>>,
  key: Pick<AuthenticatedKey, "retentionSeconds">,
) => parseRetention(fields["retention"], key.retentionSeconds, maxRetentionSeconds(config));

async function compressFile(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  kind: EngineJob["kind"],
  intake: Intake,
  assertRoom: () => void,
  limit?: SyncLimit,
): Promise<SyncAnswer> {
  if ("stored" in intake) {
    const { stored } = intake;
    const work = { operation: { kind: "compress" as const }, options: stored.options, uploadedName: stored.filename };
    return charged(deps, request, key, async (reserved) => {
      await takeStored(deps, reserved, stored);
      const queue = (reason: AsyncReason) =>
        queueJob(deps, request, key, reserved, { ...stored, callbackUrl: null }, reason);
      if (limit && stored.size > limit.maxBytes) return { job: await queue(sizeReason(stored.size, limit)) };
      return pastSyncLimitAsJob(
        async () => {
          const signal = cancellation(deps, request);
          const produced = await produceFromStorage(deps, stored.objectName, syncWork(deps, work), signal);
          const { retentionSeconds } = stored;
          return succeed(deps, request, reserved, { ...produced, work, originalSize: stored.size, retentionSeconds });
        },
        (past) => queue(ocrReason(deps.config, past, limit)),
      );
    });
  }
  await checkUrlInput(deps, request, kind, intake);
  return charged(deps, request, key, (reserved) =>
    withWorkspace(deps.config, async (workspace) => {
      // The engine's room is checked once the unit is reserved, before the body is read: a 503 busy
      // costs the client its headers, not its upload (the unit goes back as for any failure).
      assertRoom();
      const asked = askedRecorder(deps, reserved, kind);
      const checkFields = (fields: Readonly<Record<string, string>>) => {
        if (kind === "compress") refuseCallback(fields);
        parseOperation(kind, fields);
        parseOptions(fields);
        retentionOf(deps.config, fields, key);
      };
      const upload = await takeFile(deps, request, key, intake, workspace, FIELDS[kind], checkFields, asked.atFile);
      await asked.atEnd(upload);
      if (kind === "compress") refuseCallback(upload.fields);
      const work = {
        operation: parseOperation(kind, upload.fields),
        options: parseOptions(upload.fields),
        uploadedName: upload.filename,
        retentionSeconds: retentionOf(deps.config, upload.fields, key),
      };
      const queue = (reason: AsyncReason) =>
        queueFromWorkspace(deps, request, key, reserved, { workspace, upload, work }, reason);
      // Larger than the surface compresses within its call: the file fetched is stored as the job's input.
      if (limit && upload.size > limit.maxBytes) return { job: await queue(sizeReason(upload.size, limit)) };
      return pastSyncLimitAsJob(
        () => compressUpload(deps, request, reserved, workspace, upload, syncWork(deps, work)),
        (past) => queue(ocrReason(deps.config, past, limit)),
      );
    }),
  );
}

/**
 * A synchronous call's work: with ocr, at most COMPRESS_SYNC_OCR_MAX_PAGES scanned pages are read
 * (some 3 to 10 s each, beside clients and proxies that wait 60 to 120 s); a file with more is
 * queued as a job (pastSyncLimitAsJob), as Google Vision's and Textract's synchronous calls read a
 * few pages and send longer documents to their asynchronous ones, but without a second request.
 */
const syncWork = <W extends Work>(deps: CompressDeps, work: W): W =>
  work.options.ocr === true ? { ...work, ocrPageLimit: deps.config.compress.syncOcrMaxPages } : work;

/**
 * Runs a synchronous call; when the engine finds more scanned pages than a synchronous call reads
 * (OcrPastSyncLimit), `queue` queues the same file, under the same reserved unit, as a job: the
 * caller gets the job (202) and loses neither its upload nor a unit.
 */
async function pastSyncLimitAsJob(
  now: () => Promise<Answer<CompressionResultBody>>,
  queue: (past: OcrPastSyncLimit) => Promise<Answer<JobResource>>,
): Promise<SyncAnswer> {
  try {
    return { now: await now() };
  } catch (error) {
    if (!(error instanceof OcrPastSyncLimit)) throw error;
    return { job: await queue(error) };
  }
}

/**
 * Queues a synchronous call's file, in its workspace, as a job (pastSyncLimitAsJob, or past the
 * surface's size limit), saying why (`reason`, the resource's async_reason). An unlock is
 * decrypted first (the engine, without the profile): the job compresses the decrypted file with the
 * options, so no password is kept.
 */
async function queueFromWorkspace(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  reserved: Reserved,
  from: { workspace: Workspace; upload: Upload; work: Work & { retentionSeconds: number } },
  reason: AsyncReason,
): Promise<Answer<JobResource>> {
  const { workspace, upload, work } = from;
  let path = workspace.input;
  if (work.operation.kind === "unlock") {
    const { password } = work.operation;
    const paths = { inputPath: workspace.input, outputPath: workspace.output };
    const decrypt = { kind: "unlock" as const, password, ...paths, signatures: work.options.signatures };
    await compression.run(deps.runner, decrypt, cancellation(deps, request));
    path = workspace.output;
  }
  const objectName = newObjectName();
  const input = {
    objectName,
    filename: upload.filename,
    size: upload.size,
    options: work.options,
    callbackUrl: null,
    retentionSeconds: work.retentionSeconds,
  };
  try {
    await deps.storage.putInput(objectName, path);
    return await queueJob(deps, request, key, reserved, input, reason);
  } catch (error) {
    await deps.storage.deleteInput(objectName).catch(() => undefined);
    throw error;
  }
}

/**
 * Records what a call asked for (compressions.ts, recordAsked) as its file begins, and again once the
 * body is read when fields followed the file: a call refused or failed from then on is listed on
 * History with its profile, options and file name.
 */
function askedRecorder(deps: CompressDeps, reserved: Reserved, kind: EngineJob["kind"]) {
  let recorded = "";
  const atFile = async (fields: Readonly<Record<string, string>>, filename: string) => {
    const asked = JSON.stringify([askedOptions(fields), filename]);
    if (asked === recorded) return;
    recorded = asked;
    await recordAsked(deps.prisma, reserved.id, { fields, filename, kind });
  };
  return { atFile, atEnd: (upload: Upload) => atFile(upload.fields, upload.filename) };
}

/** A direct upload taken by a reserved compression: tied to it, and what it asked for recorded. */
async function takeStored(deps: CompressDeps, reserved: Reserved, stored: StoredInput): Promise<void> {
  if (stored.uploadId) await tieUpload(deps.prisma, stored.uploadId, reserved.id);
  await recordAsked(deps.prisma, reserved.id, { fields: stored.fields ?? {}, filename: stored.filename });
}

/**
 * A synchronous compression takes a callback_url only empty, as a form (the docs page's "Try it
 * out") sends every field it shows: a URL means the client expected a job and its webhook, which
 * only `Prefer: respond-async` asks for, so it is refused saying so rather than ignored.
 */
function refuseCallback(fields: Readonly<Record<string, string>>): void {
  if (fields["callback_url"]) {
    throw new HttpError(
      400,
      "unexpected_field",
      'callback_url is taken only with the header "Prefer: respond-async" (a job, whose end is posted to callback_url); leave it empty to compress at once.',
    );
  }
}

async function compressForm(
  deps: CompressDeps,
  request: RequestInfo,
  form: FormIntake,
  service: Pick<CompressService, "perKey" | "assertRoom">,
) {
  checkDeclaredSize(deps.config, form.upload);
  let key: AuthenticatedKey | undefined;
  let limited: Record<string, string> = {};
  return withWorkspace(deps.config, async (workspace) => {
    // The key, its rate limit, its quota and the engine's room are checked as the file part begins,
    // before a byte of the file is read; the unit itself is reserved once the file is in.
    const upload = await receive(deps, form.upload, workspace, [...form.fields, ...OPTION_FIELDS], async (fields) => {
      key = await form.keyOf(fields);
      limited = await admit(deps, service.perKey, key);
      service.assertRoom();
    });
    // Its options are read once the unit is reserved and the call recorded, as the API's are: a
    // refused option is listed on History with what was asked (the unit given back).
    const answer = await charged(deps, request, key!, async (reserved) => {
      await recordAsked(deps.prisma, reserved.id, { fields: upload.fields, filename: upload.filename });
      const work = {
        operation: { kind: "compress" as const },
        options: parseOptions(upload.fields),
        uploadedName: upload.filename,
        retentionSeconds: retentionOf(deps.config, upload.fields, key!),
      };
      // With ocr, as the API's synchronous call: a scan with more pages to read is queued as a job.
      return pastSyncLimitAsJob(
        () => compressUpload(deps, request, reserved, workspace, upload, syncWork(deps, work)),
        (past) =>
          queueFromWorkspace(deps, request, key!, reserved, { workspace, upload, work }, ocrReason(deps.config, past)),
      );
    });
    const headers = { ...limited, ...("now" in answer ? answer.now.headers : answer.job.headers) };
    return { ...answer, headers, filename: upload.filename, fields: upload.fields };
  });
}

/**
 * A key used outside the API's routes (the dashboard's Try it): its rate limit counted (429 with
 * its headers), and a unit left this month (402; read only: the unit is reserved later).
 */
async function admit(deps: CompressDeps, perKey: RateLimiter, key: AuthenticatedKey): Promise<Record<string, string>> {
  const limit = await perKey.consume(key.id);
  const headers = rateLimitHeaders(perKey, limit);
  if (!limit.allowed) {
    throw new HttpError(429, "rate_limited", `Too many requests with this key; retry in ${limit.resetSeconds} s.`, {
      ...headers,
      ...retryAfter(limit.resetSeconds),
    });
  }
  if ((await usedThisMonth(deps.prisma, key.subscriberId)) >= key.monthlyQuota) {
    throw compression.quotaExceeded(key.monthlyQuota);
  }
  return headers;
}

/** A job's options from its fields: the compression's, and its callback_url (checked). */
export function parseJobOptions(
  config: Pick<Config, "webhookTargets">,
  fields: Readonly<Partial<Record<string, string>>>,
): CompressionOptions & { callbackUrl: string | null } {
  const callbackUrl = fields["callback_url"];
  return {
    ...parseOptions(fields),
    callbackUrl:
      callbackUrl === undefined || callbackUrl === "" ? null : checkCallbackUrl(callbackUrl, config.webhookTargets),
  };
}

/**
 * Accepts a job: the unit reserved before the body is read (402 first, as for the synchronous
 * call), a multipart file received and stored as the job's input, the job queued. On any failure
 * the compression fails and its unit is released once, and an input stored for it is deleted.
 */
async function acceptJob(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  intake: JobIntake,
): Promise<Answer<JobResource>> {
  if ("stored" in intake) {
    const { stored } = intake;
    return charged(deps, request, key, async (reserved) => {
      await takeStored(deps, reserved, stored);
      return queueJob(deps, request, key, reserved, stored);
    });
  }
  await checkUrlInput(deps, request, "job", intake);
  return charged(deps, request, key, (reserved) =>
    withWorkspace(deps.config, async (workspace) => {
      const asked = askedRecorder(deps, reserved, "compress");
      const checkFields = (fields: Readonly<Record<string, string>>) => {
        parseJobOptions(deps.config, fields);
        retentionOf(deps.config, fields, key);
      };
      const upload = await takeFile(deps, request, key, intake, workspace, FIELDS.job, checkFields, asked.atFile);
      await asked.atEnd(upload);
      const { callbackUrl, ...options } = parseJobOptions(deps.config, upload.fields);
      const retentionSeconds = retentionOf(deps.config, upload.fields, key);
      const objectName = newObjectName();
      const input = {
        objectName,
        filename: upload.filename,
        size: upload.size,
        options,
        callbackUrl,
        retentionSeconds,
      };
      try {
        await deps.storage.putInput(objectName, upload.path);
        return await queueJob(deps, request, key, reserved, input);
      } catch (error) {
        await deps.storage.deleteInput(objectName).catch(() => undefined);
        throw error;
      }
    }),
  );
}

/**
 * Queues the job of a reserved compression whose input is stored; the queued resource, with
 * `reason` as its async_reason when a synchronous call was answered with it.
 */
async function queueJob(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  reserved: Reserved,
  input: StoredInput & { callbackUrl: string | null },
  reason?: AsyncReason,
): Promise<Answer<JobResource>> {
  const { config } = deps;
  await recordRetention(deps.prisma, reserved.id, input.retentionSeconds);
  const { id } = await queue.enqueue(deps.prisma, reserved, {
    options: input.options,
    callbackUrl: input.callbackUrl,
    apiKeyId: key.id,
    inputObject: input.objectName,
    filename: input.filename,
    originalSize: input.size,
    apiOrigin: request.origin,
    maxAttempts: config.jobs.maxAttempts,
  });
  const job = await deps.prisma.compressionJob.findUniqueOrThrow({ where: { id } });
  deps.onJobQueued?.();
  const body = await jobResource(job, deps);
  return {
    body: reason ? { ...body, async_reason: reason } : body,
    headers: { "Cache-Control": "no-store" },
  };
}

/**
 * How the caller polls the job it was answered with: over HTTP its Location; over MCP (compress_pdf,
 * the surface with a SyncLimit), which has no headers, get_compression.
 */
const pollFor = (limit: SyncLimit | undefined) =>
  limit ? "Poll get_compression with its id for the result." : "Poll its Location (GET /v1/jobs/{id}) for the result.";

/** Why a synchronous call with ocr was answered with a job: more scanned pages than it reads. */
function ocrReason(config: Config, past: OcrPastSyncLimit, surface?: SyncLimit): AsyncReason {
  const limit = config.compress.syncOcrMaxPages;
  return {
    code: "ocr_page_limit",
    message: `The file has ${past.pages} scanned pages to read with ocr, more than the ${limit} a synchronous call reads: it was queued as this job, charged once. ${pollFor(surface)}`,
    ocr_pages: past.pages,
    sync_ocr_page_limit: limit,
  };
}

/** Why compress_pdf (/v1/mcp) was answered with a job: the file is larger than it compresses within its call. */
function sizeReason(size: number, limit: SyncLimit): AsyncReason {
  const bytes = (count: number) => count.toLocaleString("en-US");
  return {
    code: "mcp_size_limit",
    message: `The file is ${bytes(size)} bytes, more than the ${bytes(limit.maxBytes)} compress_pdf compresses within its call (MCP_SYNC_MAX_BYTES): it was queued as this job, charged once. ${pollFor(limit)}`,
    file_size: size,
    mcp_sync_max_bytes: limit.maxBytes,
  };
}

/**
 * POST /v1/compress with {"upload_id", …}: the options checked, the upload taken (once), then `run`
 * (at once) or a job; a refusal before the work started gives the upload back for another try, and
 * an upload compressed at once has its input deleted.
 */
async function fromDirectUpload(
  deps: CompressDeps,
  request: RequestInfo,
  key: AuthenticatedKey,
  body: DirectUploadRequest,
  mode: "now" | "job",
  run: (intake: { stored: StoredInput }) => Promise<SyncAnswer>,
): Promise<SyncAnswer> {
  const { callbackUrl, ...options } = parseJobOptions(deps.config, body.fields);
  const retentionSeconds = retentionOf(deps.config, body.fields, key);
  const upload = await takeDirectUpload(deps, key, body.uploadId);
  const stored = { ...upload, uploadId: upload.id, options, retentionSeconds, fields: body.fields };
  let answered: SyncAnswer;
  try {
    answered =
      mode === "job"
        ? { job: await acceptJob(deps, request, key, { stored: { ...stored, callbackUrl } }) }
        : await run({ stored });
  } catch (error) {
    await giveBackUpload(deps.prisma, upload.id);
    throw error;
  }
  // A file compressed at once has its input deleted; a job's (asked, or past the OCR limit) keeps it.
  if ("now" in answered) await deps.storage.deleteInput(upload.objectName).catch(() => undefined);
  return answered;
}
