// Which files the benchmark runs on. A plain folder: every *.pdf in it. The shared corpus
// layout (<dir>/files + <dir>/MANIFEST.tsv): only the rows the API should accept (expected_api
// 200) that need no password, with their manifest category.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

export interface BenchFile {
  name: string;
  path: string;
  /** The manifest's category; "-" without a manifest. */
  category: string;
  size: number;
}

export interface Corpus {
  files: BenchFile[];
  /** How the files were chosen, for the report. */
  description: string;
}

function fromManifest(dir: string): Corpus {
  const [head, ...lines] = readFileSync(path.join(dir, "MANIFEST.tsv"), "utf8").trimEnd().split("\n");
  const columns = (head ?? "").split("\t");
  const at = (name: string) => {
    const index = columns.indexOf(name);
    if (index < 0) throw new Error(`${dir}/MANIFEST.tsv has no "${name}" column`);
    return index;
  };
  const [file, category, expected, password] = ["file", "category", "expected_api", "password"].map(at) as [
    number,
    number,
    number,
    number,
  ];
  const files: BenchFile[] = [];
  for (const line of lines) {
    const cells = line.split("\t");
    if (cells[expected] !== "200" || (cells[password] ?? "") !== "") continue;
    const name = cells[file]!;
    const filePath = path.join(dir, "files", name);
    if (!existsSync(filePath)) throw new Error(`MANIFEST.tsv lists ${name}, which is not in ${dir}/files`);
    files.push({ name, path: filePath, category: cells[category] ?? "-", size: statSync(filePath).size });
  }
  return {
    files,
    description: `${files.length} files of ${lines.length} in ${dir}/MANIFEST.tsv (expected_api 200, no password)`,
  };
}

export function listCorpus(dir: string): Corpus {
  if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
  if (existsSync(path.join(dir, "files")) && existsSync(path.join(dir, "MANIFEST.tsv"))) return fromManifest(dir);
  const files = readdirSync(dir)
    .filter((name) => name.toLowerCase().endsWith(".pdf"))
    .sort()
    .map((name) => {
      const filePath = path.join(dir, name);
      return { name, path: filePath, category: "-", size: statSync(filePath).size };
    })
    .filter((file) => statSync(file.path).isFile());
  return { files, description: `${files.length} *.pdf files in ${dir}` };
}
