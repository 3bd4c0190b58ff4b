// Opening an upload: is it a PDF, is it encrypted, is it whole. Everything the engine refuses
// is refused here, before any work is done. A file whose cross-reference data is broken is
// rebuilt from its objects the way readers rebuild it (reconstruct.ts), and refused only when
// even that finds no pages, or finds them cut off.
import { ParseSpeeds, PDFArray, PDFContext, PDFDict, PDFDocument, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { LoadOptions, PDFObject } from "@cantoo/pdf-lib";
import { PdfRejected } from "../shared/errors.ts";
import { filtersOf, N, numberOf } from "../streams/filters.ts";
import { endsEarly, firstIncompletePage, reconstruct } from "./reconstruct.ts";
import type { Repair } from "./reconstruct.ts";
import { findCrossReferenceProblem } from "./xref.ts";
import "./object-order.ts";
import "./parse-names.ts";
import "./parse-numbers.ts";
import "./stream-inflate.ts";
import "./stream-end.ts";
import "./xref-table.ts";

/** Readers look for `%PDF-` within this many first bytes (ISO 32000-2, 7.5.2, and every reader in practice). */
export const HEADER_WINDOW = 1024;
const HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
/** Image-only filters: a page's content stream encoded with one of these is not a PDF's. */
const IMAGE_FILTERS = new Set(["DCTDecode", "JBIG2Decode", "CCITTFaxDecode", "JPXDecode"]);
const CONTENT_FILTERS = new Set(["FlateDecode", "LZWDecode", "ASCII85Decode", "ASCIIHexDecode", "RunLengthDecode"]);

/** Where `%PDF-` starts within the first kilobyte (as readers require), or -1. */
export function findHeader(input: Uint8Array): number {
  const end = Math.min(input.length, HEADER_WINDOW) - HEADER.length;
  outer: for (let i = 0; i <= end; i++) {
    for (let k = 0; k < HEADER.length; k++) if (input[i + k] !== HEADER[k]) continue outer;
    return i;
  }
  return -1;
}

function requireHeader(input: Uint8Array): number {
  const at = findHeader(input);
  if (at < 0) throw new PdfRejected("not_a_pdf", "The file is not a PDF: it does not start with a %PDF- header.");
  return at;
}

/** Parses without decrypting; a parse failure is a corrupted file. */
async function parse(input: Uint8Array, options: LoadOptions): Promise<PDFDocument> {
  try {
    return await PDFDocument.load(input, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest, ...options });
  } catch (error) {
    throw new PdfRejected("corrupted_pdf", "The PDF is damaged and cannot be read.", { cause: error });
  }
}

export type Encryption = { kind: "user-password" | "owner-password-only" | "unsupported"; handler: string };

const isPasswordError = (error: unknown) =>
  error instanceof Error && /NEEDS PASSWORD|Password incorrect/.test(error.message);

/** How the file is encrypted, or undefined when it is not. */
async function encryptionOf(doc: PDFDocument, input: Uint8Array): Promise<Encryption | undefined> {
  const { Encrypt } = doc.context.trailerInfo;
  if (Encrypt === undefined) return undefined;
  const dict = doc.context.lookup(Encrypt);
  const filter = dict instanceof PDFDict ? dict.lookup(PDFName.of("Filter")) : undefined;
  const handler = filter instanceof PDFName ? filter.decodeText() : "unknown";
  if (handler !== "Standard") return { kind: "unsupported", handler };
  try {
    // Owner-password-only files have an empty user password: they open without one.
    await PDFDocument.load(input, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest, password: "" });
    return { kind: "owner-password-only", handler };
  } catch (error) {
    return isPasswordError(error) ? { kind: "user-password", handler } : { kind: "unsupported", handler };
  }
}

function encryptedRejection(encryption: Encryption): PdfRejected {
  switch (encryption.kind) {
    case "user-password":
      return new PdfRejected(
        "encrypted_pdf",
        "The PDF is password-protected. Send it to /v1/unlock with its password to have it decrypted.",
      );
    case "owner-password-only":
      return new PdfRejected(
        "encrypted_pdf",
        "The PDF is encrypted with an owner password: it opens without a password but carries permission " +
          "restrictions, and removing them requires the owner password. Send it to /v1/unlock with the owner password.",
      );
    case "unsupported":
      return new PdfRejected("encrypted_pdf", unsupportedEncryption(encryption));
  }
}

