// A linearized file ("fast web view", ISO 32000-1, Annex F), laid out as qpdf's writer lays it out
// (libqpdf/QPDFWriter.cc, writeLinearized), so that `qpdf --check-linearization` finds no error:
//
//   header, linearization parameter dictionary (padded), first-page cross-reference section
//   (padded), part 4 (catalog and what opening needs), hint stream, part 6 (the first page),
//   parts 7-9, the main cross-reference section, and `startxref` pointing at the first-page section.
//
// The hint stream holds the page offset and shared object hint tables (F.4.1, F.4.2) and, with
// outlines, the outline table (F.4.3). Its offsets are those of the file without the hint stream
// (F.3: a reader adds its length to offsets past it). Every object is serialised once and its size
// known beforehand, so the layout is arithmetic; only the first-page section depends on offsets
// that depend on its own size: it is padded to a size found by trying until it fits.
//
// With `objectStreams`: cross-reference streams and object streams grouped by part
// (linearize-plan.ts). Without (PDF/A-1 forbids them): classic xref tables.
import { PDFArray, PDFName, PDFNull, PDFNumber, PDFRef } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject, PDFDict } from "@cantoo/pdf-lib";
import { replaceReferences } from "./dedup.ts";
import { LinearizeRefused, planLinearization } from "./linearize-plan.ts";
import type { LinearizationPlan, Unit } from "./linearize-plan.ts";
import {
  ascii,
  bytesOf,
  END_OBJ,
  headerFor,
  objectStreamOf,
  sizeOf,
  writeInto,
  xrefStreamDict,
  xrefStreamOf,
} from "./writer.ts";
import { deflate } from "../streams/filters.ts";

export { LinearizeRefused } from "./linearize-plan.ts";

/** Hint tables hold 32-bit offsets and lengths. */
const MAX_FILE = 2 ** 32 - 1;
/** Tries at a first-page section size before giving up (it takes two or three). */
const MAX_ROUNDS = 8;

type Row = [number, number, number];

interface Numbered {
  number: Map<Unit, number>;
  /** Each compressed object's old reference, new number, stream and index in it. */
  compressed: { ref: PDFRef; number: number; stream: Unit; index: number; firstHalf: boolean }[];
  lindict: number;
  hint: number;
  xref1: number | undefined;
  xref2: number | undefined;
  firstHalf: [number, number];
  secondEnd: number;
}

/** Numbers in qpdf's sequence (see linearize-plan.ts). */
function numberUnits(plan: LinearizationPlan, objectStreams: boolean): Numbered {
  const number = new Map<Unit, number>();
  const compressed: Numbered["compressed"] = [];
  let next = 1;
  const pack = (units: Unit[], firstHalf: boolean) => {
    for (const stream of units) {
      if (stream.kind === "stream") {
        stream.members.forEach((ref, index) => compressed.push({ ref, number: next++, stream, index, firstHalf }));
      }
    }
  };
  const second = [...plan.part7, ...plan.part8, ...plan.part9];
  for (const unit of second) number.set(unit, next++);
  const xref2 = objectStreams ? next++ : undefined;
  pack(second, false);
  const secondEnd = next - 1;
  const firstStart = next;
  const lindict = next++;
  const xref1 = objectStreams ? next++ : undefined;
  for (const unit of plan.part4) number.set(unit, next++);
  const hint = next++;
  for (const unit of plan.part6) number.set(unit, next++);
  pack([...plan.part4, ...plan.part6], true);
  return { number, compressed, lindict, hint, xref1, xref2, firstHalf: [firstStart, next - 1], secondEnd };
}

/**
 * Gives every object its new number in the document itself (which stays consistent, so that a
 * plain write can follow a failure), drops what nothing reaches, and answers each unit's body.
 */
