// The dashboard's Try it and Usage pages over real HTTP: a compression from the page runs the
// compression API's own service (quota charged on success only, the record, the per-key rate limit,
// the signed result), with the session's CSRF token and one of the subscriber's own active keys;
// the Usage page counts successes and refusals per day.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../src/auth/sessions.ts";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let work: string;
let uploads: string;
let pdf: Buffer;

// The engine's answer to a synchronous call with ocr whose file has more scanned pages to read
// than such a call reads (the real engine's count: test/compress/ocr-sync-limit.test.ts); any
// other job passes through.
const ocrLimitedRunner: EngineRunner = {
  run: (job, signal) =>
    "ocrPageLimit" in job && job.ocrPageLimit !== undefined
      ? Promise.resolve({ ok: false, code: "ocr_page_limit", message: "3 scanned pages to read", pages: 3 })
      : passThroughRunner.run(job, signal),
};

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "dashboard-try-"));
  uploads = path.join(work, "uploads");
  const objects = path.join(work, "objects");
  pdf = await makePdf(2);
  server = await startServer(
    db,
    {
      MAIL_OUTBOX_DIR: path.join(work, "outbox"),
      LOCAL_STORAGE_DIR: objects,
      UPLOAD_TMP_DIR: uploads,
      COMPRESS_RATE_LIMIT_PER_MINUTE: "5",
    },
    { compress: { storage: await createLocalStorage(objects, null), runner: ocrLimitedRunner } },
  );
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

/** A signed-in browser of the subscriber, without going through mail (sign-in.test.ts does). */
async function session(email: string) {
  const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
  const link = await auth.createLink(email);
  const opened = await auth.redeemLink(link!.token);
  const cookie = `mkp_session=${opened!.secret}`;
  const page = await (await fetch(`${server.url}/dashboard/try`, { headers: { cookie } })).text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
  return { cookie, csrf, page };
}

async function tryIt(cookie: string, fields: Record<string, string>, file: Buffer = pdf) {
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename: "report.pdf" },
  ]);
  const response = await fetch(`${server.url}/dashboard/try`, {
    method: "POST",
    headers: { cookie, "content-type": contentType, origin: server.url, "sec-fetch-site": "same-origin" },
    body: new Uint8Array(body),
  });
  return { status: response.status, html: await response.text() };
}

