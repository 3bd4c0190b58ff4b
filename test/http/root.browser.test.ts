// GET / in a browser (Accept: text/html): a small page of the same links the JSON answers, in real
// Chromium at a desktop and a phone width, every link there, axe-core clean; curl still gets JSON.
// Screenshots to look at: /tmp/root-1440.png, /tmp/root-390.png.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { SURFACES } from "../../src/http/root.ts";
import { seriousViolations } from "../helpers/axe.ts";
import { hasChromium, launchChromium, warnWithoutChromium } from "../helpers/chromium.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let browser: Browser | undefined;

beforeAll(async () => {
  warnWithoutChromium();
  db = await createTestDatabase();
  server = await startServer(db);
  if (hasChromium) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db?.close();
});

describe("GET / in a browser", () => {
  it("answers JSON to curl's */* and HTML to a browser, varying by Accept", async () => {
    const json = await fetch(`${server.url}/`, { headers: { accept: "*/*" } });
    expect(json.headers.get("content-type")).toMatch(/application\/json/);
    expect(json.headers.get("vary")).toMatch(/accept/i);
    const page = await fetch(`${server.url}/`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it.skipIf(!hasChromium)("shows every link, fits a phone, and passes axe-core", async () => {
    for (const width of [1440, 390]) {
      const page = await browser!.newPage({ viewport: { width, height: width === 390 ? 844 : 900 } });
      await page.goto(`${server.url}/`);
      const hrefs = await page.locator("main a").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
      expect(hrefs).toEqual(Object.values(SURFACES).map((p) => `${server.url}${p}`));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `horizontal overflow at ${width}px`).toBeLessThanOrEqual(0);
      await page.screenshot({ path: `/tmp/root-${width}.png`, fullPage: true });
      expect(await seriousViolations(page)).toEqual([]);
      await page.close();
    }
  });
});
