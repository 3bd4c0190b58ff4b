// The subscriber dashboard in a real headless Chromium, as a subscriber uses it: sign in through the
// link in the local outbox, create a key, compress a PDF from Try it and with fetch, watch the usage
// rise (per key too), watch Try it's upload progress on a throttled connection and cancel one, see
// History and a job's webhook delivery, show and rotate the webhook secret, revoke the key and see
// the next call refused; a starter subscriber cannot create a key; a
// replayed or expired link and a cross-site form post are refused. Every page loads nothing from
// the internet, breaks no CSP rule, and passes axe-core with no serious or critical violation.
// Screenshots of each page go to $TMPDIR/dashboard-screens/, those of the pages of issue 29 also to
// /tmp/dash-*.png.
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../src/auth/accounts.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { createRunner, type Runner } from "../../src/compress/isolation/runner.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { jpegOf, photoPixels } from "../pdf/fixtures.ts";
import { hasChromium, launchChromium, warnWithoutChromium } from "../helpers/chromium.ts";
import { multipart } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { signInLink } from "../helpers/outbox.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

warnWithoutChromium();

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const screens = path.join(tmpdir(), "dashboard-screens");
const CORPORATE = `browser-corporate-${process.pid}@example.com`;
const STARTER = `browser-starter-${process.pid}@example.com`;

/** A one-page PDF with a large photograph (JPEG q95): balanced compression makes it much smaller. */
async function photoPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  const image = await doc.embedJpg(await jpegOf(photoPixels(1800, 1200, 3, 7), 1800, 1200, 3));
  page.drawImage(image, { x: 50, y: 300, width: 500, height: 333 });
  return Buffer.from(await doc.save());
}

/** A PDF of about 1.7 MB (three pages of noisy photographs at JPEG q95): its upload takes seconds at 1.2 Mbit/s. */
async function largePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < 3; i++) {
    const image = await doc.embedJpg(await jpegOf(photoPixels(1400, 1000, 3, 11 + i), 1400, 1000, 3));
    doc.addPage([612, 792]).drawImage(image, { x: 36, y: 200, width: 540, height: 386 });
  }
  return Buffer.from(await doc.save());
}