const unsupportedEncryption = (encryption: Encryption) =>
  encryption.handler === "Standard"
    ? "The PDF is encrypted, and its encryption dictionary cannot be read."
    : `The PDF is encrypted with a security handler that is not supported (${encryption.handler}).`;

/** Checks what pdf-lib does not: the cross-reference chain, the catalog, the pages, their contents. */
function validate(doc: PDFDocument, input: Uint8Array, headerOffset: number): number {
  const problem = findCrossReferenceProblem(input, doc.context, headerOffset);
  if (problem) throw new PdfRejected("corrupted_pdf", `The PDF is damaged: ${problem}.`);
  return validatePages(doc);
}

/**
 * The catalog, the pages, their contents; returns the page count. In a rebuilt (`damaged`) file,
 * a content filter nobody knows is damage, not a feature we lack.
 */
function validatePages(doc: PDFDocument, damaged = false): number {
  const catalog = doc.context.lookup(doc.context.trailerInfo.Root);
  if (!(catalog instanceof PDFDict)) throw new PdfRejected("corrupted_pdf", "The PDF is damaged: it has no catalog.");
  let pages;
  try {
    pages = doc.getPages();
  } catch (error) {
    throw new PdfRejected("corrupted_pdf", "The PDF is damaged: its page tree cannot be read.", { cause: error });
  }
  if (pages.length === 0) throw new PdfRejected("corrupted_pdf", "The PDF is damaged: it has no pages.");
  for (const page of pages) checkContentFilters(page.node.lookup(N.Contents), doc.context, damaged);
  return pages.length;
}

function checkContentFilters(contents: PDFObject | undefined, context: PDFContext, damaged: boolean): void {
  const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => context.lookup(ref)) : [contents];
  for (const stream of streams) {
    if (!(stream instanceof PDFRawStream)) continue;
    for (const filter of filtersOf(stream.dict) ?? []) {
      if (IMAGE_FILTERS.has(filter)) {
        throw new PdfRejected(
          "corrupted_pdf",
          `The PDF is damaged: a page's content is encoded as an image (${filter}).`,
        );
      }
      if (!CONTENT_FILTERS.has(filter)) {
        throw damaged
          ? new PdfRejected(
              "corrupted_pdf",
              `The PDF is damaged: a page's content names an unknown filter (${filter}).`,
            )
          : new PdfRejected("unsupported_pdf", `The PDF uses a stream filter that is not supported (${filter}).`);
      }
    }
  }
}

export interface OpenedPdf {
  doc: PDFDocument;
  pages: number;
  /** What had to be rebuilt to read the file (empty for an intact file). */
  repaired: Repair[];
}

/**
 * Opens an unencrypted PDF: an intact one as it is, a damaged one as readers rebuild it.
 * Refuses anything else.
 */
export async function openPdf(input: Uint8Array): Promise<OpenedPdf> {
  const headerOffset = requireHeader(input);
  // The cross-reference data is checked before pdf-lib reads the file front to back: a damaged file
  // goes straight to the rebuild, whose scan is linear, and not through pdf-lib's search for the
  // `endobj` of every broken object, which is quadratic on hostile files.
  const intact = findCrossReferenceProblem(input, PDFContext.create(), headerOffset) === undefined;
  // The intact parse is out of scope once it fails: it is not held while the file is rebuilt.
  return (intact && (await openIntact(input))) || openReconstructed(input);
}

/** The file as pdf-lib reads it front to back, if it reads. */
async function openIntact(input: Uint8Array): Promise<OpenedPdf | undefined> {
  let doc: PDFDocument;
  try {
    doc = await parse(input, { ignoreEncryption: true });
  } catch {
    return undefined;
  }
  const encryption = await encryptionOf(doc, input);
  if (encryption) throw encryptedRejection(encryption);
  const repaired: Repair[] = hasWrongStreamLength(doc.context) ? ["stream_length"] : [];
  return { doc, pages: validatePages(doc), repaired };
}

/**
 * Whether pdf-lib read a stream up to its `endstream` because its /Length was wrong (it does so
 * silently, and keeps the wrong value in the dictionary; the writer writes the right one).
 */
