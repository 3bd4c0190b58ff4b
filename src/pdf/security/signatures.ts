// Digital signatures: any rewrite of a signed PDF (ours renumbers and recompresses every object)
// changes the bytes a signature's /ByteRange covers, so it no longer verifies. A signed document is
// therefore refused unless the caller asks for its signatures to be removed (docs/signed-documents.md).
//
// A signature is a signature dictionary (ISO 32000-2 12.8.1: /ByteRange and /Contents) that the
// document uses: the /V of a field (a signature field, or a document timestamp), or an entry of the
// catalog's /Perms that certifies (/DocMDP). pdf-lib reads every
// revision of an incrementally updated file, so a signature made three revisions ago is found as
// long as the latest revision still refers to it. An unsigned signature field (no /V) is not a
// signature, nor is a signature dictionary that nothing refers to any more.
//
// Usage rights (/Perms /UR3, or /UR: Adobe's "Reader extensions", which a form's publisher adds to let
// Reader users save filled forms) are signed too, but they are not anyone's signature on the
// content: pdfsig lists none, and Ghostscript and qpdf drop them when they rewrite. Kept after a
// rewrite, they no longer verify and Reader warns that the document was changed, so they are always
// removed and the report says so (removed: usage_rights); the document is not refused for them.
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFNumber, PDFString } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { PdfRejected } from "../shared/errors.ts";
import type { SignaturePolicy } from "../shared/options.ts";

const S = {
  AcroForm: PDFName.of("AcroForm"),
  ByteRange: PDFName.of("ByteRange"),
  Contents: PDFName.of("Contents"),
  DocMDP: PDFName.of("DocMDP"),
  Perms: PDFName.of("Perms"),
  UR: PDFName.of("UR"),
  UR3: PDFName.of("UR3"),
  Reference: PDFName.of("Reference"),
  SigFlags: PDFName.of("SigFlags"),
  TransformMethod: PDFName.of("TransformMethod"),
  V: PDFName.of("V"),
};

/** SigFlags bit 2 (AppendOnly): "save incrementally, or the signatures break"; void once they are gone. */
const APPEND_ONLY = 2;

export interface SignatureSummary {
  /** Signature dictionaries the document uses (each counted once). */
  count: number;
  /** One of them certifies the document (DocMDP). */
  certified: boolean;
}

function isSignatureDictionary(object: PDFObject | undefined): object is PDFDict {
  if (!(object instanceof PDFDict)) return false;
  const range = object.lookup(S.ByteRange);
  const contents = object.lookup(S.Contents);
  return (
    range instanceof PDFArray &&
    range.size() >= 4 &&
    range.asArray().every((value) => value instanceof PDFNumber) &&
    (contents instanceof PDFHexString || contents instanceof PDFString)
  );
}

const lookupDict = (context: PDFContext, value: PDFObject | undefined) => {
  const object = value === undefined ? undefined : context.lookup(value);
  return object instanceof PDFDict ? object : undefined;
};

function catalogOf(context: PDFContext): PDFDict | undefined {
  return lookupDict(context, context.trailerInfo.Root);
}

/** A signature that certifies: referenced as /Perms /DocMDP, or carrying a DocMDP transform. */
function certifies(signature: PDFDict, context: PDFContext): boolean {
  const references = signature.lookup(S.Reference);
  if (!(references instanceof PDFArray)) return false;
  return references.asArray().some((value) => lookupDict(context, value)?.lookup(S.TransformMethod) === S.DocMDP);
}

interface Signatures {
  /** Field (or widget) dictionaries whose /V is a signature. */
  fields: PDFDict[];
  /** Signature dictionaries referred to from the catalog's /Perms, by their key there. */
  perms: PDFName[];
  signatures: Set<PDFDict>;
  certified: boolean;
}

function collect(context: PDFContext): Signatures {
  const found: Signatures = { fields: [], perms: [], signatures: new Set(), certified: false };
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue;
    const value = object.get(S.V);
    if (value === undefined) continue;
    const signature = context.lookup(value);
    if (!isSignatureDictionary(signature)) continue;
    found.fields.push(object);
    found.signatures.add(signature);
  }
  const perms = lookupDict(context, catalogOf(context)?.get(S.Perms));
  for (const [key, value] of perms?.entries() ?? []) {
    if (key === S.UR3 || key === S.UR) continue; // usage rights, not a signature: removeUsageRights
    const signature = context.lookup(value);
    if (!isSignatureDictionary(signature)) continue;
    found.perms.push(key);
    found.signatures.add(signature);
    if (key === S.DocMDP) found.certified = true;
  }
  for (const signature of found.signatures) if (certifies(signature, context)) found.certified = true;
  return found;
}

/** How many signatures the document uses, and whether one certifies it. */
export function findSignatures(context: PDFContext): SignatureSummary {
  const { signatures, certified } = collect(context);
  return { count: signatures.size, certified };
}

/** Removes the usage rights (/Perms /UR3 and /UR) a rewrite would void; true when there were some. */
export function removeUsageRights(context: PDFContext): boolean {
  const catalog = catalogOf(context);
  const permissions = lookupDict(context, catalog?.get(S.Perms));
  if (!permissions || (!permissions.has(S.UR3) && !permissions.has(S.UR))) return false;
  permissions.delete(S.UR3);
  permissions.delete(S.UR);
  if (permissions.keys().length === 0) catalog?.delete(S.Perms);
  return true;
}

/**
 * Removes every signature: each signature field loses its value (/V) but keeps its appearance (what
 * the page shows) and stays in the form so that the document
 * can be signed again; /Perms loses its DocMDP signature; the form's AppendOnly flag goes.
 * The signature dictionaries, now referred to by nothing, are dropped by the pruning pass.
 * Returns how many signatures were removed.
 */
export function removeSignatures(context: PDFContext): number {
  const { fields, perms, signatures } = collect(context);
  // The appearance stays: it is part of the page (a publisher's seal, a drawn signature), and
  // lossless promises pages that render as they did.
  for (const field of fields) field.delete(S.V);
  const catalog = catalogOf(context);
  const permissions = lookupDict(context, catalog?.get(S.Perms));
  for (const key of perms) permissions?.delete(key);
  if (permissions && permissions.keys().length === 0) catalog?.delete(S.Perms);
  const form = lookupDict(context, catalog?.get(S.AcroForm));
  const flags = form?.lookup(S.SigFlags);
  if (signatures.size > 0 && form && flags instanceof PDFNumber) {
    form.set(S.SigFlags, PDFNumber.of(flags.asNumber() & ~APPEND_ONLY));
  }
  return signatures.size;
}

/** The refusal's message: how many signatures, whether one certifies, and how to proceed. */
export function signedDocumentMessage({ count, certified }: SignatureSummary): string {
  const signatures = count === 1 ? "a digital signature" : `${count} digital signatures`;
  const certifying = !certified ? "" : count === 1 ? " that certifies it" : ", one of which certifies it";
  return (
    `The PDF carries ${signatures}${certifying}. Compressing rewrites the file, so ${count === 1 ? "it" : "they"} ` +
    "would no longer verify: the file was not compressed. To compress it anyway without its " +
    "signatures, send the field signatures=remove."
  );
}

/**
 * Refuses a signed document (PdfRejected signed_document), or removes its signatures when the
 * policy says so; answers how many were removed.
 */
export function handleSignatures(context: PDFContext, policy: SignaturePolicy = "refuse"): number {
  const signatures = findSignatures(context);
  if (signatures.count === 0) return 0;
  if (policy !== "remove") throw new PdfRejected("signed_document", signedDocumentMessage(signatures));
  return removeSignatures(context);
}
