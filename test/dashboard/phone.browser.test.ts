// The dashboard's tables on a phone and its file names at 1440 px, in real Chromium: at 390 x 844,
// Keys, History and Webhooks show each record as a card, with Revoke, Status, Download and State on
// screen (no sideways scrolling: the page is no wider than the phone), axe-core clean; at 1440 a
// long file name in History wraps only between its words (after _ - . or a space), never mid-word.
// The cards keep their table semantics (explicit roles, as display: block strips them in some
// browsers): Chromium's accessibility tree has the table, its rows, column headers and cells, and
// Revoke is a button reached by Tab. Screenshots to look at (SCREENS_DIR, default /tmp):
// phone-keys.png, phone-history.png, phone-webhooks.png, desktop-keys.png, desktop-history.png,
// desktop-webhooks.png.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../src/auth/sessions.ts";
import { startJobWorker, type JobWorker } from "../../src/compress/async-jobs/worker.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { seriousViolations } from "../helpers/axe.ts";
import { hasChromium, launchChromium, warnWithoutChromium } from "../helpers/chromium.ts";
import { makePdf, multipart, passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const SCREENS = process.env["SCREENS_DIR"] ?? "/tmp";
const LONG_NAME = "Quarterly_financial_statements_and_auditor_commentary-2026-final-signed-version.pdf";
let db: TestDatabase;
let server: TestServer;
let worker: JobWorker;
let receiver: Server;
let browser: Browser | undefined;
let work: string;
let cookie = "";

async function compress(token: string, filename: string, extra: Record<string, string> = {}) {
  const { body, contentType } = multipart([
    ...Object.entries(extra).map(([name, value]) => ({ name, value })),
    { name: "file", value: await makePdf(1), filename },
  ]);
  const response = await fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": contentType,
      ...(extra["callback_url"] ? { prefer: "respond-async" } : {}),
    },
    body: new Uint8Array(body),
  });
  expect(response.status).toBeLessThan(300);
}

beforeAll(async () => {
  warnWithoutChromium();
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "dashboard-phone-"));
  const storage = await createLocalStorage(path.join(work, "objects"), null);
  server = await startServer(
    db,
    { NODE_ENV: "development", UPLOAD_TMP_DIR: path.join(work, "uploads"), COMPRESS_JOB_WORKERS: "0" },
    { compress: { storage, runner: passThroughRunner } },
  );
  const noop = () => undefined;
  const logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, trace: noop, child: () => logger };
  const deps = { config: server.config, prisma: db.prisma, storage, runner: passThroughRunner };
  worker = startJobWorker({ ...deps, logger: logger as never, pollMs: 100 }, 1);
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  const { email, token } = await subscriberWithKey(db.prisma, { quota: 50 });
  await compress(token, LONG_NAME);
  await compress(token, "cv.pdf", { profile: "extreme" });
  await compress(token, "scan-with-a-callback.pdf", { callback_url: hook });
  // A refused call, listed with what it asked for.
  const { body, contentType } = multipart([
    { name: "profile", value: "lossless" },
    { name: "target_size", value: "100000" },
    { name: "file", value: await makePdf(1), filename: "offer-letter_2026.pdf" },
  ]);
  const refused = await fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
    body: new Uint8Array(body),
  });
  expect(refused.status).toBe(400);
  for (let i = 0; i < 150 && (await db.prisma.webhookDelivery.count()) === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const auth = sessions(db.prisma, { linkTtlMs: 60_000, sessionTtlMs: 3_600_000 });
  cookie = (await auth.redeemLink((await auth.createLink(email))!.token))!.secret;
  if (hasChromium) browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.close();
  await db?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function open(pathname: string, width: number, height: number): Promise<Page> {
  const context = await browser!.newContext({ viewport: { width, height } });
  const { hostname } = new URL(server.url);
  await context.addCookies([{ name: "mkp_session", value: cookie, domain: hostname, path: "/" }]);
  const page = await context.newPage();
  await page.goto(`${server.url}${pathname}`);
  return page;
}

/** True when the element is inside the viewport's width (on screen without scrolling sideways). */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  const width = page.viewportSize()!.width;
  return box !== null && box.x >= 0 && box.x + box.width <= width;
}

