// Cross-reference validation. pdf-lib reads a file front to back and never consults the
// cross-reference data, so on its own it "opens" truncated files, files whose trailer is gone and
// fuzzed files in which the xref and the object headers disagree (where a reader that trusts the
// xref would show a different document than the one we would write back). We follow the chain
// from `startxref` the way a conforming reader does and require every in-use entry to point at the
// object it names.
import { PDFArray, PDFDict, PDFName, PDFObjectParser, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { isDigit, isWhite, Lexer } from "../shared/syntax.ts";
import { decodeStreamData, N, numberOf } from "../streams/filters.ts";

const TAIL = 1024; // like Acrobat: the end-of-file marker must be in the last 1 KB
const MAX_SECTIONS = 1000;
const MAX_XREF_STREAM_BYTES = 64 * 1024 * 1024;
const latin1 = new TextDecoder("latin1");

/** A reader of the plain syntax of xref tables and object headers: integers and keywords between white-space. */
class Scanner extends Lexer {
  /** An unsigned integer after white-space (of at most `maxDigits` digits: an offset or an object number). */
  int(maxDigits = 16): number | undefined {
    this.skipWhite();
    return this.unsignedInt(maxDigits);
  }
  /** Whether `word` comes after white-space; read past it when it does. */
  nextKeyword(word: string): boolean {
    this.skipWhite();
    return this.keyword(word);
  }
}

/** The object number of the `N G obj` header at `offset`, if there is one. */
function objectNumberAt(bytes: Uint8Array, offset: number): number | undefined {
  if (offset <= 0 || offset >= bytes.length) return undefined;
  const s = new Scanner(bytes, offset);
  const num = s.int();
  const gen = s.int();
  return num !== undefined && gen !== undefined && s.nextKeyword("obj") ? num : undefined;
}

interface Section {
  /** In-use entries: object number and offset (undefined offset: inside an object stream). */
  entries: [number, number | undefined][];
  next: number[];
}

type Parsed = Section | { problem: string };

function parseTable(bytes: Uint8Array, at: number, context: PDFContext): Parsed {
  const s = new Scanner(bytes, at);
  s.nextKeyword("xref");
  const entries: [number, number | undefined][] = [];
  for (;;) {
    s.skipWhite();
    if (!isDigit(bytes[s.pos])) break;
    const first = s.int();
    const count = s.int();
    if (first === undefined || count === undefined || count > 10_000_000) return { problem: "a malformed xref table" };
    for (let i = 0; i < count; i++) {
      const offset = s.int();
      const gen = s.int();
      s.skipWhite();
      const kind = bytes[s.pos++];
      if (offset === undefined || gen === undefined || (kind !== 0x6e && kind !== 0x66)) {
        return { problem: "a malformed xref table" };
      }
      if (kind === 0x6e) entries.push([first + i, offset]);
    }
  }
  if (!s.nextKeyword("trailer")) return { problem: "an xref table without a trailer" };
  const dict = parseObjectAt(bytes, s.pos, context);
  if (!(dict instanceof PDFDict)) return { problem: "an unreadable trailer dictionary" };
  const next: number[] = [];
  const xrefStm = numberOf(dict.lookup(PDFName.of("XRefStm")));
  const prev = numberOf(dict.lookup(PDFName.of("Prev")));
  if (xrefStm !== undefined) next.push(xrefStm);
  if (prev !== undefined) next.push(prev);
  return { entries, next };
}

function parseObjectAt(bytes: Uint8Array, at: number, context: PDFContext) {
  try {
    return PDFObjectParser.forBytes(bytes.subarray(at), context).parseObject();
  } catch {
    return undefined;
  }
}

function parseStream(bytes: Uint8Array, at: number, context: PDFContext): Parsed {
  const s = new Scanner(bytes, at);
  if (s.int() === undefined || s.int() === undefined || !s.nextKeyword("obj")) {
    return { problem: "a cross-reference offset that points at neither an xref table nor an xref stream" };
  }
  const stream = parseObjectAt(bytes, s.pos, context);
  if (!(stream instanceof PDFRawStream) || stream.dict.lookup(N.Type) !== N.XRef) {
    return { problem: "a cross-reference offset that points at neither an xref table nor an xref stream" };
  }
  const data = decodeStreamData(stream, MAX_XREF_STREAM_BYTES, { predictors: true, tolerant: true });
  if (!data) return { problem: "an unreadable xref stream" };
  const w = stream.dict.lookup(PDFName.of("W"));
  const widths = w instanceof PDFArray ? w.asArray().map((item) => numberOf(item) ?? -1) : [];
  if (widths.length !== 3 || widths.some((x) => x < 0 || x > 8)) return { problem: "an xref stream with a bad /W" };
  const index = stream.dict.lookup(PDFName.of("Index"));
  const size = numberOf(stream.dict.lookup(PDFName.of("Size"))) ?? 0;
  const ranges = index instanceof PDFArray ? index.asArray().map((item) => numberOf(item) ?? -1) : [0, size];
  if (ranges.length % 2 !== 0 || ranges.some((x) => x < 0)) return { problem: "an xref stream with a bad /Index" };
  const [w0, w1, w2] = widths as [number, number, number];
  const rowLength = w0 + w1 + w2;
  const entries: [number, number | undefined][] = [];
  let p = 0;
  const field = (width: number) => {
    let value = 0;
    for (let k = 0; k < width; k++) value = value * 256 + data[p++]!;
    return value;
  };
  for (let r = 0; r < ranges.length; r += 2) {
    const first = ranges[r]!;
    for (let i = 0; i < ranges[r + 1]!; i++) {
      if (p + rowLength > data.length) return { problem: "a short xref stream" };
      const type = w0 === 0 ? 1 : field(w0);
      const f1 = field(w1);
      field(w2);
      if (type === 1) entries.push([first + i, f1]);
      else if (type === 2) entries.push([first + i, undefined]);
    }
  }
  const prev = numberOf(stream.dict.lookup(PDFName.of("Prev")));
  return { entries, next: prev === undefined ? [] : [prev] };
}

function validate(bytes: Uint8Array, startxref: number, shift: number, context: PDFContext): string | undefined {
  const seen = new Set<number>();
  const visited = new Set<number>();
  const pending = [startxref];
  while (pending.length > 0) {
    const offset = pending.shift()!;
    if (visited.has(offset)) continue;
    if (visited.size >= MAX_SECTIONS) return "too many cross-reference sections";
    visited.add(offset);
    const at = offset + shift;
    if (at < 0 || at >= bytes.length) return "a cross-reference offset beyond the end of the file";
    const s = new Scanner(bytes, at);
    s.skipWhite();
    const section = s.nextKeyword("xref") ? parseTable(bytes, at, context) : parseStream(bytes, at, context);
    if ("problem" in section) return section.problem;
    for (const [num, entryOffset] of section.entries) {
      if (seen.has(num)) continue; // a newer section already said where this object is
      seen.add(num);
      // "0000000000 00000 n" is a common way of writing a free entry; readers treat it as one.
      if (entryOffset === undefined || entryOffset === 0) continue;
      if (objectNumberAt(bytes, entryOffset + shift) !== num) {
        return `a cross-reference entry for object ${num} that points at another place than that object`;
      }
    }
    pending.unshift(...section.next);
  }
  return undefined;
}

/**
 * Describes what is wrong with the file's cross-reference data, or returns undefined when the
 * chain from the final `startxref` is intact. `headerOffset` is where `%PDF-` starts (offsets
 * of files with leading junk are often relative to it).
 */
export function findCrossReferenceProblem(
  bytes: Uint8Array,
  context: PDFContext,
  headerOffset: number,
): string | undefined {
  const tail = latin1.decode(bytes.subarray(Math.max(0, bytes.length - TAIL)));
  const at = tail.lastIndexOf("startxref");
  if (at < 0) return "no cross-reference at the end of the file: it is truncated or damaged";
  const s = new Scanner(bytes, bytes.length - tail.length + at + "startxref".length);
  const startxref = isWhite(bytes[s.pos]) ? s.int(Infinity) : undefined;
  if (startxref === undefined) return "a malformed startxref";
  const problem = validate(bytes, startxref, 0, context);
  if (problem === undefined || headerOffset === 0) return problem;
  return validate(bytes, startxref, headerOffset, context) === undefined ? undefined : problem;
}