function renumber(context: PDFContext, numbered: Numbered): Map<Unit, PDFObject> {
  const numbers = new Map<PDFRef, PDFRef>();
  for (const [unit, n] of numbered.number) if (unit.kind === "object") numbers.set(unit.ref, PDFRef.of(n));
  for (const { ref, number } of numbered.compressed) numbers.set(ref, PDFRef.of(number));
  const resolve = (ref: PDFRef) => numbers.get(ref) ?? PDFNull;
  const objects = context.enumerateIndirectObjects();
  const kept = objects.filter(([ref]) => numbers.has(ref));
  for (const [, object] of kept) replaceReferences(object, resolve);
  for (const [ref] of objects) context.delete(ref);
  for (const [ref, object] of kept) context.assign(numbers.get(ref)!, object);
  context.largestObjectNumber = Math.max(numbered.firstHalf[1], numbered.secondEnd);
  for (const key of ["Root", "Info"] as const) {
    const ref = context.trailerInfo[key];
    if (ref instanceof PDFRef) context.trailerInfo[key] = numbers.get(ref);
  }
  const bodies = new Map<Unit, PDFObject>();
  for (const [unit] of numbered.number) {
    bodies.set(
      unit,
      unit.kind === "object"
        ? context.lookup(numbers.get(unit.ref))!
        : objectStreamOf(
            context,
            unit.members.map((ref) => [numbers.get(ref)!, context.lookup(numbers.get(ref))!]),
          ),
    );
  }
  return bodies;
}

/** Bits, most significant first, as the hint tables hold them. */
class BitWriter {
  readonly bytes: number[] = [];
  private current = 0;
  private count = 0;
  write(value: number, bits: number): void {
    for (let bit = bits - 1; bit >= 0; bit--) {
      this.current = (this.current << 1) | (Math.floor(value / 2 ** bit) & 1);
      if (++this.count === 8) this.flush();
    }
  }
  /** Each item list starts on a byte boundary. */
  flush(): void {
    if (this.count === 0) return;
    this.bytes.push((this.current << (8 - this.count)) & 0xff);
    this.current = 0;
    this.count = 0;
  }
  list(values: number[], bits: number): void {
    for (const value of values) this.write(value, bits);
    this.flush();
  }
}

/** Bits needed for a value (qpdf's nbits: 0 for 0). */
const nbits = (value: number) => (value === 0 ? 0 : Math.floor(Math.log2(value)) + 1);

interface Sized {
  plan: LinearizationPlan;
  number: Map<Unit, number>;
  size: Map<Unit, number>;
}

/** The units of each page in the page offset table: the first page's are part 6. */
function pageLists(plan: LinearizationPlan): Unit[][] {
  const lists: Unit[][] = [plan.part6];
  let at = 0;
  for (let i = 1; i < plan.pages.length; i++) {
    lists.push(plan.part7.slice(at, at + plan.pageUnits[i]!));
    at += plan.pageUnits[i]!;
  }
  return lists;
}

/** The page offset hint table (F.4.1), with qpdf's choices: content offsets 0, content length the page's. */
function pageOffsetTable(w: BitWriter, { plan, size }: Sized, offset: Map<Unit, number>, shared: Unit[]): void {
  const sharedIndex = new Map(shared.map((unit, i) => [unit, i]));
  const lists = pageLists(plan);
  const counts = lists.map((list) => list.length);
  const lengths = lists.map((list) => list.reduce((total, unit) => total + size.get(unit)!, 0));
  const ids = plan.pageShared.map((units) => units.map((unit) => sharedIndex.get(unit)!));
  const [minCount, minLength] = [Math.min(...counts), Math.min(...lengths)];
  const countBits = nbits(Math.max(...counts) - minCount);
  const lengthBits = nbits(Math.max(...lengths) - minLength);
  const nsharedBits = nbits(Math.max(...ids.map((list) => list.length)));
  const idBits = nbits(shared.length);
  const header: [number, number][] = [
    [minCount, 32],
    [offset.get(plan.part6[0]!)!, 32],
    [countBits, 16],
    [minLength, 32],
    [lengthBits, 16],
    [0, 32], // least content offset
    [0, 16],
    [minLength, 32], // least content length
    [lengthBits, 16],
    [nsharedBits, 16],
    [idBits, 16],
    [0, 16], // bits of a shared object's numerator
    [4, 16], // its denominator
  ];
  for (const [value, bits] of header) w.write(value, bits);
  const deltas = lengths.map((length) => length - minLength);
  w.list(
    counts.map((count) => count - minCount),
    countBits,
  );
  w.list(deltas, lengthBits);
  w.list(
    ids.map((list) => list.length),
    nsharedBits,
  );
  w.list(ids.flat(), idBits);
  w.list([], 0); // numerators: 0 bits each
  w.list([], 0); // content offsets: 0 bits each
  w.list(deltas, lengthBits);
}

