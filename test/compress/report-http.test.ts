// The compression report through real HTTP with the real engine: in the synchronous answer (and
// as the OpenAPI document describes it), in a job's resource, and on the dashboard's Try it card;
// with signatures=remove on a job and a direct upload. The figures are checked against what the
// request itself shows (sizes, the profile's floor), not against numbers written down here.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFName } from "@cantoo/pdf-lib";
import { sessions } from "../../src/auth/sessions.ts";
import { PROFILE_SETTINGS } from "../../src/pdf/index.ts";
import type { CompressionReportBody } from "../../src/compress/report.ts";
import { multipart, subscriberWithKey } from "../helpers/compress.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import type { TestDatabase } from "../helpers/database.ts";
import type { TestServer } from "../helpers/server.ts";
import { photoPdf, reachingPdf, SAFE_ADDRESSES, stringsOf, UNSAFE_ADDRESSES } from "../pdf/fixtures.ts";
import { addApprovalSignature, unsignedLetter } from "../pdf/signed-fixtures.ts";

let stack: CompressionStack;
let db: TestDatabase;
let server: TestServer;
let photo: Buffer;

beforeAll(async () => {
  stack = await startCompressionStack({ name: "compress-report", jobWorker: true });
  ({ db, server } = stack);
  photo = Buffer.from((await photoPdf()).bytes);
});
afterAll(() => stack?.close());

type Result = {
  id?: string;
  original_size: number;
  compressed_size: number;
  report?: CompressionReportBody;
  url: string;
};

async function post(token: string, file: Buffer, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename: "cv.pdf" },
  ]);
  const response = await fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType, ...headers },
    body: new Uint8Array(body),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Result };
}

/** What holds for every report, whatever the file: its parts add up to the sizes of the result. */
function expectConsistent(result: Result, profile: keyof typeof PROFILE_SETTINGS): CompressionReportBody {
  const report = result.report!;
  expect(report, JSON.stringify(result)).toBeDefined();
  const saved = report.bytes_saved_by_kind;
  expect(saved.images + saved.fonts + saved.structure).toBe(result.original_size - result.compressed_size);
  expect(report.ssim_floor).toBe(PROFILE_SETTINGS[profile].images?.minSsim ?? null);
  expect(report.images_downsampled).toBeLessThanOrEqual(report.images_recoded);
  // The pages measured: none where no pixel changed (lossless, or the upload handed back); else
  // each at or above the floor the images were held to (no maxImagePpi is asked here).
  if (profile === "lossless" || report.original_returned) expect(report.min_ssim).toBeNull();
  if (report.min_ssim === null) expect(report.pages_checked).toBe(0);
  else {
    expect(report.pages_checked).toBeGreaterThan(0);
    expect(report.min_ssim).toBeGreaterThanOrEqual(report.ssim_floor!);
    expect(report.min_ssim).toBeLessThanOrEqual(1);
  }
  return report;
}

