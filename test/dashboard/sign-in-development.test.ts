// Signing in while developing (npm start: NODE_ENV=development, no PUBLIC_API_BASE_URL): asking for
// a link again and again is not refused after five, and the link points back at the origin the
// dashboard was opened at (127.0.0.1 or localhost), so following it signs in there; any other Host
// still gets the default origin, never one the asker chose.
import http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { messagesTo, signInLink } from "../helpers/outbox.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let work: string;
let outbox: string;
let email = "";

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "dashboard-dev-sign-in-"));
  outbox = path.join(work, "outbox");
  server = await startServer(db, { NODE_ENV: "development", MAIL_OUTBOX_DIR: outbox, PORT: "3999" });
  ({ email } = await subscriberWithKey(db.prisma));
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** POST /dashboard/sign-in as a browser at `origin` sends it (Host and Origin its own); the status. */
function askForLink(origin: string): Promise<number> {
  const target = new URL(server.url);
  const body = new URLSearchParams({ email }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: "/dashboard/sign-in",
        method: "POST",
        headers: {
          host: new URL(origin).host,
          origin,
          "sec-fetch-site": "same-origin",
          "content-type": "application/x-www-form-urlencoded",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("signing in while developing", () => {
  it("points the link at the loopback origin it was asked from, and signs in there", async () => {
    const port = new URL(server.url).port;
    const cases = [
      [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
      [`http://localhost:${port}`, `http://localhost:${port}`],
      // Not this machine by name: the default origin, whatever the Host says.
      [`http://attacker.example:${port}`, "http://localhost:3999"],
    ] as const;
    for (const [asked, expected] of cases) {
      const before = (await messagesTo(outbox, email)).length;
      expect(await askForLink(asked), asked).toBe(200);
      const link = await signInLink(outbox, email, before + 1);
      expect(new URL(link).origin, asked).toBe(expected);
    }
    // Followed from the mail at 127.0.0.1: the confirmation page is served at that origin.
    const link = await signInLink(outbox, email, 1);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("sign-in/link");
  });

  it("is not refused after the fifth link in an hour", async () => {
    const port = new URL(server.url).port;
    for (let i = 0; i < 8; i++) expect(await askForLink(`http://127.0.0.1:${port}`), `request ${i + 1}`).toBe(200);
  });
});
