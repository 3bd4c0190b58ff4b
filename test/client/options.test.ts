// The typed client's output options (targetSize, grayscale, maxImagePpi, removeMetadata, linearize) against the
// real service and engine over HTTP: each call (compress, unlock, submitJob, compressUpload) sends
// them as the API's fields, the engine's job carries them (the runner is the real one, its jobs
// recorded on their way), the result shows them applied (no document information left), a target
// the floor cannot reach fails the job with target_unreachable, and a refused option comes back as
// the typed 400 naming the field.
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compressUpload,
  createCompressionClient,
  outputFields,
  submitJob,
  uploadFile,
  waitForJob,
} from "../../clients/typescript/src/index.ts";
import type { EngineJob } from "../../src/compress/isolation/protocol.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import { subscriberWithKey } from "../helpers/compress.ts";
import type { TestDatabase } from "../helpers/database.ts";
import type { TestServer } from "../helpers/server.ts";
import { documentWithInformation, textPdf } from "../pdf/fixtures.ts";

let db: TestDatabase;
let work: string;
let server: TestServer;
let stack: CompressionStack | undefined;
let document: Blob;
const jobs: EngineJob[] = [];

beforeAll(async () => {
  document = new Blob([Buffer.from(await documentWithInformation())], { type: "application/pdf" });
  stack = await startCompressionStack({
    name: "client-options",
    jobWorker: true,
    // The real runner; each job it is given is kept, to see what reached the engine.
    engine: (runner) => ({
      run: (job, options) => {
        jobs.push(job);
        return runner.run(job, options);
      },
    }),
  });
  ({ db, work, server } = stack);
});
afterAll(async () => {
  await stack?.close();
});

/** The document information fields pdfinfo shows of a downloaded result. */
async function informationAt(url: string): Promise<string[]> {
  const file = path.join(work, `result-${jobs.length}-${Date.now()}.pdf`);
  await writeFile(file, new Uint8Array(await (await fetch(url)).arrayBuffer()));
  const info = execFileSync("pdfinfo", [file], { encoding: "utf8" });
  return ["Title", "Author", "Creator", "Producer"].filter((field) => new RegExp(`^${field}:`, "m").test(info));
}

const hasPdfinfo = (() => {
  try {
    execFileSync("pdfinfo", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("the typed client's output options", () => {
  it("names each option as the API's field and leaves out those not given", () => {
    const options = { targetSize: 600_000, grayscale: true, maxImagePpi: 150, removeMetadata: false, linearize: true };
    expect(outputFields(options)).toEqual({
      target_size: 600_000,
      grayscale: true,
      max_image_ppi: 150,
      remove_metadata: false,
      linearize: true,
    });
    expect(outputFields({})).toEqual({});
    expect(outputFields({ ocr: true, ocrLanguages: ["eng", "deu"] })).toEqual({ ocr: true, ocr_languages: "eng+deu" });
  });

  it.skipIf(!hasPdfinfo)(
    "compress() and unlock() send them; the engine gets them; the result has no document information",
    async () => {
      const { token } = await subscriberWithKey(db.prisma);
      const pdf = createCompressionClient({ baseUrl: server.url, apiKey: token });
      const options = {
        removeMetadata: true,
        grayscale: true,
        maxImagePpi: 150,
        targetSize: 5_000_000,
        linearize: true,
      };
      const result = await pdf.compress(document, { profile: "extreme", ...options });
      expect(result.response.status, JSON.stringify(result.error)).toBe(200);
      expect(jobs.at(-1)).toMatchObject({ kind: "compress", profile: "extreme", ...options });
      expect(await informationAt(result.data!.url)).toEqual([]);

      const refused = await pdf.compress(document, { profile: "lossless", grayscale: true });
      expect(refused.response.status).toBe(400);
      expect(refused.error).toMatchObject({ error: { code: "invalid_grayscale" } });

      const notEncrypted = await pdf.unlock(document, "pw", { removeMetadata: true, maxImagePpi: 100 });
      expect(notEncrypted.error).toMatchObject({ error: { code: "not_encrypted" } });
      expect(jobs.at(-1)).toMatchObject({ kind: "unlock", removeMetadata: true, maxImagePpi: 100 });
    },
    120_000,
  );

  it.skipIf(!hasPdfinfo)(
    "submitJob() and compressUpload() keep them through a job; an unreachable target fails it",
    async () => {
      const { token } = await subscriberWithKey(db.prisma);
      const pdf = createCompressionClient({ baseUrl: server.url, apiKey: token });
      const queued = await submitJob(pdf, document, { removeMetadata: true });
      const done = await waitForJob(pdf, queued.id, { timeoutMs: 90_000 });
      expect(done.status, JSON.stringify(done)).toBe("succeeded");
      expect(await informationAt(done.url!)).toEqual([]);

      // Three pages of text: no smaller than some kilobytes, whatever the engine does.
      const text = new Blob([Buffer.from(await textPdf(3))], { type: "application/pdf" });
      const unreachable = await submitJob(pdf, text, { targetSize: 1024 });
      const failed = await waitForJob(pdf, unreachable.id, { timeoutMs: 90_000 });
      expect(failed).toMatchObject({ status: "failed", error: { code: "target_unreachable" } });
      expect(jobs.at(-1)).toMatchObject({ targetSize: 1024 });

      const upload = await uploadFile(pdf, document, { filename: "cv.pdf" });
      const accepted = await compressUpload(pdf, upload.upload_id, {
        async: true,
        removeMetadata: true,
        grayscale: true,
      });
      expect(accepted.response.status, JSON.stringify(accepted.error)).toBe(202);
      const uploaded = await waitForJob(pdf, (accepted.data as { id: string }).id, { timeoutMs: 90_000 });
      expect(uploaded.status, JSON.stringify(uploaded)).toBe("succeeded");
      expect(jobs.at(-1)).toMatchObject({ removeMetadata: true, grayscale: true });
      expect(await informationAt(uploaded.url!)).toEqual([]);
    },
    200_000,
  );
});
