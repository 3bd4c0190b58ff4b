// The dashboard's sign-in and sessions over real HTTP: one-time links through the local outbox
// (the same answer whether or not the address exists), single use and expiry, the session
// cookie's attributes, the links' configured origin (never the request's Host), sign-out, rate
// limits per address from one IP and per IP (no one locks an owner out), the quiet cap on mails,
// a mailer that fails, and the cross-origin and CSRF checks of every form that changes something.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { passThroughRunner, subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { messagesTo, signInLink } from "../helpers/outbox.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let work: string;
let outbox: string;

beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "dashboard-sign-in-"));
  outbox = path.join(work, "outbox");
  const objects = path.join(work, "objects");
  server = await startServer(
    db,
    {
      MAIL_OUTBOX_DIR: outbox,
      // Behind a proxy that says the client came over TLS (as Cloud Run's front end does).
      TRUST_PROXY: "true",
      SIGN_IN_LIMIT_PER_ADDRESS: "3",
      SIGN_IN_LIMIT_PER_IP: "1000",
      LOCAL_STORAGE_DIR: objects,
    },
    { compress: { storage: await createLocalStorage(objects, null), runner: passThroughRunner } },
  );
});

afterAll(async () => {
  await server?.close();
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

type Headers = Record<string, string>;
const ORIGIN = () => ({ origin: server.url, "sec-fetch-site": "same-origin" });

async function post(pathname: string, form: Record<string, string>, headers: Headers = {}) {
  return fetch(`${server.url}${pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...ORIGIN(), ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

const get = (pathname: string, headers: Headers = {}) =>
  fetch(`${server.url}${pathname}`, { redirect: "manual", headers });

/** Asks for a link with headers fetch() will not send as given (Host); answers the status. */
function postWithHost(url: string, email: string, headers: Headers): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const body = new URLSearchParams({ email }).toString();
    const target = new URL(url);
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: "/dashboard/sign-in",
        method: "POST",
        headers: {
          ...headers,
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

/** Requests a link, follows it and confirms: the session cookie ("name=value") and the page's CSRF token. */
async function signIn(email: string) {
  const before = (await messagesTo(outbox, email)).length;
  expect((await post("/dashboard/sign-in", { email })).status).toBe(200);
  const link = await signInLink(outbox, email, before + 1);
  const code = new URL(link).searchParams.get("code")!;
  const confirmed = await post("/dashboard/sign-in/link", { code });
  expect(confirmed.status).toBe(303);
  expect(confirmed.headers.get("location")).toBe("/dashboard/keys");
  const setCookie = confirmed.headers.get("set-cookie")!;
  const cookie = setCookie.split(";")[0]!;
  const keys = await get("/dashboard/keys", { cookie });
  expect(keys.status).toBe(200);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await keys.text())![1]!;
  return { cookie, setCookie, csrf, code };
}

describe("sign-in links", () => {
  it("answers the same whether or not the address is a subscriber's, and mails only a subscriber", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const stranger = `nobody-${Date.now()}@example.com`;
    const known = await post("/dashboard/sign-in", { email });
    const unknown = await post("/dashboard/sign-in", { email: stranger });
    expect(known.status).toBe(unknown.status);
    const strip = (text: string) => text.replaceAll(email, "X").replaceAll(stranger, "X");
    expect(strip(await known.text())).toBe(strip(await unknown.text()));
    await signInLink(outbox, email);
    expect(await messagesTo(outbox, stranger)).toEqual([]);
    expect(await db.prisma.signInToken.count({ where: { subscriber: { email } } })).toBe(1);
    // Only a hash is stored, never the secret of the link.
    const link = await signInLink(outbox, email);
    const row = await db.prisma.signInToken.findFirstOrThrow({ where: { subscriber: { email } } });
    expect(link).not.toContain(row.hash);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("opens a confirmation page, then a session whose cookie is httpOnly and SameSite=Lax; a replay is refused", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    await post("/dashboard/sign-in", { email });
    const link = await signInLink(outbox, email);
    const confirm = await get(new URL(link).pathname + new URL(link).search);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain(`Sign in as ${email}?`);
    // Opening the page spends nothing: the link still works.
    const code = new URL(link).searchParams.get("code")!;
    const first = await post("/dashboard/sign-in/link", { code });
    expect(first.status).toBe(303);
    const setCookie = first.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^mkp_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/; httponly/i);
    expect(setCookie).toMatch(/; samesite=lax/i);
    expect(setCookie).toMatch(/; path=\//i);
    expect(setCookie).not.toMatch(/; secure/i);

    const replay = await post("/dashboard/sign-in/link", { code });
    expect(replay.status).toBe(400);
    expect(replay.headers.get("set-cookie")).toBeNull();
    expect(await replay.text()).toContain("This sign-in link cannot be used");
    expect((await get(new URL(link).pathname + new URL(link).search)).status).toBe(400);
  });

  it("refuses an expired link", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    await post("/dashboard/sign-in", { email });
    const code = new URL(await signInLink(outbox, email)).searchParams.get("code")!;
    await db.prisma.signInToken.updateMany({
      where: { subscriber: { email } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await post("/dashboard/sign-in/link", { code })).status).toBe(400);
    expect((await post("/dashboard/sign-in/link", { code: "x".repeat(43) })).status).toBe(400);
  });

  it("sets a Secure __Host- cookie behind TLS (X-Forwarded-Proto from the trusted proxy)", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const tls = { "x-forwarded-proto": "https", origin: server.url.replace("http:", "https:") };
    expect((await post("/dashboard/sign-in", { email }, tls)).status).toBe(200);
    const link = await signInLink(outbox, email);
    // The link's origin is configured, never taken from the request (here the default).
    expect(link.startsWith("http://localhost:3000/dashboard/sign-in/link?code=")).toBe(true);
    const code = new URL(link).searchParams.get("code")!;
    const confirmed = await post("/dashboard/sign-in/link", { code }, tls);
    expect(confirmed.status).toBe(303);
    const setCookie = confirmed.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^__Host-mkp_session=/);
    expect(setCookie).toMatch(/; secure/i);
    expect(setCookie).toMatch(/; path=\/;/i);
  });

  it.each([
    ["PUBLIC_API_BASE_URL when set", { PUBLIC_API_BASE_URL: "https://api.acme.test" }, "https://api.acme.test"],
    ["localhost on the service's port without it", { PORT: "4123" }, "http://localhost:4123"],
  ])("points links at %s, whatever Host the request names", async (_, env, origin) => {
    const outboxOf = await mkdtemp(path.join(work, "outbox-origin-"));
    const configured = await startServer(db, { MAIL_OUTBOX_DIR: outboxOf, TRUST_PROXY: "true", ...env });
    try {
      const { email } = await subscriberWithKey(db.prisma);
      const status = await postWithHost(configured.url, email, {
        host: "evil.example",
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "https",
      });
      expect(status).toBe(200);
      expect(await signInLink(outboxOf, email)).toMatch(new RegExp(`^${origin}/dashboard/sign-in/link\\?code=`));
    } finally {
      await configured.close();
    }
  });

  it("limits sign-in requests per address from one IP, and not from another: no one can lock an owner out", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const from = (ip: string) => ({ "x-forwarded-for": ip });
    const attacker = [];
    for (let i = 0; i < 4; i++)
      attacker.push((await post("/dashboard/sign-in", { email }, from("203.0.113.7"))).status);
    expect(attacker).toEqual([200, 200, 200, 429]);
    // The owner, elsewhere, still asks and gets a link that signs in.
    const owner = await post("/dashboard/sign-in", { email }, from("198.51.100.9"));
    expect(owner.status).toBe(200);
    expect(await owner.text()).toContain("Check your e-mail");
    const link = await signInLink(outbox, email, 4);
    expect((await post("/dashboard/sign-in/link", { code: new URL(link).searchParams.get("code")! })).status).toBe(303);
  });

  it("limits sign-in requests per address, with the same refusal for an unknown one", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post("/dashboard/sign-in", { email })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const stranger = `limit-${Date.now()}@example.com`;
    const strangerStatuses = [];
    for (let i = 0; i < 4; i++) strangerStatuses.push((await post("/dashboard/sign-in", { email: stranger })).status);
    expect(strangerStatuses).toEqual(statuses);
    const refused = await post("/dashboard/sign-in", { email });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.text()).toContain("Too many sign-in requests");
  });

  it("limits sign-in requests per client IP", async () => {
    const limited = await startServer(db, { MAIL_OUTBOX_DIR: outbox, SIGN_IN_LIMIT_PER_IP: "2" });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${limited.url}/dashboard/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
          body: new URLSearchParams({ email: `ip-${i}-${Date.now()}@example.com` }).toString(),
        });
        statuses.push(response.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe("sign-in mails", () => {
  it("are capped per address quietly: the same answer, and a link already sent still signs in", async () => {
    const outboxOf = await mkdtemp(path.join(work, "outbox-capped-"));
    // Two mails an hour, then one per ration window (5 minutes: more than this test takes).
    const capped = await startServer(db, {
      MAIL_OUTBOX_DIR: outboxOf,
      TRUST_PROXY: "true",
      SIGN_IN_MAILS_PER_ADDRESS: "2",
    });
    try {
      const { email } = await subscriberWithKey(db.prisma);
      const stranger = `capped-${Date.now()}@example.com`;
      const ask = (address: string, i: number) =>
        fetch(`${capped.url}/dashboard/sign-in`, {
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            "sec-fetch-site": "same-origin",
            "x-forwarded-for": `192.0.2.${i}`,
          },
          body: new URLSearchParams({ email: address }).toString(),
        });
      const pages = [];
      for (let i = 1; i <= 5; i++) {
        const [known, unknown] = [await ask(email, i), await ask(stranger, i)];
        expect([known.status, unknown.status]).toEqual([200, 200]);
        const strip = (text: string) => text.replaceAll(email, "X").replaceAll(stranger, "X");
        pages.push(strip(await known.text()), strip(await unknown.text()));
      }
      expect(new Set(pages).size).toBe(1);
      // Two within the hourly cap, the third as the ration window's one; none after.
      expect(await messagesTo(outboxOf, email)).toHaveLength(3);
      const first = await signInLink(outboxOf, email, 1);
      const confirmed = await fetch(`${capped.url}/dashboard/sign-in/link`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ code: new URL(first).searchParams.get("code")! }).toString(),
      });
      expect(confirmed.status).toBe(303);
    } finally {
      await capped.close();
    }
  });

  it.each([
    ["an outbox that cannot be written", (file: string) => ({ MAIL_OUTBOX_DIR: path.join(file, "outbox") })],
    [
      "an SMTP server that refuses connections",
      () => ({ SMTP_URL: "smtp://127.0.0.1:1", PUBLIC_API_BASE_URL: "https://api.acme.test" }),
    ],
  ])("that cannot be sent (%s) are said to have failed, 503, the same for any address", async (_, env) => {
    const file = path.join(work, `not-a-directory-${Date.now()}`);
    await writeFile(file, "");
    const broken = await startServer(db, env(file));
    try {
      const { email } = await subscriberWithKey(db.prisma);
      const stranger = `unsent-${Date.now()}@example.com`;
      const pages = [];
      for (const address of [email, stranger]) {
        const response = await fetch(`${broken.url}/dashboard/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
          body: new URLSearchParams({ email: address }).toString(),
        });
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe("5");
        const text = await response.text();
        expect(text).toContain("The sign-in link could not be sent just now");
        expect(text).not.toContain("Check your e-mail");
        pages.push(text.replaceAll(address, "X"));
      }
      expect(pages[0]).toBe(pages[1]);
    } finally {
      await broken.close();
    }
  });
});

