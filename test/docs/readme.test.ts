// The README's promises to a newcomer about tests: it says how long the whole suite takes, and
// each command it gives to run one file or one project names a file that exists and a project
// vitest.config.ts defines, so copying it runs something rather than "No test files found".
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const vitestConfig = readFileSync(path.join(root, "vitest.config.ts"), "utf8");

describe("the README", () => {
  it("names the whole suite's time", () => {
    expect(readme).toMatch(/npm test\s+#.*\d+\+? minutes/);
  });

  it("gives commands for one file and one project that point at real ones", () => {
    const commands = [...readme.matchAll(/^npx vitest run (.+?)\s+#/gm)].map((m) => m[1]!.trim());
    const files = commands.filter((c) => c.endsWith(".test.ts"));
    const projects = commands.flatMap((c) => /--project (\w+)/.exec(c)?.[1] ?? []);
    expect(files.length).toBeGreaterThan(0);
    expect(projects.length).toBeGreaterThan(0);
    for (const file of files) expect(existsSync(path.join(root, file)), file).toBe(true);
    for (const project of projects) expect(vitestConfig, project).toContain(`name: "${project}"`);
  });

  it("stays short", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(90);
  });
});
