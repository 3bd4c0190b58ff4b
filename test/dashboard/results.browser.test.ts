// The subscriber's results under their control, in a real headless Chromium: "Delete now" on a
// History row (a confirmation page, then the row says Deleted, the file is gone from storage and its
// download link refused) and the account's retention on the Webhooks page (saved, used by the next
// API call, a value past the maximum refused in words). Every page passes axe-core with no serious
// or critical violation; screenshots go to /tmp/dash-results-<name>.png.
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../src/auth/sessions.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { hasChromium, launchChromium, warnWithoutChromium } from "../helpers/chromium.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

warnWithoutChromium();

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

describe.skipIf(!hasChromium)("results under control, in Chromium", () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let work: string;
  let objects: string;
  let token = "";
  let pdf: Buffer;

  beforeAll(async () => {
    db = await createTestDatabase();
    work = await mkdtemp(path.join(tmpdir(), "dashboard-results-"));
    objects = path.join(work, "objects");
    pdf = await makePdf(2);
    server = await startServer(
      db,
      {
        LOCAL_STORAGE_DIR: objects,
        UPLOAD_TMP_DIR: path.join(work, "uploads"),
        COMPRESS_JOB_WORKERS: "0",
        RESULT_RETENTION_HOURS: "24",
      },
      { compress: { storage: await createLocalStorage(objects, null), runner: passThroughRunner } },
    );
    const subscriber = await subscriberWithKey(db.prisma);
    token = subscriber.token;
    const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
    const opened = await auth.redeemLink((await auth.createLink(subscriber.email))!.token);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1180, height: 860 } });
    const { hostname } = new URL(server.url);
    await context.addCookies([{ name: "mkp_session", value: opened!.secret, domain: hostname, path: "/" }]);
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function compress(filename: string, fields: Record<string, string> = {}) {
    const { body, contentType } = multipart([
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: "file", value: pdf, filename },
    ]);
    const response = await fetch(`${server.url}/v1/compress`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType },
      body: new Uint8Array(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { id: string; url: string; retention: number };
  }

  async function audit(name: string) {
    await page.screenshot({ path: `/tmp/dash-results-${name}.png`, fullPage: true });
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: () => Promise<{ violations: unknown[] }> } }).axe;
      return ((await axe.run()).violations as { id: string; impact: string }[]).map((v) => `${v.impact} ${v.id}`);
    });
    expect(
      violations.filter((v) => /^(serious|critical)/.test(v)),
      name,
    ).toEqual([]);
  }

  it("deletes a result now from History, after a confirmation", async () => {
    const kept = await compress("Offer letter - A. Smith.pdf");
    const doomed = await compress("CV - J. Doe.pdf");
    const object = path.basename(new URL(doomed.url).pathname);
    expect(await readdir(objects)).toContain(object);

    await page.goto(`${server.url}/dashboard/history`);
    await expect.poll(() => page.locator("h1").innerText()).toBe("History");
    await audit("1-history");
    await page.getByRole("link", { name: "Delete now… CV - J. Doe.pdf" }).click();
    await expect.poll(() => page.locator("h1").innerText()).toBe("Delete this result now?");
    expect(await page.locator(".card").innerText()).toContain("CV - J. Doe.pdf");
    await audit("2-delete-confirm");
    await page.getByRole("button", { name: "Yes, delete it now" }).click();
    await page.waitForURL(`${server.url}/dashboard/history?deleted=1`);
    expect(await page.getByRole("status").first().innerText()).toContain("deleted from storage");
    await audit("3-history-deleted");

    const table = await page.locator("table.history").innerText();
    expect(table).not.toContain("CV - J. Doe.pdf");
    expect(table).toContain("Offer letter - A. Smith.pdf");
    expect(table).toContain("Deleted");
    expect(await readdir(objects)).not.toContain(object);
    expect((await fetch(doomed.url)).status).toBe(410);
    expect((await fetch(kept.url)).status).toBe(200);
    const resource = await fetch(`${server.url}/v1/compressions/${doomed.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await resource.json()).toMatchObject({ deleted_by: "request", filename: null });
  });

  it("sets the account's retention on the Webhooks page, which the next call uses", async () => {
    await page.goto(`${server.url}/dashboard/webhooks`);
    expect(await page.locator("#retention").innerText()).toBe("Result retention");
    expect(await page.locator("section:has(#retention)").innerText()).toContain("the maximum, 1 day");
    await page.getByLabel("Keep results for (seconds)").fill("600");
    await page.getByRole("button", { name: "Save retention" }).click();
    await page.waitForURL(/\/dashboard\/webhooks\?retention=saved/);
    expect(await page.locator("section:has(#retention)").innerText()).toContain("Saved: results are kept 10 minutes");
    await audit("4-webhooks-retention-saved");
    expect((await compress("payslip.pdf")).retention).toBe(600);

    // Past the maximum (the browser's own check bypassed): refused in words, nothing saved.
    await page.getByLabel("Keep results for (seconds)").evaluate((input) => input.removeAttribute("max"));
    await page.getByLabel("Keep results for (seconds)").fill("999999");
    await page.getByRole("button", { name: "Save retention" }).click();
    await expect.poll(() => page.locator("section:has(#retention) .notice").innerText()).toContain("at most 1 day");
    await audit("5-webhooks-retention-refused");
    expect((await compress("payslip.pdf")).retention).toBe(600);

    await page.getByLabel("Keep results for (seconds)").fill("0");
    await page.getByRole("button", { name: "Save retention" }).click();
    await page.waitForURL(/retention=saved/);
    expect(await page.locator("section:has(#retention)").innerText()).toContain("until the first complete download");
    const once = await compress("contract.pdf");
    expect(once.retention).toBe(0);
    expect(new URL(once.url).pathname).toMatch(/^\/v1\/results\//);
  });
});
