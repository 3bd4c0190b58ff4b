// Job inputs and direct uploads on Cloud Storage, against the local GCS-compatible endpoint: an
// input stored, measured (size and first bytes, for the %PDF- check), fetched and deleted under
// inputs/; and the direct upload's V4 signed PUT, whose signature covers the content type and the
// 300 MB size range (x-goog-content-length-range), so Cloud Storage itself refuses a larger body.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGcsStorage } from "../../src/compress/storage/gcs.ts";
import { makePdf } from "../helpers/compress.ts";
import { startFakeGcs, type FakeGcs } from "../helpers/fake-gcs.ts";

const BUCKET = "job-inputs";
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const credentials = {
  client_email: "compressor@test-project.iam.gserviceaccount.com",
  private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
};
let gcs: FakeGcs;
let work: string;

beforeAll(async () => {
  gcs = await startFakeGcs(BUCKET, publicKey);
  work = await mkdtemp(path.join(tmpdir(), "gcs-inputs-"));
});
afterAll(async () => {
  await gcs?.close();
  await rm(work, { recursive: true, force: true });
});

it("stores, measures, fetches and deletes a job's input under inputs/", async () => {
  const storage = createGcsStorage({ bucket: BUCKET, apiEndpoint: gcs.url, projectId: "p", credentials });
  const source = path.join(work, "in.pdf");
  const pdf = await makePdf(3);
  await writeFile(source, pdf);
  await storage.putInput("input-object-name-0001.pdf", source);
  expect(gcs.objects.has("inputs/input-object-name-0001.pdf")).toBe(true);
  const info = await storage.inputInfo("input-object-name-0001.pdf", 1024);
  expect(info?.size).toBe(pdf.length);
  expect(info?.head.subarray(0, 5).toString()).toBe("%PDF-");
  const copy = path.join(work, "copy.pdf");
  await storage.fetchInput("input-object-name-0001.pdf", copy);
  expect(Buffer.compare(await readFile(copy), pdf)).toBe(0);
  await storage.deleteInput("input-object-name-0001.pdf");
  expect(gcs.objects.has("inputs/input-object-name-0001.pdf")).toBe(false);
  expect(await storage.inputInfo("input-object-name-0001.pdf", 1024)).toBeNull();
});

it("signs a direct upload's PUT with the content type and the size range among the signed headers", async () => {
  const storage = createGcsStorage({ bucket: BUCKET, apiEndpoint: null, projectId: "p", credentials });
  const { url, headers } = await storage.signedUploadUrl(
    "upload-object-name-01.pdf",
    { maxBytes: 314_572_800, expiresInSeconds: 900 },
    "",
  );
  const signed = new URL(url);
  expect(signed.host).toBe("storage.googleapis.com");
  expect(signed.pathname).toBe(`/${BUCKET}/inputs/upload-object-name-01.pdf`);
  expect(signed.searchParams.get("X-Goog-Expires")).toBe("900");
  expect(signed.searchParams.get("X-Goog-SignedHeaders")!.split(";")).toEqual(
    expect.arrayContaining(["content-type", "host", "x-goog-content-length-range"]),
  );
  expect(headers).toEqual({ "Content-Type": "application/pdf", "x-goog-content-length-range": "0,314572800" });
});
