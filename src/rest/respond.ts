// How every successful /api/v1 response is written: JSON with a strong ETag (304 when the
// client's copy is current), public caching, and for lists the envelope with absolute
// meta.self/next and the same next in an RFC 8288 Link header. A list that continues by cursor
// puts it in next beside the offset it stands for, so following next seeks instead of skipping.
import { hash } from "node:crypto";
import type { Context } from "koa";
import type { MetaBody, SearchReadingBody } from "./resources.ts";

export interface CachePolicy {
  maxAgeSeconds: number;
}

/**
 * A strong validator of a representation's bytes: byte-for-byte the same representation, so it is
 * safe for range requests and If-Match as well as If-None-Match. SHA-1 (about twice as fast as
 * SHA-256 on a page of jobs): a validator needs no collision resistance against an attacker, who can
 * only spoil their own cache.
 */
export function strongEtag(bytes: Uint8Array): string {
  return `"${hash("sha1", bytes, "base64url")}"`;
}

/**
 * The policy of an answer whose counts are not exact yet (a lower bound, a sample's): revalidated on
 * every use (its ETag changes once they are), so a shared cache does not keep it for max-age while
 * the next request would get the exact counts.
 */
export const UNTIL_EXACT: CachePolicy = { maxAgeSeconds: 0 };

export function sendJson(ctx: Context, body: unknown, cache: CachePolicy, type = "application/json"): void {
  // Encoded once: the validator is taken of these bytes and they are what is sent (a string body
  // would be encoded again to hash it, to measure it for Content-Length and to write it).
  const bytes = Buffer.from(JSON.stringify(body));
  const etag = strongEtag(bytes);
  ctx.status = 200;
  ctx.type = type;
  ctx.set("ETag", etag);
  ctx.set("Cache-Control", `public, max-age=${cache.maxAgeSeconds}`);
  if (matchesIfNoneMatch(ctx.get("If-None-Match"), etag)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.body = bytes;
}

/**
 * RFC 9110 13.1.2, evaluated by the origin: weak comparison against each listed tag, or "*".
 * Not Koa's ctx.fresh, which answers 200 whenever the request says Cache-Control: no-cache, as
 * fetch() does for every request that carries its own If-None-Match.
 */
function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => opaque(tag) === etag);
}

export interface PageResult<Item> {
  items: Item[];
  total: number;
  /** false: total is a lower bound, the first count of this filter still running. */
  totalExact: boolean;
  limit: number;
  offset: number;
  /** Continues after the last item by seeking, when the list can; else next pages by offset. */
  nextCursor?: string | null;
  /** How q was read (GET /jobs with q). */
  search?: SearchReadingBody;
}

/** Whether another page follows this one, and the total to report (REST's meta, MCP's list tools). */
export function pageEnd(page: PageResult<unknown>): { hasNext: boolean; total: number } {
  const served = page.offset + page.items.length;
  // A lower bound says nothing about the end of the list: a full page may have more after it.
  const hasNext = page.items.length > 0 && (page.totalExact ? served < page.total : page.items.length === page.limit);
  // A lower bound is at least what this request has seen (a deep page may be past the count's cap).
  return { hasNext, total: page.totalExact ? page.total : Math.max(page.total, served + (hasNext ? 1 : 0)) };
}

/**
 * The list envelope. pageUrl(offset, cursor) is the absolute address of the page starting there;
 * `cursor` is the one this request came with (for self) or the page's continuation (for next).
 */
export function sendList<Item>(
  ctx: Context,
  page: PageResult<Item>,
  pageUrl: (offset: number, cursor: string | undefined) => string,
  cursor: string | undefined,
  cache: CachePolicy,
): void {
  const { hasNext, total } = pageEnd(page);
  const meta: MetaBody = {
    total,
    total_exact: page.totalExact,
    limit: page.limit,
    offset: page.offset,
    self: pageUrl(page.offset, cursor),
    next: hasNext ? pageUrl(page.offset + page.limit, page.nextCursor ?? undefined) : null,
    ...(page.search ? { search: page.search } : {}),
  };
  if (meta.next) ctx.set("Link", `<${meta.next}>; rel="next"`);
  sendJson(ctx, { data: page.items, meta }, page.totalExact ? cache : UNTIL_EXACT);
}