async function pollJob(token: string, location: string): Promise<Result & { status: string }> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const response = await fetch(`${server.url}${location}`, { headers: { authorization: `Bearer ${token}` } });
    const job = (await response.json()) as Result & { status: string };
    if (job.status === "succeeded" || job.status === "failed" || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("the compression report", () => {
  it("is in the synchronous answer, as the OpenAPI document describes it, for every profile", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Record<string, unknown>;
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: "https://v1.test/openapi.json" });
    const validate = ajv.getSchema(
      "https://v1.test/openapi.json#/paths/~1v1~1compress/post/responses/200/content/application~1json/schema",
    )!;
    for (const profile of ["lossless", "balanced", "extreme"] as const) {
      const { status, json } = await post(token, photo, { profile });
      expect(status, JSON.stringify(json)).toBe(200);
      expect(validate(json), ajv.errorsText(validate.errors)).toBe(true);
      const report = expectConsistent(json, profile);
      expect(report.signatures_removed).toBe(0);
      expect(report.repaired).toEqual([]);
      // The photographs are recoded by the lossy profiles, and their bytes are most of the saving.
      if (profile !== "lossless") {
        expect(report.images_recoded).toBeGreaterThan(0);
        expect(report.bytes_saved_by_kind.images).toBeGreaterThan(report.bytes_saved_by_kind.structure);
        expect(report.min_ssim).toBeLessThan(1);
        // The compression read back, alone and in the list, has the same report.
        const auth = { headers: { authorization: `Bearer ${token}` } };
        const one = (await (await fetch(`${server.url}/v1/compressions/${json.id}`, auth)).json()) as Result;
        expect(one.report).toEqual(report);
        const list = (await (await fetch(`${server.url}/v1/compressions`, auth)).json()) as { data: Result[] };
        expect(list.data.find((item) => item.id === json.id)?.report).toEqual(report);
      }
    }
  }, 180_000);

  it("says how many signatures signatures=remove removed", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const signed = await addApprovalSignature(await unsignedLetter());
    const { status, json } = await post(token, signed, { signatures: "remove" });
    expect(status, JSON.stringify(json)).toBe(200);
    const report = expectConsistent(json, "balanced");
    expect(report.signatures_removed).toBe(1);
    expect(report.removed).toContain("signatures");
    expect(report.original_returned).toBe(false);
  }, 180_000);

  it("is in a job's resource, signatures=remove honoured by the job", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const signed = await addApprovalSignature(await unsignedLetter());
    const refused = await post(token, signed, {}, { prefer: "respond-async" });
    expect(refused.status).toBe(202);
    const failed = await pollJob(token, refused.headers.get("location")!);
    expect(failed).toMatchObject({ status: "failed", error: { code: "signed_document" } });
    const accepted = await post(token, signed, { signatures: "remove" }, { prefer: "respond-async" });
    expect(accepted.status).toBe(202);
    const job = await pollJob(token, accepted.headers.get("location")!);
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    expect(expectConsistent(job, "balanced").signatures_removed).toBe(1);
  }, 180_000);

  it("takes signatures from a direct upload's JSON body", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const signed = await addApprovalSignature(await unsignedLetter());
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const created = (await (
      await fetch(`${server.url}/v1/uploads`, { method: "POST", headers: auth, body: "{}" })
    ).json()) as { upload_id: string; upload_url: string; headers: Record<string, string> };
    const put = await fetch(created.upload_url, {
      method: "PUT",
      headers: created.headers,
      body: new Uint8Array(signed),
    });
    expect(put.status).toBe(200);
    const body = JSON.stringify({ upload_id: created.upload_id, signatures: "remove" });
    const response = await fetch(`${server.url}/v1/compress`, { method: "POST", headers: auth, body });
    const json = (await response.json()) as Result;
    expect(response.status, JSON.stringify(json)).toBe(200);
    expect(expectConsistent(json, "balanced").signatures_removed).toBe(1);
  }, 180_000);

  it("says active_content when links to shares, files and inline documents and a RichMedia player went, and the file has none", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const { status, json } = await post(token, Buffer.from(await reachingPdf()), { profile: "lossless" });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(expectConsistent(json, "lossless").removed).toContain("active_content");
    const download = await fetch(json.url);
    expect(download.status).toBe(200);
    const cleaned = await PDFDocument.load(new Uint8Array(await download.arrayBuffer()), { updateMetadata: false });
    const strings = stringsOf(cleaned);
    for (const address of UNSAFE_ADDRESSES) expect(strings).not.toContain(address);
    expect(strings).toEqual(expect.arrayContaining([...SAFE_ADDRESSES]));
    const annotations = cleaned.getPage(0).node.lookup(PDFName.of("Annots"), PDFArray).asArray();
    const subtypes = annotations.map((ref) => cleaned.context.lookup(ref, PDFDict).get(PDFName.of("Subtype")));
    expect(subtypes).toEqual(annotations.map(() => PDFName.of("Link")));
  }, 180_000);

  it("is on the dashboard's Try it card, and the page keeps the remove-signatures box", async () => {
    const { key, email } = await subscriberWithKey(db.prisma);
    const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
    const opened = await auth.redeemLink((await auth.createLink(email))!.token);
    const cookie = `mkp_session=${opened!.secret}`;
    const page = await (await fetch(`${server.url}/dashboard/try`, { headers: { cookie } })).text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
    expect(page).toMatch(/name="signatures"\s+value="remove"/);
    const signed = await addApprovalSignature(await unsignedLetter());
    const { body, contentType } = multipart([
      { name: "csrf_token", value: csrf },
      { name: "key_id", value: key.id },
      { name: "profile", value: "balanced" },
      { name: "signatures", value: "remove" },
      { name: "file", value: signed, filename: "offer.pdf" },
    ]);
    const response = await fetch(`${server.url}/dashboard/try`, {
      method: "POST",
      headers: { cookie, "content-type": contentType, origin: server.url, "sec-fetch-site": "same-origin" },
      body: new Uint8Array(body),
    });
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain("Compressed offer.pdf");
    expect(html).toContain("What changed");
    expect(html).toMatch(/<dt>Signatures removed<\/dt>\s*<dd>1: the document is no longer signed<\/dd>/);
    expect(html).toMatch(/<dt>Removed<\/dt>\s*<dd>[^<]*digital signatures<\/dd>/);
    expect(html).toMatch(/id="signatures"[^>]*\bchecked\b/);
  }, 180_000);
});
