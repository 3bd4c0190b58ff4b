// The dashboard's local outbox (MAIL_OUTBOX_DIR): the .eml files nodemailer builds when no SMTP
// server is configured, read back as a person would, to follow a sign-in link.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";

/** The messages to `to` in the outbox, oldest first, with quoted-printable soft breaks undone. */
export async function messagesTo(dir: string, to: string): Promise<string[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".eml")).sort();
  const messages = await Promise.all(files.map((f) => readFile(path.join(dir, f), "utf8")));
  return messages
    .map((m) => m.replace(/=\r?\n/g, "").replace(/=3D/gi, "="))
    .filter((m) => new RegExp(`^To: ${to.replace(/[.+]/g, "\\$&")}$`, "mi").test(m));
}

/** Waits for the n-th message to `to` (sent after the answer) and returns its sign-in link. */
export async function signInLink(dir: string, to: string, n = 1): Promise<string> {
  let link = "";
  await expect
    .poll(
      async () => {
        const message = (await messagesTo(dir, to))[n - 1];
        link = /https?:\/\/\S+\/dashboard\/sign-in\/link\?code=[A-Za-z0-9_-]+/.exec(message ?? "")?.[0] ?? "";
        return link;
      },
      { timeout: 10_000 },
    )
    .not.toBe("");
  return link;
}
