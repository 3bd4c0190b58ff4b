import path from "node:path";
import js from "@eslint/js";
import { builtinRules } from "eslint/use-at-your-own-risk";
import tseslint from "typescript-eslint";

// Layers below the HTTP plumbing: they never import src/http.
const httpAboveFeatures = {
  regex: "^(\\.\\./)+http/",
  message:
    "The HTTP layer sits above auth, the read model, the compression isolation, storage, job queue and lifecycle: use src/errors.ts, or have the caller pass it in.",
};

// What the compression workflow and everything below it never import: the routes, the dashboard, Koa.
const aboveTheWorkflow = [
  {
    regex: "^\\.{1,2}/(\\.\\./)*(api|dashboard)/",
    message:
      "The compression API's routes (compress/api) and the dashboard call the workflow (compress/workflow); nothing below them imports them.",
  },
  {
    regex: "^(koa|@koa/.*)$",
    message: "The workflow takes plain inputs (origin, signal, request id, the upload), never Koa's context.",
  },
];

// src/pdf's floors. A relative import may not climb out of src/pdf; the rule knows the specifier,
// not the file, so there is one block per folder and depth (and flat config replaces a rule's
// options, so the blocks must not overlap).
const PDF_PASSES = ["content", "fonts", "images", "ocr", "security", "structure"];
const PDF_GROUND = ["codecs", "shared", "streams"];
const outOfTheEngine = (depth) => ({
  regex: `^(\\.\\./){${depth + 1},}|^/|^src/`,
  message:
    "src/pdf is a library of its own: it imports only src/pdf, node: modules and npm packages, never the service (give it its own type, and map it in src/compress/isolation).",
});
const intoTheTop = (up) => ({
  regex: `^${up}[^/]+\\.ts$`,
  message:
    "src/pdf's top floor holds the entry points (compress, target, unlock), the report and the API: nothing below imports it (what two floors share belongs on the ground floor, src/pdf/shared).",
});
const intoPasses = (up, passes, message) => ({ regex: `^${up}(${passes.join("|")})/`, message });

function pdfImportRules() {
  const blocks = [{ files: ["src/pdf/*.ts"], patterns: [outOfTheEngine(0)] }];
  for (let depth = 1; depth <= 3; depth++) {
    const up = "(\\.\\./)".repeat(depth);
    const glob = "/*".repeat(depth - 1);
    for (const pass of PDF_PASSES) {
      const others = PDF_PASSES.filter((name) => name !== pass);
      blocks.push({
        files: [`src/pdf/${pass}${glob}/*.ts`],
        patterns: [
          outOfTheEngine(depth),
          intoTheTop(up),
          intoPasses(
            up,
            others,
            "A pass of src/pdf imports its own folder and the ground floor (shared, codecs, streams), never another pass: move what both need to the ground floor.",
          ),
        ],
      });
    }
    blocks.push({
      files: PDF_GROUND.map((room) => `src/pdf/${room}${glob}/*.ts`),
      patterns: [
        outOfTheEngine(depth),
        intoTheTop(up),
        intoPasses(
          up,
          PDF_PASSES,
          "src/pdf's ground floor (shared, codecs, streams) serves the passes and imports none of them.",
        ),
      ],
    });
  }
  return blocks.map(({ files, patterns }) => ({
    files,
    rules: { "no-restricted-imports": ["error", { patterns }] },
  }));
}

// The engine's functions longer than the cap (80 lines) when the cap came to src/pdf (issue 41),
// "file: name" as max-lines-per-function names them. The list only shrinks: a function shortened
// below the cap is taken off (test/architecture/function-length.test.ts fails on a name that is no
// longer too long), and no function joins it.
export const PDF_LONG_FUNCTIONS = [
  "src/pdf/codecs/jpeg.ts: parse",
  "src/pdf/content/compact.ts: operator",
  "src/pdf/images/layers.ts: segment",
  "src/pdf/images/optimise.ts: optimiseImages",
  "src/pdf/structure/dedup.ts: mergeDuplicates",
];
const FUNCTION_CAP = { max: 80, skipBlankLines: true, skipComments: true };

