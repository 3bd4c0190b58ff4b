// The parser's numbers (src/pdf/structure/parse-numbers.ts) against pdf-lib's own: parseRawNumber
// giving the same value (or the same error) and leaving the parser where pdf-lib's does, on fuzzed
// bytes full of signs, periods and digits; PDFNumber.of the same value and text as pdf-lib's.
import { PDFContext, PDFNumber, PDFObjectParser } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pdfLibNumberOf, pdfLibParseRawNumber } from "../../../src/pdf/structure/parse-numbers.ts";

interface Stream {
  idx: number;
  line: number;
  column: number;
}
type Parser = { bytes: Stream; parseRawNumber(): number };

function parserAt(data: Uint8Array, from: number): Parser {
  const parser = PDFObjectParser.forBytes(data, PDFContext.create()) as unknown as Parser & {
    bytes: { moveTo(offset: number): void };
  };
  parser.bytes.moveTo(from);
  return parser;
}

type Outcome = { value: number; at: Stream } | { error: string; at: Stream };

function outcome(parse: (parser: Parser) => number, data: Uint8Array, from: number): Outcome {
  const parser = parserAt(data, from);
  const at = () => ({ idx: parser.bytes.idx, line: parser.bytes.line, column: parser.bytes.column });
  try {
    return { value: parse(parser), at: at() };
  } catch (error) {
    return { error: (error as Error).message, at: at() };
  }
}

const PIECES = ["+", "-", ".", "0", "1", "9", "00", "12345", "99999999", "0.5", " ", "\n", "/", "R", "e", "]"];
const fragments = fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 2 })), { maxLength: 14 });

const same = (ours: Outcome, theirs: Outcome) => {
  expect(ours).toEqual(theirs);
  // toEqual takes -0 for 0: the sign of a zero is part of the value.
  if ("value" in ours && "value" in theirs) expect(Object.is(ours.value, theirs.value)).toBe(true);
};

describe("the parser's numbers", () => {
  it("reads a number as pdf-lib does: the same value, error and position", () => {
    fc.assert(
      fc.property(fragments, fc.nat(), (parts, at) => {
        const data = Buffer.from(parts.join(""), "latin1");
        const from = data.length === 0 ? 0 : at % (data.length + 1);
        same(
          outcome((parser) => parser.parseRawNumber(), data, from),
          outcome((parser) => pdfLibParseRawNumber.call(parser as never), data, from),
        );
      }),
      { numRuns: 5000 },
    );
  });

  it("reads decimals of up to 15 digits and more as pdf-lib does", () => {
    const decimal = fc
      .tuple(fc.constantFrom("", "-", "+"), fc.stringMatching(/^[0-9]{0,18}$/), fc.stringMatching(/^[0-9]{0,18}$/))
      .map(([sign, whole, fraction]) => `${sign}${whole}.${fraction} `);
    fc.assert(
      fc.property(decimal, (text) => {
        const data = Buffer.from(text, "latin1");
        same(
          outcome((parser) => parser.parseRawNumber(), data, 0),
          outcome((parser) => pdfLibParseRawNumber.call(parser as never), data, 0),
        );
      }),
      { numRuns: 5000 },
    );
    const data = Buffer.from("612.0 -0 -.5 0.1 123456789012345 1234567890123456 5.-", "latin1");
    const parser = parserAt(data, 0);
    const values = [];
    for (let i = 0; i < 7; i++) {
      values.push(parser.parseRawNumber());
      parser.bytes.idx++;
    }
    expect(values).toEqual([612, -0, -0.5, 0.1, 123456789012345, 1234567890123456, 5]);
    expect(Object.is(values[1], -0)).toBe(true);
  });

  it("makes the numbers pdf-lib makes, with the same text", () => {
    const values = [
      0,
      -0,
      1,
      -1,
      0.5,
      1e-6,
      -1e-6,
      9.99e-7,
      1e-7,
      -1e-7,
      1e20,
      1e21,
      1e22,
      2 ** 53,
      1.5e300,
      Number.MAX_VALUE,
      612.25,
    ];
    const check = (value: number) => {
      const ours = PDFNumber.of(value);
      const theirs = pdfLibNumberOf(value);
      expect(ours).toBeInstanceOf(PDFNumber);
      expect(Object.is(ours.asNumber(), theirs.asNumber())).toBe(true);
      expect(ours.toString()).toBe(theirs.toString());
      expect(ours.sizeInBytes()).toBe(theirs.sizeInBytes());
      expect(ours.clone().toString()).toBe(theirs.toString());
    };
    values.forEach(check);
    fc.assert(fc.property(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })), check), {
      numRuns: 5000,
    });
  });
});
