// OCR's synchronous limit (issue 43 item 4) over real HTTP with the real engine: a synchronous call
// with ocr reads at most COMPRESS_SYNC_OCR_MAX_PAGES scanned pages (1 here, so the scans stay small);
// a file with more is answered 202 with the job it was queued as (Location, the job resource,
// async_reason), charged once, and the job ends with the text layer. On /v1/compress (multipart and a
// direct upload), /v1/unlock (the job compresses the decrypted file) and the MCP tool compress_pdf.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { findBinary } from "../../bench/pdf/tools.ts";
import { directUpload, multipart, subscriberWithKey } from "../helpers/compress.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import { popplerScratch, type PopplerScratch } from "../pdf/helpers/poppler.ts";
import { scanDocument } from "../pdf/helpers/scans.ts";

let stack: CompressionStack;
let poppler: PopplerScratch;
let onePage: Buffer;
let twoPages: Buffer;
const FIRST = ["Searchable scans"];
const SECOND = ["come back readable"];

beforeAll(async () => {
  stack = await startCompressionStack({
    name: "ocr-sync-limit",
    jobWorker: true,
    env: { COMPRESS_SYNC_OCR_MAX_PAGES: "1" },
    runner: { timeoutMs: 120_000 },
  });
  poppler = popplerScratch("ocr-sync-limit");
  onePage = Buffer.from(await scanDocument([{ lines: FIRST, dpi: 200, height: 100 }]));
  twoPages = Buffer.from(
    await scanDocument([
      { lines: FIRST, dpi: 200, height: 100 },
      { lines: SECOND, dpi: 200, height: 100 },
    ]),
  );
});
afterAll(async () => {
  await stack?.close();
  poppler?.remove();
});

interface Job {
  id: string;
  status: string;
  url?: string;
  report?: { ocr?: { pages_read: number } };
  async_reason?: { code: string; message: string; ocr_pages: number; sync_ocr_page_limit: number };
  error?: { code: string };
}

async function post(token: string, file: Buffer, fields: Record<string, string>, route = "/v1/compress") {
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename: "scan.pdf" },
  ]);
  const response = await fetch(`${stack.server.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
    body: new Uint8Array(body),
  });
  return { response, json: (await response.json()) as Job };
}

/** A direct upload of the file: its upload_id. */
const upload = (token: string, file: Buffer) => directUpload(stack.server.url, token, file);

async function pollJob(token: string, location: string): Promise<Job> {
  for (;;) {
    const response = await fetch(`${stack.server.url}${location}`, { headers: { authorization: `Bearer ${token}` } });
    const job = (await response.json()) as Job;
    if (job.status === "succeeded" || job.status === "failed") return job;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const wordsOf = async (url: string) =>
  poppler
    .textOf(new Uint8Array(await (await fetch(url)).arrayBuffer()))
    .split(/\s+/)
    .filter(Boolean);

/** The 202 of a synchronous call past the limit: the job, why, and no Preference-Applied. */
function expectQueuedPastLimit(response: Response, json: Job) {
  expect(response.status, JSON.stringify(json)).toBe(202);
  expect(response.headers.get("location")).toBe(`/v1/jobs/${json.id}`);
  expect(response.headers.get("preference-applied")).toBeNull();
  // A worker may have claimed the job before the answer was written (jobs.test.ts: the same).
  expect(["queued", "running"]).toContain(json.status);
  expect(json).toMatchObject({
    object: "compression_job",
    options: { ocr: true },
    async_reason: { code: "ocr_page_limit", ocr_pages: 2, sync_ocr_page_limit: 1 },
  });
  // Over HTTP the job is polled at its Location (over MCP, with get_compression: below).
  expect(json.async_reason?.message).toMatch(/Poll its Location \(GET \/v1\/jobs\/\{id\}\) for the result\.$/);
}

describe("OCR's synchronous limit", () => {
  it("reads a scan within the limit at once, and queues one past it as a job charged once, which ends with the text layer", async () => {
    const { token, subscriber } = await subscriberWithKey(stack.db.prisma);
    const small = await post(token, onePage, { ocr: "true" });
    expect(small.response.status, JSON.stringify(small.json)).toBe(200);
    expect(small.json.report?.ocr?.pages_read).toBe(1);
    // Without ocr the limit does not apply.
    expect((await post(token, twoPages, {})).response.status).toBe(200);

    const { response, json } = await post(token, twoPages, { ocr: "true" });
    expectQueuedPastLimit(response, json);
    expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(3);
    const job = await pollJob(token, response.headers.get("location")!);
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    expect(job.report?.ocr?.pages_read).toBe(2);
    expect(await wordsOf(job.url!)).toEqual([...FIRST, ...SECOND].join(" ").split(" "));
    expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(3);
  }, 60_000);

  it("queues a direct upload past the limit as a job, and the MCP tool answers the job with its reason", async () => {
    const { token, subscriber } = await subscriberWithKey(stack.db.prisma);
    const direct = await fetch(`${stack.server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ upload_id: await upload(token, twoPages), ocr: true }),
    });
    const directJob = (await direct.json()) as Job;
    expectQueuedPastLimit(direct, directJob);

    const client = new Client({ name: "test-agent", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.server.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    try {
      const called = await client.callTool({
        name: "compress_pdf",
        arguments: { upload_id: await upload(token, twoPages), ocr: true },
      });
      expect(called.isError).toBeFalsy();
      expect(["queued", "running"]).toContain((called.structuredContent as { status?: string }).status);
      expect(called.structuredContent).toMatchObject({ async_reason: { code: "ocr_page_limit", ocr_pages: 2 } });
      // An agent has no Location header: the reason tells it to poll the tool.
      const { message } = (called.structuredContent as Job).async_reason!;
      expect(message).toMatch(/Poll get_compression with its id for the result\.$/);
      expect(message).not.toContain("Location");
    } finally {
      await client.close();
    }
    // Each charged once, at acceptance (the multipart job above shows such a job's end).
    expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(2);
  }, 60_000);

  it.skipIf(!findBinary("qpdf"))(
    "queues an unlock past the limit as a job that compresses the decrypted file",
    async () => {
      const { token } = await subscriberWithKey(stack.db.prisma);
      const dir = mkdtempSync(path.join(tmpdir(), "ocr-sync-limit-"));
      try {
        writeFileSync(path.join(dir, "in.pdf"), twoPages);
        execFileSync(findBinary("qpdf")!, ["--encrypt", "open", "own", "256", "--", "in.pdf", "out.pdf"], { cwd: dir });
        const locked = readFileSync(path.join(dir, "out.pdf"));
        const { response, json } = await post(token, locked, { password: "open", ocr: "true" }, "/v1/unlock");
        expectQueuedPastLimit(response, json);
        const job = await pollJob(token, response.headers.get("location")!);
        expect(job.status, JSON.stringify(job)).toBe("succeeded");
        expect(await wordsOf(job.url!)).toEqual([...FIRST, ...SECOND].join(" ").split(" "));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
