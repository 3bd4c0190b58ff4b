// Cloud Storage for results, against a local GCS-compatible endpoint (the client honours
// apiEndpoint): uploads in one request and resumably, content type and download name, V4 signed
// URLs checked offline with the test key pair, deletion by age, and /v1/compress end to end.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { createGcsStorage } from "../../src/compress/storage/gcs.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeGcs, type FakeGcs } from "../helpers/fake-gcs.ts";
import { verifyV4SignedUrl } from "../helpers/gcs-v4.ts";
import { startServer } from "../helpers/server.ts";

const BUCKET = "compressed-results";
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const credentials = {
  client_email: "compressor@test-project.iam.gserviceaccount.com",
  private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
};
let gcs: FakeGcs;
let work: string;

beforeAll(async () => {
  gcs = await startFakeGcs(BUCKET, publicKey);
  work = await mkdtemp(path.join(tmpdir(), "gcs-test-"));
});
afterAll(async () => {
  await gcs?.close();
  await rm(work, { recursive: true, force: true });
});

const storage = () =>
  createGcsStorage({ bucket: BUCKET, apiEndpoint: gcs.url, projectId: "test-project", credentials });

describe("Cloud Storage", () => {
  it("stores small files in one request and large ones resumably, with type and download name", async () => {
    const small = path.join(work, "small.pdf");
    const large = path.join(work, "large.pdf");
    await writeFile(small, await makePdf(1));
    await writeFile(large, Buffer.alloc(9 * 1024 * 1024, 0x25));
    const meta = { contentType: "application/pdf", downloadName: "Bericht über Q3-compressed.pdf" };
    await storage().put("small-object-name-1234.pdf", small, meta);
    await storage().put("large-object-name-1234.pdf", large, meta);
    const uploads = gcs.requests.filter((r) => r.path.startsWith("/upload/")).map((r) => r.query["uploadType"]);
    expect(uploads).toContain("multipart");
    expect(uploads).toContain("resumable");
    for (const name of ["small-object-name-1234.pdf", "large-object-name-1234.pdf"]) {
      const stored = gcs.objects.get(name)!;
      expect(stored.resource.contentType).toBe("application/pdf");
      expect(stored.resource["contentDisposition"]).toContain(
        "filename*=UTF-8''Bericht%20%C3%BCber%20Q3-compressed.pdf",
      );
    }
    expect(gcs.objects.get("large-object-name-1234.pdf")!.data.length).toBe(9 * 1024 * 1024);
  });

  it("signs V4 URLs valid for 3600 s that verify offline with the service account's key", async () => {
    const url = await storage().signedUrl(
      "small-object-name-1234.pdf",
      { contentType: "application/pdf", downloadName: "a.pdf" },
      3600,
      "unused",
    );
    const verdict = verifyV4SignedUrl(url, publicKey);
    expect(verdict).toMatchObject({ ok: true, email: credentials.client_email });
    // The library takes an expiry instant and writes the seconds left at signing: 3599 when a second
    // turns between the two (seen under load).
    expect(verdict.expiresSeconds).toBeGreaterThanOrEqual(3599);
    expect(verdict.expiresSeconds).toBeLessThanOrEqual(3600);
    expect(verifyV4SignedUrl(url, publicKey, Date.now() + 3601_000)).toMatchObject({ ok: false, reason: "expired" });
    expect(verifyV4SignedUrl(url.replace("small-object", "other-object"), publicKey).ok).toBe(false);
    // Without a custom endpoint the URL points at Google, and signing needs no network.
    const production = createGcsStorage({ bucket: BUCKET, apiEndpoint: null, projectId: "p", credentials });
    const real = await production.signedUrl(
      "x-object-name-12345.pdf",
      { contentType: "application/pdf", downloadName: "a.pdf" },
      3600,
      "",
    );
    expect(new URL(real).host).toBe("storage.googleapis.com");
    expect(verifyV4SignedUrl(real, publicKey).ok).toBe(true);
  });

  it("deletes objects older than the cutoff", async () => {
    gcs.setCreated("large-object-name-1234.pdf", new Date(Date.now() - 25 * 3600_000));
    expect(await storage().deleteOlderThan(new Date(Date.now() - 24 * 3600_000))).toBe(1);
    expect(gcs.objects.has("large-object-name-1234.pdf")).toBe(false);
    expect(gcs.objects.has("small-object-name-1234.pdf")).toBe(true);
  });

  it("serves /v1/compress end to end: the signed URL downloads the PDF", async () => {
    const db: TestDatabase = await createTestDatabase();
    const server = await startServer(db, {}, { compress: { storage: storage(), runner: passThroughRunner } });
    try {
      const { token } = await subscriberWithKey(db.prisma);
      const pdf = await makePdf(4);
      const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "deck.pdf" }]);
      const response = await fetch(`${server.url}/v1/compress`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": contentType },
        body: new Uint8Array(body),
      });
      // The body too, so a failure names its error code.
      const result = (await response.json()) as { url: string; expires_in: number };
      expect({ status: response.status, result }).toMatchObject({ status: 200 });
      expect(result.expires_in).toBe(3600);
      expect(verifyV4SignedUrl(result.url, publicKey).ok).toBe(true);
      const download = await fetch(result.url);
      expect(download.status).toBe(200);
      expect(download.headers.get("content-type")).toBe("application/pdf");
      expect(download.headers.get("content-disposition")).toContain('filename="deck-compressed.pdf"');
      const doc = await PDFDocument.load(new Uint8Array(await download.arrayBuffer()));
      expect(doc.getPageCount()).toBe(4);
      const name = new URL(result.url).pathname.split("/").pop()!;
      expect(name).toMatch(/^[A-Za-z0-9_-]{24}\.pdf$/);
    } finally {
      await server.close();
      await db.close();
    }
  }, 60_000); // a database made and a server started: 9-25 s on a loaded 2-core machine

  it("takes a result's signed URL as file_url from the same account: read from the bucket, never fetched; another account's, an altered or a deleted one refused", async () => {
    const db: TestDatabase = await createTestDatabase();
    // The defaults (public addresses only): the stand-in's loopback address could not be fetched.
    const server = await startServer(db, {}, { compress: { storage: storage(), runner: passThroughRunner } });
    const post = async (token: string, body: Record<string, string>) => {
      const response = await fetch(`${server.url}/v1/compress`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { original_size?: number; error?: { code: string } };
      return { status: response.status, size: answer.original_size, code: answer.error?.code };
    };
    try {
      const owner = await subscriberWithKey(db.prisma);
      const other = await subscriberWithKey(db.prisma);
      const pdf = await makePdf(2);
      const { body, contentType } = multipart([{ name: "file", value: pdf, filename: "deck.pdf" }]);
      const response = await fetch(`${server.url}/v1/compress`, {
        method: "POST",
        headers: { authorization: `Bearer ${owner.token}`, "content-type": contentType },
        body: new Uint8Array(body),
      });
      const result = (await response.json()) as { id: string; url: string; compressed_size: number };
      expect(response.status).toBe(200);
      expect(new URL(result.url).origin).toBe(gcs.url);
      const browserGets = () => gcs.requests.filter((r) => r.path.startsWith(`/${BUCKET}/`)).length;
      const before = browserGets();
      expect(await post(owner.token, { file_url: result.url })).toEqual({
        status: 200,
        size: result.compressed_size,
        code: undefined,
      });
      expect(browserGets()).toBe(before);

      const altered = new URL(result.url);
      const signature = altered.searchParams.get("X-Goog-Signature")!;
      altered.searchParams.set(
        "X-Goog-Signature",
        `${signature.slice(0, -2)}${signature.endsWith("00") ? "11" : "00"}`,
      );
      const longer = new URL(result.url);
      longer.searchParams.set("X-Goog-Expires", "7200");
      for (const [token, address, status, code] of [
        [other.token, result.url, 400, "file_url_forbidden"],
        [owner.token, altered.toString(), 400, "invalid_file_url"],
        [owner.token, longer.toString(), 400, "invalid_file_url"],
      ] as const) {
        expect(await post(token, { file_url: address }), address).toMatchObject({ status, code });
      }
      const deleted = await fetch(`${server.url}/v1/compressions/${result.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(deleted.status).toBe(204);
      expect(await post(owner.token, { file_url: result.url })).toMatchObject({
        status: 422,
        code: "file_url_unreachable",
      });
      expect(await usedThisMonth(db.prisma, owner.subscriber.id)).toBe(2);
      expect(await usedThisMonth(db.prisma, other.subscriber.id)).toBe(0);
    } finally {
      await server.close();
      await db.close();
    }
  }, 120_000);
});
