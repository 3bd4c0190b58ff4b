// Every result is a resource with an id, to its subscriber's keys only:
//   GET    /v1/compressions                 the account's compressions, newest first, cursor paging,
//                                           filters by status and creation date
//   GET    /v1/compressions/{id}            one, with its report and a download URL signed now
//   DELETE /v1/compressions/{id}            (and /v1/jobs/{id}) the result, input and upload gone now: 204
//   GET    /v1/results/{name}               a result kept until its first complete download (retention 0),
//                                           read through this service, which deletes it once sent whole
// The id of a job names its compression too, so a job's URL and its compression's are one resource.
import type Router from "@koa/router";
import type { Middleware, ParameterizedContext } from "koa";
import { HttpError } from "../../errors.ts";
import { publicOrigin } from "../../http/origin.ts";
import type { AppState } from "../../http/state.ts";
import { contentDisposition } from "../storage/storage.ts";
import {
  findCompression,
  listCompressions,
  type ListFilter,
  type ListStatus,
  type Position,
} from "../workflow/compressions.ts";
import {
  compressionResource,
  deleteCompression,
  notFound,
  ONCE_DOWNLOAD_PREFIX,
  openOnce,
  type ResultDeps,
} from "../workflow/results.ts";
import type { CompressDeps } from "../workflow/service.ts";
import type { KeyedContext, KeyedState } from "./jobs-and-uploads.ts";

export const LIST_PARAMETERS = ["limit", "cursor", "status", "created_after", "created_before"] as const;
const STATUSES: readonly ListStatus[] = ["queued", "running", "succeeded", "failed"];
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
// RFC 3339 date-time, with its offset (a date without a time is ambiguous across time zones).
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

const invalid = (name: string, message: string) => new HttpError(400, `invalid_${name}`, `${name} ${message}`);

/** The list's parameters: a route's query, or a tool's arguments (/v1/mcp). */
export type ListQuery = Readonly<Record<string, string | string[] | undefined>>;

/** One query parameter's value: absent, or given once (repeated is refused). */
function single(query: ListQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw invalid(name, "was given more than once.");
  return value;
}

function instant(query: ListQuery, name: "created_after" | "created_before"): Date | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!DATE_TIME.test(value) || Number.isNaN(date.getTime())) {
    throw invalid(name, `must be an RFC 3339 date-time such as 2026-12-01T00:00:00Z; got "${value.slice(0, 40)}".`);
  }
  return date;
}

function limitOf(query: ListQuery): number {
  const value = single(query, "limit");
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw invalid("limit", `must be a whole number from 1 to ${MAX_LIMIT}; got "${value.slice(0, 40)}".`);
  }
  return limit;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A cursor is the last row's position, opaque to clients: base64url of "<instant>|<id>". */
const encodeCursor = (position: Position) =>
  Buffer.from(`${position.createdAt.toISOString()}|${position.id}`).toString("base64url");

function cursorOf(query: ListQuery): Position | undefined {
  const value = single(query, "cursor");
  if (value === undefined) return undefined;
  const [at = "", id = "", ...rest] = Buffer.from(value, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at);
  if (rest.length > 0 || !UUID.test(id) || !DATE_TIME.test(at) || Number.isNaN(createdAt.getTime())) {
    throw new HttpError(400, "invalid_cursor", "cursor was not issued by this API; start again without it.");
  }
  return { createdAt, id };
}

function filterOf(query: ListQuery): ListFilter {
  const unknown = Object.keys(query).find((name) => !(LIST_PARAMETERS as readonly string[]).includes(name));
  if (unknown !== undefined) {
    throw new HttpError(
      400,
      "unknown_parameter",
      `Unknown parameter "${unknown.slice(0, 40)}"; this list takes ${LIST_PARAMETERS.join(", ")}.`,
    );
  }
  const status = single(query, "status");
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
    throw invalid("status", `must be one of ${STATUSES.join(", ")}; got "${status.slice(0, 40)}".`);
  }
  const createdAfter = instant(query, "created_after");
  const createdBefore = instant(query, "created_before");
  return {
    ...(status ? { status: status as ListStatus } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
  };
}

