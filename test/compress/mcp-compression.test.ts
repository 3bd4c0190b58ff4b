// Compression for agents (issue 44 item 6): POST /v1/mcp through the official SDK's client
// (Client + StreamableHTTPClientTransport) against a real server: the tools listed with their
// output schemas, a file compressed by its URL from a local server (and as a job), the result got,
// listed and deleted, the usage, a refusal as a tool error (hostile ocr and ocr_languages among them,
// property-based); a file over MCP_SYNC_MAX_BYTES (by URL and by direct upload) answered as a job with
// its async_reason, polled with get_compression to its report, charged once; a missing or wrong key is
// a 401 in the error shape with WWW-Authenticate, before any tool runs.
import { randomUUID } from "node:crypto";
import path from "node:path";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { createGcsStorage } from "../../src/compress/storage/gcs.ts";
import { COMPRESSION_PROFILES } from "../../src/pdf/index.ts";
import { OCR_LANGUAGES } from "../../src/pdf/shared/options.ts";
import { directUpload, makePdf, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeGcs, testServiceAccount, type FakeGcs } from "../helpers/fake-gcs.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { fuzzRuns, hostileText, integerEdges } from "../helpers/fuzz.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";

let stack: CompressionStack;
let files: Server;
let origin: string;
/** MCP_SYNC_MAX_BYTES here: cv.pdf's size, so that cv.pdf is compressed within the call and large.pdf is not. */
let limit: number;
let large: Buffer;

