// A job's progress (issue 43 item 4) over real HTTP with the real engine: a queued job shows 0 pages
// done of a total not counted yet; while it runs, the engine's isolated process reports each page
// OCR has read (child.ts → the runner's onProgress → the job's row), and GET /v1/jobs/{id} and the
// list of compressions show it; a succeeded job has done every page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claim } from "../../src/compress/async-jobs/queue.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import type { JobProgress } from "../../src/compress/isolation/protocol.ts";
import { createLogger } from "../../src/logger.ts";
import { multipart, subscriberWithKey } from "../helpers/compress.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import { scanDocument } from "../pdf/helpers/scans.ts";

let stack: CompressionStack;
let worker: JobWorker | undefined;
/** What the engine reported, through the runner, to the worker's run. */
const reported: JobProgress[] = [];

beforeAll(async () => {
  // No worker at first (the server's off too): the job stays queued until the test starts one.
  stack = await startCompressionStack({
    name: "job-progress",
    env: { COMPRESS_JOB_WORKERS: "0" },
    runner: { timeoutMs: 120_000 },
  });
});
afterAll(async () => {
  await worker?.stop();
  await stack?.close();
});

interface Progress {
  pages_done: number;
  pages_total: number | null;
}
interface Job {
  id: string;
  status: string;
  progress: Progress;
  report?: { ocr?: { pages_read: number } };
}

async function get<T>(token: string, path: string): Promise<T> {
  const response = await fetch(`${stack.server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

describe("a job's progress", () => {
  it("is 0 of a total not counted while queued, reports the pages OCR has read while it runs, and every page once done", async () => {
    const { token } = await subscriberWithKey(stack.db.prisma);
    const pages = ["First page here", "Second page here", "Third page here"].map((line) => ({
      lines: [line],
      dpi: 200,
      height: 100,
    }));
    const scan = Buffer.from(await scanDocument(pages));
    const { body, contentType } = multipart([
      { name: "ocr", value: "true" },
      { name: "file", value: scan, filename: "scan.pdf" },
    ]);
    const accepted = await fetch(`${stack.server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType, prefer: "respond-async" },
      body: new Uint8Array(body),
    });
    const queued = (await accepted.json()) as Job;
    expect(accepted.status, JSON.stringify(queued)).toBe(202);
    expect(queued.progress).toEqual({ pages_done: 0, pages_total: null });
    expect((await get<Job>(token, `/v1/jobs/${queued.id}`)).progress).toEqual({ pages_done: 0, pages_total: null });
    const listed = await get<{ data: { job_id: string; progress?: Progress }[] }>(token, "/v1/compressions");
    expect(listed.data.find((row) => row.job_id === queued.id)?.progress).toEqual({ pages_done: 0, pages_total: null });

    const { runner } = stack;
    const recording = {
      run: (job: Parameters<typeof runner.run>[0], options: Parameters<typeof runner.run>[1] = {}) =>
        runner.run(job, {
          ...options,
          onProgress: (progress) => {
            reported.push(progress);
            options.onProgress?.(progress);
          },
        }),
    };
    const logger = createLogger({ logLevel: "silent" });
    const deps = { config: stack.server.config, prisma: stack.db.prisma, storage: stack.storage, logger, pollMs: 100 };
    worker = startJobWorker({ ...deps, runner: recording }, 1);

    // Polled while it runs (within the key's 120 requests a minute): every answer is a count within
    // the total, never going back.
    const seen: Progress[] = [];
    let job: Job;
    for (;;) {
      job = await get<Job>(token, `/v1/jobs/${queued.id}`);
      seen.push(job.progress);
      if (job.status === "succeeded" || job.status === "failed") break;
      await new Promise((resolve) => setTimeout(resolve, 600));
    }
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    expect(job.report?.ocr?.pages_read).toBe(3);
    expect(job.progress).toEqual({ pages_done: 3, pages_total: 3 });
    for (const [i, progress] of seen.entries()) {
      if (progress.pages_total !== null) expect(progress.pages_done).toBeLessThanOrEqual(progress.pages_total);
      if (i > 0) expect(progress.pages_done).toBeGreaterThanOrEqual(seen[i - 1]!.pages_done);
    }
    // The engine's reports, in order: the document opened (0 of 3), OCR begun, then each page read.
    expect(reported.map((p) => `${p.pagesDone}/${p.pagesTotal}`)).toEqual(["0/3", "0/3", "1/3", "2/3", "3/3"]);
    const done = await get<{ data: { job_id: string; progress?: Progress }[] }>(token, "/v1/compressions");
    expect(done.data.find((row) => row.job_id === queued.id)?.progress).toEqual({ pages_done: 3, pages_total: 3 });
  }, 60_000);

  it("starts again at 0 of a total not counted when another attempt takes the job over", async () => {
    await worker?.stop();
    worker = undefined;
    const prisma = stack.db.prisma;
    const job = await prisma.compressionJob.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    // An attempt that read 2 of 3 pages, then its process died: its lease runs out.
    await prisma.$executeRaw`UPDATE compression_jobs SET status = 'running', pages_done = 2, pages_total = 3,
      locked_until = now() - interval '1 second' WHERE id = ${job.id}::uuid`;
    const claimed = await claim(prisma, "progress-test", 60_000);
    expect(claimed?.id).toBe(job.id);
    const row = await prisma.compressionJob.findUniqueOrThrow({ where: { id: job.id } });
    expect({ done: row.pagesDone, total: row.pagesTotal, attempts: row.attempts }).toEqual({
      done: 0,
      total: null,
      attempts: job.attempts + 1,
    });
  });
});
