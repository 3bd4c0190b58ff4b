// The package's entry point: the two clients, auto-paging, Retry-After handling and the error type.
export {
  catalogItems,
  catalogPages,
  createCatalogClient,
  CATALOG_PREFIX,
  type CatalogClient,
  type CatalogClientOptions,
  type CatalogComponents,
  type CatalogItem,
  type CatalogListPath,
  type CatalogListQuery,
  type CatalogPage,
  type CatalogPaths,
  type JobPosting,
  type JobPostingResponse,
  type PagingOptions,
} from "./catalog.ts";
export {
  createCompressionClient,
  outputFields,
  uploadName,
  type CompressionClient,
  type CompressionClientOptions,
  type CompressionComponents,
  type CompressionPaths,
  type CompressionProfile,
  type OutputOptions,
  type UploadOptions,
  type UploadResponse,
} from "./compression.ts";
export { ApiError, isErrorBody, type ErrorBody } from "./errors.ts";
export { openFile } from "./files.ts";
export {
  compressUpload,
  compressUrl,
  unlockUrl,
  submitJob,
  uploadFile,
  waitForJob,
  type CompressionJob,
  type CompressUploadOptions,
  type DirectUpload,
  type DirectUploadOptions,
  type JobOptions,
  type WaitOptions,
} from "./jobs.ts";
export { verifyWebhook, type WebhookHeaders } from "./webhooks.ts";
export {
  retryAfterMs,
  retryMiddleware,
  retryWait,
  withRetry,
  RETRY_DEFAULTS,
  type RetryEvent,
  type RetryOptions,
} from "./retry.ts";
