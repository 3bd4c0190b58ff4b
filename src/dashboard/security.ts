// The dashboard's defences, in one place: response headers (a strict CSP: only this origin's
// stylesheet and script, no inline code, forms post only here, never framed), the session cookie,
// and the two checks every form that changes something passes:
// 1. Cross-origin refusal from the browser's own headers, as Go's http.CrossOriginProtection does:
//    Sec-Fetch-Site (sent by every current browser) must be same-origin (or none: typed by the
//    user); without it, an Origin header must name this origin. A request with neither is not
//    from a browser and cannot ride a browser's cookie.
// 2. A token tied to the session (src/auth/sessions.ts) in a hidden field of the form.
// SameSite=Lax on the cookie is a third layer: a cross-site POST does not carry it at all.
import type { Context } from "koa";
import { HttpError } from "../errors.ts";
import { isBodyOf, readBody } from "../http/read-body.ts";

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function setPageHeaders(ctx: Context): void {
  ctx.set("Content-Security-Policy", CSP);
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
  // Sign-in links carry their secret in the query: never send an address on.
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("Cache-Control", "no-store");
}

export const crossOriginRefused = () =>
  new HttpError(403, "cross_origin_request", "This form was sent from another site; the request was refused.");

/** Throws 403 unless an unsafe request comes from a page of this origin (or from no browser). */
export function assertSameOrigin(ctx: Context): void {
  const site = ctx.get("Sec-Fetch-Site");
  if (site) {
    if (site === "same-origin" || site === "none") return;
    throw crossOriginRefused();
  }
  const origin = ctx.get("Origin");
  if (!origin) return;
  const host = ctx.get("host") || ctx.get(":authority");
  if (origin === "null" || origin !== `${ctx.protocol}://${host}`) throw crossOriginRefused();
}

/** The session cookie: __Host- prefixed (so no subdomain can set it) where the connection is TLS. */
export const sessionCookieName = (ctx: Context) => (ctx.secure ? "__Host-mkp_session" : "mkp_session");

export function setSessionCookie(ctx: Context, value: string, expiresAt: Date): void {
  ctx.cookies.set(sessionCookieName(ctx), value, {
    httpOnly: true,
    secure: ctx.secure,
    sameSite: "lax",
    path: "/",
    expires: expiresAt,
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: Context): void {
  ctx.cookies.set(sessionCookieName(ctx), "", {
    httpOnly: true,
    secure: ctx.secure,
    sameSite: "lax",
    path: "/",
    expires: new Date(0),
    overwrite: true,
  });
}

const FORM_LIMIT = 16 * 1024;

/** Reads an application/x-www-form-urlencoded body of at most 16 KiB. */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!isBodyOf(ctx.req, "application/x-www-form-urlencoded")) {
    throw new HttpError(415, "unsupported_media_type", "Send this form as application/x-www-form-urlencoded.");
  }
  const body = await readBody(ctx.req, FORM_LIMIT, formTooLarge);
  return new URLSearchParams(body.toString("utf8"));
}

const formTooLarge = () => new HttpError(413, "form_too_large", "The form is larger than 16 KiB.");
