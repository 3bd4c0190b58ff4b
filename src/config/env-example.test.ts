// .env.example lists every variable the environment parser reads, so that a newcomer sees them all
// in one place; this keeps it from going stale when a variable is added or removed.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema } from "./env.ts";

const example = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
const listed = [...example.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map(([, name]) => name);

describe(".env.example", () => {
  it("names every variable the parser reads, and no other", () => {
    expect([...listed].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });
});