describe("Try it", () => {
  it("compresses with the chosen key through the API's service: charged, recorded, a working link", async () => {
    const { subscriber, key, email } = await subscriberWithKey(db.prisma, { quota: 10 });
    const { cookie, csrf, page } = await session(email);
    expect(page).toContain(`value="${key.id}"`);
    const answer = await tryIt(cookie, { csrf_token: csrf, key_id: key.id, profile: "lossless" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("Compressed report.pdf");
    // The result names the profile it was made with, and the form keeps it chosen.
    expect(answer.html).toMatch(/<dt>Profile<\/dt>\s*<dd>lossless<\/dd>/);
    expect(answer.html).toMatch(/value="lossless"\s+checked/);
    const href = /href="([^"]+)" class="button"/.exec(answer.html)![1]!.replaceAll("&amp;", "&");
    const download = await fetch(href);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    const record = await db.prisma.compression.findFirstOrThrow({ where: { subscriberId: subscriber.id } });
    expect(record).toMatchObject({
      apiKeyId: key.id,
      status: "succeeded",
      profile: "lossless",
      filename: "report.pdf",
    });
    expect((await db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt).not.toBeNull();
    expect(await readdir(uploads)).toEqual([]);
  });

  it("queues a scan with more pages to read than a synchronous call reads (ocr) as a job, charged once, and says so", async () => {
    const { subscriber, key, email } = await subscriberWithKey(db.prisma, { quota: 10 });
    const { cookie, csrf } = await session(email);
    const answer = await tryIt(cookie, { csrf_token: csrf, key_id: key.id, ocr: "true" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("Queued report.pdf as a job");
    const job = await db.prisma.compressionJob.findFirstOrThrow({ where: { subscriberId: subscriber.id } });
    expect(job).toMatchObject({ status: "queued", ocr: true, filename: "report.pdf" });
    expect(answer.html).toContain(job.id);
    expect(answer.html).toContain('href="/dashboard/history"');
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    expect(await readdir(uploads)).toEqual([]);
  });

  it("keeps the profile and options after a refusal, and names them on the result", async () => {
    const { subscriber, key, email } = await subscriberWithKey(db.prisma, { quota: 10 });
    const { cookie, csrf } = await session(email);
    const chosen = {
      target_size: "500000",
      max_image_ppi: "120",
      grayscale: "true",
      remove_metadata: "true",
      linearize: "true",
    };
    // The lossless profile takes none of these but metadata removal: 400 naming the first, nothing charged.
    const refused = await tryIt(cookie, { csrf_token: csrf, key_id: key.id, profile: "lossless", ...chosen });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("400 invalid_max_image_ppi");
    expect(refused.html).toMatch(/value="lossless"\s+checked/);
    expect(refused.html).toMatch(/name="target_size"[^>]*value="500000"/);
    expect(refused.html).toMatch(/name="max_image_ppi"[^>]*value="120"/);
    expect(refused.html).toMatch(/id="grayscale"\s+name="grayscale"\s+value="true"\s+checked/);
    expect(refused.html).toMatch(/id="remove_metadata"\s+name="remove_metadata"\s+value="true"\s+checked/);
    expect(refused.html).toMatch(/id="linearize"\s+name="linearize"\s+value="true"\s+checked/);
    expect(refused.html).toMatch(new RegExp(`<option value="${key.id}" selected`));
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    // Listed on History as asked: its profile and options, not the defaults.
    const listed = await db.prisma.compression.findFirst({
      where: { subscriberId: subscriber.id, status: "failed" },
      orderBy: { createdAt: "desc" },
    });
    expect(listed).toMatchObject({ profile: "lossless", errorCode: "invalid_max_image_ppi", filename: "report.pdf" });
    expect(listed!.options).toEqual({ profile: "lossless", ...chosen });

    const done = await tryIt(cookie, { csrf_token: csrf, key_id: key.id, profile: "extreme", ...chosen });
    expect(done.status).toBe(200);
    expect(done.html).toMatch(/<dt>Profile<\/dt>\s*<dd>extreme<\/dd>/);
    expect(done.html).toContain(
      "<strong>Options:</strong> target 500,000 bytes, images at most 120 ppi, grayscale, metadata removed, fast web view",
    );
    expect(done.html).toMatch(/id="grayscale"\s+name="grayscale"\s+value="true"\s+checked/);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  });

  it("refuses a form without the session's token, before charging anything", async () => {
    const { subscriber, key, email } = await subscriberWithKey(db.prisma);
    const { cookie } = await session(email);
    const answer = await tryIt(cookie, { csrf_token: "forged", key_id: key.id });
    expect(answer.status).toBe(403);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    expect(await db.prisma.compression.count({ where: { subscriberId: subscriber.id } })).toBe(0);
    expect(await readdir(uploads)).toEqual([]);
  });

  it("refuses another subscriber's key and a revoked key", async () => {
    const mine = await subscriberWithKey(db.prisma);
    const theirs = await subscriberWithKey(db.prisma);
    const { cookie, csrf } = await session(mine.email);
    const foreign = await tryIt(cookie, { csrf_token: csrf, key_id: theirs.key.id });
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain("Choose one of your active keys.");
    await mine.admin.revokeKey(mine.key.id);
    expect((await tryIt(cookie, { csrf_token: csrf, key_id: mine.key.id })).status).toBe(400);
    expect(await db.prisma.compression.count({ where: { subscriberId: mine.subscriber.id } })).toBe(0);
  });

  it("shows the API's refusal of a file that is not a PDF, uncharged, and the quota's", async () => {
    const { subscriber, key, email } = await subscriberWithKey(db.prisma, { quota: 1 });
    const { cookie, csrf } = await session(email);
    const bad = await tryIt(cookie, { csrf_token: csrf, key_id: key.id }, Buffer.from("hello, not a pdf"));
    expect(bad.status).toBe(422);
    expect(bad.html).toContain("422 not_a_pdf");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    expect((await tryIt(cookie, { csrf_token: csrf, key_id: key.id })).status).toBe(200);
    const over = await tryIt(cookie, { csrf_token: csrf, key_id: key.id });
    expect(over.status).toBe(402);
    expect(over.html).toContain("402 quota_exceeded");
  });

  it("counts against the key's rate limit, shared with /v1", async () => {
    const { key, email, token } = await subscriberWithKey(db.prisma, { quota: 100 });
    const { cookie, csrf } = await session(email);
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
    }
    const limited = await tryIt(cookie, { csrf_token: csrf, key_id: key.id });
    expect(limited.status).toBe(429);
  });

  it("a starter subscriber is told why, and a post is refused", async () => {
    const { key, email } = await subscriberWithKey(db.prisma, { plan: "starter" });
    const { cookie, csrf, page } = await session(email);
    expect(page).toContain("API keys are part of the corporate plan");
    expect(page).not.toContain('enctype="multipart/form-data"');
    expect((await tryIt(cookie, { csrf_token: csrf, key_id: key.id })).status).toBe(403);
  });
});

describe("the Usage page", () => {
  it("shows plan, quota, used, remaining and renewal, and the days' successes and refusals", async () => {
    const { key, email, token } = await subscriberWithKey(db.prisma, { quota: 20 });
    const { cookie, csrf } = await session(email);
    await tryIt(cookie, { csrf_token: csrf, key_id: key.id });
    await tryIt(cookie, { csrf_token: csrf, key_id: key.id });
    // Refused by the API after its checks passed: recorded as failed, not charged.
    const { body, contentType } = multipart([{ name: "file", value: "not a pdf", filename: "x.pdf" }]);
    const refused = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType },
      body: new Uint8Array(body),
    });
    expect(refused.status).toBe(422);
    const html = await (await fetch(`${server.url}/dashboard/usage`, { headers: { cookie } })).text();
    const figure = (label: string) => new RegExp(`<dt>${label}</dt>\\s*<dd>([^<]+)`).exec(html)?.[1]?.trim();
    expect(figure("Plan")).toBe("corporate");
    expect(figure("Monthly quota")).toBe("20");
    expect(figure("Used")).toBe("2");
    expect(figure("Remaining")).toBe("18");
    const today = new Date().toISOString().slice(0, 10);
    expect(html).toMatch(new RegExp(`<th scope="row">${today}</th>\\s*<td>2</td>\\s*<td>1</td>`));
    expect(html).toContain("2 succeeded and 1 refused or failed since the 1st.");
  });
});