describe("sessions", () => {
  it("end at sign-out: the cookie is cleared and the session refused from then on", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const { cookie, csrf } = await signIn(email);
    const out = await post("/dashboard/sign-out", { csrf_token: csrf }, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/dashboard/sign-in?signed_out=1");
    expect(out.headers.get("set-cookie")).toMatch(/^mkp_session=;.*expires=Thu, 01 Jan 1970/i);
    const after = await get("/dashboard/keys", { cookie });
    expect(after.status).toBe(302);
    expect(after.headers.get("location")).toBe("/dashboard/sign-in");
    expect(await db.prisma.dashboardSession.count({ where: { subscriber: { email }, revokedAt: null } })).toBe(0);
  });

  it("end at their expiry", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const { cookie } = await signIn(email);
    await db.prisma.dashboardSession.updateMany({
      where: { subscriber: { email } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await get("/dashboard/usage", { cookie })).status).toBe(302);
  });

  it("an unknown page is a 404 page, and a known page's other method a 405", async () => {
    const missing = await get("/dashboard/nowhere");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await missing.text()).toContain("There is no such page in the dashboard.");
    const method = await fetch(`${server.url}/dashboard/sign-out`, { method: "DELETE" });
    expect(method.status).toBe(405);
  });

  it("pages are served under a strict CSP and never cached", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const { cookie } = await signIn(email);
    for (const pathname of ["/dashboard/keys", "/dashboard/usage", "/dashboard/try", "/dashboard/sign-in"]) {
      const response = await get(pathname, pathname.endsWith("sign-in") ? {} : { cookie });
      const csp = response.headers.get("content-security-policy") ?? "";
      expect(csp, pathname).toContain("default-src 'none'");
      expect(csp, pathname).toContain("script-src 'self';");
      expect(csp, pathname).not.toContain("unsafe-inline");
      expect(csp, pathname).toContain("frame-ancestors 'none'");
      expect(response.headers.get("cache-control"), pathname).toBe("no-store");
    }
  });
});

