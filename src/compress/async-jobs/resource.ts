// The job resource: what GET /v1/jobs/{id} answers, the 202 of an accepted job carries and a
// webhook posts. A succeeded job has the synchronous call's result fields (its download URL signed
// afresh at each read, valid expires_in seconds from then); a failed one, the error in the
// documented shape.
import type { CompressionJob } from "../../generated/prisma/client.ts";
import { resultBody, type CompressionResultBody } from "../compression.ts";
import { isReportBody } from "../report.ts";
import { optionsBody, optionsOfJob, type OptionColumns } from "../workflow/options.ts";
import { progressBody, type JobProgressBody } from "../workflow/compressions.ts";
import { resultUrl, type ResultDeps } from "../workflow/results.ts";

export type JobStatus = CompressionJob["status"];

export type JobResource = {
  id: string;
  object: "compression_job";
  status: JobStatus;
  profile: CompressionJob["profile"];
  /** What the job was asked besides the profile (optionsBody): signatures and the output options set. */
  options: ReturnType<typeof optionsBody>;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  attempts: number;
  /** The compression resource of this job (GET /v1/compressions/{id}), which DELETE removes. */
  compression_id: string;
  progress: JobProgressBody;
  /** When its result was deleted (on request, at the end of its retention, after its first download). */
  deleted_at?: string;
  /**
   * On the 202 of a synchronous call answered with a job: why, with its figures. ocr_page_limit: more
   * scanned pages to read with ocr than a synchronous call reads. mcp_size_limit (the MCP tool
   * compress_pdf only): a file larger than the tool compresses within its call.
   */
  async_reason?:
    | { code: "ocr_page_limit"; message: string; ocr_pages: number; sync_ocr_page_limit: number }
    | { code: "mcp_size_limit"; message: string; file_size: number; mcp_sync_max_bytes: number };
} & (Partial<CompressionResultBody> & { error?: { code: string; message: string } });

type JobRow = Pick<
  CompressionJob,
  | "id"
  | "compressionId"
  | "status"
  | "profile"
  | "createdAt"
  | "startedAt"
  | "finishedAt"
  | "attempts"
  | "originalSize"
  | "compressedSize"
  | "objectName"
  | "filename"
  | "errorCode"
  | "errorMessage"
  | "apiOrigin"
  | "pagesDone"
  | "pagesTotal"
> &
  OptionColumns & {
    /** Its compression's report and retention (WITH_REPORT), for a succeeded job's `report` and `url`. */
    compression?: { report: unknown; retentionSeconds: number | null; deletedAt: Date | null } | null;
  };

export { WITH_REPORT } from "../workflow/compressions.ts";

export async function jobResource(
  job: JobRow,
  deps: Pick<ResultDeps, "storage" | "config">,
  url: { origin?: string } = {},
): Promise<JobResource> {
  const base = {
    id: job.id,
    object: "compression_job" as const,
    status: job.status,
    profile: job.profile,
    options: optionsBody(optionsOfJob(job)),
    created_at: job.createdAt.toISOString(),
    started_at: job.startedAt?.toISOString() ?? null,
    finished_at: job.finishedAt?.toISOString() ?? null,
    attempts: job.attempts,
    compression_id: job.compressionId,
    progress: progressBody(job),
  };
  const deletedAt = job.compression?.deletedAt;
  if (job.status === "succeeded" && deletedAt) return { ...base, deleted_at: deletedAt.toISOString() };
  if (job.status === "succeeded" && job.objectName && job.compressedSize !== null) {
    const ttlSeconds = deps.config.downloadUrlTtlSeconds;
    const signed = await resultUrl(
      deps,
      {
        objectName: job.objectName,
        uploadedName: job.filename,
        kind: "compress",
        retentionSeconds: job.compression?.retentionSeconds ?? null,
      },
      { ttlSeconds, origin: url.origin ?? job.apiOrigin },
    );
    const stored = job.compression?.report;
    const report = isReportBody(stored) ? stored : undefined;
    const sizes = [Number(job.originalSize), Number(job.compressedSize)] as const;
    return { ...base, ...resultBody(...sizes, signed, ttlSeconds, report) };
  }
  if (job.status === "failed") {
    return { ...base, error: { code: job.errorCode ?? "internal_error", message: job.errorMessage ?? "" } };
  }
  return base;
}
