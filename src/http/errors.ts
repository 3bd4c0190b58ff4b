// The error middleware: every HttpError (src/errors.ts) and every unexpected error becomes the one
// error shape of the service, {error: {code, message, request_id}}, with X-Error-Code and
// X-Error-Message.
import type { Next } from "koa";
import { errorBody, HttpError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { AppContext } from "./state.ts";

/** A header value must be visible ASCII: anything else is percent-encoded. */
function headerSafe(message: string): string {
  // By code point, as UTF-8 bytes: encodeURIComponent threw URIError on a lone surrogate, and on each
  // half of a character beyond the BMP matched alone, so a message quoting one (an unknown parameter
  // named U+10000) became a 500 (found by test/rest/params.fuzz.test.ts).
  return message
    .replace(/[^\x20-\x7e]|%/gu, (c) =>
      [...Buffer.from(c, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join(""),
    )
    .slice(0, 512);
}

export function errorMiddleware(logger: Logger) {
  return async (ctx: AppContext, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        throw new HttpError(404, "not_found", `No route for ${ctx.method} ${ctx.path}`);
      }
      // A router's allowedMethods() found the path but not the method (501: a method no route
      // knows at all): one answer for both, naming what is allowed.
      if ((ctx.status === 405 || ctx.status === 501) && !ctx.body) {
        const allow = ctx.response.get("Allow");
        throw new HttpError(405, "method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}; use ${allow}`, {
          Allow: allow,
        });
      }
    } catch (error) {
      const { requestId } = ctx.state;
      // An error is about this moment: no cache may keep it.
      ctx.set("Cache-Control", "no-store");
      ctx.remove("ETag");
      if (error instanceof HttpError) {
        // Type-checked at every constructor; a cast can still get an unregistered code past it.
        if (!error.registered)
          logger.error({ code: error.code, status: error.status, requestId }, "unregistered error code");
        // A dependency's fault answered as a 503: the answer says what the client may do, this line
        // says what failed (the request log's own line has only the status).
        if (error.status >= 500 && error.cause !== undefined)
          logger.warn({ err: error.cause, code: error.code, requestId }, "dependency fault");
        ctx.status = error.status;
        ctx.set(error.headers);
        // The compression API's "standardised error form carried in headers": the same code and
        // message as the body, for clients that only look at headers (e.g. after a HEAD or a 100).
        ctx.set("X-Error-Code", error.code);
        ctx.set("X-Error-Message", headerSafe(error.message));
        ctx.body = errorBody(error.code, error.message, requestId);
        return;
      }
      // Unexpected: log the detail, answer without it. A client that went away mid-request (an
      // aborted upload) is no fault of the service and nothing for Error Reporting: the request
      // log already records it as closed by the client.
      if (!ctx.writable || ctx.req.aborted) logger.debug({ err: error, requestId }, "client went away");
      else logger.error({ err: error, requestId }, "unhandled error");
      ctx.status = 500;
      ctx.set("X-Error-Code", "internal_error");
      ctx.set("X-Error-Message", "The server failed to answer this request.");
      ctx.body = errorBody("internal_error", "The server failed to answer this request.", requestId);
    }
  };
}
