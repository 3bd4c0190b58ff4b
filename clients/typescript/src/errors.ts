// The error both APIs document: `{"error": {"code", "message", "request_id"}}` with the HTTP
// status (the compression API repeats code and message in X-Error-Code and X-Error-Message).
// The typed calls return it as `error`; the helpers that cannot return it (the auto-pager) throw
// it as an ApiError.
import { retryAfterMs } from "./retry.ts";

export interface ErrorBody {
  error: { code: string; message: string; request_id?: string };
}

export function isErrorBody(value: unknown): value is ErrorBody {
  if (!value || typeof value !== "object" || !("error" in value)) return false;
  const error = value.error;
  return (
    !!error &&
    typeof error === "object" &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}

export class ApiError extends Error {
  readonly status: number;
  /** The documented code (`invalid_limit`, `rate_limited`, …); `http_<status>` for an undocumented body. */
  readonly code: string;
  readonly requestId: string | undefined;
  /** The Retry-After of the response, in ms, when it had one. */
  readonly retryAfterMs: number | undefined;
  readonly body: unknown;

  constructor(response: Response, body: unknown) {
    const documented = isErrorBody(body) ? body.error : undefined;
    const code = documented?.code ?? response.headers.get("x-error-code") ?? `http_${response.status}`;
    const message = documented?.message ?? (typeof body === "string" && body ? body : response.statusText);
    super(`${response.status} ${code}: ${message}`);
    this.name = "ApiError";
    this.status = response.status;
    this.code = code;
    this.requestId = documented?.request_id ?? response.headers.get("x-request-id") ?? undefined;
    this.retryAfterMs = retryAfterMs(response.headers.get("retry-after"));
    this.body = body;
  }
}
