import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PDFDocument } from "@cantoo/pdf-lib";
import {
  createRunner,
  ENGINE_CHILD_ENV,
  jobTimeoutMs,
  LARGE_INPUT_ENV,
  WASM_TIERING,
  RunnerBusy,
  RunnerClosed,
} from "../../src/compress/isolation/runner.ts";
import type { Runner, RunnerEvent, RunnerOptions } from "../../src/compress/isolation/runner.ts";
import { REFILL_AFTER_JOB_MS } from "../../src/compress/isolation/pool.ts";
import type { EngineJob } from "../../src/compress/isolation/protocol.ts";
import { photoPdf, textPdf } from "../pdf/fixtures.ts";

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
    expect(result).toEqual({
      ok: true,
      outputSize: expect.any(Number) as number,
      pages: 2,
      // What the process measured of itself: the whole process, so at least the modules loaded; and
      // the time the report's min_ssim cost beyond the quality check (two images recoded here).
      usage: {
        engineMs: expect.any(Number) as number,
        cpuMs: expect.any(Number) as number,
        maxRssKb: expect.any(Number) as number,
        measureMs: expect.any(Number) as number,
      },
      // What changed, as the child reported it (src/compress/report.ts checks its shape).
      report: expect.objectContaining({ original_returned: false, images_recoded: 2 }) as unknown,
    });
    expect(result.ok && result.usage!.maxRssKb).toBeGreaterThan(20_000);
    const { size } = await stat(job.outputPath);
    expect(result.ok && size === result.outputSize).toBe(true);
    expect(size).toBeLessThan((await stat(photo)).size / 2);
    expect((await PDFDocument.load(readFileSync(job.outputPath))).getPageCount()).toBe(2);
  });

  it("reports the process's own peak memory, not the parent's it was forked from", async () => {
    // A parent holding 600 MiB: getrusage's maxRSS in a child counts what the parent had resident
    // at the fork, VmHWM does not. A small job's process peaks far below that.
    const ballast = Buffer.alloc(600 * 1024 * 1024, 1);
    const r = runner({ warmProcesses: 0 });
    const result = await r.run(compress(photo));
    expect(ballast[ballast.length - 1]).toBe(1);
    expect(result.ok && result.usage!.maxRssKb).toBeLessThan(400 * 1024);
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

/** Whether a process is still there (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A runner whose process and job events are recorded. */
function observed(options: Partial<RunnerOptions> = {}) {
  const events: RunnerEvent[] = [];
  const r = runner({
    ...options,
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
    },
  });
  const of = <T extends RunnerEvent["type"]>(type: T) =>
    events.filter((event): event is Extract<RunnerEvent, { type: T }> => event.type === type);
  /** Waits (bounded) until every warm process has loaded the engine. */
  const warmedUp = (count = options.warmProcesses ?? options.concurrency ?? 2) =>
    vi.waitFor(() => expect(r.stats().warm).toBe(count), { timeout: 30_000, interval: 50 });
  return { r, events, of, warmedUp };
}

describe("warm processes", () => {
  it("runs a job in a process forked and loaded before the job was submitted", async () => {
    const { r, of, warmedUp } = observed();
    await warmedUp();
    const before = new Set(of("ready").map((event) => event.pid));
    expect(before.size).toBe(2);
    const result = await r.run(compress(text));
    expect(result).toMatchObject({ ok: true, pages: 4 });
    const [job] = of("job");
    expect(job).toMatchObject({ warm: true, ready: true });
    expect(before.has(job!.pid)).toBe(true);
    // The process ran one job and was ended at its answer (or had exited while its reply was
    // checked); another was forked in its place.
    await vi.waitFor(() => expect(of("job-exited")).toHaveLength(1), { timeout: 5_000, interval: 10 });
    expect(of("job-exited")).toMatchObject([{ type: "job-exited", pid: job!.pid }]);
    expect(["done", null]).toContain(of("job-exited")[0]!.killed);
    expect(alive(job!.pid!)).toBe(false);
    await warmedUp();
    expect(of("spawned")).toHaveLength(3);
  });

  it.each([
    // another waits ready: the replacement is forked once the job is over
    { warmProcesses: 2, state: "ready" },
    // none is ready: the replacement is forked as soon as the job has gone out to its process
    { warmProcesses: 1, state: "starting" },
  ])(
    "with $warmProcesses warm processes, one stays in the pool while a job runs, $state",
    async ({ warmProcesses }) => {
      const { r, of, warmedUp } = observed({ warmProcesses });
      await warmedUp();
      const running = r.run(compress(text));
      await new Promise((resolve) => setImmediate(resolve));
      // The job has taken its process: what the pool holds meanwhile.
      expect(r.stats()).toMatchObject(warmProcesses === 1 ? { warm: 0, warming: 1 } : { warm: 1, warming: 0 });
      expect(await running).toMatchObject({ ok: true });
      await warmedUp();
      expect(of("spawned")).toHaveLength(warmProcesses + 1);
    },
  );

  it("gives a large input a process forked for it with a larger initial heap; the warm ones wait for others", async () => {
    const { r, of, warmedUp } = observed({ warmProcesses: 1, largeInputBytes: 1024 });
    await warmedUp();
    const warm = of("ready").map((event) => event.pid);
    const running = r.run(compress(photo));
    // Forked for the job: its command line (the process is running by now) has the large input's flags.
    const [job] = of("job");
    expect(job).toMatchObject({ warm: false });
    const command = readFileSync(`/proc/${job!.pid}/cmdline`, "utf8").split("\0");
    const environment = readFileSync(`/proc/${job!.pid}/environ`, "utf8").split("\0");
    expect(await running).toMatchObject({ ok: true, pages: 2 });
    expect(command).toContain("--max-old-space-size=512");
    expect(command).toContain("--initial-heap-size=128");
    // A large input's WebAssembly tiers up as V8 does by default; a warm process's stays in the baseline tier.
    expect(command.some((flag) => flag.startsWith("--wasm-tiering-budget"))).toBe(false);
    expect(readFileSync(`/proc/${warm[0]!}/cmdline`, "utf8").split("\0")).toContain(WASM_TIERING);
    // And the arena's thresholds of a large input (LARGE_INPUT_ENV), where a warm one has the engine's.
    expect(environment).toContain(`MALLOC_MMAP_THRESHOLD_=${LARGE_INPUT_ENV.MALLOC_MMAP_THRESHOLD_}`);
    expect(environment).toContain(`MALLOC_TRIM_THRESHOLD_=${LARGE_INPUT_ENV.MALLOC_TRIM_THRESHOLD_}`);
    expect(readFileSync(`/proc/${warm[0]!}/environ`, "utf8").split("\0")).toContain(
      `MALLOC_MMAP_THRESHOLD_=${ENGINE_CHILD_ENV.MALLOC_MMAP_THRESHOLD_}`,
    );
    expect(warm).not.toContain(job!.pid);
    // The warm process is still there, and a small input gets it.
    expect(r.stats().warm).toBe(1);
    await r.run(compress(notPdf));
    expect(of("job")[1]).toMatchObject({ warm: true, pid: warm[0] });
  });

  it("never runs two jobs in one process, and every process that ran a job has exited", async () => {
    const { r, of, warmedUp } = observed({ concurrency: 2, queueLimit: 8 });
    await warmedUp();
    const results = await Promise.all([text, photo, text, notPdf, text].map((file) => r.run(compress(file))));
    expect(results.filter((result) => result.ok)).toHaveLength(4);
    const jobPids = of("job").map((event) => event.pid);
    expect(jobPids).toHaveLength(5);
    expect(new Set(jobPids).size).toBe(5);
    await vi.waitFor(() => expect(r.stats().exiting).toBe(0), { timeout: 5_000, interval: 10 });
    for (const pid of jobPids) expect(alive(pid!)).toBe(false);
    expect(
      of("job-exited")
        .map((event) => event.pid)
        .sort(),
    ).toEqual([...jobPids].sort());
    // Each was ended by the runner once its job was answered (a refusal is an answer too), unless
    // it had exited by itself while its reply was checked.
    for (const { killed } of of("job-exited")) expect(["done", null]).toContain(killed);
  });

  it("forks the replacement of the only warm process after the job went out to it, not before", async () => {
    const { r, events, of, warmedUp } = observed({ warmProcesses: 1 });
    await warmedUp();
    const running = r.run(compress(text));
    // Forking blocks the service's event loop: the job's process has its job first.
    expect(of("spawned")).toHaveLength(1);
    expect(await running).toMatchObject({ ok: true });
    const [job] = of("job");
    const replacement = of("spawned")[1]!;
    expect(events.indexOf(replacement)).toBeGreaterThan(events.indexOf(job!));
    await warmedUp(1);
  });

  it("forks no replacement once closed, even when a job took the last warm process just before", async () => {
    const { r, of, warmedUp } = observed({ warmProcesses: 1 });
    await warmedUp(1);
    const running = r.run(compress(text)).catch((error: unknown) => error);
    await r.close();
    expect(await running).toBeInstanceOf(RunnerClosed);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(of("spawned")).toHaveLength(1);
  });

  it("forks a job's replacement REFILL_AFTER_JOB_MS after its process is gone, while another waits ready", async () => {
    const at = new Map<RunnerEvent, number>();
    const { r, of, warmedUp } = observed({
      warmProcesses: 2,
      onEvent: (event) => at.set(event, performance.now()),
    });
    await warmedUp();
    expect(await r.run(compress(text))).toMatchObject({ ok: true });
    await vi.waitFor(() => expect(of("spawned")).toHaveLength(3), { timeout: 5_000, interval: 5 });
    const gone = at.get(of("job-exited")[0]!)!;
    // Timers may fire a millisecond early.
    expect(at.get(of("spawned")[2]!)! - gone).toBeGreaterThanOrEqual(REFILL_AFTER_JOB_MS - 2);
    await warmedUp();
  });

  it("forks nothing after close() while a replacement waits for its moment", async () => {
    const { r, of, warmedUp } = observed({ warmProcesses: 2 });
    await warmedUp();
    expect(await r.run(compress(text))).toMatchObject({ ok: true });
    await vi.waitFor(() => expect(of("job-exited")).toHaveLength(1), { timeout: 5_000, interval: 5 });
    await r.close();
    await new Promise((resolve) => setTimeout(resolve, REFILL_AFTER_JOB_MS * 2));
    expect(of("spawned")).toHaveLength(2);
  });

  it("runs the next job when the other warm process is killed while a replacement waits for its moment", async () => {
    const { r, of, warmedUp } = observed({ warmProcesses: 2, concurrency: 1 });
    await warmedUp();
    expect(await r.run(compress(text))).toMatchObject({ ok: true });
    const spare = of("ready")
      .map((event) => event.pid!)
      .find((pid) => pid !== of("job")[0]!.pid)!;
    process.kill(spare, "SIGKILL");
    // At once: the pool has not heard of the spare's end yet and may hand it the job, which never
    // reaches it; the job then runs on another process, neither failed nor charged to the file.
    expect(await r.run(compress(text))).toMatchObject({ ok: true, pages: 4 });
    expect(of("job").at(-1)!.pid).not.toBe(spare);
    expect(r.stats()).toMatchObject({ succeeded: 2, failed: 0 });
    await warmedUp();
  });

  it("replaces a warm process that was killed or crashed while idle", async () => {
    const { r, of, warmedUp } = observed();
    await warmedUp();
    const victim = of("ready")[0]!.pid!;
    process.kill(victim, "SIGKILL");
    await vi.waitFor(() => expect(of("exited").map((event) => event.pid)).toContain(victim), { timeout: 10_000 });
    expect(of("exited")[0]).toMatchObject({ idle: true, signal: "SIGKILL" });
    await warmedUp();
    expect(of("spawned")).toHaveLength(3);
    expect(await r.run(compress(text))).toMatchObject({ ok: true });
    expect(of("job")[0]!.pid).not.toBe(victim);
  });

  it("does not reuse the process of a job killed for time; the next job gets a fresh one", async () => {
    const { r, of, warmedUp } = observed({ timeoutMs: 150, concurrency: 1 });
    await warmedUp();
    expect(await r.run(compress(photo, "extreme"))).toMatchObject({ ok: false, code: "processing_timeout" });
    const [killed] = of("job-exited");
    expect(killed).toMatchObject({ killed: "timeout" });
    expect(alive(killed!.pid!)).toBe(false);
    await warmedUp(1);
    await r.run(compress(notPdf));
    const [, next] = of("job");
    expect(next!.pid).not.toBe(killed!.pid);
    expect(next).toMatchObject({ warm: true, ready: true });
  });

  it("applies the heap limit and the resident-memory limit to warm processes", async () => {
    const small = observed({ memoryMb: 24 });
    await small.warmedUp();
    expect(await small.r.run(compress(manyObjects, "lossless"))).toMatchObject({
      ok: false,
      code: "processing_failed",
    });
    expect(small.of("job")[0]).toMatchObject({ ready: true });
    const capped = observed({ maxRssMb: 40 });
    await capped.warmedUp();
    expect(await capped.r.run(compress(photo))).toMatchObject({ ok: false, code: "processing_failed" });
    expect(capped.of("job-exited")[0]).toMatchObject({ killed: "memory" });
  });

  it("without warm processes forks one per job, as before", async () => {
    const { r, of } = observed({ warmProcesses: 0 });
    expect(await r.run(compress(text))).toMatchObject({ ok: true });
    expect(of("job")[0]).toMatchObject({ warm: false });
    expect(r.stats()).toMatchObject({ warm: 0, warming: 0 });
  });

  it("runs its processes on plain JavaScript, from a private copy that close() removes", async () => {
    const { r, of, warmedUp } = observed();
    await warmedUp();
    const pid = of("ready")[0]!.pid!;
    const script = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).at(-1)!;
    // The copy mirrors src/ (the child's modules and the engine's, src/pdf): compress/isolation/child.mjs.
    expect(script).toMatch(/compress-engine-[^/]+\/compress\/isolation\/child\.mjs$/);
    const copy = path.dirname(path.dirname(path.dirname(script)));
    expect(existsSync(path.join(copy, "pdf/index.mjs"))).toBe(true);
    expect((await stat(copy)).mode & 0o777).toBe(0o700);
    // Modules only, importing one another: no TypeScript is left for the process to strip.
    const files = (await readdir(copy, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      expect(file.name).toMatch(/\.mjs$/);
      expect(readFileSync(path.join(file.parentPath, file.name), "utf8")).not.toMatch(/from\s*["']\.[^"']*\.ts["']/);
    }
    expect(await r.run(compress(text))).toMatchObject({ ok: true, pages: 4 });
    await r.close();
    expect(existsSync(copy)).toBe(false);
  });

  it("runs its processes with no environment but the engine's own (glibc's arena and thresholds)", async () => {
    const { r, of, warmedUp } = observed();
    await warmedUp();
    const pid = of("ready")[0]!.pid!;
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
    const variables: Record<string, string> = {};
    for (const entry of environ) variables[entry.slice(0, entry.indexOf("="))] = entry.slice(entry.indexOf("=") + 1);
    // Node's own IPC channel (NODE_CHANNEL_*) besides
    for (const name of Object.keys(variables)) if (name.startsWith("NODE_CHANNEL_")) delete variables[name];
    expect(variables).toEqual(ENGINE_CHILD_ENV);
    expect(ENGINE_CHILD_ENV).toMatchObject({ MALLOC_ARENA_MAX: "1", MALLOC_MMAP_THRESHOLD_: "16777216" });
    await r.close();
  });

  it("close() also ends the warm processes", async () => {
    const { r, of, warmedUp } = observed();
    await warmedUp();
    const pids = of("ready").map((event) => event.pid!);
    await r.close();
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(r.stats()).toMatchObject({ warm: 0, warming: 0 });
  });
});

describe("time limit", () => {
  it.each([
    [0, 30_000],
    [1024 * 1024, 31_000],
    [300 * 1024 * 1024, 330_000],
  ])("grows with the input: %i bytes get %i ms on a 30 s base and 1 s per MB", (bytes, limit) => {
    expect(jobTimeoutMs({ timeoutMs: 30_000, timeoutMsPerMb: 1000 }, bytes)).toBe(limit);
  });

  it("is flat without a rate", () => {
    expect(jobTimeoutMs({ timeoutMs: 120_000 }, 300 * 1024 * 1024)).toBe(120_000);
  });

  it("is the one each job runs under, from the size of its input", async () => {
    const { r, of } = observed({ timeoutMs: 20_000, timeoutMsPerMb: 1_000_000 });
    await r.run(compress(photo));
    const { size } = await stat(photo);
    expect(of("job")[0]!.timeoutMs).toBe(Math.ceil(20_000 + (1_000_000 * size) / (1024 * 1024)));
    expect(r.timeoutFor(size)).toBe(of("job")[0]!.timeoutMs);
  });

  it("says a timed-out file took longer than the limit for its size, not that it is hostile", async () => {
    const r = runner({ timeoutMs: 150 });
    const result = await r.run(compress(photo, "extreme"));
    expect(result).toMatchObject({ ok: false, code: "processing_timeout" });
    expect(!result.ok && result.message).toMatch(
      /^Processing took longer than the limit for a file of this size \(0\.\d s for [\d.]+ [KM]B\)\.$/,
    );
    expect(!result.ok && result.message).not.toMatch(/hostile|complex/);
  });
});

/**
 * A stand-in for child.ts that answers every job with a 10-byte output, then, by MODE: exits
 * after 400 ms ("linger"), crashes ("crash"), never exits ("hang"), or claims a size it did not
 * write ("lie", then exits).
 */
const SCRIPTED_CHILD = `
import { writeFileSync } from "node:fs";
const mode = process.env.MODE;
process.on("disconnect", () => process.exit(1));
process.once("message", (job) => {
  writeFileSync(job.outputPath, "0123456789");
  const outputSize = mode === "lie" ? 11 : 10;
  process.send({ ok: true, outputSize, pages: 1 }, () => {
    if (mode === "linger") setTimeout(() => process.exit(0), 400);
    else if (mode === "crash") process.kill(process.pid, "SIGSEGV");
    else if (mode === "hang") setInterval(() => {}, 1000);
    else process.exit(0);
  });
});
process.send({ ready: true });
`;

describe("answers at the reply", () => {
  let script: string;
  beforeAll(async () => {
    script = path.join(dir, "scripted-child.mjs");
    await writeFile(script, SCRIPTED_CHILD);
  });
  const scripted = (mode: string, options: Partial<RunnerOptions> = {}) =>
    observed({ childModule: script, env: { MODE: mode }, concurrency: 1, queueLimit: 0, ...options });
  const exitedOnce = (of: ReturnType<typeof observed>["of"]) =>
    vi.waitFor(() => expect(of("job-exited")).toHaveLength(1), { timeout: 10_000, interval: 10 });

  it("answers a job once its reply is checked and ends its process then; the slot stays taken until it is gone", async () => {
    const { r, of, events } = scripted("linger");
    const job = compress(text);
    expect(await r.run(job)).toEqual({ ok: true, outputSize: 10, pages: 1 });
    expect(of("job-exited")).toEqual([]);
    expect(r.stats()).toMatchObject({ running: 0, exiting: 1, succeeded: 1 });
    expect(readFileSync(job.outputPath, "utf8")).toBe("0123456789");
    // One process per slot: the next job waits for it (beyond a queue of 0: it would have found
    // the slot free had the first been answered when its process was gone).
    const next = r.run(compress(text));
    expect(r.stats()).toMatchObject({ queued: 1, busy: 0 });
    await expect(r.run(compress(text))).rejects.toBeInstanceOf(RunnerBusy);
    expect(await next).toMatchObject({ ok: true });
    const [first, second] = of("job");
    const exitedAt = of("job-exited")[0];
    // Ended by the runner at its answer, not left to linger its 400 ms.
    expect(exitedAt).toMatchObject({ pid: first!.pid, killed: "done" });
    expect(second!.pid).not.toBe(first!.pid);
    expect(events.indexOf(exitedAt!)).toBeLessThan(events.indexOf(second!));
  });

  it("a process that would not exit after its answer is ended then, and its time limit never counts", async () => {
    // Long enough for the reply on a loaded machine (the limit runs from the job's start).
    const { r, of, warmedUp } = scripted("hang", { timeoutMs: 2_000 });
    await warmedUp();
    const job = compress(text);
    const started = performance.now();
    expect(await r.run(job)).toMatchObject({ ok: true });
    await exitedOnce(of);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(of("job-exited")[0]).toMatchObject({ killed: "done" });
    expect(existsSync(job.outputPath)).toBe(true);
    expect(r.stats()).toMatchObject({ succeeded: 1, timedOut: 0, failed: 0, running: 0, exiting: 0 });
  });

  it("a signal that aborts after the answer neither removes the output nor counts as an abort", async () => {
    const { r, of } = scripted("linger");
    const controller = new AbortController();
    const job = compress(text);
    expect(await r.run(job, { signal: controller.signal })).toMatchObject({ ok: true });
    controller.abort();
    await exitedOnce(of);
    expect(of("job-exited")[0]).toMatchObject({ killed: "done" });
    expect(existsSync(job.outputPath)).toBe(true);
    expect(r.stats()).toMatchObject({ succeeded: 1, aborted: 0 });
  });

  it("a process that crashes after replying leaves a success a success", async () => {
    const { r, of } = scripted("crash");
    const job = compress(text);
    expect(await r.run(job)).toMatchObject({ ok: true });
    await exitedOnce(of);
    expect(existsSync(job.outputPath)).toBe(true);
    expect(r.stats()).toMatchObject({ succeeded: 1, failed: 0, running: 0, exiting: 0 });
  });

  it("close() waits for the process of an answered job, leaving its output", async () => {
    const { r, of } = scripted("hang");
    const job = compress(text);
    expect(await r.run(job)).toMatchObject({ ok: true });
    const pid = of("job")[0]!.pid!;
    expect(r.stats()).toMatchObject({ exiting: 1 });
    await r.close();
    expect(alive(pid)).toBe(false);
    expect(of("job-exited")[0]).toMatchObject({ killed: "done" });
    expect(existsSync(job.outputPath)).toBe(true);
    expect(r.stats()).toMatchObject({ succeeded: 1, running: 0, exiting: 0 });
  });

  it("a reply whose output file does not have the size it says is no answer: the exit decides", async () => {
    const { r, of } = scripted("lie");
    const job = compress(text);
    expect(await r.run(job)).toMatchObject({ ok: false, code: "processing_failed" });
    expect(of("job-exited")).toHaveLength(1);
    expect(existsSync(job.outputPath)).toBe(false);
    expect(r.stats()).toMatchObject({ succeeded: 0, failed: 1 });
  });
});
