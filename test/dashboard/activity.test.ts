// The dashboard's pages of what happened, over real HTTP with a job worker: History (calls from
// Try it and the API, a refused one, a job; sizes, profile, status, a result link while it works
// and none after), Webhooks (the secret masked, shown on a POST only, rotated after a confirmation:
// the API signs with the new one; recent deliveries with their event, status code and attempts),
// and Usage per key.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../src/auth/sessions.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { forgetFailedNames } from "../../src/compress/workflow/compressions.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let worker: JobWorker;
let receiver: Server;
let receiverUrl: string;
let work: string;
let pdf: Buffer;
let receiverCalls = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "dashboard-activity-"));
  pdf = await makePdf(2);
  const storage = await createLocalStorage(path.join(work, "objects"), null);
  server = await startServer(
    db,
    {
      MAIL_OUTBOX_DIR: path.join(work, "outbox"),
      UPLOAD_TMP_DIR: path.join(work, "uploads"),
      COMPRESS_JOB_WORKERS: "0",
      WEBHOOK_ALLOW_PRIVATE: "true",
    },
    { compress: { storage, runner: passThroughRunner } },
  );
  const noop = () => undefined;
  const logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, trace: noop, child: () => logger };
  const deps = { config: server.config, prisma: db.prisma, storage, runner: passThroughRunner, logger };
  worker = startJobWorker({ ...deps, logger: logger as never, pollMs: 100, retryBaseMs: 200 }, 1);
  // Refuses the first call (503), accepts the next.
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.statusCode = ++receiverCalls === 1 ? 503 : 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  await worker?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

async function session(email: string) {
  const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
  const opened = await auth.redeemLink((await auth.createLink(email))!.token);
  const cookie = `mkp_session=${opened!.secret}`;
  const page = await (await fetch(`${server.url}/dashboard/keys`, { headers: { cookie } })).text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
  return { cookie, csrf };
}

const get = async (cookie: string, target: string) => {
  const response = await fetch(`${server.url}${target}`, { headers: { cookie } });
  return { status: response.status, html: await response.text() };
};

const post = async (cookie: string, target: string, form: Record<string, string>) => {
  const response = await fetch(`${server.url}${target}`, {
    method: "POST",
    headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });
  return { status: response.status, html: await response.text() };
};

async function compress(token: string, filename: string, file: Buffer | string, extra: Record<string, string> = {}) {
  const { body, contentType } = multipart([
    ...Object.entries(extra).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename },
  ]);
  const async = extra["callback_url"] !== undefined;
  return fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": contentType,
      ...(async ? { prefer: "respond-async" } : {}),
    },
    body: new Uint8Array(body),
  });
}

