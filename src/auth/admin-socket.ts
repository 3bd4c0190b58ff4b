// The embedded database belongs to the running service's process: a second process must not
// open the same PGlite directory. So while the service runs on the embedded default, it answers
// account commands on a Unix socket inside that directory (owner-only permissions), and the
// command-line tool sends them there; with no service running, the tool opens the database itself.
import { chmod, rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import type { Accounts } from "./accounts.ts";
import { AccountError } from "./accounts.ts";

export type AccountCommand = { [M in keyof Accounts]: { method: M; args: Parameters<Accounts[M]> } }[keyof Accounts];

type Reply = { ok: true; result: unknown } | { ok: false; error: string };

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, ".accounts.sock");
}

export async function serveAccounts(socketPath: string, handler: Accounts): Promise<{ close(): Promise<void> }> {
  await rm(socketPath, { force: true }); // left by a crashed run
  const server = net.createServer((socket) => {
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      if (buffer.length > 64 * 1024) socket.destroy();
      const end = buffer.indexOf("\n");
      if (end < 0) return;
      const line = buffer.slice(0, end);
      void answer(line).then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
    });
    socket.on("error", () => socket.destroy());
  });
  const answer = async (line: string): Promise<Reply> => {
    try {
      const command = JSON.parse(line) as AccountCommand;
      const method = handler[command.method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
      if (typeof method !== "function") return { ok: false, error: `unknown command ${String(command.method)}` };
      return { ok: true, result: await method(...command.args) };
    } catch (error) {
      return { ok: false, error: error instanceof AccountError ? error.message : `failed: ${String(error)}` };
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

/** Sends a command to a running service; NO_SERVICE when none is listening on the socket. */
export function sendToService(socketPath: string, command: AccountCommand): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let reply = "";
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(command)}\n`));
    socket.on("data", (chunk: string) => (reply += chunk));
    socket.on("end", () => {
      try {
        const parsed = JSON.parse(reply) as Reply;
        if (parsed.ok) resolve(parsed.result);
        else reject(new AccountError(parsed.error));
      } catch {
        reject(new Error("the service sent no answer"));
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(NO_SERVICE);
      else reject(error);
    });
  });
}

export const NO_SERVICE = Symbol("no service listening");
