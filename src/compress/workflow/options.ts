// A compression's options: one typed object, parsed once from the form fields (or a direct upload's
// JSON body) and carried unchanged to the engine, into a job's row and back out of it. A new option is
// a field here, its parser, its columns (jobColumns / optionsOfJob) and the engine's use of it.
import { HttpError } from "../../errors.ts";
import {
  COMPRESSION_PROFILES,
  isCompressionProfile,
  type CompressionProfile,
  type SignaturePolicy,
} from "../../pdf/index.ts";
import type { EngineJob } from "../isolation/protocol.ts";

export interface CompressionOptions {
  profile: CompressionProfile;
  /** What to do with a signed document: refuse it (422 signed_document) or remove its signatures. */
  signatures: SignaturePolicy;
}

/** The multipart fields (and JSON members) every compression takes besides the file. */
export const OPTION_FIELDS = ["profile", "signatures"] as const;

/** What the engine is asked to do: compress, or unlock with the document's password (then compress). */
export type Operation = { kind: "compress" } | { kind: "unlock"; password: string };

export function parseProfile(value: string | undefined): CompressionProfile {
  if (value === undefined) return "balanced";
  if (isCompressionProfile(value)) return value;
  throw new HttpError(
    400,
    "invalid_profile",
    `profile must be one of ${COMPRESSION_PROFILES.join(", ")}; got "${value.slice(0, 40)}"`,
  );
}

/**
 * The `signatures` field: absent or `refuse`, a signed document is refused (422 signed_document, not charged);
 * `remove`, it is compressed and its signatures, which would no longer verify, are removed.
 */
export function parseSignatures(value: string | undefined): SignaturePolicy {
  if (value === undefined || value === "refuse") return "refuse";
  if (value === "remove") return "remove";
  throw new HttpError(
    400,
    "invalid_signatures",
    `signatures must be refuse (the default: signed documents are refused) or remove; got "${value.slice(0, 40)}"`,
  );
}

/** The options of a request's fields (400 naming the field when one is not valid). */
export function parseOptions(fields: Readonly<Partial<Record<string, string>>>): CompressionOptions {
  return { profile: parseProfile(fields["profile"]), signatures: parseSignatures(fields["signatures"]) };
}

/** The operation of a request's fields: unlock takes the password field (400 missing_password without it). */
export function parseOperation(kind: EngineJob["kind"], fields: Readonly<Partial<Record<string, string>>>): Operation {
  if (kind === "compress") return { kind };
  const password = fields["password"];
  if (password === undefined) {
    throw new HttpError(400, "missing_password", "Send the document's password in a field named password.");
  }
  return { kind, password };
}

/** The engine's job: the operation on `inputPath` with the options, written to `outputPath`. */
export function engineJob(
  operation: Operation,
  options: CompressionOptions,
  paths: { inputPath: string; outputPath: string },
): EngineJob {
  const { profile, signatures } = options;
  return { ...operation, ...paths, profile, signatures };
}

/** A job row's columns for the options. */
export function jobColumns(options: CompressionOptions): { profile: CompressionProfile; signatures: "remove" | null } {
  return { profile: options.profile, signatures: options.signatures === "remove" ? "remove" : null };
}

/** The options back out of a job row's columns. */
export function optionsOfJob(row: { profile: CompressionProfile; signatures: string | null }): CompressionOptions {
  return { profile: row.profile, signatures: row.signatures === "remove" ? "remove" : "refuse" };
}
