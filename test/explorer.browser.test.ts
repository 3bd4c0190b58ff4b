// The GraphQL explorer in a real headless Chromium: the page loads with no internet access
// (no CDN), and running its default query shows jobs.
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { factories } from "./helpers/factories.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";
const hasBrowser = existsSync(executablePath);
if (!hasBrowser) {
  console.warn(
    `Skipping browser tests: no Chromium at ${executablePath} (apt-get install -y chromium, or set CHROMIUM_PATH).`,
  );
}

describe.skipIf(!hasBrowser)("GraphQL explorer in Chromium", () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    db = await createTestDatabase();
    await factories(db.prisma).job("explorer-job", { workModel: "remote" });
    server = await startServer(db);
    browser = await chromium.launch({
      executablePath,
      // playwright gives every launch a fresh, temporary profile.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.close();
  });

  it("loads without external requests and runs the default query", async () => {
    const page = await browser.newPage();
    const external: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url) && !/^(data|blob):/.test(request.url())) external.push(request.url());
    });
    await page.goto(`${server.url}/graphql`);
    await page.locator(".graphiql-execute-button").click({ timeout: 15_000 });
    await expect.poll(() => page.locator(".result-window").innerText(), { timeout: 15_000 }).toContain("explorer-job");
    await page.screenshot({ path: path.join(tmpdir(), "explorer.png") });
    expect(external).toEqual([]);
  }, 60_000);
});