/** One page of the subscriber's compressions, and the cursor of the next while there is one. */
export async function compressionPage(deps: CompressDeps, subscriberId: string, query: ListQuery) {
  const filter = filterOf(query);
  const limit = limitOf(query);
  const after = cursorOf(query);
  const rows = await listCompressions(deps.prisma, subscriberId, filter, { limit, ...(after ? { after } : {}) });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    object: "list" as const,
    data: await Promise.all(page.map((row) => compressionResource(deps, row))),
    has_more: rows.length > limit,
    next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
  };
}

/** GET /v1/compressions. */
async function list(deps: CompressDeps, ctx: KeyedContext): Promise<void> {
  const page = await compressionPage(deps, ctx.state.apiKey.subscriberId, ctx.query);
  ctx.set("Cache-Control", "no-store");
  ctx.body = page;
}

/** One of the subscriber's compressions, its URL signed now (404 for anyone else's). */
export async function compressionOf(deps: CompressDeps, subscriberId: string, id: string, origin: string) {
  const record = await findCompression(deps.prisma, subscriberId, id);
  if (!record) throw notFound("compression");
  return { record, resource: await compressionResource(deps, record, { origin }) };
}

async function getOne(deps: CompressDeps, ctx: KeyedContext, id: string): Promise<void> {
  const origin = publicOrigin(ctx, deps.config.publicApiBaseUrl);
  const { record, resource } = await compressionOf(deps, ctx.state.apiKey.subscriberId, id, origin);
  ctx.set("Cache-Control", "no-store");
  if (record.status === "running") ctx.set("Retry-After", "2");
  ctx.body = resource;
}

async function deleteOne(deps: CompressDeps, ctx: KeyedContext, id: string, what: "compression" | "job") {
  await deleteCompression(deps, ctx.state.apiKey.subscriberId, id, what);
  ctx.status = 204;
}

/** GET /v1/results/{name}: sent whole, the result is deleted; a download cut short leaves it. */
async function downloadOnce(
  deps: ResultDeps & Pick<CompressDeps, "logger">,
  ctx: ParameterizedContext<AppState>,
  name: string,
) {
  const opened = await openOnce(deps, name, new URLSearchParams(ctx.querystring));
  ctx.type = "application/pdf";
  ctx.set("Content-Disposition", contentDisposition(opened.downloadName));
  ctx.set("Cache-Control", "private, no-store");
  if (ctx.method === "HEAD") {
    // A HEAD sends no body: it is no download, and the result stays.
    opened.stream.destroy();
    ctx.status = 200;
    ctx.length = opened.size;
    return;
  }
  ctx.res.once("finish", () => {
    // Every byte handed to the client's connection: the first complete download.
    opened.completed().catch((error: unknown) => {
      deps.logger.warn({ err: error }, "could not delete a result after its download; the sweep will");
    });
  });
  ctx.body = opened.stream;
  ctx.length = opened.size;
}

export function addCompressionRoutes(
  router: Router<AppState>,
  deps: CompressDeps,
  keyed: readonly [Middleware<KeyedState>, Middleware<KeyedState>],
): void {
  router.get<KeyedState>("/v1/compressions", ...keyed, (ctx) => list(deps, ctx));
  router.get<KeyedState>("/v1/compressions/:id", ...keyed, (ctx) => getOne(deps, ctx, ctx.params["id"] ?? ""));
  router.delete<KeyedState>("/v1/compressions/:id", ...keyed, (ctx) =>
    deleteOne(deps, ctx, ctx.params["id"] ?? "", "compression"),
  );
  router.delete<KeyedState>("/v1/jobs/:id", ...keyed, (ctx) => deleteOne(deps, ctx, ctx.params["id"] ?? "", "job"));
  router.get(`${ONCE_DOWNLOAD_PREFIX}:name`, (ctx) => downloadOnce(deps, ctx, ctx.params["name"] ?? ""));
}
