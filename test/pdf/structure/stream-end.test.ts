// The search for a stream's end (src/pdf/structure/stream-end.ts) against pdf-lib's own walk: the
// same end, the same error and the parser left at the same offset, on made-up data full of the
// keywords' pieces (fuzzed) and on every stream of the corpus's files whose /Length is not a number.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { PDFContext, PDFObjectParser, PDFStreamParsingError } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findEndOfStream, pdfLibFindEndOfStream } from "../../../src/pdf/structure/stream-end.ts";
import { corpusDir } from "../fixtures.ts";

interface Bytes {
  bytes: Uint8Array;
  length: number;
  offset(): number;
  moveTo(offset: number): void;
}

/** A parser over `data` at `from`, as pdf-lib's is after a stream's `stream` keyword. */
function parserAt(data: Uint8Array, from: number): { bytes: Bytes } {
  const parser = PDFObjectParser.forBytes(data, PDFContext.create()) as unknown as { bytes: Bytes };
  parser.bytes.moveTo(from);
  return parser;
}

type Outcome = { end: number; offset: number } | { error: string; offset: number };

function outcome(find: (parser: { bytes: Bytes }) => number, data: Uint8Array, from: number): Outcome {
  const parser = parserAt(data, from);
  try {
    return { end: find(parser), offset: parser.bytes.offset() };
  } catch (error) {
    if (!(error instanceof PDFStreamParsingError)) throw error;
    return { error: error.message, offset: parser.bytes.offset() };
  }
}

const theirs = (data: Uint8Array, from: number) =>
  outcome((parser) => pdfLibFindEndOfStream.call(parser, { line: 0, column: 0, offset: 0 }), data, from);
const ours = (data: Uint8Array, from: number) =>
  outcome((parser) => findEndOfStream(parser.bytes, { line: 0, column: 0, offset: 0 }), data, from);

const corpus = corpusDir();
if (!corpus) console.log("stream-end.test.ts: skipped the corpus case, the shared corpus is absent (PDF_CORPUS_DIR).");

const PIECES = ["stream", "endstream", "end", "\r", "\n", "\r\n", "s", "e", "x", "am", "str", " ", "\0"];
const fragments = fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 4 })), { maxLength: 40 });

describe("finding a stream's end as pdf-lib does", () => {
  it("answers as pdf-lib's walk on data made of the keywords' pieces", () => {
    fc.assert(
      fc.property(fragments, fc.nat(), (parts, at) => {
        const data = Buffer.from(parts.join(""), "latin1");
        const from = data.length === 0 ? 0 : at % (data.length + 1);
        expect(ours(data, from)).toEqual(theirs(data, from));
      }),
      { numRuns: 3000 },
    );
  });

  it("answers as pdf-lib's walk on the cases its order decides", () => {
    const cases = [
      "data\r\nendstream",
      "data\rendstream",
      "data\nendstream",
      "dataendstream",
      "\r\r\nendstream",
      "\n\rendstream",
      "inner stream x endstream\nendstream",
      "streamendstream",
      "no end at all",
      "",
      "endstrea",
    ];
    for (const text of cases) {
      const data = Buffer.from(`<<>>stream\n${text} tail`, "latin1");
      for (let from = 0; from <= data.length; from++)
        expect(ours(data, from), `${text} @${from}`).toEqual(theirs(data, from));
    }
  });

  it("leaves a view's bytes around it alone", () => {
    const whole = Buffer.from("endstream|data\nendstream|endstream", "latin1");
    const view = whole.subarray(10, 25);
    expect(ours(view, 0)).toEqual(theirs(view, 0));
    expect(ours(view, 0)).toEqual({ end: 4, offset: 14 });
  });

  it.skipIf(!corpus)("finds the same ends in the corpus's files", async () => {
    const dir = path.join(corpus!, "files");
    const names = (await readdir(dir)).filter((name) => name.endsWith(".pdf"));
    let compared = 0;
    for (const name of names) {
      const data = new Uint8Array(await readFile(path.join(dir, name)));
      // pdf-lib's walk reads a byte at a time: the largest files would take most of a minute.
      if (data.length > 4_000_000) continue;
      const text = Buffer.from(data.buffer, data.byteOffset, data.length);
      // Every `stream` keyword of the file, as a parser would stand after it (and its end of line).
      for (let at = text.indexOf("stream"); at >= 0 && compared < 20_000; at = text.indexOf("stream", at + 1)) {
        if (text.subarray(at - 3, at).toString("latin1") === "end") continue;
        let from = at + 6;
        if (text[from] === 0x0d) from++;
        if (text[from] === 0x0a) from++;
        expect(ours(data, from), `${name} @${from}`).toEqual(theirs(data, from));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });
});
