// zlib's inflate of the streams pdf-lib parses objects from (src/pdf/structure/stream-inflate.ts)
// against pdf-lib's own decoder: the same bytes, or the same error, on deflated data that is whole,
// cut short, damaged or followed by more bytes (fuzzed), and on the object streams, cross-reference
// streams and Flate streams of the corpus's files.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { deflateRawSync, deflateSync } from "node:zlib";
import { PDFContext, PDFDocument, PDFName, PDFNumber, PDFObjectParser, PDFRawStream } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodedForParsing, pdfLibFromPDFRawStream } from "../../../src/pdf/structure/stream-inflate.ts";
import { corpusDir } from "../fixtures.ts";

/** pdf-lib's ByteStream, as the parsers reach it (its fields are not in its types). */
type Bytes = { bytes: Uint8Array; length: number; offset(): number };
const ByteStream = (
  PDFObjectParser.forBytes(new Uint8Array(0), PDFContext.create()) as unknown as {
    bytes: { constructor: { fromPDFRawStream(stream: PDFRawStream): Bytes } };
  }
).bytes.constructor;

type Outcome = { data: string; length: number; offset: number } | { error: string };

function outcome(read: (stream: PDFRawStream) => Bytes, stream: PDFRawStream): Outcome {
  try {
    const bytes = read(stream);
    return { data: Buffer.from(bytes.bytes).toString("hex"), length: bytes.length, offset: bytes.offset() };
  } catch (error) {
    return { error: String(error) };
  }
}

const ours = (stream: PDFRawStream) => outcome((s) => ByteStream.fromPDFRawStream(s), stream);
const theirs = (stream: PDFRawStream) => outcome((s) => pdfLibFromPDFRawStream(s) as Bytes, stream);

function flateStream(data: Uint8Array, entries: Record<string, string | number> = { Filter: "FlateDecode" }) {
  const context = PDFContext.create();
  const dict = context.obj({});
  for (const [key, value] of Object.entries(entries))
    dict.set(PDFName.of(key), typeof value === "number" ? PDFNumber.of(value) : PDFName.of(value));
  return PDFRawStream.of(dict, data);
}

const corpus = corpusDir();
if (!corpus)
  console.log("stream-inflate.test.ts: skipped the corpus case, the shared corpus is absent (PDF_CORPUS_DIR).");

/** Data that deflates: runs of a few symbols, as objects' text is. */
const plain = fc.array(fc.constantFrom(..."<</Type /Page 12 0 R>> [1 2 3]\n"), { maxLength: 3000 }).map((chars) => {
  return Buffer.from(chars.join(""), "latin1");
});

describe("inflating the streams pdf-lib parses objects from", () => {
  it("gives pdf-lib's bytes or pdf-lib's error on whole, cut, damaged and extended data", () => {
    fc.assert(
      fc.property(
        plain,
        fc.integer({ min: 0, max: 9 }),
        fc.constantFrom("whole", "cut", "flip", "tail", "raw"),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (data, level, damage, at, xor) => {
          let deflated: Uint8Array = damage === "raw" ? deflateRawSync(data, { level }) : deflateSync(data, { level });
          const k = at % (deflated.length + 1);
          if (damage === "cut") deflated = deflated.subarray(0, k);
          if (damage === "flip" && k < deflated.length) {
            deflated = Uint8Array.from(deflated);
            deflated[k]! ^= xor;
          }
          if (damage === "tail") deflated = Buffer.concat([deflated, Buffer.from("garbage\nendstream")]);
          const stream = flateStream(deflated);
          expect(ours(stream)).toEqual(theirs(stream));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("leaves to pdf-lib what zlib is not asked to decode", () => {
    const data = deflateSync(Buffer.from("1 0 2 5 <<>> [1]"));
    // pdf-lib applies no predictor: neither does the inflate.
    expect(decodedForParsing(flateStream(data, { Filter: "FlateDecode", Predictor: 12 }))).toBeDefined();
    expect(decodedForParsing(flateStream(data, {}))).toBeUndefined();
    expect(decodedForParsing(flateStream(Buffer.from("<>"), { Filter: "ASCIIHexDecode" }))).toBeUndefined();
    const encrypted = flateStream(data);
    (encrypted as unknown as { transform: unknown }).transform = {};
    expect(decodedForParsing(encrypted)).toBeUndefined();
    // A wrong Adler-32 checksum: pdf-lib reads the data, zlib refuses it and leaves it to pdf-lib.
    const wrongSum = Uint8Array.from(data);
    wrongSum[wrongSum.length - 1]! ^= 1;
    expect(decodedForParsing(flateStream(wrongSum))).toBeUndefined();
    expect(ours(flateStream(wrongSum))).toEqual(theirs(flateStream(wrongSum)));
  });

  it.skipIf(!corpus)(
    "decodes the corpus's Flate streams as pdf-lib does",
    async () => {
      const dir = path.join(corpus!, "files");
      const names = (await readdir(dir)).filter((name) => name.endsWith(".pdf"));
      let compared = 0;
      let parsedFrom = 0;
      for (const name of names) {
        const input = await readFile(path.join(dir, name));
        // pdf-lib's decoder is JavaScript: the largest files and streams would take minutes.
        if (input.length > 4_000_000) continue;
        let doc: PDFDocument;
        try {
          doc = await PDFDocument.load(input, { ignoreEncryption: true, updateMetadata: false });
        } catch {
          continue;
        }
        for (const [, object] of doc.context.enumerateIndirectObjects()) {
          if (!(object instanceof PDFRawStream) || object.contents.length > 64_000) continue;
          if (object.dict.lookup(PDFName.of("Filter")) !== PDFName.of("FlateDecode")) continue;
          const type = object.dict.lookup(PDFName.of("Type"));
          if (type === PDFName.of("ObjStm") || type === PDFName.of("XRef")) parsedFrom++;
          expect(ours(object), `${name}`).toEqual(theirs(object));
          compared++;
        }
      }
      expect(parsedFrom).toBeGreaterThan(20);
      expect(compared).toBeGreaterThan(500);
    },
    120_000,
  );
});