/** The shared object hint table (F.4.2): part 6, then part 8, one object per group. */
function sharedObjectTable(w: BitWriter, { plan, number, size }: Sized, offset: Map<Unit, number>, shared: Unit[]) {
  const lengths = shared.map((unit) => size.get(unit)!);
  const min = Math.min(...lengths);
  const bits = nbits(Math.max(...lengths) - min);
  const first = plan.part8[0];
  w.write(first ? number.get(first)! : 0, 32);
  w.write(first ? offset.get(first)! : 0, 32);
  w.write(plan.part6.length, 32);
  w.write(shared.length, 32);
  w.write(0, 16); // bits of a group's object count: one each
  w.write(min, 32);
  w.write(bits, 16);
  w.list(
    lengths.map((length) => length - min),
    bits,
  );
  w.list(
    shared.map(() => 0),
    1,
  ); // no MD5 signatures
  w.list([], 0);
}

/** The hint stream object (number `hint`), from the offsets of a file without it. */
function hintStream(sized: Sized, offset: Map<Unit, number>, hint: number): Uint8Array {
  const { plan, number, size } = sized;
  const w = new BitWriter();
  const shared = [...plan.part6, ...plan.part8];
  pageOffsetTable(w, sized, offset, shared);
  const S = w.bytes.length;
  sharedObjectTable(w, sized, offset, shared);
  let O: number | undefined;
  if (plan.outlines.length > 0) {
    O = w.bytes.length;
    w.write(number.get(plan.outlines[0]!)!, 32);
    w.write(offset.get(plan.outlines[0]!)!, 32);
    w.write(plan.outlines.length, 32);
    w.write(
      plan.outlines.reduce((total, unit) => total + size.get(unit)!, 0),
      32,
    );
  }
  const data = deflate(Uint8Array.from(w.bytes));
  const head = ascii(
    `${hint} 0 obj\n<< /Filter /FlateDecode /S ${S}${O === undefined ? "" : ` /O ${O}`} /Length ${data.length} >>\nstream\n`,
  );
  return Buffer.concat([head, data, ascii("\nendstream\nendobj\n")]);
}

interface Layout {
  offset: Map<Unit, number>;
  hintOffset: number;
  /** Where part 6 ends: the linearization dictionary's /E. */
  end6: number;
  mainXref: number;
}

function layoutOf(plan: LinearizationPlan, size: Map<Unit, number>, start: number, hintLength: number): Layout {
  const offset = new Map<Unit, number>();
  let at = start;
  const place = (units: Unit[]) => {
    for (const unit of units) {
      offset.set(unit, at);
      at += size.get(unit)!;
    }
  };
  place(plan.part4);
  const hintOffset = at;
  at += hintLength;
  place(plan.part6);
  const end6 = at;
  place([...plan.part7, ...plan.part8, ...plan.part9]);
  return { offset, hintOffset, end6, mainXref: at };
}

/** The trailer entries a reader needs from the first-page section (and /Prev, the main one). */
function trailerDict(context: PDFContext, size: number, prev?: number): PDFDict {
  const dict = xrefStreamDict(context, size);
  dict.delete(PDFName.of("Type"));
  const { Root, Info, ID } = context.trailerInfo;
  if (Root) dict.set(PDFName.of("Root"), Root);
  if (Info) dict.set(PDFName.of("Info"), Info);
  if (ID) dict.set(PDFName.of("ID"), ID);
  if (prev !== undefined) dict.set(PDFName.of("Prev"), PDFNumber.of(prev));
  return dict;
}

