import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
      "src/compress/engine/assembly/",
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
    files: ["src/auth/**/*.ts", "src/graphql/**/*.ts", "src/compress/{engine,isolation,storage}/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+http/",
              message:
                "The HTTP layer sits above auth, the read model and the compression engine, isolation and storage: use src/errors.ts, or have the caller pass it in.",
            },
          ],
        },
      ],
    },
  },
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
    // Small functions outside the compression engine (whose passes walk PDF structures in long,
    // commented sequences): a longer one is split into named steps with explicit inputs.
    files: ["src/**/*.ts"],
    ignores: ["src/compress/engine/**", "**/*.test.ts"],
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
