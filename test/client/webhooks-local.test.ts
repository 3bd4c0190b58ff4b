// Webhooks on a developer's machine, the way a newcomer tries them: `npm start` (NODE_ENV=development)
// with a receiver on 127.0.0.1 takes the callback_url and calls it, signed as GET /v1/webhook-secret
// says (Standard Webhooks' headers, the ones actually sent); where loopback is not allowed the 400
// names the setting; a rotation keeps the replaced secret signing beside the new one for its window,
// so a receiver with either secret accepts every call.
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { webhookPolicyNotice } from "../../src/compress/async-jobs/webhooks.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { loadConfig } from "../../src/config/env.ts";
import {
  createCompressionClient,
  openFile,
  submitJob,
  verifyWebhook,
  waitForJob,
} from "../../clients/typescript/src/index.ts";
import { makePdf, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

type SecretAnswer = {
  secret: string;
  scheme: string;
  headers: { id: string; timestamp: string; signature: string };
  previous_secret_valid_until: string | null;
};

let db: TestDatabase;
let work: string;
let pdfPath: string;
let development: TestServer;
let strict: TestServer;
let worker: JobWorker;
let receiver: Server;
let receiverUrl: string;
const calls: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "webhooks-local-"));
  pdfPath = path.join(work, "report.pdf");
  await writeFile(pdfPath, await makePdf(1));
  const storage = await createLocalStorage(path.join(work, "objects"), null);
  const compress = { compress: { storage, runner: passThroughRunner } };
  const env = { UPLOAD_TMP_DIR: path.join(work, "uploads"), COMPRESS_JOB_WORKERS: "0" };
  // What `npm start` runs with: NODE_ENV=development and WEBHOOK_ALLOW_PRIVATE unset.
  development = await startServer(db, { ...env, NODE_ENV: "development" }, compress);
  strict = await startServer(db, env, compress);
  const noop = () => undefined;
  const logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, trace: noop, child: () => logger };
  worker = startJobWorker(
    {
      config: development.config,
      prisma: db.prisma,
      storage,
      runner: passThroughRunner,
      logger: logger as never,
      pollMs: 100,
    },
    1,
  );
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  await worker?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await development?.close();
  await strict?.close();
  await db?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Submits a job to the development server with the local receiver, and waits for its call. */
async function deliveredCall(token: string) {
  const client = createCompressionClient({ baseUrl: development.url, apiKey: token });
  const before = calls.length;
  const job = await submitJob(client, await openFile(pdfPath), { callbackUrl: receiverUrl });
  expect((await waitForJob(client, job.id, { timeoutMs: 20_000 })).status).toBe("succeeded");
  for (let i = 0; i < 100 && calls.length === before; i++) await new Promise((r) => setTimeout(r, 100));
  return calls.at(-1)!;
}

