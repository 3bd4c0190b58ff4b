// What a feature's work needs of the request it serves, as plain values: the public origin, the
// request id, and a signal aborted when the client goes away before its answer is written. A
// service takes these instead of the framework's context.
import type { ParameterizedContext } from "koa";
import { publicOrigin } from "./origin.ts";
import type { AppState } from "./state.ts";

export interface RequestInfo {
  origin: string;
  /** Aborted when the client closes the connection (or its stream) before the response finished. */
  signal: AbortSignal;
  requestId: string;
}

/** The request's plain values, and `dispose` to stop watching the client once the work is done. */
export function requestInfo(
  ctx: ParameterizedContext<AppState>,
  publicBaseUrl: string | null,
): RequestInfo & { dispose: () => void } {
  const abort = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  ctx.res.once("close", onClose);
  return {
    origin: publicOrigin(ctx, publicBaseUrl),
    signal: abort.signal,
    requestId: ctx.state.requestId,
    dispose: () => ctx.res.off("close", onClose),
  };
}

/** Runs work with the request's plain values, and stops watching the client after it. */
export async function withRequestInfo<T>(
  ctx: ParameterizedContext<AppState>,
  publicBaseUrl: string | null,
  work: (request: RequestInfo) => Promise<T>,
): Promise<T> {
  const { dispose, ...request } = requestInfo(ctx, publicBaseUrl);
  try {
    return await work(request);
  } finally {
    dispose();
  }
}
