// The accounts command-line tool as an operator runs it (a child process): against a running
// service on the embedded database (through its socket) and on its own against a database
// directory. It never prints a secret except once, at issue.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../src/auth/accounts.ts";
import { adminSocketPath, serveAccounts } from "../src/auth/admin-socket.ts";
import { isWellFormedApiKey } from "../src/auth/api-keys.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";

const run = promisify(execFile);
const node = path.resolve("node_modules/.bin/node");
let db: TestDatabase;
let dir: string;

async function cli(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(
      node,
      ["--disable-warning=ExperimentalWarning", "scripts/accounts.ts", ...args],
      { env: { PATH: process.env["PATH"] ?? "", LOG_LEVEL: "silent", ...env }, timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), "accounts-cli-"));
});
afterAll(async () => {
  await db?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("npm run accounts", () => {
  it("manages subscribers and keys through a running service's socket", async () => {
    const service = await serveAccounts(adminSocketPath(dir), accounts(db.prisma, null));
    try {
      const env = { PGLITE_DATA_DIR: dir };
      const json = async (args: string[]) => {
        const result = await cli([...args, "--json"], env);
        expect(result.code, result.stderr).toBe(0);
        return JSON.parse(result.stdout) as Record<string, unknown> & Record<string, unknown>[];
      };
      const created = await json([
        "subscriber:create",
        "--name",
        "Acme Corp",
        "--email",
        "Ops@Acme.example",
        "--plan",
        "corporate",
        "--quota",
        "250",
      ]);
      expect(created).toMatchObject({ email: "ops@acme.example", plan: "corporate", monthlyQuota: 250 });
      const issued = await json(["key:issue", "ops@acme.example", "--name", "ci"]);
      expect(isWellFormedApiKey(issued["token"] as string)).toBe(true);
      const listed = await json(["key:list", "ops@acme.example"]);
      expect(listed).toHaveLength(1);
      expect(JSON.stringify(listed)).not.toContain(issued["token"] as string);
      expect(listed[0]).toMatchObject({ prefix: issued["prefix"], name: "ci", revokedAt: null });
      const revoked = await json(["key:revoke", issued["prefix"] as string]);
      expect(revoked["revokedAt"]).not.toBeNull();
      // Only the key's id and prefix are shown, never what is stored of its secret.
      const stored = await db.prisma.apiKey.findUniqueOrThrow({ where: { id: issued["id"] as string } });
      expect(Object.keys(revoked).sort()).toEqual(
        ["createdAt", "id", "lastUsedAt", "name", "prefix", "revokedAt", "subscriber"].sort(),
      );
      const table = await cli(["key:revoke", issued["id"] as string], env);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain(issued["prefix"] as string);
      for (const output of [JSON.stringify(revoked), table.stdout]) {
        expect(output).not.toContain(stored.hash);
        expect(output).not.toContain("subscriberId");
      }
      const updated = await json(["subscriber:update", "ops@acme.example", "--plan", "starter", "--quota", "5"]);
      expect(updated).toMatchObject({ plan: "starter", monthlyQuota: 5, activeKeys: 0 });
      const refused = await cli(["key:issue", "ops@acme.example"], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("only corporate subscribers may hold a key");
      // The service's database holds what the tool did.
      expect(await db.prisma.subscriber.count({ where: { email: "ops@acme.example", plan: "starter" } })).toBe(1);
    } finally {
      await service.close();
    }
  });

  it("opens the embedded database itself when no service runs, and explains bad usage", async () => {
    const own = path.join(dir, "own");
    const env = { PGLITE_DATA_DIR: own };
    const created = await cli(
      ["subscriber:create", "--name", "Solo", "--email", "solo@example.com", "--plan", "corporate"],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const issued = await cli(["key:issue", "solo@example.com"], env);
    expect(issued.stdout).toMatch(/shown this once[\s\S]*mkp_[0-9A-Za-z]{36}/);
    const list = await cli(["subscriber:list"], env);
    expect(list.stdout).toContain("solo@example.com");
    const usage = await cli(["nonsense"], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: npm run accounts");
    const badPlan = await cli(["subscriber:create", "--name", "x", "--email", "x@example.com", "--plan", "gold"], env);
    expect(badPlan.code).toBe(2);
    expect(badPlan.stderr).toContain("plan must be one of");
  }, 120_000);
});
