// Typed documents for the REST layer: every GraphQL operation the /api/v1 routes run is written
// next to its route with graphql(), and its result and variable types come from here.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "schema/schema.graphql",
  documents: ["src/rest/**/*.ts", "!src/rest/gql/**"],
  // Node runs these files with type stripping, which needs the .ts in relative imports.
  importExtension: ".ts",
  ignoreNoDocuments: false,
  generates: {
    "src/rest/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        enumsAsTypes: true,
        useTypeImports: true,
        // Operations run in-process, so scalars arrive unserialised.
        scalars: { DateTime: { input: "Date | string", output: "Date" } },
      },
    },
  },
};

export default config;