async function secretCall(token: string, method: "GET" | "POST") {
  const response = await fetch(`${development.url}/v1/webhook-secret`, {
    method,
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as SecretAnswer;
}

type Verifier = (body: string, headers: IncomingHttpHeaders, secret: string) => boolean;

/** docs/compression-api.md's Standard Webhooks snippet, loaded from its text. */
async function docsVerifier(): Promise<Verifier> {
  const guide = readFileSync(new URL("../../docs/compression-api.md", import.meta.url), "utf8");
  const block = /<!-- standard-webhooks-verification -->\s*```js\n([\s\S]*?)```/.exec(guide);
  expect(block, "the guide's Standard Webhooks snippet").not.toBeNull();
  const file = path.join(work, "docs-verify.mjs");
  await writeFile(file, block![1]!);
  return ((await import(pathToFileURL(file).href)) as { verifyStandardWebhook: Verifier }).verifyStandardWebhook;
}

describe("webhooks to this machine", () => {
  it("are allowed by default in development only, and the startup log says so", () => {
    const base = { PGLITE_DATA_DIR: "memory://" };
    expect(loadConfig({ ...base, NODE_ENV: "development" }).webhookTargets).toBe("loopback");
    expect(
      loadConfig({ ...base, NODE_ENV: "development", K_SERVICE: "api", GCS_BUCKET: "results" }).webhookTargets,
    ).toBe("public");
    expect(loadConfig({ ...base, NODE_ENV: "production" }).webhookTargets).toBe("public");
    expect(loadConfig({ ...base, NODE_ENV: "test" }).webhookTargets).toBe("public");
    expect(loadConfig({ ...base, NODE_ENV: "development", WEBHOOK_ALLOW_PRIVATE: "false" }).webhookTargets).toBe(
      "public",
    );
    expect(webhookPolicyNotice("loopback")).toMatch(/loopback.*development.*WEBHOOK_ALLOW_PRIVATE=false/s);
    expect(webhookPolicyNotice("public")).toBeNull();
  });

  it("calls a receiver on 127.0.0.1 with the headers GET /v1/webhook-secret names, verified by its secret", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const call = await deliveredCall(token);
    const answer = await secretCall(token, "GET");
    expect(answer.scheme).toBe("standard-webhooks");
    for (const header of Object.values(answer.headers)) expect(call.headers[header], header).toBeTruthy();
    expect(await verifyWebhook(call.body, call.headers as Record<string, string>, answer.secret)).toBe(true);
    expect(answer.previous_secret_valid_until).toBeNull();

    // The OpenAPI document's webhooks section describes this very call: its headers and its body.
    const doc = (await (await fetch(`${development.url}/v1/openapi.json`)).json()) as {
      webhooks: { compressionJobEnded: { post: { parameters: { name: string }[]; description: string } } };
    };
    const described = doc.webhooks.compressionJobEnded.post;
    for (const { name } of described.parameters) expect(call.headers[name.toLowerCase()], name).toBeTruthy();
    expect(described.description).toContain("${webhook-id}.${webhook-timestamp}.${raw body}");
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: "https://v1.test/openapi.json" });
    const body = ajv.getSchema(
      "https://v1.test/openapi.json#/webhooks/compressionJobEnded/post/requestBody/content/application~1json/schema",
    )!;
    expect(body(JSON.parse(call.body)), ajv.errorsText(body.errors)).toBe(true);
  });

  it("is refused where loopback is not allowed, with a 400 that names the setting", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const client = createCompressionClient({ baseUrl: strict.url, apiKey: token });
    const refused = await client.compress(await openFile(pdfPath), {
      headers: { Prefer: "respond-async" },
      fields: { callback_url: receiverUrl },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.code).toBe("invalid_callback_url");
    expect(refused.error?.error.message).toContain("WEBHOOK_ALLOW_PRIVATE=true");
  });

  it("after a rotation signs with both secrets until the window ends, so either one verifies", async () => {
    const { token } = await subscriberWithKey(db.prisma, { quota: 10 });
    const old = await secretCall(token, "GET");
    const rotated = await secretCall(token, "POST");
    expect(rotated.secret).not.toBe(old.secret);
    const until = Date.parse(rotated.previous_secret_valid_until!);
    expect(until - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect((await secretCall(token, "GET")).previous_secret_valid_until).toBe(rotated.previous_secret_valid_until);
    const call = await deliveredCall(token);
    expect(String(call.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    const headers = call.headers as Record<string, string>;
    expect(await verifyWebhook(call.body, headers, rotated.secret)).toBe(true);
    expect(await verifyWebhook(call.body, headers, old.secret)).toBe(true);
    const snippet = await docsVerifier();
    expect(snippet(call.body, call.headers, rotated.secret)).toBe(true);
    expect(snippet(call.body, call.headers, old.secret)).toBe(true);
    expect(snippet(`${call.body} `, call.headers, rotated.secret)).toBe(false);
    // Once the window has passed, the old secret no longer signs.
    await db.sql.query(`UPDATE webhook_secrets SET previous_until = now() - interval '1 second'`);
    const later = await deliveredCall(token);
    expect(await verifyWebhook(later.body, later.headers as Record<string, string>, old.secret)).toBe(false);
    expect(await verifyWebhook(later.body, later.headers as Record<string, string>, rotated.secret)).toBe(true);
  });
});
