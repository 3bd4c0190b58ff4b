// Which kind of warm process a job runs in (issue 42). The engine's lean flags (engineExecArgv:
// --optimize-for-size and a 2 MB young generation) keep the files near their memory budget
// (3 x input + 200 MB) within it, and cost small text documents 15-29 % of their CPU; V8's flags
// for speed with a 16 MB young generation (quickExecArgv) take 30-118 MiB more at the peak on
// some files, and a file's size alone does not tell which: the 0.57 MB scan_jphysiol_6p went over
// its budget with them, the 0.48 MB text_excel_warn_16p did not. What told them apart here was the
// images' pixels: a page image is decoded whole (a 600 dpi page: 34 million pixels), where text,
// fonts and vector art stay near their stored size. So a job is quick when its input is small and
// the images it declares hold few pixels in all, from a look at the file's bytes: every image
// XObject's /Width and /Height (stream dictionaries are never inside object streams, nor encrypted).
// Anything not read plainly (a /Width by reference, an unreadable file) is lean.
import { closeSync, openSync, readSync } from "node:fs";
import { isPdfRegular, isPdfWhiteSpace } from "../../pdf/index.ts";

export type JobKind = "quick" | "lean";

export interface QuickRule {
  /** Inputs larger than this are lean (their file is not read). */
  maxBytes: number;
  /** Inputs whose image XObjects hold more pixels than this in all are lean. */
  maxImagePixels: number;
}

/**
 * The rule measured on the corpus (docs/engine.md): 512 KiB, 4 million pixels of images (a page
 * scanned at 200 dpi is 3.7 million). Every file it makes quick peaked within its budget with
 * quickExecArgv (text_excel_warn_16p, 467 KiB: 148 MiB of 201); every scan is lean (the smallest,
 * scan_jbig2_globals, 42 KB, has 8.4 million). At 1 MiB the 992 KiB text_tracemonkey_14p_type1,
 * 180 small images, went over (206 MiB of 203 quick, 166 lean): the young generation's extra
 * 15-40 MiB no longer fit beside what a larger document holds.
 */
export const QUICK_RULE: QuickRule = { maxBytes: 512 * 1024, maxImagePixels: 4_000_000 };

/** A direct integer (a reference, `/Width 12 0 R`, is not one). */
const WIDTH = /\/Width\s+(\d+)(?!\s+\d+\s+R)/;
const HEIGHT = /\/Height\s+(\d+)(?!\s+\d+\s+R)/;
/** How far around /Subtype /Image its dictionary's other keys are looked for. */
const DICTIONARY_REACH = 4096;
const IMAGE = Buffer.from("/Image", "latin1");
const SUBTYPE = Buffer.from("/Subtype", "latin1");

/** Whether the name /Image at `at` is the value of a /Subtype key (a regular byte after it would
 * continue the name: /ImageB, /ImageMask are other names). */
function isImageSubtype(bytes: Buffer, at: number): boolean {
  if (isPdfRegular(bytes[at + IMAGE.length])) return false;
  let key = at;
  while (key > 0 && isPdfWhiteSpace(bytes[key - 1])) key--;
  return key >= SUBTYPE.length && bytes.subarray(key - SUBTYPE.length, key).equals(SUBTYPE);
}

/**
 * The pixels of the image XObjects a PDF declares, summed; undefined when one of them does not say
 * its size plainly. Reads the dictionary around each `/Subtype /Image`: from the object's start
 * (`obj`) or DICTIONARY_REACH before, to its stream or DICTIONARY_REACH after. The file is searched
 * as bytes and only those windows are made text (a whole file as a latin1 string took 17-38 ms for
 * 1 MB here, the search 0.1 ms).
 */
export function declaredImagePixels(bytes: Buffer): number | undefined {
  let total = 0;
  for (let at = bytes.indexOf(IMAGE); at >= 0; at = bytes.indexOf(IMAGE, at + IMAGE.length)) {
    if (!isImageSubtype(bytes, at)) continue;
    const from = Math.max(0, at - DICTIONARY_REACH);
    const text = bytes.toString("latin1", from, Math.min(bytes.length, at + DICTIONARY_REACH));
    const here = at - from;
    const start = Math.max(text.lastIndexOf("obj", here), 0);
    const streamAt = text.indexOf("stream", here);
    const dictionary = text.slice(start, streamAt >= 0 ? streamAt : text.length);
    const width = WIDTH.exec(dictionary);
    const height = HEIGHT.exec(dictionary);
    if (!width || !height) return undefined;
    total += Number(width[1]) * Number(height[1]);
  }
  return total;
}

/**
 * The kind of process for an input of `bytes` bytes at `inputPath`, by `rule`. Synchronous, as the
 * runner's choice of a process is (a slot is taken in the same turn as the job is accepted): at
 * most `rule.maxBytes` read, and searched as bytes.
 */
export function jobKindOf(inputPath: string, bytes: number, rule: QuickRule): JobKind {
  if (bytes > rule.maxBytes || bytes <= 0) return "lean";
  let content: Buffer;
  try {
    const file = openSync(inputPath, "r");
    try {
      const buffer = Buffer.allocUnsafe(bytes);
      content = buffer.subarray(0, readSync(file, buffer, 0, bytes, 0));
    } finally {
      closeSync(file);
    }
  } catch {
    return "lean"; // the engine will say what is wrong with it
  }
  const pixels = declaredImagePixels(content);
  return pixels !== undefined && pixels <= rule.maxImagePixels ? "quick" : "lean";
}