/** max-lines-per-function, quiet about the functions of PDF_LONG_FUNCTIONS. */
const functionLength = (() => {
  const rule = builtinRules.get("max-lines-per-function");
  const excepted = new Set(PDF_LONG_FUNCTIONS);
  return {
    meta: rule.meta,
    create(context) {
      const file = path.relative(import.meta.dirname, context.filename);
      const report = (descriptor) => {
        const name = /'([^']+)'/.exec(descriptor.data?.name ?? "")?.[1];
        if (!excepted.has(`${file}: ${name}`)) context.report(descriptor);
      };
      return rule.create({ options: context.options, sourceCode: context.sourceCode, report });
    },
  };
})();

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "src/generated/",
      "src/rest/gql/",
      "clients/typescript/src/generated/",
      "clients/typescript/dist/",
      ".data/",
      "tmp/",
      "coverage/",
      "docs/research/",
      // AssemblyScript (WebAssembly's types, its own tsconfig): compiled and checked by asc.
      "src/pdf/images/assembly/",
      "src/pdf/codecs/assembly/",
      "src/pdf/streams/assembly/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // Only src/config reads the environment; everything else receives a typed Config.
    files: ["src/**/*.ts"],
    ignores: ["src/config/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through src/config/env.ts." },
      ],
    },
  },
  // The direction of dependencies (docs/ARCHITECTURE.md), as lint errors; test/architecture/import-rules.test.ts feeds
  // each rule a wrong import. Each file set below has one rule of its own (flat config replaces a
  // rule's options, it does not merge them, so the sets must not overlap).
  {
    files: ["src/auth/**/*.ts", "src/graphql/**/*.ts", "src/compress/{isolation,storage}/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [httpAboveFeatures] }],
    },
  },
  {
    // The compression workflow (compress/workflow: the service, the workspace, run and store) sits
    // below the routes and the dashboard, which call it; the queue and the worker of asynchronous
    // jobs (compress/async-jobs) and the lifecycle's own modules (compress/*.ts) sit below the
    // service, which queues into them: the worker reaches the workflow through produce.ts only.
    files: ["src/compress/workflow/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...aboveTheWorkflow,
            {
              regex: "^\\.\\./async-jobs/worker\\.ts$",
              message: "The worker runs jobs through the workflow (produce.ts); the workflow never imports it.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/compress/async-jobs/**/*.ts", "src/compress/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            httpAboveFeatures,
            ...aboveTheWorkflow,
            {
              regex: "^\\.{1,2}/(\\.\\./)*workflow/service\\.ts$",
              message:
                "The service sits above the job queue, the worker and the lifecycle of a compression: a job runs through workflow/produce.ts.",
            },
          ],
        },
      ],
    },
  },
  {
    // The compression API's routes read the request and answer; the rows are the workflow's and
    // auth's (compress/workflow, src/auth), never touched from here (issue 41).
    files: ["src/compress/api/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(db|generated/prisma)/|^@prisma/|^pg$",
              message:
                "compress/api hands plain inputs to the workflow (compress/workflow) and auth, which hold the database calls; it never imports Prisma or src/db.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/dashboard/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+compress/api/",
              message:
                "The dashboard reaches compression through the service (compress/workflow/service.ts), never the API's routes.",
            },
          ],
        },
      ],
    },
  },
  // src/pdf, the PDF engine, is a library on the ground floor: it imports its own modules, node: and npm
  // packages, never the service (errors, config, logger, compress, http…). Inside it, one way down
  // (docs/engine.md, "The rooms"): the entry points and the API on top (src/pdf/*.ts), the passes
  // below (one folder each, none importing another's), the shared rooms on the ground floor (they
  // import no pass and no entry point). test/architecture/import-rules.test.ts checks for circles.
  ...pdfImportRules(),
  {
    files: ["src/http/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(auth|graphql|rest|compress|dashboard)/|^\\.\\./(app|main|lifecycle)\\.ts$",
              message: "src/http is plumbing under every feature: it never imports one (features import it).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/rest/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(db|generated/prisma)/|^@prisma/|^pg$",
              message: "REST runs operations of the read model (src/graphql); it never touches Prisma or src/db.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/mcp/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(db|generated/prisma|graphql)/|^@prisma/|^pg$",
              message:
                "MCP runs the REST routes' typed operations (src/rest); it never touches Prisma, src/db or the read model directly.",
            },
          ],
        },
      ],
    },
  },
  {
    // Small functions: a longer one is split into named steps with explicit inputs. The engine's
    // functions that were longer when the cap came to it are named in PDF_LONG_FUNCTIONS.
    files: ["src/**/*.ts"],
    ignores: ["**/*.test.ts"],
    plugins: { local: { rules: { "function-length": functionLength } } },
    rules: { "local/function-length": ["error", FUNCTION_CAP] },
  },
  {
    // Rooms of one job: no engine file over 800 lines (a larger one is split by what it does).
    files: ["src/pdf/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: { "max-lines": ["error", { max: 800 }] },
  },
  {
    files: ["test/**/*.ts", "**/*.test.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
    },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
);