describe("forms that change something", () => {
  it.each([
    ["another site (Sec-Fetch-Site: cross-site)", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
    ["a sibling origin on the same site (same-site)", { "sec-fetch-site": "same-site", origin: "http://127.0.0.1:1" }],
    ["another Origin, from a browser without Fetch Metadata", { "sec-fetch-site": "", origin: "https://evil.example" }],
    ["an opaque origin (Origin: null)", { "sec-fetch-site": "", origin: "null" }],
  ])("refuse a post from %s, even with the session's cookie and token", async (_, headers) => {
    const { email } = await subscriberWithKey(db.prisma);
    const { cookie, csrf } = await signIn(email);
    const before = await db.prisma.apiKey.count({ where: { subscriber: { email } } });
    const response = await post("/dashboard/keys", { csrf_token: csrf, name: "forged" }, { cookie, ...headers });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("sent from another site");
    expect(await db.prisma.apiKey.count({ where: { subscriber: { email } } })).toBe(before);
  });

  it("refuse a post without the session's CSRF token, or with another session's", async () => {
    const { email } = await subscriberWithKey(db.prisma);
    const mine = await signIn(email);
    const other = await signIn((await subscriberWithKey(db.prisma)).email);
    const forms: Record<string, string>[] = [
      { name: "x" },
      { name: "x", csrf_token: other.csrf },
      { name: "x", csrf_token: "" },
    ];
    for (const form of forms) {
      const response = await post("/dashboard/keys", form, { cookie: mine.cookie });
      expect(response.status).toBe(403);
    }
    expect((await post("/dashboard/keys", { name: "ok", csrf_token: mine.csrf }, { cookie: mine.cookie })).status).toBe(
      201,
    );
  });

  it("refuse a post without a session", async () => {
    const response = await post("/dashboard/keys", { name: "x", csrf_token: "x" });
    expect(response.status).toBe(401);
  });

  it("revoke only the subscriber's own keys", async () => {
    const mine = await subscriberWithKey(db.prisma);
    const theirs = await subscriberWithKey(db.prisma);
    const { cookie, csrf } = await signIn(mine.email);
    const response = await post(`/dashboard/keys/${theirs.key.id}/revoke`, { csrf_token: csrf }, { cookie });
    expect(response.status).toBe(404);
    expect((await db.prisma.apiKey.findUniqueOrThrow({ where: { id: theirs.key.id } })).revokedAt).toBeNull();
    // A revocation is confirmed first: its page names the key and holds the form; another's key: 404.
    const confirm = await fetch(`${server.url}/dashboard/keys/${mine.key.id}/revoke`, { headers: { cookie } });
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain("Yes, revoke");
    const foreign = await fetch(`${server.url}/dashboard/keys/${theirs.key.id}/revoke`, { headers: { cookie } });
    expect(foreign.status).toBe(404);
    const own = await post(`/dashboard/keys/${mine.key.id}/revoke`, { csrf_token: csrf }, { cookie });
    expect(own.status).toBe(303);
    expect((await db.prisma.apiKey.findUniqueOrThrow({ where: { id: mine.key.id } })).revokedAt).not.toBeNull();
  });

  it("a subscriber off the corporate plan is told why and cannot create a key", async () => {
    const { email } = await subscriberWithKey(db.prisma, { plan: "starter" });
    const { cookie, csrf } = await signIn(email);
    const page = await (await get("/dashboard/keys", { cookie })).text();
    expect(page).toContain("API keys are part of the corporate plan");
    expect(page).not.toContain('action="/dashboard/keys" class="inline"');
    const before = await db.prisma.apiKey.count({ where: { subscriber: { email } } });
    const forced = await post("/dashboard/keys", { csrf_token: csrf, name: "sneaky" }, { cookie });
    expect(forced.status).toBe(403);
    expect(await forced.text()).toContain("only corporate subscribers may hold a key");
    expect(await db.prisma.apiKey.count({ where: { subscriber: { email } } })).toBe(before);
  });
});
