// The example of each success response of the compression API's OpenAPI document (./openapi.ts), as
// the /v1/docs page shows it beside the operation: one compression of a CV, its job and its record.
// test/rest/openapi-examples.test.ts validates each against its response's schema. (Each error
// response's example is made from its code by openapi.ts.)
type Json = Record<string, unknown>;

const API = "https://api.example.com";
const ID = "0193a0b4-6c1e-7f00-8a00-00000000c001";
const JOB = "0193a0b4-6c1e-7f00-8a00-00000000c002";
const AT = "2026-12-01T09:15:00.000Z";
const DONE = "2026-12-01T09:15:04.000Z";
const URL = `${API}/v1/results/8f3e1c0a9b2d4e6f8a1c3e5f7a9b1d3e?expires=1764583000&signature=3c9f0d2a`;

const result = {
  id: ID,
  success: true,
  original_size: 2_480_112,
  compressed_size: 612_480,
  savings_percentage: 75.3,
  url: URL,
  expires_in: 3600,
  retention: 86_400,
  expires_at: "2026-12-02T09:15:04.000Z",
};

const job = {
  id: JOB,
  object: "compression_job",
  status: "queued",
  profile: "balanced",
  options: { signatures: "refuse", target_size: 1_000_000 },
  created_at: AT,
  started_at: null,
  finished_at: null,
  attempts: 0,
  compression_id: ID,
  progress: { pages_done: 0, pages_total: null },
};

const compression = {
  id: ID,
  object: "compression",
  operation: "compress",
  status: "succeeded",
  profile: "balanced",
  job_id: null,
  filename: "cv-2026.pdf",
  original_size: 2_480_112,
  compressed_size: 612_480,
  created_at: AT,
  finished_at: DONE,
  retention: 86_400,
  expires_at: "2026-12-02T09:15:04.000Z",
  deleted_at: null,
  deleted_by: null,
};

/** Examples by "METHOD path status". */
export const SUCCESS_EXAMPLES: Record<string, Json> = {
  "POST /v1/compress 200": result,
  "POST /v1/unlock 200": result,
  "POST /v1/compress 202": job,
  "POST /v1/unlock 202": {
    ...job,
    options: { signatures: "refuse", ocr: true },
    async_reason: {
      code: "ocr_page_limit",
      message:
        "The file has 40 scanned pages to read with ocr, more than the 5 a synchronous call reads: it was queued as this job, charged once. Poll its Location (GET /v1/jobs/{id}) for the result.",
      ocr_pages: 40,
      sync_ocr_page_limit: 5,
    },
  },
  "GET /v1/jobs/{id} 200": {
    ...job,
    status: "succeeded",
    started_at: AT,
    finished_at: DONE,
    attempts: 1,
    progress: { pages_done: 2, pages_total: 2 },
    success: true,
    original_size: result.original_size,
    compressed_size: result.compressed_size,
    savings_percentage: result.savings_percentage,
    url: URL,
    expires_in: 3600,
  },
  "POST /v1/uploads 201": {
    upload_id: "0193a0b4-6c1e-7f00-8a00-00000000c003",
    upload_url: `${API}/v1/uploads/0193a0b4-6c1e-7f00-8a00-00000000c003?expires=1764583000&signature=9a1b`,
    method: "PUT",
    headers: { "Content-Type": "application/pdf" },
    max_bytes: 314_572_800,
    expires_at: "2026-12-01T10:15:00.000Z",
  },
  "GET /v1/compressions 200": { object: "list", data: [compression], has_more: false, next_cursor: null },
  "GET /v1/compressions/{id} 200": { ...compression, savings_percentage: 75.3, url: URL, expires_in: 3600 },
  "GET /v1/usage 200": {
    plan: "corporate",
    monthly_quota: 10_000,
    used: 1_284,
    remaining: 8_716,
    period_start: "2026-12-01T00:00:00.000Z",
    resets_at: "2027-01-01T00:00:00.000Z",
  },
};

/** Puts each success example on its response's JSON content (the paths are changed in place). */
export function addSuccessExamples(paths: Record<string, Record<string, Json>>): void {
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const [status, response] of Object.entries((operation["responses"] ?? {}) as Record<string, Json>)) {
        const example = SUCCESS_EXAMPLES[`${method.toUpperCase()} ${path} ${status}`];
        const media = (response["content"] as Record<string, Json> | undefined)?.["application/json"];
        if (example && media) media["example"] = example;
      }
    }
  }
}
