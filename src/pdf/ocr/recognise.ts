// Recognition: Tesseract 5's LSTM engine compiled to WebAssembly (tesseract.js), on a worker thread
// of the engine's process (so within its time and memory limits), with the traineddata of the npm
// packages @tesseract.js-data/<code> ("best_int": the best models, integer-quantised). A language
// is read from its package only when a document asks for it, and nothing is fetched or cached on
// disk (tesseract-worker.ts). A reader serves one document: it is opened with its languages, reads
// page images one at a time, and is closed; a page that takes longer than its bound ends the
// worker (WebAssembly cannot be interrupted otherwise) and the reader opens a new one for the next.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { createWorker, OEM, PSM } from "tesseract.js";
import type { Worker } from "tesseract.js";
import type { OcrLanguage } from "../shared/options.ts";
import type { OcrLine } from "./text-layer.ts";

const require = createRequire(import.meta.url);

const WORKER_PATH = fileURLToPath(new URL("./tesseract-worker.ts", import.meta.url));

/** The gzipped traineddata of each language read so far (read once per process, on first use). */
const traineddata = new Map<OcrLanguage, Promise<Uint8Array>>();

function dataOf(code: OcrLanguage): Promise<Uint8Array> {
  let data = traineddata.get(code);
  if (!data) {
    const dir = require.resolve(`@tesseract.js-data/${code}/package.json`).replace(/package\.json$/, "");
    data = readFile(`${dir}4.0.0_best_int/${code}.traineddata.gz`);
    data.catch(() => traineddata.delete(code));
    traineddata.set(code, data);
  }
  return data;
}

export class OcrTimeout extends Error {}

/** A page image: an encoded image file Tesseract (Leptonica) reads: PNM, PNG, JPEG or TIFF. */
export interface PageImage {
  file: Uint8Array;
  width: number;
  height: number;
  /** Its resolution on the page (Tesseract otherwise estimates it from the text's size). */
  dpi?: number;
}

export interface Reader {
  /** The lines of words on the image (empty when none); rejects with OcrTimeout past the bound. */
  read(image: PageImage, timeoutMs: number): Promise<OcrLine[]>;
  close(): Promise<void>;
}

interface Bbox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
interface RawLine {
  bbox: Bbox;
  baseline: Bbox & { has_baseline?: boolean };
  rowAttributes?: { rowHeight?: number };
  words: { text: string; bbox: Bbox; confidence: number }[];
}

/** Words Tesseract is less sure of than this (0 to 100) are left out, as noise from pictures. */
const MIN_CONFIDENCE = 30;

function linesOf(blocks: { paragraphs: { lines: RawLine[] }[] }[] | null): OcrLine[] {
  const out: OcrLine[] = [];
  for (const block of blocks ?? []) {
    for (const paragraph of block.paragraphs) {
      for (const line of paragraph.lines) {
        const words = line.words
          .filter((word) => word.text.trim() !== "" && word.confidence >= MIN_CONFIDENCE)
          .map((word) => ({ text: word.text, box: word.bbox }));
        if (words.length === 0) continue;
        const height = line.bbox.y1 - line.bbox.y0;
        const baseline =
          line.baseline.x1 > line.baseline.x0
            ? line.baseline
            : { x0: line.bbox.x0, y0: line.bbox.y1, x1: line.bbox.x1, y1: line.bbox.y1 };
        out.push({ box: line.bbox, baseline, size: line.rowAttributes?.rowHeight || height, words });
      }
    }
  }
  return out;
}

async function startWorker(languages: readonly OcrLanguage[]): Promise<Worker> {
  const langs = await Promise.all(languages.map(async (code) => ({ code, data: await dataOf(code) })));
  // tesseract.js throws a job's failure from its message handler (an uncaught exception) unless
  // there is an errorHandler; the job's promise is rejected either way.
  const worker = await createWorker(langs, OEM.LSTM_ONLY, {
    workerPath: WORKER_PATH,
    cacheMethod: "none",
    errorHandler: () => undefined,
  });
  // Tesseract's notes ("Estimating resolution as ...") go nowhere.
  await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO, debug_file: "/dev/null" });
  return worker;
}

/** A reader of page images in these languages (Tesseract's "eng+deu": the first is tried first). */
export function openReader(languages: readonly OcrLanguage[]): Reader {
  let worker: Promise<Worker> | undefined;
  const current = () => (worker ??= startWorker(languages));
  const end = async () => {
    const w = worker;
    worker = undefined;
    if (w) await (await w.catch(() => undefined))?.terminate();
  };
  return {
    async read(image, timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new OcrTimeout(`OCR took longer than ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const recognised = (async () => {
          const w = await current();
          const dpi = image.dpi && Math.min(2400, Math.max(70, Math.round(image.dpi)));
          if (dpi) await w.setParameters({ user_defined_dpi: String(dpi) });
          const result = await w.recognize(Buffer.from(image.file), {}, { blocks: true, text: false });
          return linesOf(result.data.blocks);
        })();
        recognised.catch(() => undefined);
        return await Promise.race([recognised, expired]);
      } catch (error) {
        // A worker past its bound, or failed, is not trusted with the next page.
        await end();
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    close: end,
  };
}
