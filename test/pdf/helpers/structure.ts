// What the structure and security tests share: loading and compressing, the objects and dictionaries of
// a document, registering objects by hand, and qpdf --check on an output when qpdf is installed.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject, PDFPage, PDFRef } from "@cantoo/pdf-lib";
import { compressPdf } from "../../../src/pdf/index.ts";
import type { CompressionReport, COMPRESSION_PROFILES } from "../../../src/pdf/index.ts";
import { findCrossReferenceProblem } from "../../../src/pdf/structure/xref.ts";

export const n = (name: string) => PDFName.of(name);

export function hasQpdf(): boolean {
  try {
    execFileSync("qpdf", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
export const QPDF = hasQpdf();
if (!QPDF) console.log("test/pdf: qpdf is not installed; outputs are not checked with qpdf --check.");
const scratch = mkdtempSync(path.join(tmpdir(), "engine-structure-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** qpdf --check passes (exit 0: no errors, no warnings); skipped without qpdf. */
export function expectQpdfCheck(bytes: Uint8Array, name: string): void {
  if (!QPDF) return;
  const file = path.join(scratch, `${name}.pdf`);
  writeFileSync(file, bytes);
  expect(() => execFileSync("qpdf", ["--check", file], { stdio: "pipe" })).not.toThrow();
}

export async function load(bytes: Uint8Array): Promise<PDFDocument> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  expect(findCrossReferenceProblem(bytes, doc.context, 0)).toBeUndefined();
  return doc;
}

export async function compress(input: Uint8Array, profile: (typeof COMPRESSION_PROFILES)[number]) {
  let report: CompressionReport | undefined;
  const { output, pages } = await compressPdf(input, profile, (r) => (report = r));
  return { output, pages, report: report! };
}

export const objectsOf = (doc: PDFDocument) => doc.context.enumerateIndirectObjects().map(([, object]) => object);
export const dictOf = (object: PDFObject) => (object instanceof PDFStream ? object.dict : object);

/** Every dictionary of the document, direct ones included. */
export function allDicts(context: PDFContext): PDFDict[] {
  const found: PDFDict[] = [];
  const stack: PDFObject[] = context.enumerateIndirectObjects().map(([, object]) => object);
  while (stack.length > 0) {
    const value = stack.pop()!;
    const dict = dictOf(value);
    if (dict instanceof PDFDict) {
      found.push(dict);
      stack.push(...dict.values());
    } else if (dict instanceof PDFArray) {
      stack.push(...dict.asArray());
    }
  }
  return found;
}

export const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1");

export const infoOf = (doc: PDFDocument) => doc.context.lookup(doc.context.trailerInfo.Info, PDFDict);

export function streamAt(dict: PDFDict, key: string): PDFRawStream {
  const stream = dict.lookup(n(key));
  expect(stream).toBeInstanceOf(PDFRawStream);
  return stream as PDFRawStream;
}

export function register(context: PDFContext, literal: Record<string, unknown>): PDFRef {
  return context.register(context.obj(literal as never));
}

export function annotate(page: PDFPage, ref: PDFRef): void {
  const annots = page.node.lookup(n("Annots"));
  if (annots instanceof PDFArray) annots.push(ref);
  else page.node.set(n("Annots"), page.doc.context.obj([ref]));
}
