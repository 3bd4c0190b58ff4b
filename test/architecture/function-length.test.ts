// No engine file over 800 lines (max-lines), and the 80-line cap on functions (eslint.config.js, local/function-length) covers src/pdf, with the
// engine's long functions of the day named in PDF_LONG_FUNCTIONS: that list must be exactly the
// functions still over the cap (one shortened comes off it), and a function not on it is held.
import path from "node:path";
import { ESLint } from "eslint";
import tseslint from "typescript-eslint";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const configFile = path.join(root, "eslint.config.js");
const { PDF_LONG_FUNCTIONS } = (await import(configFile)) as { PDF_LONG_FUNCTIONS: string[] };
const eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });

/** A function of `lines` statements. */
const longFunction = (name: string, lines: number) =>
  `export function ${name}(): number {\n  let total = 0;\n${"  total += 1;\n".repeat(lines)}  return total;\n}\n`;

async function lengthMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === "local/function-length").map((m) => m.message);
}

describe("the function cap over src/pdf", () => {
  it("holds a new long function of the engine", async () => {
    const messages = await lengthMessages("src/pdf/images/optimise.ts", longFunction("somethingNew", 90));
    expect(messages).toEqual([expect.stringMatching(/somethingNew' has too many lines \(94\)/)]);
  });

  it("lets a listed function be, in its own file only", async () => {
    expect(await lengthMessages("src/pdf/codecs/jpeg.ts", longFunction("parse", 90))).toEqual([]);
    expect(await lengthMessages("src/pdf/codecs/jbig2.ts", longFunction("parse", 90))).toHaveLength(1);
  });

  it("holds an engine file over 800 lines", async () => {
    const [result] = await eslint.lintText("export const x = 1;\n".repeat(801), {
      filePath: path.join(root, "src/pdf/images/optimise.ts"),
    });
    expect(result?.messages.map((m) => m.ruleId)).toEqual(["max-lines"]);
  });

  it("lists exactly the engine's functions over the cap", async () => {
    const plain = new ESLint({
      cwd: root,
      overrideConfigFile: true,
      overrideConfig: [
        {
          files: ["**/*.ts"],
          languageOptions: { parser: tseslint.parser },
          rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] },
        },
      ],
    });
    const results = await plain.lintFiles(["src/pdf/**/*.ts"]);
    const long = results.flatMap((result) =>
      result.messages.map((m) => `${path.relative(root, result.filePath)}: ${/'([^']+)'/.exec(m.message)?.[1]}`),
    );
    expect(long.sort()).toEqual([...PDF_LONG_FUNCTIONS].sort());
  }, 120_000);
});
