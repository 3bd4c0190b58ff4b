// schema.prisma and prisma/migrations agree: the drift check through Prisma's schema engine
// (scripts/check-migrations.ts, which needs none of the test databases): run once, whatever database the other
// tests are given.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

describe("migrations", () => {
  it("match schema.prisma (drift check through Prisma's schema engine)", async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, [
      "--experimental-wasm-modules",
      "--disable-warning=ExperimentalWarning",
      "scripts/check-migrations.ts",
    ]);
    expect(stdout).toContain("migrations match schema.prisma");
  }, 60_000);
});
