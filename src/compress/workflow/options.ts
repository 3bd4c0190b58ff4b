// A compression's options: one typed object, parsed once from the form fields (or a direct upload's
// JSON body) and carried unchanged to the engine, into a job's row and back out of it. A new option is
// a field here, its parser, its columns (jobColumns / optionsOfJob) and the engine's use of it. The
// options that shape the output (grayscale, max_image_ppi, remove_metadata, target_size, linearize, ocr,
// ocr_languages) are the
// engine's own (src/pdf/shared/options.ts, docs/engine.md#options-beside-the-profile), named in snake_case on the wire: their
// bounds and the profiles they go with are the engine's optionProblem, answered as a 400 naming the field.
import { HttpError } from "../../errors.ts";
import {
  COMPRESSION_PROFILES,
  isCompressionProfile,
  optionProblem,
  type CompressionProfile,
  type EngineOptions,
  type OptionProblem,
  type SignaturePolicy,
} from "../../pdf/index.ts";
import type { EngineJob } from "../isolation/protocol.ts";

/** The engine's options that shape the output, each absent unless the request set it. */
export type OutputOptions = Pick<
  EngineOptions,
  "grayscale" | "maxImagePpi" | "removeMetadata" | "targetSize" | "linearize" | "ocr" | "ocrLanguages"
>;

export interface CompressionOptions extends OutputOptions {
  profile: CompressionProfile;
  /** What to do with a signed document: refuse it (422 signed_document) or remove its signatures. */
  signatures: SignaturePolicy;
}

/** Each output option's field on the wire, and the kind of value it takes. */
export const OUTPUT_FIELDS = {
  grayscale: { field: "grayscale", kind: "boolean" },
  maxImagePpi: { field: "max_image_ppi", kind: "integer" },
  removeMetadata: { field: "remove_metadata", kind: "boolean" },
  targetSize: { field: "target_size", kind: "integer" },
  linearize: { field: "linearize", kind: "boolean" },
  ocr: { field: "ocr", kind: "boolean" },
  ocrLanguages: { field: "ocr_languages", kind: "languages" },
} as const satisfies Record<keyof OutputOptions, { field: string; kind: "boolean" | "integer" | "languages" }>;

/**
 * The multipart fields (and JSON members) every compression takes besides the file: the engine's
 * options, and `retention`, which is the record's (how long the result is kept: results.ts).
 */
export const OPTION_FIELDS = [
  "retention",
  "profile",
  "signatures",
  OUTPUT_FIELDS.grayscale.field,
  OUTPUT_FIELDS.maxImagePpi.field,
  OUTPUT_FIELDS.removeMetadata.field,
  OUTPUT_FIELDS.targetSize.field,
  OUTPUT_FIELDS.linearize.field,
  OUTPUT_FIELDS.ocr.field,
  OUTPUT_FIELDS.ocrLanguages.field,
] as const;

/**
 * The option fields a call asked for, by their names on the wire and as sent (each cut to 64
 * characters; absent and empty ones left out): what its record keeps for History, valid or not.
 */
export function askedOptions(fields: Readonly<Partial<Record<string, string>>>): Record<string, string> {
  return Object.fromEntries(
    OPTION_FIELDS.flatMap((field) => {
      const value = fields[field];
      return value === undefined || value === "" ? [] : [[field, value.slice(0, 64)] as const];
    }),
  );
}

/**
 * The fields each route takes besides its file, as multipart fields and JSON members alike, written
 * once (issue 41): the options, and compress's callback_url (a job's webhook) or unlock's password.
 * The file itself is a `file` part, or named by `file_url` (a form field or JSON member, both routes)
 * or `upload_id` (a JSON member, compress only): FILE_NAMING.
 */
export const ROUTE_FIELDS = {
  compress: [...OPTION_FIELDS, "callback_url"],
  unlock: [...OPTION_FIELDS, "password"],
} as const;

/** How a request names its file instead of sending it: in a form (file_url), in a JSON body. */
export const FILE_NAMING = {
  form: ["file_url"],
  json: { compress: ["upload_id", "file_url"], unlock: ["file_url"] },
} as const;

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

type Fields = Readonly<Partial<Record<string, string>>>;

const invalidOption = (option: keyof OutputOptions, message: string) => {
  const { field } = OUTPUT_FIELDS[option];
  return new HttpError(400, `invalid_${field}`, `${field}: ${message}`);
};

/** A true/false field; absent or empty (a form sends every field it shows) is not set. */
function parseFlag(fields: Fields, option: "grayscale" | "removeMetadata" | "linearize" | "ocr"): boolean | undefined {
  const value = fields[OUTPUT_FIELDS[option].field];
  if (value === undefined || value === "") return undefined;
  if (value === "true" || value === "false") return value === "true";
  throw invalidOption(option, `must be true or false; got "${value.slice(0, 40)}"`);
}

