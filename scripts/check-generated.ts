// Fails when a committed generated file is stale: the printed SDL in schema/ (from the Pothos
// schema), the typed documents in src/rest/gql/ (from codegen.ts), or the typed client's types in
// clients/typescript/src/generated/ (from the two OpenAPI documents: scripts/generate-client.ts), or
// the engine's WebAssembly (src/pdf/images/check-wasm.ts, src/pdf/codecs/jbig2-wasm.ts:
// scripts/build-wasm.ts), or
// .env.example (from the environment parser: scripts/print-env-example.ts).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { generate } from "@graphql-codegen/cli";
import codegenConfig from "../codegen.ts";
import { wasmModules, wasmModuleText } from "./build-wasm.ts";
import { envExample, envExampleFile } from "./print-env-example.ts";
import { generatedClientFiles } from "./generate-client.ts";
import { printedSchema, schemaFile } from "./print-schema.ts";

const stale: string[] = [];
const root = path.resolve(import.meta.dirname, "..");
const onDisk = (file: string) => readFile(path.resolve(root, file), "utf8").catch(() => null);

if ((await onDisk(schemaFile)) !== printedSchema()) stale.push(path.relative(root, schemaFile));
for (const module of wasmModules) {
  if ((await onDisk(module.file)) !== (await wasmModuleText(module))) stale.push(path.relative(root, module.file));
}
if ((await onDisk(envExampleFile)) !== envExample()) stale.push(path.relative(root, envExampleFile));

const outputs = (await generate({ ...codegenConfig, cwd: root, silent: true }, false)) as {
  filename: string;
  content: string;
}[];
for (const output of [...outputs, ...(await generatedClientFiles())]) {
  if ((await onDisk(output.filename)) !== output.content) stale.push(output.filename);
}

if (stale.length) {
  console.error(`Stale generated files (run npm run generate):\n  ${stale.join("\n  ")}`);
  process.exit(1);
}
console.log("generated files are fresh");