/** The table rows of a page, as their cells' text (tags dropped, spaces collapsed). */
function rows(html: string, table: string): string[][] {
  const body =
    new RegExp(`<table class="${table}(?: [^"]*)?"[^>]*>[\\s\\S]*?<tbody[^>]*>([\\s\\S]*?)</tbody>`).exec(html)?.[1] ??
    "";
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map(([, row]) =>
    [...row!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map(([, cell]) =>
      cell!
        .replace(/<wbr \/>/g, "")
        .replace(/<[^>]+>/g, " ")
        .replace(/&hellip;|…/g, "…")
        .replace(/\s+/g, " ")
        .trim(),
    ),
  );
}

async function until<T>(probe: () => Promise<T | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("History", () => {
  it("lists calls, a refusal and a job, newest first, with a result link only while it works", async () => {
    const { subscriber, token, email } = await subscriberWithKey(db.prisma);
    const other = await subscriberWithKey(db.prisma);
    expect((await compress(token, "first.pdf", pdf, { profile: "lossless" })).status).toBe(200);
    expect((await compress(token, "broken.pdf", "not a pdf")).status).toBe(422);
    const accepted = await compress(token, "queued.pdf", pdf, { profile: "extreme", callback_url: "" });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as { id: string };
    await until(async () => (await db.prisma.compressionJob.findUnique({ where: { id: job.id } }))?.finishedAt);
    expect((await compress(other.token, "theirs.pdf", pdf)).status).toBe(200);

    const { cookie } = await session(email);
    const page = await get(cookie, "/dashboard/history");
    expect(page.status).toBe(200);
    const size = `${(pdf.length / 1024).toFixed(1)} KB`;
    const table = rows(page.html, "history");
    expect(table).toHaveLength(3);
    expect(table[0]).toEqual([
      expect.stringMatching(/UTC$/),
      `queued.pdf job ${job.id.slice(0, 8)}… · test`,
      "extreme",
      size,
      size,
      "Succeeded",
      expect.stringMatching(/^Download until .* UTC Delete now…$/),
    ]);
    expect(table[1]).toEqual([
      expect.any(String),
      "broken.pdf call · test",
      "balanced",
      "—",
      "—",
      "Failed not_a_pdf",
      "— Delete now…",
    ]);
    expect(table[2]).toEqual([
      expect.any(String),
      "first.pdf call · test",
      "lossless",
      size,
      size,
      "Succeeded",
      expect.stringMatching(/^Download until/),
    ]);
    expect(page.html).not.toContain("theirs.pdf");

    // Both links download the result.
    const links = [...page.html.matchAll(/<a href="([^"]+)" download/g)].map(([, href]) =>
      href!.replaceAll("&amp;", "&"),
    );
    expect(links).toHaveLength(2);
    for (const link of links) {
      const download = await fetch(link);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);
    }

    // Past its link's hour, a call's result has no link; a job's is signed afresh while it is kept.
    const hourAgo = new Date(Date.now() - 3_601_000);
    await db.prisma.compression.updateMany({ where: { subscriberId: subscriber.id }, data: { finishedAt: hourAgo } });
    const later = rows((await get(cookie, "/dashboard/history")).html, "history");
    expect(later[2]![6]).toMatch(/^Expired( Delete now…)?$/);
    expect(later[0]![6]).toMatch(/^Download until/);
    const dayAgo = new Date(Date.now() - 25 * 3_600_000);
    const expired = { finishedAt: dayAgo, expiresAt: new Date(dayAgo.getTime() + 24 * 3_600_000) };
    await db.prisma.compression.updateMany({ where: { subscriberId: subscriber.id }, data: expired });
    expect(rows((await get(cookie, "/dashboard/history")).html, "history")[0]![6]).toMatch(/^Expired( Delete now…)?$/);
  });

  it("lists refused calls with the profile, options and file name they asked for", async () => {
    const { token, email } = await subscriberWithKey(db.prisma);
    // Options before the file, and after it (curl -F file=@… -F profile=…), each refused by the
    // profile: listed as asked, not as "balanced" with no name.
    const asked = { profile: "lossless", target_size: "100000" };
    expect((await compress(token, "offer-letter.pdf", pdf, asked)).status).toBe(400);
    const { body, contentType } = multipart([
      { name: "file", value: pdf, filename: "Lebenslauf_Müller.pdf" },
      { name: "profile", value: "lossless" },
      { name: "grayscale", value: "true" },
    ]);
    const after = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType },
      body: new Uint8Array(body),
    });
    expect(after.status).toBe(400);
    // An unknown profile is listed as it was sent.
    expect((await compress(token, "scan.pdf", pdf, { profile: "smallest" })).status).toBe(400);

    const { cookie } = await session(email);
    const table = rows((await get(cookie, "/dashboard/history")).html, "history");
    expect(table.map((row) => row.slice(1, 3).concat(row[5]!))).toEqual([
      ["scan.pdf call · test", "smallest", "Failed invalid_profile"],
      ["Lebenslauf_Müller.pdf call · test", "lossless grayscale=true", "Failed invalid_grayscale"],
      ["offer-letter.pdf call · test", "lossless target_size=100000", "Failed invalid_target_size"],
    ]);
  });

  it("keeps a failed call's name as long as a result would be kept, then forgets it", async () => {
    const { subscriber, token, email } = await subscriberWithKey(db.prisma);
    expect((await compress(token, "contract.pdf", "not a pdf")).status).toBe(422);
    const { cookie } = await session(email);
    expect(rows((await get(cookie, "/dashboard/history")).html, "history")[0]![1]).toBe("contract.pdf call · test");
    const [record] = await db.prisma.compression.findMany({ where: { subscriberId: subscriber.id } });
    await forgetFailedNames(db.prisma, record!.createdAt);
    expect(rows((await get(cookie, "/dashboard/history")).html, "history")[0]![1]).toBe("contract.pdf call · test");
    expect(await forgetFailedNames(db.prisma, new Date(record!.createdAt.getTime() + 1))).toBeGreaterThanOrEqual(1);
    expect(rows((await get(cookie, "/dashboard/history")).html, "history")[0]![1]).toBe("(name not kept) call · test");
  });

  it("forgets a failed job's name on the job's own row too", async () => {
    const { subscriber, token, email } = await subscriberWithKey(db.prisma);
    const accepted = await compress(token, "Arbeitsvertrag.pdf", pdf, { callback_url: "" });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as { id: string };
    await until(async () => (await db.prisma.compressionJob.findUnique({ where: { id: job.id } }))?.finishedAt);
    // As the worker leaves a job that failed: the job and its record failed, no result.
    await db.prisma.compressionJob.update({
      where: { id: job.id },
      data: { status: "failed", errorCode: "engine_failed" },
    });
    const record = await db.prisma.compression.update({
      where: {
        subscriberId: subscriber.id,
        id: (await db.prisma.compressionJob.findUnique({ where: { id: job.id } }))!.compressionId,
      },
      data: { status: "failed", errorCode: "engine_failed", objectName: null, expiresAt: null },
    });
    const { cookie } = await session(email);
    const name = async () => rows((await get(cookie, "/dashboard/history")).html, "history")[0]![1];
    expect(await name()).toBe(`Arbeitsvertrag.pdf job ${job.id.slice(0, 8)}… · test`);

    await forgetFailedNames(db.prisma, new Date(record.createdAt.getTime() + 1));
    expect(await name()).toBe(`(name not kept) job ${job.id.slice(0, 8)}… · test`);
    const row = await db.prisma.compressionJob.findUnique({ where: { id: job.id }, select: { filename: true } });
    expect(row!.filename).toBe("");
  });

  it("says so when there is nothing yet, and sends a signed-out browser to sign in", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const { cookie } = await session(email);
    expect((await get(cookie, "/dashboard/history")).html).toContain("Nothing yet");
    const signedOut = await fetch(`${server.url}/dashboard/history`, { redirect: "manual" });
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("location")).toBe("/dashboard/sign-in");
  });
});

