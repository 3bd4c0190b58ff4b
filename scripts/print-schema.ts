// Prints the GraphQL schema to schema/schema.graphql, the committed contract that codegen and
// reviewers read. `npm run generate:check` fails when it is stale.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { printSchema } from "graphql";
import { schema } from "../src/graphql/schema.ts";

export const schemaFile = path.resolve(import.meta.dirname, "../schema/schema.graphql");
export const printedSchema = () => `${printSchema(schema)}\n`;

if (import.meta.main) {
  await writeFile(schemaFile, printedSchema());
  console.log(`wrote ${path.relative(process.cwd(), schemaFile)}`);
}