const entry = (offset: number) => `${String(offset).padStart(10, "0")} 00000 n \n`;

/** A cross-reference section: a stream object, or a table with its trailer. */
function section(
  context: PDFContext,
  rows: Row[],
  first: number,
  trailer: PDFDict,
  xrefNumber: number | undefined,
): Uint8Array {
  if (xrefNumber === undefined) {
    const lines = rows.map(([type, offset]) => (type === 0 ? "0000000000 65535 f \n" : entry(offset)));
    return Buffer.concat([
      ascii(`xref\n${first} ${rows.length}\n${lines.join("")}trailer\n`),
      bytesOf(trailer),
      ascii("\n"),
    ]);
  }
  const dict = xrefStreamDict(context, 0);
  for (const [key, value] of trailer.entries()) dict.set(key, value);
  if (first !== 0) {
    const index = PDFArray.withContext(context);
    index.push(PDFNumber.of(first));
    index.push(PDFNumber.of(rows.length));
    dict.set(PDFName.of("Index"), index);
  }
  const stream = xrefStreamOf(dict, rows);
  const prefix = ascii(`${xrefNumber} 0 obj\n`);
  const bytes = new Uint8Array(prefix.length + sizeOf(stream) + END_OBJ.length);
  bytes.set(prefix, 0);
  const at = prefix.length + writeInto(bytes, prefix.length, stream);
  bytes.set(END_OBJ, at);
  return bytes;
}

/** The linearization parameter dictionary (F.2), padded with spaces to `reserve` bytes. */
function lindictBytes(n: number, values: Record<"L" | "H0" | "H1" | "O" | "E" | "N" | "T", number>, reserve = 0) {
  const { L, H0, H1, O, E, N, T } = values;
  const text = `${n} 0 obj\n<< /Linearized 1 /L ${L} /H [ ${H0} ${H1} ] /O ${O} /E ${E} /N ${N} /T ${T} >>\nendobj\n`;
  return ascii(text.padEnd(Math.max(0, reserve - 1), " ") + (reserve > text.length ? "\n" : ""));
}

/**
 * Writes the document linearized. Renumbers the document's objects (it stays consistent: a plain
 * write may follow). Throws LinearizeRefused when the document cannot be linearized as it is.
 */
export function writeLinearized(context: PDFContext, objectStreams: boolean): Uint8Array {
  const plan = planLinearization(context, objectStreams);
  const numbered = numberUnits(plan, objectStreams);
  const bodies = renumber(context, numbered);
  const header = headerFor(context, objectStreams ? [1, 5] : [1, 4]);
  const { number } = numbered;
  const size = new Map<Unit, number>();
  const prefixes = new Map<Unit, Uint8Array>();
  for (const [unit, body] of bodies) {
    const prefix = ascii(`${number.get(unit)!} 0 obj\n`);
    prefixes.set(unit, prefix);
    size.set(unit, prefix.length + sizeOf(body) + END_OBJ.length);
  }
  const sized: Sized = { plan, number, size };
  const big = 9_999_999_999;
  const lindictReserve =
    lindictBytes(numbered.lindict, { L: big, H0: big, H1: big, O: big, E: big, N: big, T: big }).length + 1;
  let reserve = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const start = header.length + lindictReserve + reserve;
    const hint = hintStream(sized, layoutOf(plan, size, start, 0).offset, numbered.hint);
    const layout = layoutOf(plan, size, start, hint.length);
    const first = firstSection(context, numbered, layout, header.length, lindictReserve);
    if (first.length > reserve) {
      reserve = first.length + 16;
      continue;
    }
    const main = mainSection(context, numbered, layout, header.length + lindictReserve);
    const total = layout.mainXref + main.bytes.length;
    if (total > MAX_FILE) throw new LinearizeRefused("too_large", "the file would be larger than 4 GB");
    const lindict = lindictBytes(
      numbered.lindict,
      {
        L: total,
        H0: layout.hintOffset,
        H1: hint.length,
        O: number.get(plan.part6[0]!)!,
        E: layout.end6,
        N: plan.pages.length,
        T: main.T,
      },
      lindictReserve,
    );
    const output = new Uint8Array(total);
    let at = 0;
    const put = (bytes: Uint8Array) => {
      output.set(bytes, at);
      at += bytes.length;
    };
    put(header);
    put(lindict);
    put(first);
    output.fill(0x20, at, at + reserve - first.length);
    at += reserve - first.length;
    output[at - 1] = 0x0a;
    const write = (units: Unit[]) => {
      for (const unit of units) {
        put(prefixes.get(unit)!);
        at += writeInto(output, at, bodies.get(unit)!);
        put(END_OBJ);
      }
    };
    write(plan.part4);
    put(hint);
    write([...plan.part6, ...plan.part7, ...plan.part8, ...plan.part9]);
    put(main.bytes);
    if (at !== total) throw new Error(`linearized writer: wrote ${at} bytes of ${total}`);
    return output;
  }
  throw new LinearizeRefused("layout", "the first-page cross-reference section did not settle");
}

