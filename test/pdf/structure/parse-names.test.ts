// The parser's names and references (src/pdf/structure/parse-names.ts) against pdf-lib's own: the
// same pooled object for every number and text, and parseName leaving the parser where pdf-lib's
// does, with the same name or the same error, on fuzzed bytes full of escapes and delimiters.
import { PDFContext, PDFName, PDFObjectParser, PDFRef } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nameOf, pdfLibNameOf, pdfLibParseName, pdfLibRefOf, refOf } from "../../../src/pdf/structure/parse-names.ts";

interface Stream {
  idx: number;
  line: number;
  column: number;
}
type Parser = { bytes: Stream; parseName(): PDFName };

function parserAt(data: Uint8Array, from: number): Parser {
  const parser = PDFObjectParser.forBytes(data, PDFContext.create()) as unknown as Parser & {
    bytes: { moveTo(offset: number): void };
  };
  parser.bytes.moveTo(from);
  return parser;
}

type Outcome = { name: PDFName; at: Stream } | { error: string; at: Stream };

function outcome(parse: (parser: Parser) => PDFName, data: Uint8Array, from: number): Outcome {
  const parser = parserAt(data, from);
  const at = () => ({ idx: parser.bytes.idx, line: parser.bytes.line, column: parser.bytes.column });
  try {
    return { name: parse(parser), at: at() };
  } catch (error) {
    return { error: (error as Error).message, at: at() };
  }
}

const PIECES = ["/", "#", "#20", "#2f", "#2F", "#4A", "#4a", "#g1", "#2", " ", "\n", "\r", "\0", "(", ")", "<", ">"];
const MORE = ["[", "]", "{", "}", "%", "Type", "StructElem", "K", "é", "\u00ff", "\u0080", "a#", "P"];
const fragments = fc.array(fc.oneof(fc.constantFrom(...PIECES, ...MORE), fc.string({ maxLength: 3 })), {
  maxLength: 20,
});

describe("the parser's names and references", () => {
  it("reads a name as pdf-lib does: the same pooled name, error and position", () => {
    fc.assert(
      fc.property(fragments, fc.nat(), (parts, at) => {
        const data = Buffer.from(parts.join(""), "latin1");
        const from = data.length === 0 ? 0 : at % (data.length + 1);
        const ours = outcome((parser) => parser.parseName(), data, from);
        const theirs = outcome((parser) => pdfLibParseName.call(parser as never), data, from);
        expect(ours).toEqual(theirs);
        if ("name" in ours && "name" in theirs) expect(ours.name).toBe(theirs.name);
      }),
      { numRuns: 3000 },
    );
  });

  it("reads a name from a name's start to the next white-space or delimiter", () => {
    const data = Buffer.from("/StructElem/K 1 /A#20B\n", "latin1");
    const parser = parserAt(data, 0);
    expect(parser.parseName()).toBe(PDFName.of("StructElem"));
    expect(parser.parseName()).toBe(PDFName.of("K"));
    parser.bytes.idx = 16;
    expect(parser.parseName().decodeText()).toBe("A B");
    expect(parser.bytes.idx).toBe(22);
  });

  it("gives the names pdf-lib pools, escaped or not", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...PIECES, ...MORE)), (text) => {
        expect(nameOf(text)).toBe(pdfLibNameOf(text));
        expect(PDFName.of(text)).toBe(pdfLibNameOf(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives the references pdf-lib pools, of any number and generation", () => {
    const numbers = [0, 1, 2, 17, 9769, 65535, (1 << 24) - 1, 1 << 24, 2 ** 31, -1, -0, 1.5, Number.NaN];
    for (const objectNumber of numbers) {
      for (const generation of [0, 1, 65535, undefined]) {
        expect(refOf(objectNumber, generation)).toBe(pdfLibRefOf(objectNumber, generation));
        expect(PDFRef.of(objectNumber, generation)).toBe(pdfLibRefOf(objectNumber, generation));
      }
    }
    fc.assert(
      fc.property(fc.nat(), fc.nat({ max: 3 }), (objectNumber, generation) => {
        expect(refOf(objectNumber, generation)).toBe(pdfLibRefOf(objectNumber, generation));
      }),
      { numRuns: 2000 },
    );
  });
});