describe.skipIf(!hasChromium)("the dashboard in Chromium", () => {
  let db: TestDatabase;
  let server: TestServer;
  let runner: Runner;
  let worker: JobWorker;
  let receiver: http.Server;
  let receiverUrl = "";
  let browser: Browser;
  let work: string;
  let outbox: string;
  let attacker: http.Server;
  let attackerUrl: string;
  let pdf: Buffer;
  // Shared by the steps, in order.
  let corporate: BrowserContext;
  let page: Page;
  let firstLink = "";
  let token = "";
  const external: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    work = await mkdtemp(path.join(tmpdir(), "dashboard-browser-"));
    outbox = path.join(work, "outbox");
    await mkdir(screens, { recursive: true });
    const admin = accounts(db.prisma, null);
    await admin.createSubscriber({ name: "Acme Corporation", email: CORPORATE, plan: "corporate", quota: 50 });
    await admin.createSubscriber({ name: "Small Shop", email: STARTER, plan: "starter" });
    pdf = await photoPdf();
    runner = createRunner({ concurrency: 1, queueLimit: 4, timeoutMs: 60_000, memoryMb: 1024, warmProcesses: 0 });
    const objects = path.join(work, "objects");
    server = await startServer(
      db,
      {
        MAIL_OUTBOX_DIR: outbox,
        LOCAL_STORAGE_DIR: objects,
        UPLOAD_TMP_DIR: path.join(work, "uploads"),
        COMPRESS_JOB_WORKERS: "0",
        WEBHOOK_ALLOW_PRIVATE: "true",
      },
      { compress: { storage: await createLocalStorage(objects, null), runner } },
    );
    // A job worker and a webhook receiver on loopback, for the Webhooks page's deliveries.
    const noop = () => undefined;
    const logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, trace: noop, child: () => logger };
    const storage = await createLocalStorage(objects, null);
    const workerDeps = { config: server.config, prisma: db.prisma, storage, runner, logger: logger as never };
    worker = startJobWorker({ ...workerDeps, pollMs: 100, retryBaseMs: 200 }, 1);
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.statusCode = 204;
        res.end();
      });
    });
    receiver.listen(0, "127.0.0.1");
    await new Promise((resolve) => receiver.once("listening", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    // Another origin on the same site (127.0.0.1, another port): SameSite=Lax lets the cookie go
    // along with its form post, so only the dashboard's own checks stand in the way.
    attacker = http.createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(`<!doctype html><html lang="en"><title>Win a prize</title><body>
        <form id="f" method="post" action="${server.url}/dashboard/keys">
          <input name="name" value="stolen"><input name="csrf_token" value="guessed">
        </form><script>document.getElementById("f").submit()</script></body></html>`);
    });
    attacker.listen(0, "127.0.0.1");
    await new Promise((resolve) => attacker.once("listening", resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
    browser = await launchChromium();
    corporate = await newContext();
    page = await corporate.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
    await new Promise((resolve) => attacker?.close(resolve));
    await server?.close();
    await runner?.close();
    await db?.close();
    await rm(work, { recursive: true, force: true });
  });

  /** A fresh browser profile whose every request off this service, and every page error, is recorded. */
  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1180, height: 860 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    context.on("request", (request) => {
      const url = request.url();
      if (!url.startsWith(server.url) && !url.startsWith(attackerUrl) && !/^(data|blob):/.test(url)) external.push(url);
    });
    context.on("page", (opened) => {
      opened.on("pageerror", (error) => problems.push(`${opened.url()}: ${error.message}`));
      opened.on("console", (message) => {
        // Refusals the test provokes on purpose (a spent link's 400, a cross-site post's 403) are
        // logged by Chromium as failed loads: they are not page problems.
        if (
          message.type() === "error" &&
          !opened.url().startsWith(attackerUrl) &&
          !/status of 40[03]/.test(message.text())
        ) {
          problems.push(`${opened.url()}: ${message.text()}`);
        }
      });
    });
    return context;
  }

  /**
   * axe-core on the page as shown: no serious or critical violation (but those named in `allowed`).
   * Then a screenshot.
   */
  async function audit(target: Page, name: string, allowed: string[] = []) {
    await target.screenshot({ path: path.join(screens, `${name}.png`), fullPage: true });
    // Evaluated through the DevTools protocol, which the page's CSP does not govern.
    await target.evaluate(axeSource);
    const violations = await target.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: () => Promise<{ violations: unknown[] }> } }).axe;
      const result = await axe.run();
      return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map((v) => ({
        id: v.id,
        impact: v.impact,
        targets: v.nodes.map((n) => n.target.join(" ")).slice(0, 3),
      }));
    });
    expect(
      violations.filter((v) => (v.impact === "serious" || v.impact === "critical") && !allowed.includes(v.id)),
      `${name}: ${JSON.stringify(violations)}`,
    ).toEqual([]);
  }

  /** The screenshots of issue 29's pages, to look at: /tmp/dash-<name>.png. */
  async function shot(target: Page, name: string) {
    await target.screenshot({ path: `/tmp/dash-${name}.png`, fullPage: true });
  }

  async function requestLink(target: Page, email: string) {
    await target.goto(`${server.url}/dashboard/sign-in`);
    await target.getByLabel("E-mail address").fill(email);
    await target.getByRole("button", { name: "Email me a sign-in link" }).click();
    await expect.poll(() => target.locator("h1").innerText()).toBe("Check your e-mail");
  }

  /**
   * The n-th link mailed to email, on this test's server: links point at the configured origin
   * (here the default, http://localhost:3000), and the server listens on a port of its own.
   */
  async function mailedLink(email: string, n: number) {
    const link = new URL(await signInLink(outbox, email, n));
    return `${server.url}${link.pathname}${link.search}`;
  }

  async function signIn(target: Page, email: string, n: number) {
    await requestLink(target, email);
    const link = await mailedLink(email, n);
    await target.goto(link);
    await target.getByRole("button", { name: "Sign in" }).click();
    await target.waitForURL(`${server.url}/dashboard/keys`);
    return link;
  }

  async function compressWithFetch(key: string) {
    const { body, contentType } = multipart([
      { name: "file", value: pdf, filename: "photo.pdf" },
      { name: "profile", value: "balanced" },
    ]);
    const response = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": contentType },
      body: new Uint8Array(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  async function usedViaApi(key: string) {
    const response = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    return ((await response.json()) as { used: number }).used;
  }

  it("signs in through the link from the local outbox", async () => {
    await page.goto(`${server.url}/dashboard/keys`);
    await page.waitForURL(`${server.url}/dashboard/sign-in`);
    await audit(page, "1-sign-in");
    await requestLink(page, CORPORATE);
    await audit(page, "2-check-email");
    firstLink = await mailedLink(CORPORATE, 1);
    await page.goto(firstLink);
    await expect.poll(() => page.locator("h1").innerText()).toBe(`Sign in as ${CORPORATE}?`);
    await audit(page, "3-confirm-sign-in");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/dashboard/keys`);
    const [cookie] = await corporate.cookies(server.url);
    expect(cookie).toMatchObject({ name: "mkp_session", httpOnly: true, sameSite: "Lax" });
  }, 60_000);

  it("creates a key whose secret is shown once, with a working copy button", async () => {
    await audit(page, "4-keys-empty");
    await page.getByLabel("Name", { exact: true }).fill("browser test");
    await page.getByRole("button", { name: "Create key" }).click();
    const field = page.getByLabel("API key");
    token = await field.inputValue();
    expect(token).toMatch(/^mkp_[0-9A-Za-z]{36}$/);
    await page.getByRole("button", { name: "Copy", exact: true }).click();
    await expect.poll(() => page.locator("[data-copy-status]").first().innerText()).toBe("Copied to the clipboard.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await audit(page, "5-key-created");
    // Shown once: the list has the prefix, never the secret.
    await page.goto(`${server.url}/dashboard/keys`);
    const listed = await page.content();
    expect(listed).not.toContain(token);
    expect(listed).toContain(`${token.slice(0, 10)}…`);
  }, 60_000);

  it("shows where a key is used: file_url on the API, and the MCP endpoint with a client configuration to copy that works", async () => {
    await page.goto(`${server.url}/dashboard/keys`);
    const section = page.getByRole("region", { name: "Using a key" });
    await expect.poll(() => section.innerText()).toContain("file_url");
    const endpoint = `${server.url}/v1/mcp`;
    expect(await section.getByLabel("MCP endpoint").inputValue()).toBe(endpoint);
    await section.getByRole("button", { name: "Copy configuration" }).click();
    await expect.poll(() => section.locator("[data-copy-status]").last().innerText()).toBe("Copied to the clipboard.");
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as {
      mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }>;
    };
    const entry = copied.mcpServers["marketplace-compression"]!;
    expect(entry).toMatchObject({ type: "http", url: endpoint });
    expect(entry.headers["Authorization"]).toBe("Bearer <your API key>");
    await section.getByLabel("MCP client configuration", { exact: false }).scrollIntoViewIfNeeded();
    await audit(page, "4b-keys-using-a-key");
    await shot(page, "keys-mcp");
    // The configuration as an MCP client uses it, the key in place of the placeholder: the tools answer.
    const headers = { ...entry.headers, Authorization: `Bearer ${token}` };
    const listed = await fetch(entry.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(listed.status).toBe(200);
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["compress_pdf", "list_compressions", "delete_compression"]));
  }, 60_000);

  it("compresses a PDF from Try it through /v1/compress's service, and with fetch", async () => {
    await page.getByRole("link", { name: "Try it" }).click();
    await page.waitForURL(`${server.url}/dashboard/try`);
    await audit(page, "6-try-it");
    await page.getByLabel("API key").selectOption({ label: `browser test (${token.slice(0, 10)}…)` });
    await page.getByLabel("balanced").check();
    await page.getByLabel("PDF file").setInputFiles({ name: "photo.pdf", mimeType: "application/pdf", buffer: pdf });
    await page.getByRole("button", { name: "Compress" }).click();
    await expect.poll(() => page.locator("h2").first().innerText(), { timeout: 60_000 }).toBe("Compressed photo.pdf");
    const savings = Number((await page.locator("dd").nth(2).innerText()).replace(/[^\d.]/g, ""));
    expect(savings).toBeGreaterThan(10);
    // The report's measured quality: the photo's page changed, and its SSIM is on the card.
    const kept = page.locator("dt", { hasText: "Image quality kept" }).locator("xpath=following-sibling::dd[1]");
    expect(await kept.innerText()).toMatch(/^lowest page SSIM 0\.9\d{3} at 100 dpi, measured on the 1 page changed$/);
    await shot(page, "try-result-quality");
    const href = await page.getByRole("link", { name: "Download the compressed PDF" }).getAttribute("href");
    const download = await fetch(href!);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/pdf");
    expect((await download.arrayBuffer()).byteLength).toBeLessThan(pdf.length);
    await audit(page, "7-try-it-result");

    const byFetch = await compressWithFetch(token);
    expect(byFetch.status).toBe(200);
    expect(byFetch.json).toMatchObject({ success: true, original_size: pdf.length });
    expect(await usedViaApi(token)).toBe(2);
  }, 120_000);

  it("shows the usage go up, on the page and through GET /v1/usage", async () => {
    await page.getByRole("link", { name: "Usage" }).click();
    await page.waitForURL(`${server.url}/dashboard/usage`);
    const figure = (label: string) => page.locator(".figures div", { hasText: label }).locator("dd").innerText();
    expect(await figure("Used")).toBe("2");
    expect(await figure("Remaining")).toBe("48");
    expect(await page.locator("svg rect.bar-ok").count()).toBe(1);
    const perKey = page.locator("#per-key ~ .table-wrap tbody tr");
    expect(await perKey.count()).toBe(1);
    expect(await perKey.first().locator("td").allInnerTexts()).toEqual(["2", "0"]);
    await shot(page, "usage");
    await audit(page, "8-usage");
    expect((await compressWithFetch(token)).status).toBe(200);
    await page.reload();
    expect(await figure("Used")).toBe("3");
    expect(await usedViaApi(token)).toBe(3);
  }, 120_000);

  it("shows Try it's upload progress with the button disabled, cancels an upload, then compresses with options", async () => {
    await page.getByRole("link", { name: "Try it" }).click();
    await page.waitForURL(`${server.url}/dashboard/try`);
    const big = await largePdf();
    expect(big.length).toBeGreaterThan(1_000_000);
    // 1.2 Mbit/s up, as a subscriber on a slow line: the upload takes some 11 s.
    const cdp = await corporate.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 20,
      downloadThroughput: -1,
      uploadThroughput: 150_000,
    });
    const records = () => db.prisma.compression.count({ where: { subscriber: { email: CORPORATE } } });
    const before = await records();
    const submit = page.getByRole("button", { name: "Compress" });
    const bar = page.locator("#upload-bar");
    const progress = () => bar.evaluate((element) => (element as unknown as { value: number }).value);
    await page.getByLabel("extreme").check();
    await page.getByLabel("Remove metadata").check();
    await page.getByLabel("Fast web view", { exact: true }).check();
    await page.getByLabel("Largest image resolution (ppi)").fill("100");
    await page.getByLabel("PDF file").setInputFiles({ name: "large.pdf", mimeType: "application/pdf", buffer: big });

    // Cancelled half-way: nothing recorded or charged, the form ready again.
    await submit.click();
    await expect.poll(progress, { timeout: 60_000 }).toBeGreaterThan(20);
    expect(await progress()).toBeLessThan(100);
    expect(await submit.isDisabled()).toBe(true);
    expect(await page.locator("[data-upload-percent]").innerText()).toMatch(/^\d{1,2} %$/);
    await shot(page, "try-upload-progress");
    await audit(page, "15-try-upload-progress");
    await page.getByRole("button", { name: "Cancel upload" }).click();
    await expect.poll(() => page.getByRole("status").first().innerText()).toContain("Upload cancelled");
    expect(await submit.isDisabled()).toBe(false);
    expect(await page.locator("[data-upload-progress]").isHidden()).toBe(true);
    expect(await records()).toBe(before);

    // Sent again and let through: the result names the profile and options, the form keeps them.
    const seen: number[] = [];
    await submit.click();
    await expect.poll(async () => seen.push(await progress()) && seen.at(-1), { timeout: 60_000 }).toBeGreaterThan(50);
    await expect.poll(() => page.locator("h2").first().innerText(), { timeout: 90_000 }).toBe("Compressed large.pdf");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    expect(seen.some((value) => value > 0 && value < 100)).toBe(true);
    expect(await page.locator(".options-used").innerText()).toBe(
      "Options: images at most 100 ppi, metadata removed, fast web view",
    );
    expect(await page.locator(".figures dd").first().innerText()).toBe("extreme");
    expect(await page.getByLabel("extreme").isChecked()).toBe(true);
    expect(await page.getByLabel("Largest image resolution (ppi)").inputValue()).toBe("100");
    expect(await page.getByRole("button", { name: "Compress" }).isDisabled()).toBe(false);
    expect(await records()).toBe(before + 1);
    expect(await page.locator(".report").innerText()).toMatch(/Fast web view\s+linearized/);
    await shot(page, "try-result-options");
    await audit(page, "16-try-result-options");

    // A refusal keeps the form as it was: lossless takes no image resolution.
    await page.getByLabel("lossless").check();
    await page.getByLabel("PDF file").setInputFiles({ name: "photo.pdf", mimeType: "application/pdf", buffer: pdf });
    await page.getByRole("button", { name: "Compress" }).click();
    await expect.poll(() => page.locator("h2").first().innerText(), { timeout: 30_000 }).toBe("Not compressed");
    expect(await page.getByLabel("lossless").isChecked()).toBe(true);
    expect(await page.getByLabel("Remove metadata").isChecked()).toBe(true);
    expect(await page.getByLabel("Largest image resolution (ppi)").inputValue()).toBe("100");
    await shot(page, "try-refused");
    await audit(page, "17-try-refused");

    // The next file: the refusal's box is gone as soon as it is sent, not left beside the new upload.
    await page.getByLabel("Largest image resolution (ppi)").fill("");
    await page.getByLabel("balanced").check();
    await page.getByLabel("PDF file").setInputFiles({ name: "photo.pdf", mimeType: "application/pdf", buffer: pdf });
    expect(await page.locator("[data-try-answer] .notice-error").count()).toBe(1);
    await page.getByRole("button", { name: "Compress" }).click();
    expect(await page.locator("[data-try-answer] .notice-error").count()).toBe(0);
    await expect.poll(() => page.locator("h2").first().innerText(), { timeout: 30_000 }).toBe("Compressed photo.pdf");
    expect(await page.locator(".notice-error").count()).toBe(0);
  }, 180_000);

  it("shows the history of compressions and jobs, with working result links", async () => {
    const { body, contentType } = multipart([
      { name: "callback_url", value: receiverUrl },
      { name: "file", value: pdf, filename: "queued.pdf" },
    ]);
    const accepted = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType, prefer: "respond-async" },
      body: new Uint8Array(body),
    });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as { id: string };
    await expect
      .poll(async () => (await db.prisma.webhookDelivery.findFirst({ where: { jobId: job.id } }))?.status, {
        timeout: 60_000,
      })
      .toBe("delivered");
    await page.getByRole("link", { name: "History" }).click();
    await page.waitForURL(`${server.url}/dashboard/history`);
    const rows = page.locator("table.history tbody tr");
    // Six results and the Try it call refused above (lossless with a resolution), recorded as asked.
    expect(await rows.count()).toBe(7);
    expect(await page.locator("table.history tbody tr", { hasText: "Failed" }).count()).toBe(1);
    expect(await rows.first().locator("th").innerText()).toContain("queued.pdf");
    expect(await rows.first().innerText()).toContain("Succeeded");
    const links = page.getByRole("link", { name: /^Download / });
    expect(await links.count()).toBe(6);
    const download = await fetch((await links.first().getAttribute("href"))!);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-length")).toBe(String((await download.arrayBuffer()).byteLength));
    await shot(page, "history");
    await audit(page, "18-history");
  }, 120_000);

  it("shows the webhook secret on asking, rotates it after a confirmation, and lists deliveries", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(`${server.url}/dashboard/webhooks`);
    const deliveries = page.locator("table.deliveries tbody tr");
    expect(await deliveries.count()).toBe(1);
    expect(await deliveries.first().innerText()).toMatch(/compression_job\.succeeded\s+204\s+1\s+Delivered/);
    await shot(page, "webhooks");
    await audit(page, "19-webhooks");
    await page.getByRole("button", { name: "Show the secret" }).click();
    const field = page.getByLabel("Webhook secret");
    const secret = await field.inputValue();
    expect(secret).toMatch(/^whsec_/);
    await audit(page, "20-webhook-secret-shown");
    await page.getByRole("button", { name: "Rotate…" }).click();
    await expect.poll(() => page.locator("h1").innerText()).toBe("Rotate the webhook secret?");
    await shot(page, "webhooks-rotate-confirm");
    await audit(page, "21-webhook-rotate-confirm");
    await page.getByRole("button", { name: "Yes, rotate the secret" }).click();
    await expect.poll(() => page.locator(".notice h2").first().innerText()).toBe("Your new webhook secret");
    const rotated = await page.getByLabel("Webhook secret").inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole("button", { name: "Copy", exact: true }).click();
    await expect.poll(() => page.locator("[data-copy-status]").innerText()).toBe("Copied to the clipboard.");
    await shot(page, "webhooks-rotated");
    await audit(page, "22-webhook-rotated");
    const viaApi = await fetch(`${server.url}/v1/webhook-secret`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await viaApi.json()) as { secret: string }).secret).toBe(rotated);
  }, 60_000);

  it("revokes the key, and the next call with it gets 401", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("button", { name: /^Revoke browser test/ }).click();
    // Asked first: a page says what revoking does, with the way back.
    await expect.poll(() => page.getByRole("heading", { level: 1 }).innerText()).toContain("Revoke browser test");
    await audit(page, "9-key-revoke-confirm");
    await page.getByRole("button", { name: /^Yes, revoke/ }).click();
    await expect.poll(() => page.getByRole("status").first().innerText()).toContain("revoked");
    await audit(page, "9-key-revoked");
    const refused = await compressWithFetch(token);
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: { code: "invalid_api_key" } });
  }, 60_000);

  it("refuses a cross-site form post, even one the session cookie goes along with", async () => {
    const before = await db.prisma.apiKey.count({ where: { subscriber: { email: CORPORATE } } });
    const response = page.waitForResponse(`${server.url}/dashboard/keys`);
    await page.goto(attackerUrl);
    expect((await response).status()).toBe(403);
    await page.waitForURL(`${server.url}/dashboard/keys`);
    expect(await page.locator("h1").innerText()).toBe("Refused");
    expect(await db.prisma.apiKey.count({ where: { subscriber: { email: CORPORATE } } })).toBe(before);
  }, 60_000);

  it("refuses a replayed and an expired sign-in link", async () => {
    const other = await (await newContext()).newPage();
    await other.goto(firstLink);
    expect(await other.locator("h1").innerText()).toBe("This sign-in link cannot be used");
    await audit(other, "10-link-refused");
    await requestLink(other, CORPORATE);
    const fresh = await mailedLink(CORPORATE, 2);
    await db.prisma.signInToken.updateMany({
      where: { subscriber: { email: CORPORATE }, usedAt: null },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await other.goto(fresh);
    expect(await other.locator("h1").innerText()).toBe("This sign-in link cannot be used");
    expect(await other.context().cookies(server.url)).toEqual([]);
  }, 60_000);

  it("a starter subscriber sees why and cannot create a working key", async () => {
    const starter = await (await newContext()).newPage();
    await signIn(starter, STARTER, 1);
    expect(await starter.locator(".notice h2").innerText()).toBe("API keys are part of the corporate plan");
    expect(await starter.getByLabel("Name", { exact: true }).count()).toBe(0);
    await audit(starter, "11-keys-starter");
    // A post made anyway (same origin, the session's token) creates nothing.
    const csrf = await starter.locator('input[name="csrf_token"]').first().inputValue();
    const forced = await starter.context().request.post(`${server.url}/dashboard/keys`, {
      form: { csrf_token: csrf, name: "anyway" },
      headers: { origin: server.url },
    });
    expect(forced.status()).toBe(403);
    expect(await db.prisma.apiKey.count({ where: { subscriber: { email: STARTER } } })).toBe(0);
    await starter.getByRole("link", { name: "Try it" }).click();
    expect(await starter.locator(".notice h2").innerText()).toBe("API keys are part of the corporate plan");
    await starter.getByRole("button", { name: "Sign out" }).click();
    await starter.waitForURL(`${server.url}/dashboard/sign-in?signed_out=1`);
    await audit(starter, "12-signed-out");
  }, 60_000);

  it("fits a phone's screen without scrolling sideways", async () => {
    const phone = await corporate.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    for (const name of ["keys", "usage", "history", "webhooks", "try"]) {
      await phone.goto(`${server.url}/dashboard/${name}`);
      await phone.screenshot({ path: path.join(screens, `14-phone-${name}.png`), fullPage: true });
      const width = await phone.evaluate(() => document.documentElement.scrollWidth);
      expect(width, name).toBeLessThanOrEqual(390);
    }
  }, 60_000);

  it("works without JavaScript: sign in, create a key (no copy button, the field still holds it), Try it", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const plain = await context.newPage();
    await signIn(plain, CORPORATE, 3);
    await plain.getByLabel("Name", { exact: true }).fill("no script");
    await plain.getByRole("button", { name: "Create key" }).click();
    expect(await plain.getByLabel("API key").inputValue()).toMatch(/^mkp_/);
    expect(await plain.getByRole("button", { name: "Copy" }).isVisible()).toBe(false);
    await plain.getByRole("link", { name: "Try it" }).click();
    await plain.getByLabel("PDF file").setInputFiles({ name: "plain.pdf", mimeType: "application/pdf", buffer: pdf });
    await plain.getByRole("button", { name: "Compress" }).click();
    await expect.poll(() => plain.locator("h2").first().innerText(), { timeout: 60_000 }).toBe("Compressed plain.pdf");
    await plain.getByRole("button", { name: "Sign out" }).click();
    await plain.waitForURL(`${server.url}/dashboard/sign-in?signed_out=1`);
    await context.close();
  }, 120_000);

  it("/v1/docs loads offline and lists the compression API's operations", async () => {
    const docs = await (await newContext()).newPage();
    await docs.goto(`${server.url}/v1/docs`);
    await expect.poll(() => docs.locator(".info .title").innerText(), { timeout: 15_000 }).toContain("compression API");
    // Every operation of the served document, and its webhook calls, each drawn once.
    const served = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
      webhooks?: Record<string, Record<string, unknown>>;
    };
    const methods = new Set(["get", "put", "post", "delete", "patch", "head", "options"]);
    const operations = [...Object.values(served.paths), ...Object.values(served.webhooks ?? {})].flatMap((item) =>
      Object.keys(item).filter((key) => methods.has(key)),
    ).length;
    expect(operations).toBeGreaterThanOrEqual(8);
    await expect.poll(() => docs.locator(".opblock-summary-path").count(), { timeout: 15_000 }).toBe(operations);
    // Swagger UI draws each operation's summary as a button holding its other buttons
    // (nested-interactive): its own markup, beyond what a stylesheet or a label can repair.
    await audit(docs, "13-v1-docs", ["nested-interactive"]);
    expect(await docs.locator(".errors-wrapper").count()).toBe(0);
  }, 60_000);

  it("nothing was loaded from the internet, and no page had a script error or CSP violation", () => {
    expect(external).toEqual([]);
    expect(problems).toEqual([]);
  });
});
