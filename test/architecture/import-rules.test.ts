// The direction of dependencies is a lint error, not a paragraph: each forbidden direction of
// docs/ARCHITECTURE.md, written into a real file of the layer, must fail eslint.config.js's
// no-restricted-imports, an allowed import beside it must pass, and the tree has no violation.
import { readdirSync, readFileSync } from "node:fs";
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
    // Inside the engine: no pass imports an entry point or another pass; the ground floor no pass.
    ["src/pdf/images/optimise.ts", "../compress.ts"],
    ["src/pdf/security/active-content.ts", "../unlock.ts"],
    ["src/pdf/structure/writer.ts", "../report.ts"],
    ["src/pdf/content/grayscale.ts", "../images/grayscale.ts"],
    ["src/pdf/fonts/type1.ts", "../structure/xref.ts"],
    ["src/pdf/fonts/cff/read.ts", "../../content/compact.ts"],
    ["src/pdf/streams/recompress.ts", "../images/codecs.ts"],
    ["src/pdf/shared/placement.ts", "../content/compact.ts"],
    ["src/pdf/shared/syntax.ts", "../index.ts"],
    ["src/pdf/codecs/jpeg.ts", "../structure/load.ts"],
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
    ["src/compress/api/routes.ts", "../../generated/prisma/client.ts"],
    ["src/compress/api/compressions.ts", "../../db/database.ts"],
    ["src/compress/api/mcp.ts", "@prisma/client"],
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
    ["src/pdf/unlock.ts", "./structure/save.ts"],
    ["src/pdf/target.ts", "./report.ts"],
    ["src/pdf/images/optimise.ts", "../streams/filters.ts"],
    ["src/pdf/images/recode.ts", "../streams/recompress.ts"],
    ["src/pdf/content/compact.ts", "../shared/syntax.ts"],
    ["src/pdf/streams/recompress.ts", "../codecs/jpeg.ts"],
    ["src/pdf/shared/placement.ts", "../streams/filters.ts"],
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

// src/pdf's floors (eslint.config.js): every folder is a pass or a room of the ground floor, so
// that every file has its rule; and no import circle, which a rule on one specifier cannot see.
const PDF_FOLDERS = ["codecs", "content", "fonts", "images", "ocr", "security", "shared", "streams", "structure"];
const pdfRoot = path.join(root, "src/pdf");

/** Every .ts file of src/pdf (tests and AssemblyScript aside), with the src/pdf files it imports. */
function pdfImportGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(pdfRoot, { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.includes("assembly/"),
  );
  for (const file of files) {
    const code = readFileSync(path.join(pdfRoot, file), "utf8");
    const specifiers = [...code.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => m[1]!);
    graph.set(
      file,
      specifiers.map((specifier) =>
        path.relative(pdfRoot, path.resolve(path.dirname(path.join(pdfRoot, file)), specifier)),
      ),
    );
  }
  return graph;
}

/** The circles of the graph, each as the files around it. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      found.push([...stack.slice(stack.indexOf(file)), file]);
      return;
    }
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe("src/pdf's floors", () => {
  it("has no folder outside them", () => {
    const folders = readdirSync(pdfRoot, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(folders.map((entry) => entry.name).sort()).toEqual(PDF_FOLDERS);
  });

  it("has no import circle", () => {
    expect(circles(pdfImportGraph())).toEqual([]);
  });

  it("finds a circle where there is one", () => {
    const graph = new Map([
      ["compress.ts", ["target.ts", "images/optimise.ts"]],
      ["target.ts", ["compress.ts"]],
      ["images/optimise.ts", []],
    ]);
    expect(circles(graph)).toEqual([["compress.ts", "target.ts", "compress.ts"]]);
  });
});