function hasWrongStreamLength(context: PDFContext): boolean {
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    const declared = numberOf(object.dict.lookup(N.Length));
    // A byte or two is the end-of-line after `stream` counted or not (pdf-lib reads "stream\r\n"
    // one way, qpdf another): not damage.
    if (declared !== undefined && Math.abs(declared - object.contents.length) > 2) return true;
  }
  return false;
}

/** pdf-lib builds documents only from bytes it parsed itself; this one was parsed object by object. */
const documentOf = (context: PDFContext) =>
  new (
    PDFDocument as unknown as new (
      context: PDFContext,
      ignoreEncryption: boolean,
      updateMetadata: boolean,
    ) => PDFDocument
  )(context, true, false);

async function openReconstructed(input: Uint8Array): Promise<OpenedPdf> {
  const rebuilt = reconstruct(input);
  if (!rebuilt) {
    throw new PdfRejected(
      "corrupted_pdf",
      endsEarly(input)
        ? "The PDF is damaged: the file ends early, before its first page."
        : "The PDF is damaged and cannot be read: no trailer or catalog leads to its pages.",
    );
  }
  const doc = documentOf(rebuilt.context);
  const encryption = await encryptionOf(doc, input);
  if (encryption) throw encryptedRejection(encryption);
  if (rebuilt.truncated) {
    const page = firstIncompletePage(rebuilt.context);
    if (page !== undefined) {
      throw new PdfRejected("corrupted_pdf", `The PDF is damaged: the file ends early, at page ${page}.`);
    }
  }
  return { doc, pages: validatePages(doc, true), repaired: rebuilt.repaired };
}

/** Opens an encrypted PDF with a password (user or owner); the document comes back decrypted. */
export async function openEncryptedPdf(
  input: Uint8Array,
  password: string,
): Promise<{ doc: PDFDocument; pages: number; encryption: Encryption }> {
  const headerOffset = requireHeader(input);
  const raw = await parse(input, { ignoreEncryption: true });
  const encryption = await encryptionOf(raw, input);
  if (!encryption) {
    validate(raw, input, headerOffset); // a damaged file is answered as damaged
    throw new PdfRejected("not_encrypted", "The PDF is not encrypted; there is nothing to unlock.");
  }
  if (encryption.kind === "unsupported") throw new PdfRejected("unsupported_pdf", unsupportedEncryption(encryption));
  // The cross-reference data is never encrypted: check it on the raw parse.
  const problem = findCrossReferenceProblem(input, raw.context, headerOffset);
  if (problem) throw new PdfRejected("corrupted_pdf", `The PDF is damaged: ${problem}.`);
  // An owner-password-only file opens with the empty user password, but unlocking it means lifting
  // the owner's restrictions, which takes the owner password.
  if (password === "") {
    throw new PdfRejected(
      "password_required",
      encryption.kind === "user-password"
        ? "The PDF is password-protected; send its password."
        : "The PDF has an owner password that restricts it; send the owner password to remove the restrictions.",
    );
  }
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(input, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest, password });
  } catch (error) {
    if (isPasswordError(error)) {
      throw new PdfRejected("incorrect_password", "The password is not correct for this PDF.", { cause: error });
    }
    throw new PdfRejected("corrupted_pdf", "The PDF is damaged and cannot be decrypted.", { cause: error });
  }
  // The decrypting parse also "decrypts" cross-reference streams (which are never encrypted), so
  // the trailer entries they carry (/Root, /Info, /ID) are lost or garbled: take the raw parse's.
  const { Root, Info, ID } = raw.context.trailerInfo;
  if (doc.context.lookup(Root) instanceof PDFDict) doc.context.trailerInfo.Root = Root;
  doc.context.trailerInfo.Info = Info;
  doc.context.trailerInfo.ID = ID;
  delete doc.context.trailerInfo.Encrypt;
  const catalog = doc.context.lookup(doc.context.trailerInfo.Root);
  if (!(catalog instanceof PDFDict)) throw new PdfRejected("corrupted_pdf", "The PDF is damaged: it has no catalog.");
  let pages: number;
  try {
    pages = doc.getPageCount();
  } catch (error) {
    throw new PdfRejected("corrupted_pdf", "The PDF is damaged: its page tree cannot be read.", { cause: error });
  }
  if (pages === 0) throw new PdfRejected("corrupted_pdf", "The PDF is damaged: it has no pages.");
  return { doc, pages, encryption };
}
