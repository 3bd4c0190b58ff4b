// Signed documents through real HTTP with the real engine in its child processes: refused by
// default (422 signed_document, not charged, nothing left behind), compressed without their
// signatures with signatures=remove, on /v1/compress and /v1/unlock; and the corpus's signed files.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { multipart, subscriberWithKey } from "../helpers/compress.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import type { TestDatabase } from "../helpers/database.ts";
import type { TestServer } from "../helpers/server.ts";
import { corpusDir } from "../pdf/fixtures.ts";
import {
  addApprovalSignature,
  certifiedLetter,
  failingSignatures,
  pdfsigReport,
  unsignedLetter,
  unsignedSignatureField,
} from "../pdf/signed-fixtures.ts";

let stack: CompressionStack;
let db: TestDatabase;
let work: string;
let server: TestServer;

beforeAll(async () => {
  stack = await startCompressionStack({ name: "compress-signed" });
  ({ db, work, server } = stack);
});
afterAll(() => stack?.close());

type Body = Record<string, unknown> & { error?: { code: string; message: string }; url?: string };

async function post(route: string, token: string, file: Buffer, fields: Record<string, string> = {}) {
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename: "offer.pdf" },
  ]);
  const response = await fetch(`${server.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
    body: new Uint8Array(body),
  });
  return { status: response.status, json: (await response.json()) as Body };
}

async function download(url: string): Promise<Uint8Array> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

/** Nothing of a request is left in the uploads directory. */
async function expectNoTemporaryFiles() {
  const entries = await readdir(path.join(work, "uploads")).catch(() => []);
  expect(entries).toEqual([]);
}

/** qpdf --check passes (skipped with a message where qpdf is not installed). */
function expectQpdfCheck(pdf: Uint8Array, label: string) {
  const file = path.join(work, "check.pdf");
  writeFileSync(file, pdf);
  try {
    execFileSync("qpdf", ["--check", file], { stdio: "pipe" });
  } catch (error) {
    const failure = error as { code?: string; status?: number; stdout?: Buffer };
    if (failure.code === "ENOENT") return console.warn("qpdf is not installed: the output's structure is not checked");
    // Exit 3: warnings only (a readable file); 2: errors.
    expect(failure.status, `${label}: ${String(failure.stdout)}`).toBe(3);
  }
}

function expectNoFailingSignature(pdf: Uint8Array, label: string) {
  const check = pdfsigReport(pdf);
  if (!check) return console.warn("pdfsig (poppler-utils) is not installed: the output's signatures are not checked");
  expect(failingSignatures(check.output), `${label}: ${check.output}`).toEqual([]);
}

describe("signed documents through /v1/compress and /v1/unlock", () => {
  it("refuses a signed document with 422 signed_document, not charged, nothing left behind", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const signed = await addApprovalSignature(await certifiedLetter(), "Second Signer");
    const { status, json } = await post("/v1/compress", token, signed);
    expect(status).toBe(422);
    expect(json.error?.code).toBe("signed_document");
    expect(json.error?.message).toMatch(/^The PDF carries 2 digital signatures, one of which certifies it\./);
    expect(json.error?.message).toContain("signatures=remove");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    await expectNoTemporaryFiles();
  }, 180_000);

  it("compresses it with signatures=remove: charged once, a smaller PDF whose signature fields are empty", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const signed = await addApprovalSignature(await unsignedLetter());
    const { status, json } = await post("/v1/compress", token, signed, { signatures: "remove" });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json["compressed_size"]).toBeLessThan(signed.length);
    const output = await download(json.url!);
    expect((await PDFDocument.load(output)).getPageCount()).toBe(1);
    expect(Buffer.from(output).toString("latin1")).not.toContain("/ByteRange");
    expectNoFailingSignature(output, "compressed");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  }, 180_000);

  it("answers any other signatures value with 400 invalid_signatures, not charged", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const { status, json } = await post("/v1/compress", token, await unsignedLetter(), { signatures: "keep" });
    expect(status).toBe(400);
    expect(json.error?.code).toBe("invalid_signatures");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  }, 180_000);

  it("compresses a document whose only signature field is unsigned, without being asked", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { status, json } = await post("/v1/compress", token, await unsignedSignatureField());
    expect(status, JSON.stringify(json)).toBe(200);
  }, 180_000);

  it("refuses to unlock a signed encrypted document unless signatures=remove", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const doc = await PDFDocument.load(await addApprovalSignature(await unsignedLetter()), { updateMetadata: false });
    doc.encrypt({ userPassword: "secret", ownerPassword: "owner" });
    const encrypted = Buffer.from(await doc.save());
    const refused = await post("/v1/unlock", token, encrypted, { password: "secret" });
    expect(refused.status).toBe(422);
    expect(refused.json.error?.code).toBe("signed_document");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    const unlocked = await post("/v1/unlock", token, encrypted, { password: "secret", signatures: "remove" });
    expect(unlocked.status, JSON.stringify(unlocked.json)).toBe(200);
    const output = await download(unlocked.json.url!);
    expect(Buffer.from(output).toString("latin1")).not.toContain("/ByteRange");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  }, 180_000);
});

const CORPUS = corpusDir();
if (!CORPUS)
  console.warn("signatures-http.test.ts: the corpus's signed files are skipped (no corpus; set PDF_CORPUS_DIR).");

describe.skipIf(!CORPUS)("the corpus's signed files through /v1/compress", () => {
  const signedFiles = CORPUS
    ? readFileSync(path.join(CORPUS, "MANIFEST.tsv"), "utf8")
        .split("\n")
        .map((line) => line.split("\t"))
        .filter((cells) => cells[1] === "signed")
        .map((cells) => cells[0]!)
    : [];

  it("has signed files to test", () => {
    expect(signedFiles).toEqual(expect.arrayContaining(["signed_offer_letter.pdf", "signed_two_signatures.pdf"]));
  });

  it.each(signedFiles)(
    "%s: 422 signed_document by default; with signatures=remove a valid, smaller PDF",
    async (file) => {
      const { token, subscriber } = await subscriberWithKey(db.prisma);
      const input = readFileSync(path.join(CORPUS!, "files", file));
      const refused = await post("/v1/compress", token, input);
      expect(refused.status).toBe(422);
      expect(refused.json.error?.code).toBe("signed_document");
      expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
      for (const profile of ["lossless", "balanced", "extreme"]) {
        const { status, json } = await post("/v1/compress", token, input, { profile, signatures: "remove" });
        expect(status, `${file} ${profile}: ${JSON.stringify(json)}`).toBe(200);
        const output = await download(json.url!);
        expect(output.length, `${file} ${profile}`).toBeLessThan(input.length);
        expect((await PDFDocument.load(output)).getPageCount()).toBe(1);
        expectQpdfCheck(output, `${file} ${profile}`);
        expectNoFailingSignature(output, `${file} ${profile}`);
      }
    },
    180_000,
  );
});
