// Signed PDFs made by code, for the tests of signed documents (no binary fixture is committed): a
// self-signed certificate made with node-forge, approval signatures added as an incremental update
// by @signpdf/placeholder-plain, a certification (DocMDP) placeholder written with pdf-lib, and
// every signature computed by @signpdf/signpdf. `pdfsig` (poppler-utils) checks them where it is
// installed.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PDFArray, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFString, StandardFonts } from "@cantoo/pdf-lib";
import type { PDFRef } from "@cantoo/pdf-lib";
import { plainAddPlaceholder } from "@signpdf/placeholder-plain";
import { SignPdf } from "@signpdf/signpdf";
import { P12Signer } from "@signpdf/signer-p12";
import forge from "node-forge";

const PASSPHRASE = "test";
/** Bytes kept for a signature's PKCS#7 (its /Contents holds twice as many hex digits). */
const SIGNATURE_LENGTH = 8192;

let p12: Buffer | undefined;

/** A PKCS#12 with an RSA key and a self-signed certificate (CN=Test Signer), made once per run. */
export function selfSignedP12(): Buffer {
  if (p12) return p12;
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: "spki", format: "pem" }).toString());
  cert.serialNumber = "01";
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const subject = [
    { name: "commonName", value: "Test Signer" },
    { name: "organizationName", value: "Example" },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.sign(key, forge.md.sha256.create());
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, [cert], PASSPHRASE, { algorithm: "3des" });
  p12 = Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary");
  return p12;
}

const signpdf = new SignPdf();
const signer = () => new P12Signer(selfSignedP12(), { passphrase: PASSPHRASE });

/** A one-page letter, written with a classic cross-reference table (what placeholder-plain reads). */
export async function unsignedLetter(extra?: (doc: PDFDocument) => void): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const lines = ["Offer of employment", "", "Dear applicant,", "we are pleased to offer you the position."];
  lines.forEach((line, i) => page.drawText(line, { x: 72, y: 760 - i * 18, size: 12, font }));
  extra?.(doc);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** Adds an approval signature as an incremental update (placeholder-plain), and signs it. */
export async function addApprovalSignature(pdf: Buffer, name = "Test Signer"): Promise<Buffer> {
  const prepared = plainAddPlaceholder({
    pdfBuffer: pdf,
    reason: "Approved",
    contactInfo: "signer@example.com",
    name,
    location: "Remote",
    signatureLength: SIGNATURE_LENGTH,
  });
  return signpdf.sign(prepared, signer());
}

/** The fields of the document's form (made when absent). */
function formFields(doc: PDFDocument): PDFArray {
  const form = doc.catalog.getOrCreateAcroForm();
  return form.dict.lookup(PDFName.of("Fields"), PDFArray);
}

/** Adds an invisible signature field on the first page; `value` is its signature dictionary, if any. */
function addSignatureField(doc: PDFDocument, name: string, value?: PDFRef): PDFRef {
  const page = doc.getPage(0);
  const field = doc.context.register(
    doc.context.obj({
      Type: "Annot",
      Subtype: "Widget",
      FT: "Sig",
      T: PDFString.of(name),
      F: 132,
      Rect: [0, 0, 0, 0],
      P: page.ref,
      ...(value ? { V: value } : {}),
    }),
  );
  formFields(doc).push(field);
  page.node.addAnnot(field);
  doc.catalog.getOrCreateAcroForm().dict.set(PDFName.of("SigFlags"), PDFNumber.of(3));
  return field;
}

/** A document whose form has an empty (unsigned) signature field: not a signed document. */
export function unsignedSignatureField(): Promise<Buffer> {
  return unsignedLetter((doc) => addSignatureField(doc, "Employee signature"));
}

/**
 * A certified document: one certification signature (DocMDP, P=2: form filling and signing
 * allowed) referred to from /Perms, written as its first revision.
 */
export async function certifiedLetter(): Promise<Buffer> {
  const placeholder = await unsignedLetter((doc) => {
    const { context } = doc;
    const stars = PDFName.of("**********");
    // ByteRange before Contents, as @signpdf/signpdf looks for them in that order.
    const signature = context.register(
      context.obj({
        Type: "Sig",
        Filter: "Adobe.PPKLite",
        SubFilter: "adbe.pkcs7.detached",
        ByteRange: [PDFNumber.of(0), stars, stars, stars],
        Contents: PDFHexString.of("0".repeat(SIGNATURE_LENGTH * 2)),
        Reference: [
          {
            Type: "SigRef",
            TransformMethod: "DocMDP",
            TransformParams: { Type: "TransformParams", P: 2, V: "1.2" },
          },
        ],
        M: PDFString.fromDate(new Date()),
      }),
    );
    addSignatureField(doc, "Certification", signature);
    doc.catalog.set(PDFName.of("Perms"), context.obj({ DocMDP: signature }));
  });
  return signpdf.sign(placeholder, signer());
}

/** What `pdfsig` says of each signature, or undefined when poppler-utils is not installed. */
export function pdfsigReport(pdf: Uint8Array): { output: string; signatures: number; valid: number } | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), "pdfsig-"));
  try {
    const file = path.join(dir, "signed.pdf");
    writeFileSync(file, pdf);
    let output: string;
    try {
      output = execFileSync("pdfsig", [file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (error) {
      const failure = error as { code?: string; stdout?: string };
      if (failure.code === "ENOENT") return undefined;
      output = failure.stdout ?? "";
    }
    return {
      output,
      signatures: (output.match(/^Signature #\d+:/gm) ?? []).length,
      valid: (output.match(/Signature Validation: Signature is Valid/g) ?? []).length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether `pdfsig` reports a signature that fails (anything but valid, or an unsigned field). */
export const failingSignatures = (output: string): string[] =>
  output
    .split("\n")
    .filter((line) => /Signature Validation:/.test(line) && !/Signature is Valid/.test(line))
    .concat(output.includes("Illegal values in ByteRange") ? ["Illegal values in ByteRange"] : []);
