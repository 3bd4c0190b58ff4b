// The direction of dependencies is a lint error, not a paragraph: each forbidden direction of
// docs/ARCHITECTURE.md, written into a real file of the layer, must fail eslint.config.js's
// no-restricted-imports, an allowed import beside it must pass, and the tree has no violation.
import path from "node:path";
import { ESLint } from "eslint";
import tseslint from "typescript-eslint";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
// Type information is not what these rules read; without it a file lints in milliseconds.
const eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

describe("layer rules", () => {
  it.each([
    ["src/auth/authenticate.ts", "../http/errors.ts"],
    ["src/auth/sessions.ts", "../http/rate-limit.ts"],
    ["src/graphql/yoga.ts", "../http/health.ts"],
    ["src/graphql/types/job/page.ts", "../../../http/errors.ts"],
    ["src/compress/isolation/child.ts", "../../http/errors.ts"],
    ["src/pdf/compress.ts", "../errors.ts"],
    ["src/pdf/compress.ts", "../config/env.ts"],
    ["src/pdf/index.ts", "../compress/report.ts"],
    ["src/pdf/images/optimise.ts", "../../logger.ts"],
    ["src/pdf/fonts/subset.ts", "../../compress/isolation/protocol.ts"],
    ["src/pdf/structure/load.ts", "../../../package.json"],
    ["src/pdf/fonts/cff/read.ts", "../../../errors.ts"],
    ["src/compress/isolation/runner.ts", "../../http/server.ts"],
    ["src/compress/storage/local.ts", "../../http/origin.ts"],
    ["src/http/health.ts", "../auth/authenticate.ts"],
    ["src/http/errors.ts", "../graphql/context.ts"],
    ["src/http/server.ts", "../rest/routes.ts"],
    ["src/http/server.ts", "../compress/api/routes.ts"],
    ["src/http/rate-limit.ts", "../dashboard/routes.ts"],
    ["src/http/health.ts", "../lifecycle.ts"],
    ["src/http/server.ts", "../app.ts"],
    ["src/rest/routes.ts", "../generated/prisma/client.ts"],
    ["src/rest/execute.ts", "../db/errors.ts"],
    ["src/rest/routes.ts", "@prisma/client"],
    // The compression workflow below its callers, the job queue and worker below the service.
    ["src/compress/workflow/service.ts", "../api/routes.ts"],
    ["src/compress/workflow/service.ts", "../../dashboard/routes.ts"],
    ["src/compress/workflow/service.ts", "koa"],
    ["src/compress/workflow/workspace.ts", "@koa/router"],
    ["src/compress/workflow/produce.ts", "../async-jobs/worker.ts"],
    ["src/compress/async-jobs/worker.ts", "../workflow/service.ts"],
    ["src/compress/async-jobs/worker.ts", "../api/service.ts"],
    ["src/compress/async-jobs/queue.ts", "../../http/errors.ts"],
    ["src/compress/async-jobs/resource.ts", "koa"],
    ["src/compress/compression.ts", "./api/routes.ts"],
    ["src/compress/maintenance.ts", "./workflow/service.ts"],
    ["src/compress/boot.ts", "../http/drain.ts"],
    ["src/dashboard/routes.ts", "../compress/api/routes.ts"],
    ["src/dashboard/routes.ts", "../compress/api/jobs-and-uploads.ts"],
    ["src/mcp/tools.ts", "../db/database.ts"],
    ["src/mcp/server.ts", "../generated/prisma/client.ts"],
    ["src/mcp/tools.ts", "../graphql/types/job/page.ts"],
    ["src/mcp/http.ts", "@prisma/client"],
  ])("%s may not import %s", async (file, target) => {
    const messages = await restrictedImports(file, `import { thing } from "${target}";\nexport { thing };\n`);
    expect(messages).toHaveLength(1);
  });

  it.each([
    ["src/auth/authenticate.ts", "../errors.ts"],
    ["src/graphql/yoga.ts", "../errors.ts"],
    ["src/compress/api/routes.ts", "../../http/errors.ts"],
    ["src/compress/isolation/child.ts", "../../pdf/index.ts"],
    ["src/pdf/compress.ts", "./structure/load.ts"],
    ["src/pdf/images/optimise.ts", "../streams/filters.ts"],
    ["src/pdf/images/optimise.ts", "@cantoo/pdf-lib"],
    ["src/pdf/fonts/harfbuzz.ts", "node:fs/promises"],
    ["src/compress/api/routes.ts", "../workflow/service.ts"],
    ["src/compress/workflow/service.ts", "../async-jobs/queue.ts"],
    ["src/compress/workflow/upload.ts", "../../http/body-timeout.ts"],
    ["src/compress/async-jobs/worker.ts", "../workflow/produce.ts"],
    ["src/compress/maintenance.ts", "./workflow/workspace.ts"],
    ["src/dashboard/routes.ts", "../compress/workflow/service.ts"],
    ["src/http/health.ts", "../db/errors.ts"],
    ["src/http/health.ts", "./drain.ts"],
    ["src/rest/execute.ts", "../graphql/context.ts"],
    ["src/lifecycle.ts", "./http/server.ts"],
    ["src/mcp/tools.ts", "../rest/routes.ts"],
    ["src/mcp/http.ts", "../http/origin.ts"],
  ])("%s may import %s", async (file, target) => {
    const messages = await restrictedImports(file, `import { thing } from "${target}";\nexport { thing };\n`);
    expect(messages).toEqual([]);
  });

  // Lints the whole tree with type information: tens of seconds, more on a loaded machine.
  it("holds for every file of src", async () => {
    const results = await eslint.lintFiles(["src"]);
    const violations = results.flatMap((result) =>
      result.messages
        .filter((m) => m.ruleId === "no-restricted-imports")
        .map((m) => `${path.relative(root, result.filePath)}:${m.line} ${m.message}`),
    );
    expect(violations).toEqual([]);
  }, 180_000);
});
