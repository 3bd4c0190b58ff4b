// The catalog API (/api/v1): an openapi-fetch client typed by the generated paths, retrying on
// 429/503 as Retry-After says, and auto-paging that follows meta.next.
import createClient, { type Client } from "openapi-fetch";
import { ApiError, type ErrorBody } from "./errors.ts";
import type { components, paths } from "./generated/catalog.ts";
import { retryMiddleware, type RetryOptions } from "./retry.ts";

export type { components as CatalogComponents, paths as CatalogPaths } from "./generated/catalog.ts";
export type { JobPosting };

/** The path prefix of version 1; the documents' paths are relative to it. */
export const CATALOG_PREFIX = "/api/v1";

export interface CatalogClientOptions {
  /** The service's origin, e.g. `https://api.example.com` (the client adds /api/v1 unless given). */
  baseUrl: string;
  /** A fetch to use instead of the global one (tests, proxies, instrumentation). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retry-After handling on 429 and 503; `false` turns it off. */
  retry?: RetryOptions | false;
  headers?: Record<string, string>;
}

type JobPosting = components["schemas"]["JobPosting"];

/**
 * openapi-fetch's client narrowed to JSON (its `Media` parameter): `GET("/jobs/{slug}")` answers the
 * job's JSON type, not a union with the JSON-LD `JobPosting` the same route answers to
 * `Accept: application/ld+json`, so `data?.data.title` compiles as written. The JSON-LD form has its
 * own method.
 */
export interface CatalogClient extends Client<paths, "application/json"> {
  /** GET /jobs/{slug} with `Accept: application/ld+json`: the job as schema.org JobPosting, as search engines read it. */
  getJobPosting(slug: string, init?: { signal?: AbortSignal }): Promise<JobPostingResponse>;
}

export type JobPostingResponse =
  { data: JobPosting; error?: never; response: Response } | { data?: never; error: ErrorBody; response: Response };

/** The origin with /api/v1 added (kept once when the caller already gave it). */
function catalogBase(baseUrl: string): string {
  const origin = baseUrl.replace(/\/+$/, "");
  return origin.endsWith(CATALOG_PREFIX) ? origin : `${origin}${CATALOG_PREFIX}`;
}

export function createCatalogClient(options: CatalogClientOptions): CatalogClient {
  const client = createClient<paths, "application/json">({
    baseUrl: catalogBase(options.baseUrl),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: { accept: "application/json", ...options.headers },
    // As documented: work_model=remote,hybrid (style form, explode false).
    querySerializer: { array: { style: "form", explode: false } },
  });
  if (options.retry !== false) client.use(retryMiddleware(options.retry));
  return {
    ...client,
    async getJobPosting(slug, init = {}) {
      // The untyped client: the JSON-narrowed one has no type for the JSON-LD answer.
      const { data, error, response } = await (client as unknown as Client<paths>).GET("/jobs/{slug}", {
        params: { path: { slug } },
        headers: { accept: "application/ld+json" },
        parseAs: "json",
        ...(init.signal ? { signal: init.signal } : {}),
      });
      return data === undefined ? { error, response } : { data: data as JobPosting, response };
    },
  };
}

type ListBody = { data: unknown[]; meta: { next: string | null } };
type ListOperation = { responses: { 200: { content: { "application/json": ListBody } } } };

/** The paths that answer a list (`{data: [...], meta: {next}}`): /jobs, /talents, /companies, … */
export type CatalogListPath = {
  [P in keyof paths]: paths[P]["get"] extends ListOperation ? P : never;
}[keyof paths];

type Operation<P extends CatalogListPath> = paths[P]["get"];
export type CatalogPage<P extends CatalogListPath> = Operation<P>["responses"][200]["content"]["application/json"];
export type CatalogItem<P extends CatalogListPath> = CatalogPage<P>["data"][number];
/** A list's filters and page size; where to start is the pager's business (no offset, no cursor). */
export type CatalogListQuery<P extends CatalogListPath> = Omit<
  NonNullable<Operation<P>["parameters"]["query"]>,
  "offset" | "cursor"
>;

export interface PagingOptions<P extends CatalogListPath> {
  query?: CatalogListQuery<P>;
  signal?: AbortSignal;
}

/**
 * Every page of a list, first to last: the first with the given filters, then each `meta.next`
 * as the service wrote it (its opaque cursor and its spelling of every filter), through the
 * client, so its retrying and headers apply, until next is null or a page is empty. Throws
 * ApiError on an error response.
 */
export async function* catalogPages<P extends CatalogListPath>(
  client: CatalogClient,
  path: P,
  options: PagingOptions<P> = {},
): AsyncGenerator<CatalogPage<P>, void, undefined> {
  // openapi-fetch's per-path types do not survive a generic path; the page's type is restated below.
  const get = client.GET as unknown as (
    path: string,
    init: { params?: { query?: object }; querySerializer?: () => string; signal?: AbortSignal },
  ) => Promise<{ data?: ListBody; error?: unknown; response: Response }>;
  let search: string | undefined;
  do {
    const { data, error, response } = await get(path, {
      ...(search === undefined ? { params: { query: options.query ?? {} } } : { querySerializer: () => search! }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!data) throw new ApiError(response, error);
    yield data as CatalogPage<P>;
    // An empty page ends the walk too: a feed whose next is a token to resume from later (rather
    // than null at the end) must not be polled in a loop.
    search = data.meta.next === null || data.data.length === 0 ? undefined : nextSearch(data.meta.next, path);
  } while (search !== undefined);
}

/** Every item of a list, following meta.next until it is null (see catalogPages). */
export async function* catalogItems<P extends CatalogListPath>(
  client: CatalogClient,
  path: P,
  options: PagingOptions<P> = {},
): AsyncGenerator<CatalogItem<P>, void, undefined> {
  for await (const page of catalogPages(client, path, options)) yield* page.data as CatalogItem<P>[];
}

/** The query of a next link, checked to continue the same list. */
function nextSearch(next: string, path: string): string {
  const url = new URL(next);
  if (!url.pathname.endsWith(`${CATALOG_PREFIX}${path}`)) {
    throw new Error(`meta.next ${next} does not continue ${CATALOG_PREFIX}${path}`);
  }
  return url.search;
}
