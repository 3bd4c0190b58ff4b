// The parser's walk over a cross-reference table (src/pdf/structure/xref-table.ts) against pdf-lib's
// maybeParseCrossRefSection, whose section the parser drops: on fuzzed tables (subsection headers,
// entries, comments, stray bytes, a table cut short), the parser left at the same offset, line and
// column, or the same error.
import { PDFParser } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pdfLibCrossRefSection } from "../../../src/pdf/structure/xref-table.ts";
import "../../../src/pdf/structure/xref-table.ts";

type Bytes = { idx: number; line: number; column: number };
type Parser = { bytes: Bytes; maybeParseCrossRefSection(): unknown };

function outcome(walk: (parser: Parser) => unknown, data: Uint8Array) {
  const parser = PDFParser.forBytesWithOptions(data) as unknown as Parser;
  const at = () => ({ idx: parser.bytes.idx, line: parser.bytes.line, column: parser.bytes.column });
  try {
    walk(parser);
    return { at: at() };
  } catch (error) {
    return { error: String(error), at: at() };
  }
}

const piece = fc.oneof(
  fc.constantFrom("xref", "xref\n", "0 ", "12 ", "65535 ", "0000000000 ", "00017 ", "n", "f", "x", " ", "\n", "\r\n"),
  fc.constantFrom("% a comment\n", "trailer", "<<", "1 0 obj", "9".repeat(400), " n \n", " f\r\n"),
  fc.integer({ min: 0, max: 99999 }).map((n) => `${n} `),
);

const table = fc.tuple(fc.boolean(), fc.array(piece, { maxLength: 40 })).map(([header, pieces]) => {
  const text = (header ? "xref\n" : "") + pieces.join("");
  return new Uint8Array(Buffer.from(text, "latin1"));
});

describe("xref-table", () => {
  it("leaves the parser where pdf-lib's walk leaves it", () => {
    fc.assert(
      fc.property(table, (data) => {
        const ours = outcome((parser) => parser.maybeParseCrossRefSection(), data);
        const theirs = outcome((parser) => pdfLibCrossRefSection.call(parser as never), data);
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 2000 },
    );
  });

  it("walks a whole table of free and used entries", () => {
    const text = "xref\n0 3\n0000000000 65535 f\r\n0000000017 00000 n\r\n0000000000 65535 f\r\ntrailer";
    const data = new Uint8Array(Buffer.from(text, "latin1"));
    const ours = outcome((parser) => parser.maybeParseCrossRefSection(), data);
    expect(ours.at.idx).toBe(text.indexOf("trailer"));
    expect(ours).toEqual(outcome((parser) => pdfLibCrossRefSection.call(parser as never), data));
  });
});
