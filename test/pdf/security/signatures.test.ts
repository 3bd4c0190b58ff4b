// Signed and certified PDFs in the engine: refused (signed_document) unless their signatures are to
// be removed; then compressed, with every signature value gone and every signature field kept.
// Fixtures are signed here by code (signed-fixtures.ts); pdfsig checks them where it is installed.
import { ParseSpeeds, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { compressPdf, PdfRejected, unlockPdf } from "../../../src/pdf/index.ts";
import type { CompressionReport } from "../../../src/pdf/index.ts";
import {
  addApprovalSignature,
  certifiedLetter,
  failingSignatures,
  pdfsigReport,
  unsignedLetter,
  unsignedSignatureField,
} from "../signed-fixtures.ts";

interface SignedCase {
  name: string;
  make: () => Promise<Buffer>;
  signatures: number;
  message: RegExp;
}

const CASES: SignedCase[] = [
  {
    name: "an approval signature (incremental update)",
    make: async () => addApprovalSignature(await unsignedLetter()),
    signatures: 1,
    message: /carries a digital signature\. /,
  },
  {
    name: "a certification (DocMDP through /Perms)",
    make: certifiedLetter,
    signatures: 1,
    message: /carries a digital signature that certifies it\./,
  },
  {
    name: "a certification in an earlier revision and an approval signature in the latest",
    make: async () => addApprovalSignature(await certifiedLetter(), "Second Signer"),
    signatures: 2,
    message: /carries 2 digital signatures, one of which certifies it\./,
  },
];

async function rejection(promise: Promise<unknown>): Promise<PdfRejected> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PdfRejected);
  return error as PdfRejected;
}

/**
 * The signature fields on the document's pages, with whether each has a value. Through the pages'
 * widgets, not the form's /Fields: placeholder-plain's incremental update writes a form listing only
 * its own field, and pdfsig (like readers) still finds the earlier one on its page.
 */
async function signatureFields(pdf: Uint8Array): Promise<{ name: string; signed: boolean }[]> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest });
  const widgets = doc.getPages().flatMap((page) => page.node.Annots()?.asArray() ?? []);
  return widgets
    .map((ref) => doc.context.lookup(ref, PDFDict))
    .filter((widget) => widget.lookup(PDFName.of("FT")) === PDFName.of("Sig"))
    .map((widget) => ({
      name: widget.lookup(PDFName.of("T"), PDFString).decodeText(),
      signed: widget.has(PDFName.of("V")),
    }));
}

describe("signed documents in the engine", () => {
  it.each(CASES)("the fixture with $name verifies before the engine sees it", async ({ make, signatures }) => {
    const report = pdfsigReport(await make());
    if (!report)
      return console.warn("pdfsig (poppler-utils) is not installed: the fixture's signatures are not checked");
    expect(report.signatures, report.output).toBe(signatures);
    expect(report.valid, report.output).toBe(signatures);
  });

  it.each(CASES)("refuses $name with signed_document, saying how many and how to proceed", async (c) => {
    const signed = await c.make();
    for (const profile of ["lossless", "balanced", "extreme"] as const) {
      const error = await rejection(compressPdf(signed, profile));
      expect(error.code).toBe("signed_document");
      expect(error.message).toMatch(c.message);
      expect(error.message).toContain("signatures=remove");
    }
  });

  it.each(CASES)("with signatures removed, compresses $name into a valid PDF whose fields are unsigned", async (c) => {
    const signed = await c.make();
    let report: CompressionReport | undefined;
    const { output, pages } = await compressPdf(signed, "balanced", (r) => (report = r), { signatures: "remove" });
    expect(pages).toBe(1);
    expect(output.length).toBeLessThan(signed.length);
    expect(report?.signaturesRemoved).toBe(c.signatures);
    const fields = await signatureFields(output);
    expect(fields).toHaveLength(c.signatures);
    expect(fields.every((field) => !field.signed)).toBe(true);
    const text = Buffer.from(output).toString("latin1");
    expect(text).not.toMatch(/\/ByteRange/);
    expect(text).not.toMatch(/\/Perms/);
    const check = pdfsigReport(output);
    if (!check) return console.warn("pdfsig (poppler-utils) is not installed: the output is not checked with it");
    expect(failingSignatures(check.output), check.output).toEqual([]);
  });

  it("takes an unsigned signature field for what it is: not a signature", async () => {
    const pdf = await unsignedSignatureField();
    let report: CompressionReport | undefined;
    const { output } = await compressPdf(pdf, "balanced", (r) => (report = r));
    expect(report?.signaturesRemoved).toBe(0);
    expect(await signatureFields(output)).toEqual([{ name: "Employee signature", signed: false }]);
  });

  it("removes a form's usage rights (/Perms /UR3) without refusing it: they are no one's signature", async () => {
    const doc = await PDFDocument.load(await unsignedLetter(), { updateMetadata: false });
    const { context } = doc;
    const usageRights = context.obj({
      Type: "Sig",
      Filter: "Adobe.PPKLite",
      SubFilter: "adbe.pkcs7.detached",
      ByteRange: [0, 100, 200, 300],
      Contents: PDFHexString.of("00".repeat(64)),
      Reference: [context.obj({ Type: "SigRef", TransformMethod: "UR3" })],
    });
    doc.catalog.set(PDFName.of("Perms"), context.obj({ UR3: context.register(usageRights) }));
    let report: CompressionReport | undefined;
    const { output } = await compressPdf(await doc.save(), "balanced", (r) => (report = r));
    expect(report?.signaturesRemoved).toBe(0);
    expect(report?.usageRightsRemoved).toBe(true);
    const text = Buffer.from(output).toString("latin1");
    expect(text).not.toMatch(/\/UR3|\/Perms|\/ByteRange/);
  });

  it("refuses to unlock a signed encrypted document unless its signatures are removed", async () => {
    const signed = await addApprovalSignature(await unsignedLetter());
    const doc = await PDFDocument.load(signed, { updateMetadata: false });
    doc.encrypt({ userPassword: "secret", ownerPassword: "owner" });
    const encrypted = await doc.save();
    const error = await rejection(unlockPdf(encrypted, "secret"));
    expect(error.code).toBe("signed_document");
    const unlocked = await unlockPdf(encrypted, "secret", { signatures: "remove" });
    expect(unlocked.signaturesRemoved).toBe(1);
    expect(await signatureFields(unlocked.output)).toEqual([{ name: "Signature1", signed: false }]);
  });
});
