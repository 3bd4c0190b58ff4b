// Every error code the HTTP API can answer, with its meaning: the stable, documented contract
// (README and the OpenAPI description are generated from or checked against this list).
export const ERROR_CODES = {
  "invalid_<parameter>":
    "400: the named query parameter is malformed, out of range, empty or repeated, e.g. invalid_limit, invalid_offset, invalid_q, invalid_work_model, invalid_updated_since.",
  invalid_cursor:
    "400: the cursor was not issued by this API, was altered or cut short, belongs to another list or filter, or was given with an offset other than the one it stands for; start again from meta.self without cursor.",
  since_expired:
    "410: the change feed's since is older than the changes kept (30 days); sync again from the list, then follow the feed from its next_since.",
  unknown_parameter: "400: the route does not take a parameter of this name.",
  not_found: "404: no public resource has this identifier, or no route has this path.",
  method_not_allowed: "405: the path exists but not for this method; see the Allow header.",
  rate_limited: "429: this client IP used up its requests for the window; retry after Retry-After seconds.",
  internal_error: "500: an unexpected fault; quote request_id when reporting it.",
  database_unavailable: "503: the database cannot be reached; retry after Retry-After seconds.",
  rate_limit_unavailable: "503: the shared rate-limit store cannot be reached; retry after Retry-After seconds.",
  shutting_down: "503: this instance is shutting down; retry the request (another instance answers it).",
} as const;
