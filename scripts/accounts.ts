// Manages the compression API's subscribers and keys against the configured database:
//   npm run accounts -- subscriber:create --name "Acme" --email ops@acme.example --plan corporate [--quota 5000]
//   npm run accounts -- subscriber:update <email|id> [--plan starter] [--quota 100] [--name "…"]
//   npm run accounts -- subscriber:list
//   npm run accounts -- key:issue <email|id> [--name ci]      prints the key once
//   npm run accounts -- key:list [<email|id>]                 never prints a secret
//   npm run accounts -- key:revoke <key id|prefix>
// Add --json for machine-readable output. While the service runs on the embedded database, the
// command goes to it over its Unix socket; otherwise the tool opens the database itself.
import { parseArgs } from "node:util";
import { accounts, AccountError } from "../src/auth/accounts.ts";
import { adminSocketPath, NO_SERVICE, sendToService, type AccountCommand } from "../src/auth/admin-socket.ts";
import { ConfigError, loadConfig } from "../src/config/env.ts";
import { openDatabase } from "../src/db/database.ts";
import { applyMigrations } from "../src/db/migrate.ts";

const USAGE = `usage: npm run accounts -- <command> [args] [--json]
  subscriber:create --name <name> --email <email> --plan <corporate|professional|starter> [--quota <n>]
  subscriber:update <email|id> [--plan <plan>] [--quota <n>] [--name <name>]
  subscriber:list
  key:issue <email|id> [--name <label>]
  key:list [<email|id>]
  key:revoke <key id|prefix>`;

function command(argv: string[]): AccountCommand {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      email: { type: "string" },
      plan: { type: "string" },
      quota: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const [verb, ref] = positionals;
  const need = (value: string | undefined, what: string) => {
    if (!value) throw new AccountError(`${verb} needs ${what}\n${USAGE}`);
    return value;
  };
  switch (verb) {
    case "subscriber:create":
      return {
        method: "createSubscriber",
        args: [
          {
            name: need(values.name, "--name"),
            email: need(values.email, "--email"),
            plan: need(values.plan, "--plan"),
            ...(values.quota !== undefined ? { quota: values.quota } : {}),
          },
        ],
      };
    case "subscriber:update":
      return {
        method: "updateSubscriber",
        args: [
          need(ref, "a subscriber"),
          {
            ...(values.plan !== undefined ? { plan: values.plan } : {}),
            ...(values.quota !== undefined ? { quota: values.quota } : {}),
            ...(values.name !== undefined ? { name: values.name } : {}),
          },
        ],
      };
    case "subscriber:list":
      return { method: "listSubscribers", args: [] };
    case "key:issue":
      return { method: "issueKey", args: [need(ref, "a subscriber"), values.name ?? "default"] };
    case "key:list":
      return { method: "listKeys", args: ref ? [ref] : [] };
    case "key:revoke":
      return { method: "revokeKey", args: [need(ref, "a key id or prefix")] };
    default:
      throw new AccountError(USAGE);
  }
}

async function run(cmd: AccountCommand): Promise<unknown> {
  const config = loadConfig();
  if (config.database.kind === "pglite" && !config.database.dataDir.startsWith("memory://")) {
    const viaService = await sendToService(adminSocketPath(config.database.dataDir), cmd);
    if (viaService !== NO_SERVICE) return viaService;
  }
  const db = await openDatabase(config.database);
  try {
    if (config.database.migrateOnStart) await applyMigrations(db.sql);
    const handler = accounts(db.prisma, config.apiKeyPepper);
    const method = handler[cmd.method] as (...args: unknown[]) => Promise<unknown>;
    // Dates travel as strings over the socket; print both paths the same way.
    return JSON.parse(JSON.stringify(await method(...cmd.args))) as unknown;
  } finally {
    await db.close();
  }
}

function print(result: unknown, json: boolean) {
  if (json) return console.log(JSON.stringify(result, null, 2));
  const rows = (Array.isArray(result) ? result : [result]) as Record<string, unknown>[];
  if (rows.length === 0) return console.log("(none)");
  console.table(rows.map(({ token: _secret, ...row }) => row));
  const issued = result as { token?: string };
  if (issued.token) {
    console.log(`\nThe key, shown this once; keep it secret:\n\n  ${issued.token}\n`);
  }
}

try {
  const argv = process.argv.slice(2);
  const result = await run(command(argv));
  print(result, argv.includes("--json"));
} catch (error) {
  if (error instanceof AccountError || error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
