// Writes .env.example: every variable the environment parser (src/config/env.ts) reads, with its
// default, so that a newcomer sees them all in one place. Generated from the parser's schema, so
// it cannot go stale (npm run generate:check fails when it is).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { envSchema } from "../src/config/env.ts";

export const envExampleFile = path.resolve(import.meta.dirname, "../.env.example");

const HEADER = `# Every variable the service reads, with its default: generated from src/config/env.ts (the one
# reader, and the reference) by npm run generate. docs/configuration.md explains each. Nothing here is
# needed for npm start: unset, the service runs on its embedded defaults. The service reads the
# process environment; copy this to .env only for tooling that loads one.
`;

interface FieldDefinition {
  type: string;
  defaultValue?: unknown;
}

function defaultOf(field: unknown): string {
  const definition = (field as { def: FieldDefinition }).def;
  if (definition.type !== "default") return "";
  const value: unknown =
    typeof definition.defaultValue === "function"
      ? (definition.defaultValue as () => unknown)()
      : definition.defaultValue;
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function envExample(): string {
  const lines = Object.entries(envSchema.shape).map(([name, field]) => `# ${name}=${defaultOf(field)}`);
  return `${HEADER}\n${lines.join("\n")}\n`;
}

if (import.meta.main) await writeFile(envExampleFile, envExample());