/** The first-page cross-reference section: the first half's objects, /Prev the main section. */
function firstSection(
  context: PDFContext,
  numbered: Numbered,
  layout: Layout,
  lindictOffset: number,
  lindictReserve: number,
): Uint8Array {
  const [first, last] = numbered.firstHalf;
  const rows = new Map<number, Row>();
  rows.set(numbered.lindict, [1, lindictOffset, 0]);
  if (numbered.xref1 !== undefined) rows.set(numbered.xref1, [1, lindictOffset + lindictReserve, 0]);
  rows.set(numbered.hint, [1, layout.hintOffset, 0]);
  setRows(rows, numbered, layout, true);
  const list: Row[] = [];
  for (let n = first; n <= last; n++) list.push(rows.get(n)!);
  const trailer = trailerDict(context, last + 1, layout.mainXref);
  const bytes = section(context, list, first, trailer, numbered.xref1);
  return numbered.xref1 === undefined ? Buffer.concat([bytes, ascii("startxref\n0\n%%EOF\n")]) : bytes;
}

function setRows(rows: Map<number, Row>, numbered: Numbered, layout: Layout, firstHalf: boolean): void {
  for (const [unit, offset] of layout.offset) {
    const n = numbered.number.get(unit)!;
    if (n >= numbered.firstHalf[0] === firstHalf) rows.set(n, [1, offset, 0]);
  }
  for (const member of numbered.compressed) {
    if (member.firstHalf === firstHalf) rows.set(member.number, [2, numbered.number.get(member.stream)!, member.index]);
  }
}

/** The main cross-reference section (objects 0 to the end of the second half) and the file's end. */
function mainSection(
  context: PDFContext,
  numbered: Numbered,
  layout: Layout,
  firstXref: number,
): { bytes: Uint8Array; T: number } {
  const rows = new Map<number, Row>([[0, [0, 0, 0]]]);
  if (numbered.xref2 !== undefined) rows.set(numbered.xref2, [1, layout.mainXref, 0]);
  setRows(rows, numbered, layout, false);
  const list: Row[] = [];
  for (let n = 0; n <= numbered.secondEnd; n++) list.push(rows.get(n)!);
  const trailer = xrefStreamDict(context, numbered.secondEnd + 1);
  trailer.delete(PDFName.of("Type"));
  const bytes = section(context, list, 0, trailer, numbered.xref2);
  // /T: the white-space before the first entry (a table), or before the stream object.
  const T = numbered.xref2 === undefined ? layout.mainXref + `xref\n0 ${list.length}`.length : layout.mainXref - 1;
  return { bytes: Buffer.concat([bytes, ascii(`startxref\n${firstXref}\n%%EOF\n`)]), T };
}
