// What the runner and its child processes say to each other over IPC.
import type { CompressionProfile, EngineOptions, PdfRejectedCode } from "../../pdf/index.ts";
import { isCompressionProfile, isPdfRejectedCode } from "../../pdf/index.ts";
import { isReportBody, type CompressionReportBody } from "../report.ts";

/**
 * One job: read `inputPath`, write the result to `outputPath`. An unlock job with a `profile`
 * also compresses the decrypted file with it. The engine's options beside the profile
 * (src/pdf/shared/options.ts): `signatures`, what to do with a signed file (default: refuse it,
 * signed_document); grayscale, maxImagePpi, removeMetadata, targetSize, linearize, ocr, ocrLanguages,
 * ocrTimeBudgetMs (the runner's: within the job's time limit), ocrPageLimit (a synchronous call's).
 */
export type EngineJob = (
  | { kind: "compress"; inputPath: string; outputPath: string; profile: CompressionProfile }
  | { kind: "unlock"; inputPath: string; outputPath: string; password: string; profile?: CompressionProfile }
) &
  EngineOptions;

/** The runner's own failure codes (the engine's refusals are PdfRejectedCode). */
export type RunnerFailureCode = "processing_timeout" | "processing_failed";

/** The engine's answer to a targetSize it could not reach above its quality floor (TargetUnreachable). */
export type TargetFailureCode = "target_unreachable";

/**
 * The engine's answer to a job with ocrPageLimit whose document has more scanned pages (OcrPageLimit):
 * `pages`, how many. Not the file's fault: the caller runs it as a job.
 */
export type OcrLimitFailureCode = "ocr_page_limit";

export type EngineFailureCode = PdfRejectedCode | RunnerFailureCode | TargetFailureCode | OcrLimitFailureCode;

/**
 * What the process measured of its job, for logs and the benchmarks: the time inside the engine
 * and the process's peak resident memory (VmHWM on Linux: the whole process since its exec,
 * modules included).
 */
export interface JobUsage {
  engineMs: number;
  maxRssKb: number;
  /** Of engineMs, the time spent on the report's page SSIM beyond the quality check's own work. */
  measureMs?: number;
  /** CPU time of the whole process (every thread: libvips', the recode workers') while the engine ran. */
  cpuMs?: number;
}

export type EngineResult =
  | { ok: true; outputSize: number; pages: number; usage?: JobUsage; report?: CompressionReportBody }
  | { ok: false; code: EngineFailureCode; message: string; pages?: number };

const isUsage = (value: unknown): value is JobUsage =>
  isObject(value) &&
  typeof value["engineMs"] === "number" &&
  Number.isFinite(value["engineMs"]) &&
  Number.isSafeInteger(value["maxRssKb"]) &&
  (value["measureMs"] === undefined || (typeof value["measureMs"] === "number" && value["measureMs"] >= 0)) &&
  (value["cpuMs"] === undefined || (typeof value["cpuMs"] === "number" && value["cpuMs"] >= 0));

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/**
 * What a child sends once it has loaded the engine and waits for its one job: a warm process. The
 * runner sends the job only after it, so no message is sent before the child listens for it.
 */
export interface ChildReady {
  ready: true;
}

export const CHILD_READY: ChildReady = { ready: true };

export const isChildReady = (value: unknown): value is ChildReady => isObject(value) && value["ready"] === true;

/**
 * What a child sends as soon as its job arrives, before it reads the file: a process that ends
 * before saying so never saw the job, and the runner gives the job another process.
 */
export interface JobReceived {
  received: true;
}

export const JOB_RECEIVED: JobReceived = { received: true };

export const isJobReceived = (value: unknown): value is JobReceived => isObject(value) && value["received"] === true;

/**
 * What a child sends while its job runs, before its reply: how far the engine is (EngineProgress),
 * pages done of the document's pages. The parent checks it as any message of the child's.
 */
export interface JobProgress {
  pagesDone: number;
  pagesTotal: number;
}

export const isJobProgress = (value: unknown): value is { progress: JobProgress } => {
  if (!isObject(value) || !isObject(value["progress"])) return false;
  const { pagesDone, pagesTotal } = value["progress"];
  return (
    Number.isSafeInteger(pagesDone) &&
    Number.isSafeInteger(pagesTotal) &&
    (pagesDone as number) >= 0 &&
    (pagesDone as number) <= (pagesTotal as number)
  );
};

const isSignaturePolicy = (value: unknown) => value === undefined || value === "refuse" || value === "remove";

/** The engine's options, each absent or of its type (their bounds are the engine's to check). */
const areEngineOptions = (value: Record<string, unknown>) =>
  isSignaturePolicy(value["signatures"]) &&
  ["grayscale", "removeMetadata", "linearize", "ocr"].every(
    (name) => value[name] === undefined || typeof value[name] === "boolean",
  ) &&
  ["maxImagePpi", "targetSize", "ocrTimeBudgetMs", "ocrPageLimit"].every(
    (name) => value[name] === undefined || Number.isSafeInteger(value[name]),
  ) &&
  (value["ocrLanguages"] === undefined ||
    (Array.isArray(value["ocrLanguages"]) && value["ocrLanguages"].every((code) => typeof code === "string")));

export function isEngineJob(value: unknown): value is EngineJob {
  if (
    !isObject(value) ||
    typeof value["inputPath"] !== "string" ||
    typeof value["outputPath"] !== "string" ||
    !areEngineOptions(value)
  ) {
    return false;
  }
  if (value["kind"] === "compress") return isCompressionProfile(value["profile"]);
  if (value["kind"] === "unlock") {
    return (
      typeof value["password"] === "string" &&
      (value["profile"] === undefined || isCompressionProfile(value["profile"]))
    );
  }
  return false;
}

/** A child's reply (a child handles untrusted input: the parent checks what it says). */
export function isEngineResult(value: unknown): value is EngineResult {
  if (!isObject(value)) return false;
  if (value["ok"] === true) {
    return (
      Number.isSafeInteger(value["outputSize"]) &&
      Number.isSafeInteger(value["pages"]) &&
      (value["usage"] === undefined || isUsage(value["usage"])) &&
      (value["report"] === undefined || isReportBody(value["report"]))
    );
  }
  return (
    value["ok"] === false &&
    typeof value["message"] === "string" &&
    (value["pages"] === undefined || Number.isSafeInteger(value["pages"])) &&
    (isPdfRejectedCode(value["code"]) ||
      value["code"] === "processing_failed" ||
      value["code"] === "target_unreachable" ||
      value["code"] === "ocr_page_limit")
  );
}
