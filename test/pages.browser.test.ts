// The two pages people read, in a real headless Chromium: the GraphQL explorer and the REST API
// docs. Each loads with no internet access (no CDN) and no script errors, and works: the
// explorer runs its default query, the docs page runs GET /jobs through "Try it out".
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousViolations } from "./helpers/axe.ts";
import { hasChromium, launchChromium, warnWithoutChromium } from "./helpers/chromium.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { factories } from "./helpers/factories.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { neighbourSurfaces } from "../src/http/root.ts";
import { routes } from "../src/rest/routes.ts";

warnWithoutChromium();

describe.skipIf(!hasChromium)("pages in Chromium", () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    db = await createTestDatabase();
    await factories(db.prisma).job("explorer-job", { workModel: "remote" });
    server = await startServer(db);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.close();
  });

  async function openPage() {
    const page = await browser.newPage();
    const external: string[] = [];
    const errors: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url) && !/^(data|blob):/.test(request.url())) external.push(request.url());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    return { page, external, errors };
  }

  it("the GraphQL explorer loads compressed, under its CSP, without external requests, and runs the default query", async () => {
    const { page, external, errors } = await openPage();
    const response = await page.goto(`${server.url}/graphql`);
    const headers = await response!.allHeaders();
    // Chromium offers br over HTTPS only: gzip here.
    expect(headers["content-encoding"]).toBe("gzip");
    expect(headers["content-security-policy"]).toMatch(/script-src 'sha256-/);
    await page.locator(".graphiql-execute-button").click({ timeout: 15_000 });
    await expect.poll(() => page.locator(".result-window").innerText(), { timeout: 15_000 }).toContain("explorer-job");
    await page.screenshot({ path: path.join(process.env["SCREENS_DIR"] ?? tmpdir(), "explorer.png") });
    expect(external).toEqual([]);
    // A script, style or worker the CSP refused shows here ("Refused to ...").
    expect(errors).toEqual([]);
  }, 60_000);

  // The bar of links above the editor: each goes where GET / says, by keyboard too, and axe-core
  // finds nothing serious in it (GraphiQL's own markup is not this service's to fix).
  it.each([
    [1440, 900],
    [390, 844],
  ])(
    "the GraphQL explorer links the other surfaces at %i x %i, axe-core clean",
    async (width, height) => {
      const { page, errors } = await openPage();
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/graphql`);
      await page.locator(".graphiql-execute-button").waitFor({ timeout: 15_000 });
      const nav = page.getByRole("navigation", { name: "Other surfaces of this service" });
      const links = await nav
        .getByRole("link")
        .evaluateAll((all) =>
          all.map((a) => ({ label: a.textContent, path: new URL((a as HTMLAnchorElement).href).pathname })),
        );
      expect(links).toEqual(neighbourSurfaces("graphql"));
      // Every link is on the screen, and the editor still fills the rest of it.
      for (const link of await nav.getByRole("link").all()) expect(await link.isVisible()).toBe(true);
      const editor = (await page.locator("#root > .graphiql-container").boundingBox())!;
      const bar = (await nav.boundingBox())!;
      expect(editor.y).toBeGreaterThanOrEqual(bar.y + bar.height - 1);
      expect(editor.y + editor.height).toBeLessThanOrEqual(height + 1);
      await page.screenshot({ path: path.join(process.env["SCREENS_DIR"] ?? tmpdir(), `explorer-links-${width}.png`) });
      expect(await seriousViolations(page, "nav.surfaces")).toEqual([]);
      // The first link is reached by Tab and followed by Enter.
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.getAttribute("href"))).toBe("/api/v1/docs");
      await Promise.all([page.waitForURL(`${server.url}/api/v1/docs`), page.keyboard.press("Enter")]);
      expect(errors).toEqual([]);
    },
    60_000,
  );

  it("the REST API docs load without external requests or errors and try GET /jobs", async () => {
    const { page, external, errors } = await openPage();
    await page.goto(`${server.url}/api/v1/docs`);
    await expect.poll(() => page.locator(".info .title").innerText(), { timeout: 15_000 }).toContain("catalog API");
    // Every route of the OpenAPI document is listed.
    await expect.poll(() => page.locator(".opblock-summary-path").count(), { timeout: 15_000 }).toBe(routes.length);
    const listJobs = page.locator("#operations-Jobs-listJobs");
    await listJobs.locator(".opblock-summary").click();
    await listJobs.locator("button.execute").click({ timeout: 15_000 });
    await expect
      .poll(() => listJobs.locator(".responses-wrapper .live-responses-table").innerText(), { timeout: 15_000 })
      .toContain("explorer-job");
    await page.screenshot({ path: path.join(tmpdir(), "api-docs.png"), fullPage: true });
    // Swagger UI lists schema problems (unresolvable references and the like) in an error box.
    expect(await page.locator(".errors-wrapper").count()).toBe(0);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);

  // Endpoints first: the first operation on the first screen, at 1440 x 900 and on a phone; the
  // conventions folded below the links to the other surfaces. Screenshots in SCREENS_DIR (or /tmp).
  it.each([
    [1440, 900],
    [390, 844],
  ])(
    "the REST API docs show an operation on the first screen at %i x %i, and link the other surfaces",
    async (width, height) => {
      const { page, errors } = await openPage();
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/api/v1/docs`);
      const first = page.locator(".opblock").first();
      await first.waitFor({ timeout: 15_000 });
      const top = (await first.boundingBox())!.y;
      const screens = process.env["SCREENS_DIR"] ?? tmpdir();
      await page.screenshot({ path: path.join(screens, `api-docs-first-screen-${width}.png`) });
      expect(top, "the first operation's top, in px").toBeLessThan(height - 60);
      const details = page.locator(".info .description details");
      expect(await details.count()).toBe(1);
      expect(await details.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
      const hrefs = await page
        .locator(".info .description a")
        .evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
      expect(hrefs).toEqual(expect.arrayContaining(["/graphql", "/v1/docs", "/dashboard", "/mcp", "/llms.txt", "/"]));
      // The conventions are one press away.
      await details.locator("summary").click();
      await expect.poll(() => details.innerText()).toContain("Versioning");
      expect(errors).toEqual([]);
    },
    60_000,
  );
});
