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
  PDFNull,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFWriter,
} from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { replaceReferences } from "./dedup.ts";
import { deflate } from "../streams/filters.ts";
import "./dict-bytes.ts";

const OBJECTS_PER_STREAM = 250;
const encoder = new TextEncoder();
export const ascii = (text: string) => encoder.encode(text);

export function bytesOf(object: Pick<PDFObject, "sizeInBytes" | "copyBytesInto">): Uint8Array {
  const bytes = new Uint8Array(object.sizeInBytes());
  object.copyBytesInto(bytes, 0);
  return bytes;
}

export const byteWidth = (value: number) => {
  let width = 1;
  while (value >= 256 ** width) width++;
  return width;
};

export function headerFor(context: PDFContext, minimum: [number, number]): Uint8Array {
  const [major = 1, minor = 0] = context.header.getVersionString().split(".").map(Number);
  const header =
    major > minimum[0] || (major === minimum[0] && minor >= minimum[1])
      ? context.header
      : PDFHeader.forVersion(minimum[0], minimum[1]);
  const bytes = bytesOf(header); // "%PDF-x.y\n%" and four high bytes: the line still needs its end
  return Buffer.concat([bytes, ascii("\n")]);
}

const STREAM = ascii("\nstream\n");
const END_STREAM = ascii("\nendstream");
export const END_OBJ = ascii("\nendobj\n");

/** Size of an object as written (a raw stream: its dictionary, its data and the keywords). */
export function sizeOf(object: PDFObject): number {
  if (object instanceof PDFRawStream) {
    object.updateDict();
    return object.dict.sizeInBytes() + STREAM.length + object.contents.length + END_STREAM.length;
  }
  return object.sizeInBytes();
}

/** Writes an object at `offset`; stream data is copied in one go (pdf-lib copies byte by byte). */
export function writeInto(buffer: Uint8Array, offset: number, object: PDFObject): number {
  if (!(object instanceof PDFRawStream)) return object.copyBytesInto(buffer, offset);
  let at = offset + object.dict.copyBytesInto(buffer, offset);
  buffer.set(STREAM, at);
  at += STREAM.length;
  buffer.set(object.contents, at);
  at += object.contents.length;
  buffer.set(END_STREAM, at);
  return at + END_STREAM.length - offset;
}

/**
 * Numbers the objects 1, 2, 3… in their present order, so that the cross-reference stream has no
 * holes (those left by dropped and merged objects, and by the producer). References to objects
 * that do not exist become null, which is what a reader takes them for. Not done when raw bytes
 * pdf-lib could not parse are present: references inside them would go stale.
 */
export function renumberObjects(context: PDFContext): void {
  const objects = context.enumerateIndirectObjects();
  if (objects.some(([, object]) => object instanceof PDFInvalidObject)) return;
  if (objects.every(([ref], i) => ref.objectNumber === i + 1 && ref.generationNumber === 0)) return;
  const numbers = new Map<PDFRef, PDFRef>();
  // Loops by index over the pairs, not destructuring them: a job's one writing runs before V8 has
  // optimised it, where taking a pair apart goes through an iterator and its result objects.
  for (let i = 0; i < objects.length; i++) numbers.set(objects[i]![0], PDFRef.of(i + 1));
  const resolve = (ref: PDFRef) => numbers.get(ref) ?? PDFNull;
  for (let i = 0; i < objects.length; i++) replaceReferences(objects[i]![1], resolve);
  for (let i = 0; i < objects.length; i++) context.delete(objects[i]![0]);
  for (let i = 0; i < objects.length; i++) context.assign(numbers.get(objects[i]![0])!, objects[i]![1]);
  context.largestObjectNumber = objects.length;
  for (const key of ["Root", "Info"] as const) {
    const ref = context.trailerInfo[key];
    if (ref instanceof PDFRef) context.trailerInfo[key] = numbers.get(ref);
  }
}

/**
 * A document in which objects other than streams sit in compressed object streams. The output is
 * one buffer, sized before anything is written: stream data is copied once, from the document
 * into the output, and no list of pieces is joined at the end (which would hold the file twice).
 */
export function writeWithObjectStreams(context: PDFContext): Uint8Array {
  const header = headerFor(context, [1, 5]);
  // What goes at top level, in order, each with the number it is written under.
  const top: [PDFRef, PDFObject][] = [];
  // type 1: [1, offset, generation]; type 2: [2, object stream number, index]
  const entries = new Map<number, [number, number, number]>();
  const packable: [PDFRef, PDFObject][] = [];
  let largest = 0;
  const objects = context.enumerateIndirectObjects();
  for (let i = 0; i < objects.length; i++) {
    const ref = objects[i]![0];
    const object = objects[i]![1];
    largest = Math.max(largest, ref.objectNumber);
    // Streams, objects of a non-zero generation and raw bytes pdf-lib could not parse stay outside.
    if (object instanceof PDFStream || object instanceof PDFInvalidObject || ref.generationNumber !== 0) {
      top.push([ref, object]);
    } else {
      packable.push([ref, object]);
    }
  }
  for (let start = 0; start < packable.length; start += OBJECTS_PER_STREAM) {
    const group = packable.slice(start, start + OBJECTS_PER_STREAM);
    const streamNumber = ++largest;
    for (let i = 0; i < group.length; i++) entries.set(group[i]![0].objectNumber, [2, streamNumber, i]);
    top.push([PDFRef.of(streamNumber), objectStreamOf(context, group)]);
  }

  // Where each top-level object will start.
  const prefixes = top.map(([ref]) => ascii(`${ref.objectNumber} ${ref.generationNumber} obj\n`));
  const sizes = top.map(([, object]) => sizeOf(object));
  let offset = header.length;
  top.forEach(([ref], i) => {
    entries.set(ref.objectNumber, [1, offset, ref.generationNumber]);
    offset += prefixes[i]!.length + sizes[i]! + END_OBJ.length;
  });

  // The cross-reference stream lists itself too.
  const xrefNumber = ++largest;
  const xrefOffset = offset;
  entries.set(xrefNumber, [1, xrefOffset, 0]);
  const xref = crossReferenceStream(context, entries, largest + 1);
  const xrefPrefix = ascii(`${xrefNumber} 0 obj\n`);
  const trailer = ascii(`startxref\n${xrefOffset}\n%%EOF\n`);
  const total = xrefOffset + xrefPrefix.length + sizeOf(xref) + END_OBJ.length + trailer.length;

  const output = new Uint8Array(total);
  output.set(header, 0);
  let at = header.length;
  const put = (bytes: Uint8Array) => {
    output.set(bytes, at);
    at += bytes.length;
  };
  top.forEach(([, object], i) => {
    put(prefixes[i]!);
    at += writeInto(output, at, object);
    put(END_OBJ);
  });
  put(xrefPrefix);
  at += writeInto(output, at, xref);
  put(END_OBJ);
  put(trailer);
  if (at !== total) throw new Error(`writer: wrote ${at} bytes of ${total}`);
  return output;
}