describe("Webhooks", () => {
  it("masks the secret, shows it on a POST, rotates it after asking, and the API answers the new one", async () => {
    const { token, email } = await subscriberWithKey(db.prisma);
    const { cookie, csrf } = await session(email);
    const viaApi = async () =>
      (
        (await (
          await fetch(`${server.url}/v1/webhook-secret`, { headers: { authorization: `Bearer ${token}` } })
        ).json()) as { secret: string }
      ).secret;
    const before = await viaApi();
    const page = await get(cookie, "/dashboard/webhooks");
    expect(page.html).toContain(`<code>${before.slice(0, 10)}…</code>`);
    expect(page.html).not.toContain(before);

    const shown = await post(cookie, "/dashboard/webhooks/secret", { csrf_token: csrf });
    expect(shown.status).toBe(200);
    expect(shown.html).toContain(`value="${before}"`);
    expect((await post(cookie, "/dashboard/webhooks/secret", { csrf_token: "forged" })).status).toBe(403);

    const confirm = await get(cookie, "/dashboard/webhooks/rotate");
    expect(confirm.html).toContain("Rotate the webhook secret?");
    expect(await viaApi()).toBe(before);
    expect((await post(cookie, "/dashboard/webhooks/rotate", { csrf_token: "forged" })).status).toBe(403);
    expect(await viaApi()).toBe(before);
    const rotated = await post(cookie, "/dashboard/webhooks/rotate", { csrf_token: csrf });
    expect(rotated.status).toBe(200);
    const after = /id="webhook-secret" type="text" readonly value="([^"]+)"/.exec(rotated.html)?.[1];
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);
    expect(await viaApi()).toBe(after);
    expect(rotated.html).toContain("Your new webhook secret");
  });

  it("lists recent deliveries with their event, status code and attempts", async () => {
    const { token, email } = await subscriberWithKey(db.prisma);
    const accepted = await compress(token, "hooked.pdf", pdf, { callback_url: receiverUrl });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as { id: string };
    // Refused once (503), delivered on the second call.
    const delivered = await until(() =>
      db.prisma.webhookDelivery.findFirst({ where: { jobId: job.id, status: "delivered" } }),
    );
    const { cookie } = await session(email);
    const table = rows((await get(cookie, "/dashboard/webhooks")).html, "deliveries");
    expect(table).toEqual([
      [
        expect.stringMatching(/UTC$/),
        `${job.id.slice(0, 8)}… hooked.pdf`,
        "compression_job.succeeded",
        "204",
        "2",
        "Delivered",
      ],
    ]);
    expect(delivered.attempts).toBe(2);
  });

  it("a starter subscriber is told why and cannot see or rotate a secret", async () => {
    const { email } = await subscriberWithKey(db.prisma, { plan: "starter" });
    const { cookie, csrf } = await session(email);
    const page = await get(cookie, "/dashboard/webhooks");
    expect(page.html).toContain("API keys are part of the corporate plan");
    expect(page.html).not.toContain("Show the secret");
    expect((await post(cookie, "/dashboard/webhooks/secret", { csrf_token: csrf })).status).toBe(403);
    expect((await post(cookie, "/dashboard/webhooks/rotate", { csrf_token: csrf })).status).toBe(403);
  });
});

describe("Usage per key", () => {
  it("counts this month's successes and refusals under each key, revoked ones included", async () => {
    const { token, email, admin, key } = await subscriberWithKey(db.prisma);
    const second = await admin.issueKey(email, "second");
    const unused = await admin.issueKey(email, "unused");
    expect((await compress(token, "a.pdf", pdf)).status).toBe(200);
    expect((await compress(token, "b.pdf", "nope")).status).toBe(422);
    expect((await compress(second.token, "c.pdf", pdf)).status).toBe(200);
    expect((await compress(second.token, "d.pdf", pdf)).status).toBe(200);
    await admin.revokeKey(key.id);
    const { cookie } = await session(email);
    const html = (await get(cookie, "/dashboard/usage")).html;
    const perKey = /<h2 id="per-key">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? "";
    const cells = [...perKey.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map(([, row]) =>
      [...row!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map(([, c]) =>
        c!
          .replace(/<[^>]+>/g, "")
          .replace(/\s+/g, " ")
          .trim(),
      ),
    );
    expect(cells).toEqual([
      [`unused ${unused.prefix}…`, "0", "0"],
      [`second ${second.prefix}…`, "2", "0"],
      [`test ${key.prefix}… (revoked)`, "1", "1"],
    ]);
  });
});
