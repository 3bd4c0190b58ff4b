// Why the engine refuses a file. The codes are stable: the HTTP layer answers them as they are.

export const PDF_REJECTED_CODES = [
  "not_a_pdf",
  "encrypted_pdf",
  "corrupted_pdf",
  "unsupported_pdf",
  "password_required",
  "incorrect_password",
  "not_encrypted",
  "signed_document",
] as const;

export type PdfRejectedCode = (typeof PDF_REJECTED_CODES)[number];

/** The input cannot (or, by policy, may not) be processed. `message` is safe to show to the client. */
export class PdfRejected extends Error {
  readonly code: PdfRejectedCode;
  constructor(code: PdfRejectedCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PdfRejected";
    this.code = code;
  }
}

export const isPdfRejectedCode = (value: unknown): value is PdfRejectedCode =>
  typeof value === "string" && (PDF_REJECTED_CODES as readonly string[]).includes(value);

/**
 * The targetSize option could not be reached without going below the quality floor
 * (target.ts). Not a refusal of the file: `smallestSize` is the smallest output reached, which
 * the caller may offer as a target that can be met.
 */
export class TargetUnreachable extends Error {
  readonly code = "target_unreachable";
  readonly targetSize: number;
  readonly smallestSize: number;
  constructor(targetSize: number, smallestSize: number) {
    super(
      `The PDF cannot be made as small as ${targetSize} bytes while every page stays legible; the smallest reached is ${smallestSize} bytes.`,
    );
    this.name = "TargetUnreachable";
    this.targetSize = targetSize;
    this.smallestSize = smallestSize;
  }
}
