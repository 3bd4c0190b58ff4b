import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFDocument } from "@cantoo/pdf-lib";
import { createRunner, RunnerBusy, RunnerClosed } from "../../src/compress/isolation/runner.ts";
import type { Runner, RunnerOptions } from "../../src/compress/isolation/runner.ts";
import type { EngineJob } from "../../src/compress/isolation/protocol.ts";
import { photoPdf, textPdf } from "./fixtures.ts";

let dir: string;
let text: string;
let photo: string;
let encrypted: string;
let notPdf: string;
let manyObjects: string;
let counter = 0;
const runners: Runner[] = [];

const output = () => path.join(dir, `out-${++counter}.pdf`);
const compress = (inputPath: string, profile: "lossless" | "balanced" | "extreme" = "balanced"): EngineJob => ({
  kind: "compress",
  inputPath,
  outputPath: output(),
  profile,
});

function runner(options: Partial<RunnerOptions> = {}): Runner {
  const created = createRunner({ concurrency: 2, queueLimit: 4, timeoutMs: 60_000, memoryMb: 512, ...options });
  runners.push(created);
  return created;
}

/** A valid PDF of `count` small objects: parsing it takes far more heap than its size suggests. */
function manyObjectsPdf(count: number): string {
  const parts = ["%PDF-1.7\n"];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  const add = (text: string) => {
    parts.push(text);
    length += text.length;
  };
  const object = (num: number, body: string) => {
    offsets[num] = length;
    add(`${num} 0 obj\n${body}\nendobj\n`);
  };
  object(1, "<< /Type /Catalog /Pages 2 0 R >>");
  object(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
  object(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>");
  for (let i = 4; i < count + 4; i++)
    object(i, `<< /Index ${i} /Name /Object${i} /Values [${i} ${i + 1} (text ${i})] >>`);
  const xref = length;
  add(`xref\n0 ${count + 4}\n0000000000 65535 f \n`);
  for (let i = 1; i < count + 4; i++) add(`${String(offsets[i]).padStart(10, "0")} 00000 n \n`);
  add(`trailer\n<< /Size ${count + 4} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return parts.join("");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "runner-test-"));
  text = path.join(dir, "text.pdf");
  photo = path.join(dir, "photo.pdf");
  encrypted = path.join(dir, "encrypted.pdf");
  notPdf = path.join(dir, "not.pdf");
  manyObjects = path.join(dir, "many.pdf");
  await writeFile(text, await textPdf(4));
  await writeFile(photo, (await photoPdf()).bytes);
  await writeFile(encrypted, await textPdf(2, { encrypt: { userPassword: "secret", ownerPassword: "owner" } }));
  await writeFile(notPdf, "<html>not a pdf</html>");
  await writeFile(manyObjects, manyObjectsPdf(150_000), "latin1");
}, 60_000);

afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
  await rm(dir, { recursive: true, force: true });
});

describe("runner", () => {
  it("runs a job in a child process and writes the output file", async () => {
    const job = compress(photo);
    const result = await runner().run(job);
    expect(result).toEqual({ ok: true, outputSize: expect.any(Number) as number, pages: 2 });
    const { size } = await stat(job.outputPath);
    expect(result.ok && size === result.outputSize).toBe(true);
    expect(size).toBeLessThan((await stat(photo)).size / 2);
    expect((await PDFDocument.load(readFileSync(job.outputPath))).getPageCount()).toBe(2);
  });

  it("answers the engine's refusals as results and leaves no output file", async () => {
    const r = runner();
    const job = compress(notPdf);
    expect(await r.run(job)).toMatchObject({ ok: false, code: "not_a_pdf" });
    expect(existsSync(job.outputPath)).toBe(false);
    const locked = compress(encrypted);
    expect(await r.run(locked)).toMatchObject({ ok: false, code: "encrypted_pdf" });
    expect(r.stats()).toMatchObject({ refused: 2, running: 0, queued: 0 });
  });

  it("unlocks, and compresses the decrypted file when given a profile", async () => {
    const r = runner();
    const job: EngineJob = { kind: "unlock", inputPath: encrypted, outputPath: output(), password: "secret" };
    expect(await r.run(job)).toMatchObject({ ok: true, pages: 2 });
    const both: EngineJob = { ...job, outputPath: output(), profile: "extreme" };
    expect(await r.run(both)).toMatchObject({ ok: true, pages: 2 });
    const wrong: EngineJob = { ...job, outputPath: output(), password: "guess" };
    expect(await r.run(wrong)).toMatchObject({ ok: false, code: "incorrect_password" });
    expect(existsSync(wrong.outputPath)).toBe(false);
  });

  it("runs at most `concurrency` children and turns away jobs beyond the queue at once", async () => {
    const r = runner({ concurrency: 1, queueLimit: 1 });
    const first = r.run(compress(photo));
    const second = r.run(compress(text));
    expect(r.stats()).toMatchObject({ running: 1, queued: 1 });
    const started = Date.now();
    const third = r.run(compress(text));
    await expect(third).rejects.toBeInstanceOf(RunnerBusy);
    expect(Date.now() - started).toBeLessThan(100);
    const busy = (await third.catch((e: unknown) => e)) as RunnerBusy;
    expect(busy.name).toBe("RunnerBusy");
    expect(busy.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await first).toMatchObject({ ok: true });
    expect(await second).toMatchObject({ ok: true });
    expect(r.stats()).toMatchObject({ running: 0, queued: 0, busy: 1, succeeded: 2 });
  });

  it("kills a child past the time limit: processing_timeout, no output file", async () => {
    const r = runner({ timeoutMs: 150 });
    const job = compress(photo, "extreme");
    const started = Date.now();
    expect(await r.run(job)).toMatchObject({ ok: false, code: "processing_timeout" });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(existsSync(job.outputPath)).toBe(false);
    expect(r.stats()).toMatchObject({ timedOut: 1, running: 0 });
  });

  it("kills the child when the signal aborts (the client went away)", async () => {
    const r = runner();
    const controller = new AbortController();
    const job = compress(photo, "extreme");
    const running = r.run(job, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(running).rejects.toMatchObject({ name: "AbortError" });
    expect(existsSync(job.outputPath)).toBe(false);
    expect(r.stats()).toMatchObject({ running: 0, aborted: 1 });
    // An already aborted signal never starts a child.
    await expect(r.run(compress(text), { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("drops a queued job whose signal aborts before it starts", async () => {
    const r = runner({ concurrency: 1, queueLimit: 2 });
    const first = r.run(compress(photo));
    const controller = new AbortController();
    const queuedJob = compress(text);
    const queued = r.run(queuedJob, { signal: controller.signal });
    expect(r.stats().queued).toBe(1);
    controller.abort();
    await expect(queued).rejects.toMatchObject({ name: "AbortError" });
    expect(r.stats().queued).toBe(0);
    expect(await first).toMatchObject({ ok: true });
    expect(existsSync(queuedJob.outputPath)).toBe(false);
  });

  it("reports a child that runs out of heap as processing_failed", async () => {
    const stderr: string[] = [];
    const r = runner({ memoryMb: 24, onChildStderr: (chunk) => stderr.push(chunk) });
    const job = compress(manyObjects, "lossless");
    expect(await r.run(job)).toMatchObject({ ok: false, code: "processing_failed" });
    expect(existsSync(job.outputPath)).toBe(false);
    expect(stderr.join("")).toMatch(/heap/i);
    expect(r.stats()).toMatchObject({ failed: 1 });
  });

  it("kills a child whose resident memory passes maxRssMb", async () => {
    const r = runner({ maxRssMb: 40 });
    const job = compress(photo, "balanced");
    const result = await r.run(job);
    expect(result).toMatchObject({ ok: false, code: "processing_failed" });
    expect(!result.ok && result.message).toMatch(/memory/);
    expect(existsSync(job.outputPath)).toBe(false);
  });

  it("close() kills running children, refuses queued and new jobs", async () => {
    const r = createRunner({ concurrency: 1, queueLimit: 1, timeoutMs: 60_000, memoryMb: 512 });
    const runningJob = compress(photo, "extreme");
    const running = r.run(runningJob);
    const queued = r.run(compress(text));
    const outcomes = Promise.allSettled([running, queued]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await r.close();
    for (const outcome of await outcomes) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(RunnerClosed);
    }
    await expect(r.run(compress(text))).rejects.toBeInstanceOf(RunnerClosed);
    expect(existsSync(runningJob.outputPath)).toBe(false);
    expect(r.stats()).toMatchObject({ running: 0, queued: 0 });
  });
});