/** A whole-number field (digits only; its bounds are the engine's); absent or empty is not set. */
function parseWholeNumber(fields: Fields, option: "maxImagePpi" | "targetSize"): number | undefined {
  const value = fields[OUTPUT_FIELDS[option].field];
  if (value === undefined || value === "") return undefined;
  // Anything but digits becomes NaN, which the engine's bounds refuse with the message they give.
  return /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
}

/**
 * ocr_languages: Tesseract's codes joined by + (as Tesseract writes them: "eng+deu"; a comma works
 * too); absent or empty is not set. The codes are the engine's to check (OCR_LANGUAGES).
 */
function parseLanguages(fields: Fields): string[] | undefined {
  const value = fields[OUTPUT_FIELDS.ocrLanguages.field];
  if (value === undefined || value === "") return undefined;
  return value.split(/[+,]/).map((code) => code.trim());
}

/**
 * The 400 of an option the engine's optionProblem refuses: its message, and a number out of its
 * bounds as it was given (one the profile alone refuses is not quoted: its value is not the fault).
 */
function optionRefusal(option: keyof OutputOptions, problem: OptionProblem, options: OutputOptions, fields: Fields) {
  const { field, kind } = OUTPUT_FIELDS[option];
  const outOfBounds = optionProblem("balanced", { [option]: options[option] }) !== undefined;
  const got = kind === "integer" && outOfBounds ? `; got "${(fields[field] ?? "").slice(0, 40)}"` : "";
  return invalidOption(option, `${problem.message}${got}`);
}

/** The output options of a request's fields, checked against the profile (400 naming the field). */
export function parseOutputOptions(profile: CompressionProfile, fields: Fields): OutputOptions {
  const parsed: OutputOptions = {
    grayscale: parseFlag(fields, "grayscale"),
    maxImagePpi: parseWholeNumber(fields, "maxImagePpi"),
    removeMetadata: parseFlag(fields, "removeMetadata"),
    targetSize: parseWholeNumber(fields, "targetSize"),
    linearize: parseFlag(fields, "linearize"),
    ocr: parseFlag(fields, "ocr"),
    ocrLanguages: parseLanguages(fields),
  };
  const options = Object.fromEntries(Object.entries(parsed).filter(([, value]) => value !== undefined));
  const problem = optionProblem(profile, options);
  if (problem) throw optionRefusal(problem.option as keyof OutputOptions, problem, options, fields);
  return options;
}

/** The options of a request's fields (400 naming the field when one is not valid). */
export function parseOptions(fields: Fields): CompressionOptions {
  const profile = parseProfile(fields["profile"]);
  return { profile, signatures: parseSignatures(fields["signatures"]), ...parseOutputOptions(profile, fields) };
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
  return { ...operation, ...paths, ...options };
}

/** The columns of a job row that hold its options. */
export interface OptionColumns {
  profile: CompressionProfile;
  signatures: string | null;
  grayscale: boolean;
  maxImagePpi: number | null;
  removeMetadata: boolean;
  targetSize: bigint | number | null;
  linearize: boolean;
  ocr: boolean;
  /** The languages joined by +, or null (eng, or no ocr). */
  ocrLanguages: string | null;
}

/** A job row's columns for the options. */
export function jobColumns(options: CompressionOptions): OptionColumns & { targetSize: bigint | null } {
  return {
    profile: options.profile,
    signatures: options.signatures === "remove" ? "remove" : null,
    grayscale: options.grayscale === true,
    maxImagePpi: options.maxImagePpi ?? null,
    removeMetadata: options.removeMetadata === true,
    targetSize: options.targetSize === undefined ? null : BigInt(options.targetSize),
    linearize: options.linearize === true,
    ocr: options.ocr === true,
    ocrLanguages: options.ocrLanguages ? options.ocrLanguages.join("+") : null,
  };
}

/** The options back out of a job row's columns. */
export function optionsOfJob(row: OptionColumns): CompressionOptions {
  return {
    profile: row.profile,
    signatures: row.signatures === "remove" ? "remove" : "refuse",
    ...(row.grayscale ? { grayscale: true } : {}),
    ...(row.maxImagePpi !== null ? { maxImagePpi: row.maxImagePpi } : {}),
    ...(row.removeMetadata ? { removeMetadata: true } : {}),
    ...(row.targetSize !== null ? { targetSize: Number(row.targetSize) } : {}),
    ...(row.linearize ? { linearize: true } : {}),
    ...(row.ocr ? { ocr: true } : {}),
    ...(row.ocrLanguages ? { ocrLanguages: row.ocrLanguages.split("+") } : {}),
  };
}

/** The options as the API names them: signatures, and each output option that is set, by its field. */
export function optionsBody(options: CompressionOptions): Record<string, string | number | boolean> {
  const set = (Object.keys(OUTPUT_FIELDS) as (keyof OutputOptions)[]).flatMap((option) => {
    const value = options[option];
    if (value === undefined) return [];
    return [[OUTPUT_FIELDS[option].field, Array.isArray(value) ? value.join("+") : value] as const];
  });
  return { signatures: options.signatures, ...Object.fromEntries(set) };
}
