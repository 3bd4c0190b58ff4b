// Sign-in mail. With SMTP_URL, nodemailer sends it over SMTP. Without (the embedded default),
// nodemailer still builds the message, which is written to a local outbox directory as an .eml
// file (owner-only), and the link is logged, so a developer can sign in with no mail server.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import nodemailer from "nodemailer";
import type { Config } from "../config/env.ts";
import type { Logger } from "../logger.ts";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** "smtp", or "outbox" (the log and a local directory). */
  readonly kind: "smtp" | "outbox";
  send(message: MailMessage, logFields?: Record<string, unknown>): Promise<void>;
  /**
   * Throws when a message could not be sent now (the SMTP server refuses or cannot be reached; the
   * outbox cannot be written): what a sign-in for an unknown address does instead of sending, so
   * that it fails when a known address's would, in about the same time.
   */
  verify(): Promise<void>;
  close(): void;
}

export function createMailer(config: Config["dashboard"], logger: Logger): Mailer {
  if (config.smtpUrl) {
    const transport = nodemailer.createTransport(config.smtpUrl);
    return {
      kind: "smtp",
      async send(message) {
        await transport.sendMail({ from: config.mailFrom, ...message });
      },
      async verify() {
        await transport.verify();
      },
      close: () => transport.close(),
    };
  }
  const builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    kind: "outbox",
    async send(message, logFields = {}) {
      const built = await builder.sendMail({ from: config.mailFrom, ...message });
      await mkdir(config.outboxDir, { recursive: true, mode: 0o700 });
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const file = path.join(config.outboxDir, `${stamp}-${randomBytes(3).toString("hex")}.eml`);
      await writeFile(file, built.message, { mode: 0o600 });
      logger.info(
        { to: message.to, file, ...logFields },
        `mail written to the outbox (no SMTP_URL): ${message.subject}`,
      );
    },
    async verify() {
      await mkdir(config.outboxDir, { recursive: true, mode: 0o700 });
      await access(config.outboxDir, constants.W_OK);
    },
    close: () => builder.close(),
  };
}
