// The compression API end to end with the real engine in real child processes: a result that
// downloads as a valid PDF with the original's page count, encrypted files and /v1/unlock,
// refusals that are not charged, a busy instance, a hostile file that hits the time limit while
// others are still served, and every corpus file through HTTP.
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { createRunner, type Runner } from "../../src/compress/isolation/runner.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { multipart, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { carriesSignatures, corpusDir, photoPdf, textPdf } from "../pdf/fixtures.ts";

let db: TestDatabase;
let work: string;
const servers: TestServer[] = [];
const runners: Runner[] = [];

async function serve(
  runnerOptions: Partial<Parameters<typeof createRunner>[0]> = {},
  env: Record<string, string> = {},
) {
  const runner = createRunner({ concurrency: 2, queueLimit: 8, timeoutMs: 60_000, memoryMb: 1024, ...runnerOptions });
  runners.push(runner);
  const objects = path.join(work, `objects-${runners.length}`);
  const server = await startServer(
    db,
    { UPLOAD_TMP_DIR: path.join(work, "uploads"), ...env },
    { compress: { storage: await createLocalStorage(objects, null), runner } },
  );
  servers.push(server);
  return server;
}

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "compress-service-"));
});
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const runner of runners) await runner.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

type Result = { success: boolean; original_size: number; compressed_size: number; url: string };
type ErrorBody = { error: { code: string } };

