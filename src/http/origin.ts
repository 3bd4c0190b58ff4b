// The API's public origin for absolute links: the configured one, or the one the client used
// (behind Cloud Run, X-Forwarded-Proto and the Host it sent).
import type { Context } from "koa";

export function publicOrigin(ctx: Context, configured: string | null): string {
  // HTTP/2 carries the host in the :authority pseudo-header; a Host header may come along too.
  return configured ?? `${ctx.protocol}://${ctx.get("host") || ctx.get(":authority")}`;
}
