// The compression API's docs page (/v1/docs) in a real headless Chromium, used as a new subscriber
// would: Authorize with a key, open POST /v1/compress, Try it out, choose a generated PDF, Execute,
// and get 200 with the result, then again with options chosen in the form (remove_metadata,
// target_size); the operations are grouped by resource and the page says where a key comes from. Screenshots: $TMPDIR/compress-docs.png (the page), compress-docs-try.png (the call).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";
import type { EngineJob } from "../../src/compress/isolation/protocol.ts";
import { createRunner, type Runner } from "../../src/compress/isolation/runner.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { hasChromium, launchChromium, warnWithoutChromium } from "../helpers/chromium.ts";
import { makePdf, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

warnWithoutChromium();

describe.skipIf(!hasChromium)("the compression API's docs page in Chromium", () => {
  let db: TestDatabase;
  let server: TestServer;
  let runner: Runner;
  let browser: Browser;
  let work: string;
  // The jobs the engine was given, on their way to the real runner: what the form's fields became.
  const jobs: EngineJob[] = [];
  const recording: EngineRunner = {
    run: (job, options) => {
      jobs.push(job);
      return runner.run(job, options);
    },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    work = await mkdtemp(path.join(tmpdir(), "compress-docs-"));
    runner = createRunner({ concurrency: 1, queueLimit: 2, timeoutMs: 60_000, memoryMb: 1024, warmProcesses: 0 });
    const objects = path.join(work, "objects");
    server = await startServer(
      db,
      { LOCAL_STORAGE_DIR: objects, UPLOAD_TMP_DIR: path.join(work, "uploads") },
      { compress: { storage: await createLocalStorage(objects, null), runner: recording } },
    );
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await runner?.close();
    await db?.close();
    await rm(work, { recursive: true, force: true });
  });

  it("Try it out on POST /v1/compress with a key and a PDF answers 200", async () => {
    const { token, subscriber } = await subscriberWithKey(db.prisma);
    const file = path.join(work, "letter.pdf");
    await writeFile(file, await makePdf(2));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const external: string[] = [];
    const errors: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url) && !/^(data|blob):/.test(request.url())) external.push(request.url());
    });
    page.on("pageerror", (error) => errors.push(error.message));

    await page.goto(`${server.url}/v1/docs`);
    await expect.poll(() => page.locator(".info .title").innerText(), { timeout: 15_000 }).toContain("compression");
    // Where a key comes from, linked from the page's description.
    expect(await page.locator('.info a[href$="/dashboard"]').count()).toBeGreaterThan(0);
    // Grouped by resource, nothing under "default".
    const tags = await page.locator(".opblock-tag-section h3").allInnerTexts();
    expect(tags.join(" ")).not.toMatch(/default/);
    expect(tags.map((tag) => tag.trim().split("\n")[0])).toEqual(
      expect.arrayContaining(["Compression", "Jobs", "Direct uploads", "Webhooks", "Usage"]),
    );

    await page.screenshot({ path: path.join(tmpdir(), "compress-docs.png") });
    await page.locator("button.authorize").click();
    await page.locator(".auth-container input").fill(token);
    await page.locator(".auth-btn-wrapper button.authorize").click();
    await page.locator("button.btn-done").click();

    const operation = page.locator("#operations-Compression-compress");
    await operation.locator(".opblock-summary").click();
    await operation.locator("button.try-out__btn").click();
    await operation.locator('input[type="file"]').setInputFiles(file);
    await operation.locator("button.execute").click();
    const live = operation.locator(".responses-wrapper .live-responses-table");
    await expect.poll(() => live.innerText(), { timeout: 60_000 }).toContain("savings_percentage");
    expect(await live.locator("tbody .response-col_status").first().innerText()).toBe("200");
    const box = (await operation.boundingBox())!;
    const scrolled = await page.evaluate(() => window.scrollY);
    await page.screenshot({
      path: path.join(tmpdir(), "compress-docs-try.png"),
      fullPage: true,
      clip: { x: box.x, y: box.y + scrolled, width: box.width, height: Math.min(box.height, 1400) },
    });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);

    // Nothing the form pre-fills changes the headline call: the engine got the file and the profile.
    // (Swagger UI fills a field without a default with a sample: grayscale=true, target_size=1024.)
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ kind: "compress", profile: "balanced", signatures: "refuse" });
    expect(jobs[0]).not.toHaveProperty("targetSize");
    expect(jobs[0]).not.toHaveProperty("maxImagePpi");
    expect(jobs[0]!.grayscale ?? false).toBe(false);
    expect(jobs[0]!.removeMetadata ?? false).toBe(false);
    expect(jobs[0]!.linearize ?? false).toBe(false);
    // The options are in the form too: chosen there, they are sent and taken.
    const field = (name: string) => operation.locator(`tr[data-property-name="${name}"]`);
    await field("remove_metadata").locator("select").selectOption("true");
    await field("target_size").locator('input[type="text"]').fill("200000");
    // The first answer off the page, so that the one awaited below is the second's.
    await operation.locator("button.btn-clear").click();
    await expect.poll(() => live.count()).toBe(0);
    await operation.locator("button.execute").click();
    // The unit is charged before the engine is given the job: wait for both.
    await expect.poll(() => usedThisMonth(db.prisma, subscriber.id), { timeout: 60_000 }).toBe(2);
    await expect.poll(() => jobs.length, { timeout: 60_000 }).toBe(2);
    await expect.poll(() => live.innerText(), { timeout: 60_000 }).toContain("savings_percentage");
    expect(await live.locator("tbody .response-col_status").first().innerText()).toBe("200");
    expect(jobs.at(-1)).toMatchObject({ removeMetadata: true, targetSize: 200_000 });
    expect(await page.locator(".errors-wrapper").count()).toBe(0);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
  }, 120_000);
});
