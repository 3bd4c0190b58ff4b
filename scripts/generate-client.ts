// Writes the typed client's types (clients/typescript/src/generated/) from the two OpenAPI
// documents the service serves, with openapi-typescript. The documents are built by the functions
// the routes call to serve them (src/rest/docs.ts, src/compress/api/routes.ts), so no server and
// no database are needed, and a new parameter or route reaches the client by running this alone.
// `npm run generate:check` fails when the committed files are stale; test/client/ also checks them
// against the documents a running service answers.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import prettier from "prettier";
import ts from "typescript";
import { buildCompressOpenApi } from "../src/compress/api/openapi.ts";
import { buildOpenApiDocument } from "../src/rest/openapi.ts";

const root = path.resolve(import.meta.dirname, "..");
const generatedDir = "clients/typescript/src/generated";

/** The server URL inside a document does not reach the types; any origin will do. */
const ORIGIN = "http://localhost:3000";

export const clientDocuments = () => [
  { filename: `${generatedDir}/catalog.ts`, document: buildOpenApiDocument(`${ORIGIN}/api/v1`) },
  { filename: `${generatedDir}/compression.ts`, document: buildCompressOpenApi(ORIGIN) },
];

const BLOB = ts.factory.createTypeReferenceNode("Blob");

/** The TypeScript of one document, formatted as the repository's prettier would write it. */
export async function clientTypes(document: object, filename: string): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, {
    silent: true,
    // A multipart file field (`format: binary`) is sent as a Blob (a File, or fs.openAsBlob).
    transform: (schema) => (schema.format === "binary" ? BLOB : undefined),
  });
  const header = `${COMMENT_HEADER.trimEnd()}\n// Regenerate with \`npm run generate\` (scripts/generate-client.ts).\n\n`;
  const source = `${header}${astToString(ast)}`;
  const config = await prettier.resolveConfig(path.resolve(root, filename));
  return prettier.format(source, { ...config, filepath: filename });
}

export async function generatedClientFiles(): Promise<{ filename: string; content: string }[]> {
  return Promise.all(
    clientDocuments().map(async ({ filename, document }) => ({
      filename,
      content: await clientTypes(document, filename),
    })),
  );
}

if (import.meta.main) {
  for (const { filename, content } of await generatedClientFiles()) {
    await writeFile(path.resolve(root, filename), content);
    console.log(`wrote ${filename}`);
  }
}