/** A compressed object stream holding these objects, in this order, under their numbers. */
export function objectStreamOf(context: PDFContext, group: [PDFRef, PDFObject][]): PDFRawStream {
  const sizes = group.map((pair) => pair[1].sizeInBytes());
  let position = 0;
  const index: string[] = [];
  for (let i = 0; i < group.length; i++) {
    index.push(`${group[i]![0].objectNumber} ${position}`);
    position += sizes[i]! + 1;
  }
  const head = ascii(index.join(" ") + "\n");
  const data = new Uint8Array(head.length + position);
  data.set(head, 0);
  let at = head.length;
  for (let i = 0; i < group.length; i++) {
    group[i]![1].copyBytesInto(data, at);
    at += sizes[i]!;
    data[at++] = 0x0a;
  }
  const dict = PDFDict.withContext(context);
  dict.set(PDFName.of("Type"), PDFName.of("ObjStm"));
  dict.set(PDFName.of("N"), PDFNumber.of(group.length));
  dict.set(PDFName.of("First"), PDFNumber.of(head.length));
  dict.set(PDFName.of("Filter"), PDFName.of("FlateDecode"));
  return PDFRawStream.of(dict, deflate(data));
}

function crossReferenceStream(
  context: PDFContext,
  entries: Map<number, [number, number, number]>,
  size: number,
): PDFRawStream {
  const rows: [number, number, number][] = [];
  for (let num = 0; num < size; num++) rows.push(entries.get(num) ?? (num === 0 ? [0, 0, 65535] : [0, 0, 0]));
  const dict = xrefStreamDict(context, size);
  const { Root, Info, ID } = context.trailerInfo;
  if (Root) dict.set(PDFName.of("Root"), Root);
  if (Info) dict.set(PDFName.of("Info"), Info);
  if (ID) dict.set(PDFName.of("ID"), ID);
  // the free head entry's generation is 65535
  return xrefStreamOf(dict, rows, 2);
}

/** The dictionary of a cross-reference stream of `size` entries, before its rows. */
export function xrefStreamDict(context: PDFContext, size: number): PDFDict {
  const dict = PDFDict.withContext(context);
  dict.set(PDFName.of("Type"), PDFName.of("XRef"));
  dict.set(PDFName.of("Size"), PDFNumber.of(size));
  return dict;
}

/**
 * A cross-reference stream of these rows ([type, field 2, field 3]) with `dict`'s entries, its
 * fields as wide as their largest value (the third at least `minWidth3` bytes).
 */
export function xrefStreamOf(dict: PDFDict, rows: [number, number, number][], minWidth3 = 1): PDFRawStream {
  const { context } = dict;
  let maxSecond = 0;
  let maxThird = 0;
  for (let r = 0; r < rows.length; r++) {
    maxSecond = Math.max(maxSecond, rows[r]![1]);
    maxThird = Math.max(maxThird, rows[r]![2]);
  }
  const w1 = byteWidth(maxSecond);
  const w2 = Math.max(minWidth3, byteWidth(maxThird));
  const row = 1 + w1 + w2;
  const size = rows.length;
  const table = new Uint8Array(size * row);
  rows.forEach((fields, r) => {
    const type = fields[0];
    const second = fields[1];
    const third = fields[2];
    const at = r * row;
    table[at] = type;
    for (let k = 0; k < w1; k++) table[at + 1 + k] = Math.floor(second / 256 ** (w1 - 1 - k)) % 256;
    for (let k = 0; k < w2; k++) table[at + 1 + w1 + k] = Math.floor(third / 256 ** (w2 - 1 - k)) % 256;
  });
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
  dict.set(PDFName.of("W"), arrayOf(context, [1, w1, w2]));
  dict.set(PDFName.of("DecodeParms"), parms);
  dict.set(PDFName.of("Filter"), PDFName.of("FlateDecode"));
  return PDFRawStream.of(dict, deflate(predicted));
}

export function arrayOf(context: PDFContext, numbers: number[]): PDFArray {
  const array = PDFArray.withContext(context);
  for (const n of numbers) array.push(PDFNumber.of(n));
  return array;
}

/** A classic document: every object at top level, an xref table (for PDF/A-1, which forbids streams). */
export function writeClassic(context: PDFContext): Promise<Uint8Array> {
  return PDFWriter.forContext(context, Infinity).serializeToBuffer();
}