beforeAll(async () => {
  const pdf = await makePdf(2);
  limit = pdf.length;
  large = await makePdf(40);
  files = createServer((req, res) => {
    if (req.url === "/cv.pdf") res.writeHead(200, { "Content-Type": "application/pdf" }).end(pdf);
    else if (req.url === "/large.pdf") res.writeHead(200, { "Content-Type": "application/pdf" }).end(large);
    else res.writeHead(200, { "Content-Type": "text/html" }).end("<html></html>");
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  // development: this machine's file server may be fetched (the webhook policy's loopback default);
  // a per-key limit that a long fuzz run (FUZZ_RUNS) does not reach; the test's job worker runs the jobs
  stack = await startCompressionStack({
    name: "mcp-compression",
    jobWorker: true,
    env: { NODE_ENV: "development", COMPRESS_RATE_LIMIT_PER_MINUTE: "100000", MCP_SYNC_MAX_BYTES: String(limit) },
  });
});
afterAll(async () => {
  files?.close();
  await stack?.close();
});

/**
 * Any value of a tool's argument, for the property-based tests: hostile text, integers at their
 * edges, booleans, null, a shallow JSON value, and the values given (near what the tools tested
 * take: ids, dates, statuses, language lists).
 */
function anyArgument(...near: fc.Arbitrary<unknown>[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    hostileText,
    integerEdges.map(Number),
    fc.boolean(),
    fc.constant(null),
    ...near,
    fc.jsonValue({ maxDepth: 1 }),
  );
}

interface QueuedJob {
  id: string;
  status: string;
  async_reason: { code: string; message: string; file_size: number; mcp_sync_max_bytes: number };
}

interface Polled {
  status: string;
  original_size?: number;
  compressed_size?: number;
  url?: string;
  report?: Record<string, unknown>;
}

/** get_compression until the job ended (the stack's worker runs it). */
async function pollCompression(client: Client, id: string): Promise<Polled> {
  for (;;) {
    const got = await client.callTool({ name: "get_compression", arguments: { id } });
    expect(got.isError ?? false, JSON.stringify(got.content)).toBe(false);
    const body = got.structuredContent as Polled;
    if (body.status === "succeeded" || body.status === "failed") return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * compress_pdf with each set of arguments generated (beside those `base` gives it): a tool error
 * naming one of `codes` ("code: message"), or the SDK's of an argument not of its type; never a
 * protocol or HTTP error. Closes the client; answers the codes seen.
 */
async function expectCompressRefused(
  client: Client,
  args: fc.Arbitrary<Record<string, unknown>>,
  codes: string,
  base: () => Record<string, unknown> = () => ({}),
  examples: Record<string, unknown>[] = [],
): Promise<Set<string>> {
  const refusal = new RegExp(`^(${codes}): |^MCP error -32602: Input validation error`);
  const seen = new Set<string>();
  try {
    await fc.assert(
      fc.asyncProperty(args, async (sent) => {
        const context = JSON.stringify(sent);
        const arguments_ = { ...base(), ...sent };
        const result = (await client.callTool({ name: "compress_pdf", arguments: arguments_ })) as CallToolResult;
        expect(result.isError, context).toBe(true);
        const text = result.content[0]?.type === "text" ? result.content[0].text : "";
        expect(text, context).toMatch(refusal);
        seen.add(text.split(":")[0]!);
      }),
      { numRuns: fuzzRuns(40), examples: examples.map((example) => [example]) },
    );
  } finally {
    await client.close();
  }
  return seen;
}

async function connect(token: string, base = stack.server.url): Promise<Client> {
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

describe("/v1/mcp", () => {
  it("lists the compression tools, each with an output schema", async () => {
    const { token } = await subscriberWithKey(stack.db.prisma);
    const client = await connect(token);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        "compress_pdf",
        "delete_compression",
        "get_compression",
        "list_compressions",
        "usage",
      ]);
      for (const tool of tools) expect(tool.outputSchema, tool.name).toBeDefined();
    } finally {
      await client.close();
    }
  });

  it("compresses a file by URL, gets, lists and deletes it, and tells the usage", async () => {
    const { token, subscriber } = await subscriberWithKey(stack.db.prisma, { quota: 10 });
    const client = await connect(token);
    try {
      const done = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/cv.pdf` } });
      expect(done.isError).toBeFalsy();
      const result = done.structuredContent as { id: string; url: string; report?: unknown; compressed_size: number };
      expect(result).toMatchObject({ id: expect.any(String) as string, url: expect.any(String) as string });
      // The report as the API answers it, its measured quality too (a text-only file: no page changed).
      expect(result.report).toMatchObject({ min_ssim: null, pages_checked: 0 });
      const download = await fetch(result.url);
      expect(download.status).toBe(200);
      expect((await download.arrayBuffer()).byteLength).toBe(result.compressed_size);

      const job = await client.callTool({
        name: "compress_pdf",
        arguments: { file_url: `${origin}/cv.pdf`, async: true, profile: "extreme" },
      });
      // A worker may have claimed the job before the answer was written.
      expect(["queued", "running"]).toContain((job.structuredContent as { status?: string }).status);

      const got = await client.callTool({ name: "get_compression", arguments: { id: result.id } });
      expect(got.structuredContent).toMatchObject({ id: result.id, status: "succeeded" });
      const listed = await client.callTool({ name: "list_compressions", arguments: { limit: 1 } });
      expect(listed.structuredContent).toMatchObject({ has_more: true });
      const usage = await client.callTool({ name: "usage", arguments: {} });
      expect(usage.structuredContent).toMatchObject({ monthly_quota: 10, used: 2, remaining: 8 });

      const deleted = await client.callTool({ name: "delete_compression", arguments: { id: result.id } });
      expect(deleted.structuredContent).toEqual({ id: result.id, deleted: true });
      expect((await fetch(result.url)).status).toBeGreaterThanOrEqual(404);

      // A refusal of the arguments is a tool error naming its code; nothing charged.
      const refused = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/page.html` } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("file_url_not_pdf");
      const other = await client.callTool({ name: "get_compression", arguments: { id: "nope" } });
      expect(JSON.stringify(other.content)).toContain("not_found");
      expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(2);
    } finally {
      await client.close();
    }
  });

  it("answers a file over MCP_SYNC_MAX_BYTES with a job to poll (async_reason mcp_size_limit), by URL and by direct upload, async false included; charged once", async () => {
    const { token, subscriber } = await subscriberWithKey(stack.db.prisma, { quota: 10 });
    expect(large.length).toBeGreaterThan(limit);
    const client = await connect(token);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === "compress_pdf")?.description).toContain(
        `larger than ${limit.toLocaleString("en-US")} bytes`,
      );
      const calls = [
        { file_url: `${origin}/large.pdf` },
        { file_url: `${origin}/large.pdf`, async: false, profile: "extreme" },
        { upload_id: await directUpload(stack.server.url, token, large) },
      ];
      const jobs: QueuedJob[] = [];
      for (const args of calls) {
        const called = await client.callTool({ name: "compress_pdf", arguments: args });
        expect(called.isError ?? false, JSON.stringify(args)).toBe(false);
        const job = called.structuredContent as QueuedJob;
        // A worker may have claimed the job before the answer was written.
        expect(["queued", "running"]).toContain(job.status);
        expect(job).toMatchObject({
          id: expect.any(String) as string,
          object: "compression_job",
          async_reason: { code: "mcp_size_limit", file_size: large.length, mcp_sync_max_bytes: limit },
        });
        expect(job.async_reason.message).toContain("get_compression");
        jobs.push(job);
      }
      for (const job of jobs) {
        const done = await pollCompression(client, job.id);
        expect(done, JSON.stringify(done)).toMatchObject({ status: "succeeded", original_size: large.length });
        expect(done.report).toMatchObject({ pages_checked: expect.any(Number) as number });
        const download = await fetch(done.url!);
        expect(download.status).toBe(200);
        expect((await download.arrayBuffer()).byteLength).toBe(done.compressed_size);
      }

      // At the limit: the result within the call, as before.
      const now = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/cv.pdf` } });
      expect(now.isError ?? false).toBe(false);
      const result = now.structuredContent as Record<string, unknown>;
      expect(result).toMatchObject({ id: expect.any(String) as string, original_size: limit });
      expect(result["report"]).toBeDefined();
      expect(result["async_reason"]).toBeUndefined();
      expect(result["object"]).toBeUndefined();
    } finally {
      await client.close();
    }
    // Charged once each: three jobs (one per call, nothing queued twice) and one compressed at once.
    expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(4);
    expect(await stack.db.prisma.compressionJob.count({ where: { subscriberId: subscriber.id } })).toBe(3);
  }, 60_000);

  it("counts against the key's own rate limit and quota: a call of /v1/mcp is a request of the key, a unit over the quota a tool error", async () => {
    const { token } = await subscriberWithKey(stack.db.prisma, { quota: 1 });
    const remaining = async () => {
      const response = await fetch(`${stack.server.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
      return Number(/"api-key";r=(\d+)/.exec(response.headers.get("ratelimit") ?? "")?.[1]);
    };
    const before = await remaining();
    const client = await connect(token);
    try {
      const first = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/cv.pdf` } });
      expect(first.isError ?? false).toBe(false);
      const over = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/cv.pdf` } });
      expect(over.isError).toBe(true);
      expect(JSON.stringify(over.content)).toContain("quota_exceeded");
    } finally {
      await client.close();
    }
    // initialize, its notification, two tools/call: each a request of the key, between two of /v1/usage
    expect(before - (await remaining())).toBeGreaterThanOrEqual(5);
  });

  // Issue 43: compress_pdf's ocr and ocr_languages (and the profile beside them) with any value. A
  // direct upload that does not exist: the options are checked before it is looked up, so a valid
  // set answers upload_not_found and nothing runs or is charged.
  it("answers hostile ocr and ocr_languages with a tool error naming its code, never a protocol or HTTP error", async () => {
    const { token, subscriber } = await subscriberWithKey(stack.db.prisma, { quota: 5 });
    const client = await connect(token);
    const anyValue = anyArgument(fc.array(fc.constantFrom("eng", "deu", "xx"), { maxLength: 4 }));
    // Codes as Tesseract joins them (and worse): known, unknown, blank, repeated, too many.
    const codes = fc.array(fc.constantFrom(...OCR_LANGUAGES, "klingon", "", " eng", "ENG"), { maxLength: 5 });
    const languages = fc
      .tuple(codes, fc.constantFrom("+", ",", "++", " + "))
      .map(([list, separator]) => list.join(separator));
    const args = fc.record(
      {
        ocr: fc.oneof({ weight: 3, arbitrary: fc.boolean() }, anyValue),
        ocr_languages: fc.oneof({ weight: 3, arbitrary: languages }, anyValue),
        profile: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...COMPRESSION_PROFILES) }, anyValue),
        target_size: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, fc.integer()),
        async: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    await expectCompressRefused(client, args, "invalid_[a-z_]+|upload_not_found", () => ({ upload_id: randomUUID() }));
    expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(0);
  });

  // Issue 44: the new tools' arguments with any value (ids, limits, cursors, statuses, dates).
  it("answers any arguments of list_compressions, get_compression and delete_compression with a tool result, never a protocol or HTTP error", async () => {
    const { token } = await subscriberWithKey(stack.db.prisma);
    const client = await connect(token);
    const anyValue = anyArgument(
      fc.uuid().map(String),
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc.constantFrom("queued", "running", "succeeded", "failed"),
    );
    const call = fc.oneof(
      fc.record({
        name: fc.constant("list_compressions"),
        arguments: fc.record(
          { limit: anyValue, cursor: anyValue, status: anyValue, created_after: anyValue, created_before: anyValue },
          { requiredKeys: [] },
        ),
      }),
      fc.record({
        name: fc.constantFrom("get_compression", "delete_compression"),
        arguments: fc.record({ id: anyValue }, { requiredKeys: [] }),
      }),
    );
    try {
      await fc.assert(
        fc.asyncProperty(call, async (sent) => {
          const context = JSON.stringify(sent);
          const result = (await client.callTool(sent)) as CallToolResult;
          if (!result.isError) {
            expect(result.structuredContent, context).toBeDefined();
            return;
          }
          const text = result.content[0]?.type === "text" ? result.content[0].text : "";
          expect(text, context).toMatch(/^(invalid_[a-z_]+|not_found): |^MCP error -32602: Input validation error/);
        }),
        { numRuns: fuzzRuns(60) },
      );
    } finally {
      await client.close();
    }
  });

  // Issue 44: compress_pdf's own arguments of the issue with any value: file_url (refused addresses, a
  // page that is not a PDF, a closed port, hostile text, values not strings), retention and upload_id.
  // No value names a PDF that can be fetched, so every call is refused and nothing is charged.
  it("answers any file_url, retention and upload_id of compress_pdf with a tool error naming its code, nothing charged", async () => {
    const { token, subscriber } = await subscriberWithKey(stack.db.prisma, { quota: 5 });
    const client = await connect(token);
    const anyValue = anyArgument(fc.uuid().map(String), fc.constantFrom("0", "60", "-1"));
    const refusedUrl = fc.constantFrom(
      `${origin}/page.html`,
      "http://127.0.0.1:9/cv.pdf",
      "https://10.0.0.1/cv.pdf",
      "https://169.254.169.254/latest/meta-data/",
      "https://[fe80::1]/cv.pdf",
      "https://[::ffff:192.168.0.1]/cv.pdf",
      "https://metadata.google.internal/computeMetadata/v1/",
      "ftp://files.example.com/cv.pdf",
      "cv.pdf",
    );
    const args = fc.record(
      {
        file_url: fc.oneof({ weight: 3, arbitrary: refusedUrl }, anyValue),
        retention: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 86_400 }) }, anyValue),
        upload_id: fc.oneof(fc.uuid().map(String), anyValue),
        async: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    // Run first, whatever the seed draws: forty random records reached no fetch once (upload_id or a
    // malformed argument answered first), so the fetch's refusals are not left to chance.
    const fetched = [`${origin}/page.html`, "http://127.0.0.1:9/cv.pdf"];
    const seen = await expectCompressRefused(
      client,
      args,
      "invalid_[a-z_]+|file_url_[a-z_]+|upload_not_found",
      () => ({}),
      fetched.map((url) => ({ file_url: url })),
    );
    // The fetch itself was reached and refused, not only the arguments' types.
    expect([...seen].filter((code) => code.startsWith("file_url_")).length, [...seen].join()).toBeGreaterThan(0);
    expect(await usedThisMonth(stack.db.prisma, subscriber.id)).toBe(0);
  });

  it("is listed in /llms.txt and described in /v1/openapi.json (POST, Bearer, a JSON-RPC body)", async () => {
    const text = await (await fetch(`${stack.server.url}/llms.txt`)).text();
    expect(text).toContain(`${stack.server.url}/v1/mcp`);
    expect(text).toContain("compress_pdf");
    const document = (await (await fetch(`${stack.server.url}/v1/openapi.json`)).json()) as {
      security: unknown;
      paths: Record<
        string,
        Record<string, { requestBody: unknown; responses: Record<string, unknown>; description: string }>
      >;
    };
    const mcp = document.paths["/v1/mcp"]!;
    expect(Object.keys(mcp)).toEqual(["post"]);
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(mcp["post"]!.requestBody).toMatchObject({
      content: { "application/json": { schema: { required: ["jsonrpc", "method"] } } },
    });
    expect(Object.keys(mcp["post"]!.responses)).toEqual(expect.arrayContaining(["200", "202", "401", "429"]));
    expect(mcp["post"]!.description).toContain('"url": "<origin>/v1/mcp"');
    expect(mcp["post"]!.description).toContain("docs/mcp.md");
  });

  it.each([
    ["no key", {}],
    ["a wrong key", { authorization: "Bearer mk_live_notarealkey0000000000000000000000" }],
  ])("answers 401 in the error shape with WWW-Authenticate for %s", async (_what, headers) => {
    const response = await fetch(`${stack.server.url}/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const body = (await response.json()) as { error: { code: string } };
    expect(["missing_api_key", "malformed_api_key", "invalid_api_key"]).toContain(body.error.code);
    // and the SDK's client cannot connect with it
    await expect(connect("mk_live_notarealkey0000000000000000000000")).rejects.toThrow();
  });
});

// The tools with Cloud Storage's stand-in behind the service: the result lands in the bucket, and
// delete_compression takes it out.
describe("/v1/mcp on Cloud Storage (the stand-in)", () => {
  const BUCKET = "mcp-results";
  const { publicKey, credentials } = testServiceAccount();
  let gcs: FakeGcs;
  let db: TestDatabase;
  let server: TestServer;
  beforeAll(async () => {
    gcs = await startFakeGcs(BUCKET, publicKey);
    db = await createTestDatabase();
    const storage = createGcsStorage({ bucket: BUCKET, apiEndpoint: gcs.url, projectId: "p", credentials });
    server = await startServer(
      db,
      { NODE_ENV: "development", UPLOAD_TMP_DIR: path.join(stack.work, "gcs-uploads"), COMPRESS_JOB_WORKERS: "0" },
      { compress: { storage, runner: passThroughRunner } },
    );
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await gcs?.close();
  });

  it("compresses by URL into the bucket, lists it, and deletes it from the bucket", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const client = await connect(token, server.url);
    try {
      const done = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/cv.pdf` } });
      expect(done.isError ?? false).toBe(false);
      const result = done.structuredContent as { id: string; url: string };
      const object = path.basename(new URL(result.url).pathname);
      expect(new URL(result.url).origin).toBe(gcs.url);
      expect(gcs.objects.has(object)).toBe(true);
      const listed = await client.callTool({ name: "list_compressions", arguments: {} });
      expect((listed.structuredContent as { data: { id: string }[] }).data.map((item) => item.id)).toEqual([result.id]);
      const deleted = await client.callTool({ name: "delete_compression", arguments: { id: result.id } });
      expect(deleted.structuredContent).toEqual({ id: result.id, deleted: true });
      expect(gcs.objects.has(object)).toBe(false);
      const got = await client.callTool({ name: "get_compression", arguments: { id: result.id } });
      expect(got.structuredContent).toMatchObject({ id: result.id, deleted_by: "request", filename: null });
      const refused = await client.callTool({ name: "compress_pdf", arguments: { file_url: `${origin}/page.html` } });
      expect(JSON.stringify(refused.content)).toContain("file_url_not_pdf");
      expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    } finally {
      await client.close();
    }
  });
});
