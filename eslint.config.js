import js from "@eslint/js";
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
  // packages, never the service (errors, config, logger, compress, http…). A relative import may
  // not climb out of src/pdf: one block per depth, as the rule knows the specifier, not the file.
  ...["src/pdf/*.ts", "src/pdf/*/*.ts", "src/pdf/*/*/*.ts", "src/pdf/*/*/*/*.ts"].map((files, depth) => ({
    files: [files],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: `^(\\.\\./){${depth + 1},}|^/|^src/`,
              message:
                "src/pdf is a library of its own: it imports only src/pdf, node: modules and npm packages, never the service (give it its own type, and map it in src/compress/isolation).",
            },
          ],
        },
      ],
    },
  })),
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
    // Small functions outside the compression engine (whose passes walk PDF structures in long,
    // commented sequences): a longer one is split into named steps with explicit inputs.
    files: ["src/**/*.ts"],
    ignores: ["src/pdf/**", "**/*.test.ts"],
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] },
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
