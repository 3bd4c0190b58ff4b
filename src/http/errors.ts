// One error shape for every HTTP error of the service: {error: {code, message, request_id}}.
import type { Context, Next } from "koa";
import type { Logger } from "../logger.ts";

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export function errorBody(code: string, message: string, requestId?: string) {
  return { error: { code, message, ...(requestId ? { request_id: requestId } : {}) } };
}

export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new HttpError(404, "not_found", `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (error) {
      const requestId = ctx.state["requestId"] as string | undefined;
      if (error instanceof HttpError) {
        ctx.status = error.status;
        ctx.set(error.headers);
        ctx.body = errorBody(error.code, error.message, requestId);
        return;
      }
      // Unexpected: log the detail, answer without it.
      logger.error({ err: error, requestId }, "unhandled error");
      ctx.status = 500;
      ctx.body = errorBody("internal_error", "The server failed to answer this request.", requestId);
    }
  };
}
