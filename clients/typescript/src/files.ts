// A file on disk as a File (Node only): its name kept, so the result is named after it
// (`scan.pdf` → `scan-compressed.pdf`), and its bytes read from disk as the upload is sent, as
// `fs.openAsBlob` does, never held in memory. node:fs is imported by a name held in a variable, when
// called: the rest of the package still loads in a browser (and bundlers leave it alone), and the
// package builds without Node's type definitions.
type NodeFs = { openAsBlob(path: string, options?: { type?: string }): Promise<Blob> };
const NODE_FS = "node:fs";

export async function openFile(filePath: string, type = "application/pdf"): Promise<File> {
  const fs = (await import(NODE_FS)) as NodeFs;
  const name = filePath.split(/[/\\]/).pop() || "document.pdf";
  // A File made of a Blob refers to that Blob's bytes; nothing is copied.
  return new File([await fs.openAsBlob(filePath, { type })], name, { type });
}
