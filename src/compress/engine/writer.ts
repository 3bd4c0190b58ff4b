// Writing a document back. With object streams we serialise ourselves: pdf-lib's stream writer
// inserts every cross-reference entry with a linear search (12 s for a file of 85,000 objects)
// and packs only 50 objects per stream at a default deflate level. The classic writer (one
// `obj` per object and an xref table) is pdf-lib's own.
import {
  PDFArray,
  PDFDict,
  PDFHeader,
  PDFInvalidObject,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFWriter,
} from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { deflate } from "./filters.ts";

const OBJECTS_PER_STREAM = 100;
const encoder = new TextEncoder();
const ascii = (text: string) => encoder.encode(text);

function bytesOf(object: Pick<PDFObject, "sizeInBytes" | "copyBytesInto">): Uint8Array {
  const bytes = new Uint8Array(object.sizeInBytes());
  object.copyBytesInto(bytes, 0);
  return bytes;
}

const byteWidth = (value: number) => {
  let width = 1;
  while (value >= 256 ** width) width++;
  return width;
};

function headerFor(context: PDFContext, minimum: [number, number]): Uint8Array {
  const [major = 1, minor = 0] = context.header.getVersionString().split(".").map(Number);
  const header =
    major > minimum[0] || (major === minimum[0] && minor >= minimum[1])
      ? context.header
      : PDFHeader.forVersion(minimum[0], minimum[1]);
  const bytes = bytesOf(header); // "%PDF-x.y\n%" and four high bytes: the line still needs its end
  return Buffer.concat([bytes, ascii("\n")]);
}

/** A document in which objects other than streams sit in compressed object streams. */
export function writeWithObjectStreams(context: PDFContext): Uint8Array {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const push = (bytes: Uint8Array) => {
    chunks.push(bytes);
    offset += bytes.length;
  };
  // type 1: [1, offset, generation]; type 2: [2, object stream number, index]
  const entries = new Map<number, [number, number, number]>();
  const writeObject = (ref: PDFRef, body: Uint8Array) => {
    entries.set(ref.objectNumber, [1, offset, ref.generationNumber]);
    push(ascii(`${ref.objectNumber} ${ref.generationNumber} obj\n`));
    push(body);
    push(ascii("\nendobj\n"));
  };

  push(headerFor(context, [1, 5]));
  const objects = context.enumerateIndirectObjects();
  const packable: [PDFRef, PDFObject][] = [];
  let largest = 0;
  for (const [ref, object] of objects) {
    largest = Math.max(largest, ref.objectNumber);
    // Streams, objects of a non-zero generation and raw bytes pdf-lib could not parse stay outside.
    if (object instanceof PDFStream || object instanceof PDFInvalidObject || ref.generationNumber !== 0) {
      writeObject(ref, bytesOf(object));
    } else {
      packable.push([ref, object]);
    }
  }
  for (let start = 0; start < packable.length; start += OBJECTS_PER_STREAM) {
    const group = packable.slice(start, start + OBJECTS_PER_STREAM);
    const streamNumber = ++largest;
    const bodies = group.map(([, object]) => bytesOf(object));
    let position = 0;
    const index: string[] = [];
    group.forEach(([ref], i) => {
      index.push(`${ref.objectNumber} ${position}`);
      entries.set(ref.objectNumber, [2, streamNumber, i]);
      position += bodies[i]!.length + 1;
    });
    const head = ascii(index.join(" ") + "\n");
    const data = new Uint8Array(head.length + position);
    data.set(head, 0);
    let at = head.length;
    for (const body of bodies) {
      data.set(body, at);
      at += body.length;
      data[at++] = 0x0a;
    }
    const dict = PDFDict.withContext(context);
    dict.set(PDFName.of("Type"), PDFName.of("ObjStm"));
    dict.set(PDFName.of("N"), PDFNumber.of(group.length));
    dict.set(PDFName.of("First"), PDFNumber.of(head.length));
    dict.set(PDFName.of("Filter"), PDFName.of("FlateDecode"));
    writeObject(PDFRef.of(streamNumber), bytesOf(PDFRawStream.of(dict, deflate(data))));
  }

  // The cross-reference stream lists itself too.
  const xrefNumber = ++largest;
  const xrefOffset = offset;
  entries.set(xrefNumber, [1, xrefOffset, 0]);
  const size = largest + 1;
  let maxSecond = 0;
  for (const [, second] of entries.values()) maxSecond = Math.max(maxSecond, second);
  const w1 = byteWidth(maxSecond);
  const w2 = 2; // the free head entry's generation is 65535
  const row = 1 + w1 + w2;
  const table = new Uint8Array(size * row);
  for (let num = 0; num < size; num++) {
    const [type, second, third] = entries.get(num) ?? (num === 0 ? [0, 0, 65535] : [0, 0, 0]);
    const at = num * row;
    table[at] = type;
    for (let k = 0; k < w1; k++) table[at + 1 + k] = Math.floor(second / 256 ** (w1 - 1 - k)) % 256;
    for (let k = 0; k < w2; k++) table[at + 1 + w1 + k] = Math.floor(third / 256 ** (w2 - 1 - k)) % 256;
  }
  // PNG "Up" predictor: consecutive rows differ little, so the differences deflate far better.
  const predicted = new Uint8Array(size * (row + 1));
  for (let r = 0; r < size; r++) {
    predicted[r * (row + 1)] = 2;
    for (let k = 0; k < row; k++) {
      const above = r > 0 ? table[(r - 1) * row + k]! : 0;
      predicted[r * (row + 1) + 1 + k] = (table[r * row + k]! - above) & 0xff;
    }
  }
  const parms = PDFDict.withContext(context);
  parms.set(PDFName.of("Predictor"), PDFNumber.of(12));
  parms.set(PDFName.of("Columns"), PDFNumber.of(row));
  const dict = PDFDict.withContext(context);
  dict.set(PDFName.of("Type"), PDFName.of("XRef"));
  dict.set(PDFName.of("Size"), PDFNumber.of(size));
  dict.set(PDFName.of("W"), arrayOf(context, [1, w1, w2]));
  dict.set(PDFName.of("DecodeParms"), parms);
  const { Root, Info, ID } = context.trailerInfo;
  if (Root) dict.set(PDFName.of("Root"), Root);
  if (Info) dict.set(PDFName.of("Info"), Info);
  if (ID) dict.set(PDFName.of("ID"), ID);
  dict.set(PDFName.of("Filter"), PDFName.of("FlateDecode"));
  writeObject(PDFRef.of(xrefNumber), bytesOf(PDFRawStream.of(dict, deflate(predicted))));
  push(ascii(`startxref\n${xrefOffset}\n%%EOF\n`));
  return Buffer.concat(chunks);
}

function arrayOf(context: PDFContext, numbers: number[]): PDFArray {
  const array = PDFArray.withContext(context);
  for (const n of numbers) array.push(PDFNumber.of(n));
  return array;
}

/** A classic document: every object at top level, an xref table (for PDF/A-1, which forbids streams). */
export function writeClassic(context: PDFContext): Promise<Uint8Array> {
  return PDFWriter.forContext(context, Infinity).serializeToBuffer();
}