describe.skipIf(!hasChromium)("the dashboard on a phone (390 x 844)", () => {
  it.each([
    ["keys", "/dashboard/keys", ["button.danger", "td[data-label='Status']"]],
    ["history", "/dashboard/history", ["td[data-label='Status'] .status", "td[data-label='Result'] a[download]"]],
    ["webhooks", "/dashboard/webhooks", ["td[data-label='State']", "td[data-label='Status code']"]],
  ])("shows %s as cards, every column on screen, axe-core clean", async (name, pathname, selectors) => {
    const page = await open(pathname, 390, 844);
    try {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, "the page is no wider than the phone").toBeLessThanOrEqual(0);
      for (const selector of selectors) expect(await onScreen(page, selector), selector).toBe(true);
      // Each value says what it is: the column's name is shown beside it.
      const label = await page
        .locator(selectors[1]!)
        .first()
        .evaluate((el) => getComputedStyle(el.closest("td")!, "::before").content);
      expect(label).not.toBe("none");
      await page.screenshot({ path: path.join(SCREENS, `phone-${name}.png`), fullPage: true });
      expect(await seriousViolations(page)).toEqual([]);
      expect(await tableRoles(page)).toEqual({ table: 1, columnheader: true, row: true, cell: true });
    } finally {
      await page.context().close();
    }
  });
});

/** The roles Chromium's accessibility tree gives the page's table: how many tables; rows, headers, cells seen. */
async function tableRoles(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as { nodes: { role?: { value?: string } }[] };
  const roles = nodes.map((node) => node.role?.value);
  return {
    table: roles.filter((role) => role === "table").length,
    columnheader: roles.includes("columnheader"),
    row: roles.includes("row"),
    cell: roles.includes("cell") || roles.includes("gridcell"),
  };
}

describe.skipIf(!hasChromium)("the cards' semantics", () => {
  it("states the table's roles in the markup, so display: block cannot strip them", async () => {
    const page = await open("/dashboard/history", 390, 844);
    try {
      const roles = await page.evaluate(() => ({
        table: document.querySelector("table.cards")!.getAttribute("role"),
        rows: [...document.querySelectorAll("table.cards tr")].every((tr) => tr.getAttribute("role") === "row"),
        cells: [...document.querySelectorAll("table.cards td")].every((td) => td.getAttribute("role") === "cell"),
        labels: [...document.querySelectorAll("table.cards td")].every((td) => td.hasAttribute("data-label")),
      }));
      expect(roles).toEqual({ table: "table", rows: true, cells: true, labels: true });
    } finally {
      await page.context().close();
    }
  });

  it("reaches Revoke by Tab on a phone", async () => {
    const page = await open("/dashboard/keys", 390, 844);
    try {
      let focused = "";
      for (let i = 0; i < 40 && !focused.startsWith("Revoke"); i++) {
        await page.keyboard.press("Tab");
        focused = await page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "");
      }
      expect(focused).toMatch(/^Revoke /);
      expect(await onScreen(page, "button.danger:focus")).toBe(true);
    } finally {
      await page.context().close();
    }
  });
});

describe.skipIf(!hasChromium)("the tables at 1440 px", () => {
  it.each([
    ["keys", "/dashboard/keys"],
    ["webhooks", "/dashboard/webhooks"],
  ])("shows %s as a table, axe-core clean", async (name, pathname) => {
    const page = await open(pathname, 1440, 900);
    try {
      await page.screenshot({ path: path.join(SCREENS, `desktop-${name}.png`), fullPage: true });
      expect(await page.locator("table.cards thead").first().isVisible()).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

describe.skipIf(!hasChromium)("History at 1440 px", () => {
  it("wraps a long file name between its words, never mid-word", async () => {
    const page = await open("/dashboard/history", 1440, 900);
    try {
      await page.screenshot({ path: path.join(SCREENS, "desktop-history.png"), fullPage: true });
      expect(await seriousViolations(page)).toEqual([]);
      // Every column fits the page: the table does not scroll sideways (a refused call's options and
      // error code wrap in their cells).
      const hidden = await page.evaluate(() => {
        const wrap = document.querySelector(".table-wrap")!;
        return wrap.scrollWidth - wrap.clientWidth;
      });
      expect(hidden, "pixels of the table hidden to the right").toBeLessThanOrEqual(0);
      // Where each line of the name starts: the character before it must end a word.
      const breaks = await page.evaluate((name) => {
        const span = [...document.querySelectorAll(".filename")].find((el) => el.textContent === name)!;
        const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
        const tops: { char: string; top: number }[] = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.textContent!.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            tops.push({ char: node.textContent![i]!, top: range.getBoundingClientRect().top });
          }
        }
        return tops.flatMap((t, i) => (i > 0 && t.top > tops[i - 1]!.top + 2 ? [tops[i - 1]!.char] : []));
      }, LONG_NAME);
      expect(breaks.length, "the long name wraps in its column").toBeGreaterThan(0);
      for (const before of breaks) expect("_-. ").toContain(before);
    } finally {
      await page.context().close();
    }
  });
});
