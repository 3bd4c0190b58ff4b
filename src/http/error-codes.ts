// Every error code the HTTP API can answer, with its meaning: the stable, documented contract
// (README and the OpenAPI description are generated from or checked against this list).
export const ERROR_CODES = {
  "invalid_<parameter>":
    "400: the named query parameter is malformed, out of range, empty or repeated, e.g. invalid_limit, invalid_offset, invalid_q, invalid_work_model, invalid_updated_since.",
  unknown_parameter: "400: the route does not take a parameter of this name.",
  not_found: "404: no public resource has this identifier, or no route has this path.",
  method_not_allowed: "405: the path exists but not for this method; see the Allow header.",
  rate_limited: "429: this client IP used up its requests for the window; retry after Retry-After seconds.",
  internal_error: "500: an unexpected fault; quote request_id when reporting it.",
  database_unavailable: "503: the database cannot be reached; retry after Retry-After seconds.",
  rate_limit_unavailable: "503: the shared rate-limit store cannot be reached; retry after Retry-After seconds.",
  shutting_down: "503: this instance is shutting down; retry the request (another instance answers it).",
} as const;
