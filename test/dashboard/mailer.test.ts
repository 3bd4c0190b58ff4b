// Sign-in mail both ways: over SMTP with nodemailer (to a minimal SMTP server on loopback that
// records what it receives), and without SMTP_URL to the local outbox and the log, where the link
// must survive the logger's scrubbing.
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/env.ts";
import { createMailer } from "../../src/dashboard/mailer.ts";
import { createLogger } from "../../src/logger.ts";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "dashboard-mail-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const MESSAGE = {
  to: "ops@acme.example",
  subject: "Your sign-in link",
  text: "Sign in: http://localhost:3000/dashboard/sign-in/link?code=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ\n",
  html: '<p><a href="http://localhost:3000/dashboard/sign-in/link?code=abc">Sign in</a></p>',
};

/** Speaks just enough SMTP (RFC 5321) for one client: greeting, EHLO, MAIL, RCPT, DATA, QUIT. */
function smtpServer() {
  const received: { from: string; to: string[]; data: string }[] = [];
  const server = net.createServer((socket) => {
    let buffer = "";
    let inData = false;
    let current = { from: "", to: [] as string[], data: "" };
    socket.setEncoding("utf8");
    socket.write("220 test.local ESMTP\r\n");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          received.push(current);
          current = { from: "", to: [], data: "" };
          socket.write("250 queued\r\n");
          continue;
        }
        const eol = buffer.indexOf("\r\n");
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO" || verb === "HELO") socket.write("250 test.local\r\n");
        else if (verb === "MAIL") {
          current.from = line;
          socket.write("250 ok\r\n");
        } else if (verb === "RCPT") {
          current.to.push(line);
          socket.write("250 ok\r\n");
        } else if (verb === "DATA") {
          inData = true;
          socket.write("354 go ahead\r\n");
        } else if (verb === "QUIT") socket.end("221 bye\r\n");
        else socket.write("250 ok\r\n");
      }
    });
  });
  return { server, received };
}

describe("sign-in mail", () => {
  it("goes out over SMTP with nodemailer when SMTP_URL is set, and is not logged", async () => {
    const { server, received } = smtpServer();
    server.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const lines: string[] = [];
    try {
      const { port } = server.address() as AddressInfo;
      const config = loadConfig({
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        MAIL_FROM: "Marketplace <login@acme.test>",
        PUBLIC_API_BASE_URL: "https://api.acme.test",
      });
      const logger = createLogger(
        { logLevel: "info" },
        { destination: new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }) },
      );
      const mailer = createMailer(config.dashboard, logger);
      expect(mailer.kind).toBe("smtp");
      await mailer.send(MESSAGE, {});
      mailer.close();
      expect(received).toHaveLength(1);
      expect(received[0]!.from).toContain("<login@acme.test>");
      expect(received[0]!.to).toEqual(["RCPT TO:<ops@acme.example>"]);
      expect(received[0]!.data).toContain("Subject: Your sign-in link");
      expect(lines.join("")).not.toContain("code=");
    } finally {
      server.close();
    }
  });

  it("without SMTP_URL is written to the outbox (owner-only) and logged with its link intact", async () => {
    const outbox = path.join(work, "outbox");
    const config = loadConfig({ MAIL_OUTBOX_DIR: outbox });
    const lines: string[] = [];
    const logger = createLogger(
      { logLevel: "info" },
      { destination: new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }) },
    );
    const mailer = createMailer(config.dashboard, logger);
    expect(mailer.kind).toBe("outbox");
    const link = "http://localhost:3000/dashboard/sign-in/link?code=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";
    await mailer.send(MESSAGE, { link });
    const [file] = await readdir(outbox);
    expect(file).toMatch(/\.eml$/);
    expect((await stat(path.join(outbox, file!))).mode & 0o777).toBe(0o600);
    expect((await stat(outbox)).mode & 0o777).toBe(0o700);
    const eml = await readFile(path.join(outbox, file!), "utf8");
    expect(eml).toContain("To: ops@acme.example");
    const entry = JSON.parse(lines.find((l) => l.includes("outbox"))!) as Record<string, unknown>;
    expect(entry["link"]).toBe(link);
    expect(entry["to"]).toBe("ops@acme.example");
  });
});
