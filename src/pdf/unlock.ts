// unlockPdf: decrypts with the user or owner password; the output opens without one.
import {
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFInvalidObject,
  PDFName,
  PDFRawStream,
  PDFStream,
  PDFString,
} from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import type { EngineOutput } from "./report.ts";
import { handleSignatures } from "./security/signatures.ts";
import { PdfRejected } from "./shared/errors.ts";
import type { EngineOptions } from "./shared/options.ts";
import { decodeStreamData, N, numberOf } from "./streams/filters.ts";
import { openEncryptedPdf } from "./structure/load.ts";
import { removeUnreachableObjects } from "./structure/prune.ts";
import { readsBack, saveDocument } from "./structure/save.ts";

const latin1 = new TextDecoder("latin1");

function textOf(object: PDFInvalidObject): string {
  const bytes = new Uint8Array(object.sizeInBytes());
  object.copyBytesInto(bytes, 0);
  return latin1.decode(bytes);
}

/**
 * The decrypting parse keeps the source's cross-reference streams (which carry /Encrypt), at times
 * as raw invalid objects that would be written out verbatim; a reader would then find /Encrypt in
 * them and refuse the file. They are rebuilt on save anyway: drop them.
 */
function dropCrossReferenceStreams(context: PDFContext): void {
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    if (object instanceof PDFRawStream && object.dict.lookup(N.Type) === N.XRef) context.delete(ref);
    else if (object instanceof PDFInvalidObject && /\/Type\s*\/XRef\b/.test(textOf(object))) context.delete(ref);
  }
}

/** The numbers of the objects stored in the document's object streams. */
function objectsInObjectStreams(context: PDFContext): Set<number> {
  const numbers = new Set<number>();
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream) || object.dict.lookup(N.Type) !== N.ObjStm) continue;
    const first = numberOf(object.dict.lookup(PDFName.of("First"))) ?? 0;
    const data = decodeStreamData(object, 256 * 1024 * 1024, { predictors: true, tolerant: true });
    if (!data) continue;
    const header = latin1.decode(data.subarray(0, first)).trim().split(/\s+/);
    for (let i = 0; i + 1 < header.length; i += 2) numbers.add(Number(header[i]));
  }
  return numbers;
}

const hexOf = (string: PDFString) =>
  PDFHexString.of(
    Array.from(string.asString(), (char) => (char.charCodeAt(0) & 0xff).toString(16).padStart(2, "0")).join(""),
  );

/** Replaces literal strings inside one object (not through references). */
function hexEncodeStrings(object: PDFObject): void {
  const dict = object instanceof PDFStream ? object.dict : object;
  if (dict instanceof PDFDict) {
    for (const [key, value] of dict.entries()) {
      if (value instanceof PDFString) dict.set(key, hexOf(value));
      else hexEncodeStrings(value);
    }
  } else if (dict instanceof PDFArray) {
    dict.asArray().forEach((value, index) => {
      if (value instanceof PDFString) dict.set(index, hexOf(value));
      else hexEncodeStrings(value);
    });
  }
}

/**
 * pdf-lib keeps a decrypted literal string as its raw bytes, but writes a literal string out as it
 * stands: a decrypted "(", ")" or "\\" would break or change it. Strings of top-level objects
 * (those are the decrypted ones; strings inside object streams were never encrypted on their
 * own and are still escaped) are written as hex strings instead, which hold any bytes.
 */
function protectDecryptedStrings(context: PDFContext): void {
  const packed = objectsInObjectStreams(context);
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    if (!packed.has(ref.objectNumber)) hexEncodeStrings(object);
  }
}

/**
 * Decrypts a PDF with its user or owner password (an owner-password-only file needs the owner
 * password). Rejects with PdfRejected: not_encrypted, password_required, incorrect_password,
 * signed_document (decrypting rewrites every string and stream a signature covers; unless
 * `options.signatures` is "remove"), or as compressPdf does for files that are not PDFs or are
 * damaged.
 */
export async function unlockPdf(
  input: Uint8Array,
  password: string,
  options: EngineOptions = {},
): Promise<EngineOutput & { signaturesRemoved: number }> {
  const { doc, pages } = await openEncryptedPdf(input, password);
  const signaturesRemoved = handleSignatures(doc.context, options.signatures);
  protectDecryptedStrings(doc.context);
  dropCrossReferenceStreams(doc.context);
  removeUnreachableObjects(doc.context);
  let output: Uint8Array;
  try {
    output = await saveDocument(doc);
  } catch (error) {
    throw new PdfRejected("unsupported_pdf", "The PDF was decrypted but could not be written back.", { cause: error });
  }
  if (!(await readsBack(output, pages))) {
    throw new PdfRejected("unsupported_pdf", "The PDF was decrypted but the result did not read back correctly.");
  }
  return { output, pages, signaturesRemoved };
}