async function post(base: string, route: string, token: string, parts: Parameters<typeof multipart>[0]) {
  const { body, contentType } = multipart(parts);
  const response = await fetch(`${base}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
    body: new Uint8Array(body),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    json: (await response.json()) as Record<string, unknown>,
  };
}

/** A careful client's tries at a busy instance before giving up (each waits what Retry-After says). */
const BUSY_RETRIES = 5;

/** As a real client posts: on `503 busy`, waits the Retry-After seconds and tries again, a few times. */
async function postPatiently(...args: Parameters<typeof post>) {
  for (let attempt = 0; ; attempt++) {
    const answer = await post(...args);
    const busy = answer.status === 503 && (answer.json as ErrorBody).error.code === "busy";
    if (!busy || attempt === BUSY_RETRIES) return answer;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Math.max(1, Number(answer.retryAfter) || 1)));
  }
}

async function downloadPages(url: string): Promise<number> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  const doc = await PDFDocument.load(new Uint8Array(await response.arrayBuffer()));
  return doc.getPageCount();
}

describe("compression with the real engine", () => {
  it("compresses every profile, smaller where images allow, and the result downloads with the same pages", async () => {
    const server = await serve();
    const { token } = await subscriberWithKey(db.prisma);
    const { bytes } = await photoPdf();
    const pages = (await PDFDocument.load(bytes)).getPageCount();
    const sizes: Record<string, number> = {};
    for (const profile of ["lossless", "balanced", "extreme"]) {
      const { status, json } = await post(server.url, "/v1/compress", token, [
        { name: "file", value: Buffer.from(bytes), filename: "photos.pdf" },
        { name: "profile", value: profile },
      ]);
      expect(status, profile).toBe(200);
      const result = json as Result;
      expect(result.original_size).toBe(bytes.length);
      expect(result.compressed_size).toBeLessThanOrEqual(bytes.length);
      expect(await downloadPages(result.url)).toBe(pages);
      sizes[profile] = result.compressed_size;
    }
    expect(sizes["balanced"]).toBeLessThan(bytes.length);
    expect(sizes["extreme"]).toBeLessThanOrEqual(sizes["balanced"]!);
  }, 120_000); // three compressions in child processes: 15 s alone, far more on a loaded 2-core CI

  it("refuses an encrypted file (not charged) and unlocks it with its password", async () => {
    const server = await serve();
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const locked = Buffer.from(await textPdf(3, { encrypt: { userPassword: "open sesame", ownerPassword: "owner" } }));
    const refused = await post(server.url, "/v1/compress", token, [{ name: "file", value: locked, filename: "l.pdf" }]);
    expect(refused.status).toBe(422);
    expect((refused.json as ErrorBody).error.code).toBe("encrypted_pdf");
    const wrong = await post(server.url, "/v1/unlock", token, [
      { name: "file", value: locked, filename: "l.pdf" },
      { name: "password", value: "guess" },
    ]);
    expect(wrong.status).toBe(422);
    expect((wrong.json as ErrorBody).error.code).toBe("incorrect_password");
    const missing = await post(server.url, "/v1/unlock", token, [{ name: "file", value: locked, filename: "l.pdf" }]);
    expect(missing.status).toBe(400);
    expect((missing.json as ErrorBody).error.code).toBe("missing_password");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    const unlocked = await post(server.url, "/v1/unlock", token, [
      { name: "file", value: locked, filename: "l.pdf" },
      { name: "password", value: "open sesame" },
    ]);
    expect(unlocked.status).toBe(200);
    expect(await downloadPages((unlocked.json as Result).url)).toBe(3);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  });

  it("answers 503 busy with retry-after when every slot and the queue are taken", async () => {
    const server = await serve({ concurrency: 1, queueLimit: 0 });
    const { token } = await subscriberWithKey(db.prisma);
    const { bytes } = await photoPdf();
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        post(server.url, "/v1/compress", token, [{ name: "file", value: Buffer.from(bytes), filename: "p.pdf" }]),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    const busy = results.find((r) => r.status === 503)!;
    expect((busy.json as ErrorBody).error.code).toBe("busy");
  }, 120_000); // one real compression: seconds alone, far more on a loaded 2-core CI

  it("gives a file past the time limit 422 processing_timeout, not charged, while serving others", async () => {
    const server = await serve({ timeoutMs: 300, timeoutMsPerMb: 0 });
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const { bytes } = await photoPdf();
    const slow = post(server.url, "/v1/compress", token, [
      { name: "file", value: Buffer.from(bytes), filename: "p.pdf" },
    ]);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const { status, json } = await slow;
    expect(status).toBe(422);
    expect((json as ErrorBody).error.code).toBe("processing_timeout");
    // The limit for the file's size is stated; a file that meets it is not called hostile.
    expect((json as { error: { message: string } }).error.message).toMatch(
      /^Processing took longer than the limit for a file of this size \(0\.3 s for [\d.]+ [KM]B\)\.$/,
    );
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    expect(await readdir(path.join(work, "uploads"))).toEqual([]);
  });
});

const CORPUS = corpusDir();
/**
 * Files outside the `signed` category that carry a valid signature (the publisher's): refused by
 * default like the signed files, so sent with signatures=remove to be compressed as the manifest says.
 */
const SIGNED_BY_PUBLISHER = new Set(["text_federal_register_15p.pdf"]);
if (!CORPUS) console.warn("Skipping the corpus through HTTP: no corpus (set PDF_CORPUS_DIR).");

/** Manifest "422" files the engine rebuilds as readers do (issue 31; corpus.test.ts says why). */
const REBUILT = new Set(["bad_missing_trailer.pdf"]);

/** The instance the corpus goes to: two engine children, a short queue (production's is 8). */
const RUNNER = { concurrency: 2, queueLimit: 8, timeoutMs: 90_000 };

describe.skipIf(!CORPUS)("every corpus file through /v1/compress", () => {
  it("answers 200 with a valid download or 422 with the right code, as the manifest says", async () => {
    const server = await serve(RUNNER);
    const { token } = await subscriberWithKey(db.prisma, { quota: 10_000 });
    const [head, ...lines] = readFileSync(path.join(CORPUS!, "MANIFEST.tsv"), "utf8").trimEnd().split("\n");
    const columns = head!.split("\t");
    const rows = lines.map(
      (line) => Object.fromEntries(line.split("\t").map((v, i) => [columns[i] ?? "", v])) as Record<string, string>,
    );
    // At most as many uploads at once as the instance runs and queues: a client posting more gets
    // 503 busy for the rest. The retry on busy is the other half of what a real client does.
    const inFlight = RUNNER.concurrency + RUNNER.queueLimit;
    const outcomes: { row: Record<string, string>; status: number; json: Record<string, unknown> }[] = [];
    let next = 0;
    const client = async () => {
      for (let row = rows[next++]; row; row = rows[next++]) {
        const file = readFileSync(path.join(CORPUS!, "files", row["file"] ?? ""));
        const { status, json } = await postPatiently(server.url, "/v1/compress", token, [
          { name: "file", value: file, filename: row["file"] ?? "" },
          ...(SIGNED_BY_PUBLISHER.has(row["file"] ?? "") ? [{ name: "signatures", value: "remove" }] : []),
        ]);
        outcomes.push({ row, status, json });
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, rows.length) }, client));
    expect(outcomes.length).toBe(rows.length);
    for (const { row, status, json } of outcomes) {
      // The manifest's 200 for the signed files predates signed_document (signatures-http.test.ts).
      // Refused unless signatures=remove was sent (the publisher-signed file above is sent with it).
      const signed =
        carriesSignatures(row["file"] ?? "", row["category"] ?? "") && !SIGNED_BY_PUBLISHER.has(row["file"] ?? "");
      const expected = signed ? "422 signed_document" : (row["expected_api"] ?? "");
      const label = `${row["file"]} (${row["category"]}, expected ${expected})`;
      if (expected === "200") {
        expect(status, label).toBe(200);
        expect(await downloadPages((json as Result).url), label).toBe(Number(row["pages"]));
      } else if (expected.startsWith("422 (or repair") || REBUILT.has(row["file"] ?? "")) {
        expect([200, 422], label).toContain(status);
        if (status === 200) expect(await downloadPages((json as Result).url), label).toBeGreaterThan(0);
      } else if (expected.startsWith("422")) {
        expect(status, label).toBe(422);
        const code = (json as ErrorBody).error.code;
        if (signed) expect(code, label).toBe("signed_document");
        else if (row["category"]?.startsWith("encrypted")) expect(code, label).toBe("encrypted_pdf");
        else if (row["category"] === "not-pdf") expect(["not_a_pdf", "corrupted_pdf"], label).toContain(code);
        else
          expect(
            ["corrupted_pdf", "not_a_pdf", "unsupported_pdf", "processing_timeout", "processing_failed"],
            label,
          ).toContain(code);
      } else {
        // The owner-password-only files: our policy refuses any encryption.
        expect(status, label).toBe(422);
        expect((json as ErrorBody).error.code, label).toBe("encrypted_pdf");
      }
    }
  }, 600_000);
});
