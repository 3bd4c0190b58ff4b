// Rendering and text checks through poppler for the engine tests: whether pdftoppm and pdftotext
// are installed, and a scratch folder in which documents are written, rendered at 100 dpi and read.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";

export function hasPoppler(): boolean {
  try {
    execFileSync("pdftoppm", ["-v"], { stdio: "ignore" });
    execFileSync("pdftotext", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface PopplerScratch {
  /** The scratch folder. */
  dir: string;
  /** Writes bytes to a new file of the folder; its path. */
  write: (bytes: Uint8Array) => string;
  /** pdftotext's text of the whole document (layout kept). */
  textOf: (bytes: Uint8Array) => string;
  /** Every page rendered by pdftoppm (at 100 dpi unless told), as raw PPM bytes. */
  pixelsOf: (bytes: Uint8Array, dpi?: number) => Buffer[];
  /** Text and pixels of the output are those of the input. */
  expectSameLook: (input: Uint8Array, output: Uint8Array) => void;
  remove: () => void;
}

export function popplerScratch(name: string): PopplerScratch {
  const scratch = mkdtempSync(path.join(tmpdir(), `${name}-`));
  let files = 0;
  const write = (bytes: Uint8Array) => {
    const file = path.join(scratch, `f${++files}.pdf`);
    writeFileSync(file, bytes);
    return file;
  };
  const textOf = (bytes: Uint8Array) => execFileSync("pdftotext", ["-layout", write(bytes), "-"], { encoding: "utf8" });
  const pixelsOf = (bytes: Uint8Array, dpi = 100) => {
    const prefix = path.join(scratch, `r${++files}`);
    execFileSync("pdftoppm", ["-r", String(dpi), write(bytes), prefix]);
    const base = path.basename(prefix);
    return readdirSync(scratch)
      .filter((file) => file.startsWith(`${base}-`))
      .sort()
      .map((file) => readFileSync(path.join(scratch, file)));
  };
  return {
    dir: scratch,
    write,
    textOf,
    pixelsOf,
    expectSameLook: (input, output) => {
      expect(textOf(output)).toBe(textOf(input));
      const before = pixelsOf(input);
      const after = pixelsOf(output);
      expect(after.length).toBe(before.length);
      for (let i = 0; i < before.length; i++) expect(after[i]!.equals(before[i]!), `page ${i + 1} pixels`).toBe(true);
    },
    remove: () => rmSync(scratch, { recursive: true, force: true }),
  };
}
