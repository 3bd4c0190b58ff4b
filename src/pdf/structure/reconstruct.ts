// Rebuilding a damaged file's object table the way readers do when its cross-reference data is
// missing, points at the wrong places or does not parse (qpdf's QPDF::reconstruct_xref, pdf.js's
// XRef.indexObjects, poppler's XRef::constructXRef): scan the bytes for `N G obj` headers, take
// the later definition of an object (incremental updates append), read a stream whose /Length
// is wrong up to its `endstream`, add the objects of object streams that no direct definition
// overrides (pdf.js: the scanned objects come first), and find the trailer by scanning; when no
// trailer names a usable catalog, take the catalog itself (qpdf: the /Type /Catalog dictionary
// with the highest object number).
//
// Bounded for hostile files: the keywords are found with the native Buffer.indexOf, every object
// is parsed within its own region (up to the next header), a stream with a wrong /Length ends at
// the first `endstream` after it (found by binary search, not by scanning), and object streams
// decode within a budget.
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFObjectParser, PDFRawStream, PDFRef } from "@cantoo/pdf-lib";
import { PDFContext } from "@cantoo/pdf-lib";
import type { PDFObject } from "@cantoo/pdf-lib";
import { PdfRejected } from "../shared/errors.ts";
import { decodeStreamData, N, numberOf } from "../streams/filters.ts";
import { isDelimiter, isDigit, isWhite, Lexer, Tok } from "../shared/syntax.ts";

/** What a reconstruction repaired, as the compression report names it. */
export type Repair = "cross_reference" | "stream_length" | "trailer" | "truncated";

export interface Reconstruction {
  context: PDFContext;
  repaired: Repair[];
  /** The file does not end as a PDF ends (no %%EOF in its last kilobyte): it was cut off. */
  truncated: boolean;
}

/** The PDF limit on object numbers (ISO 32000-1, Annex C); qpdf ignores larger ones too. */
const MAX_OBJECT_NUMBER = 8_388_607;
const MAX_GENERATION = 65_535;
/**
 * Headers (and `endstream` keywords) a rebuild takes on: far above real documents (a 544-page
 * book has ~20,000 objects), and what keeps a file of nothing but headers within the memory limit.
 */
const MAX_OBJECTS = 2_000_000;
const TOO_MANY = "The PDF is damaged, and it has too many objects to rebuild.";
const TAIL = 1024;
/** How far a trailer dictionary may reach. */
const MAX_TRAILER_BYTES = 64 * 1024;
/** What one object stream may decode to, and all of them together beyond the input's size. */
const MAX_OBJECT_STREAM_BYTES = 64 * 1024 * 1024;
const OBJECT_STREAMS_BUDGET = 64 * 1024 * 1024;

const ascii = (text: string) => Buffer.from(text, "latin1");
const NAME = {
  Catalog: PDFName.of("Catalog"),
  Count: PDFName.of("Count"),
  Encrypt: PDFName.of("Encrypt"),
  First: PDFName.of("First"),
  ID: PDFName.of("ID"),
  Info: PDFName.of("Info"),
  Kids: PDFName.of("Kids"),
  P: PDFName.of("P"),
  Page: PDFName.of("Page"),
  Pages: PDFName.of("Pages"),
  Parent: PDFName.of("Parent"),
  Root: PDFName.of("Root"),
} as const;
const OBJ = ascii("obj");
const STREAM = ascii("stream");
const ENDSTREAM = ascii("endstream");
const TRAILER = ascii("trailer");
const EOF_MARKER = ascii("%%EOF");

/** PDF delimiters (7.2.2) and white-space: what may follow a keyword. */
const isDelimiterOrWhite = (b: number | undefined) => b === undefined || isWhite(b) || isDelimiter(b);

interface Header {
  num: number;
  gen: number;
  /** Where `N` starts. */
  offset: number;
  /** Just after `obj`. */
  body: number;
}

/** Every `N G obj` header that starts a line or follows white-space, in file order. */
function findHeaders(buffer: Buffer): Header[] {
  const headers: Header[] = [];
  for (let at = buffer.indexOf(OBJ); at >= 0; at = buffer.indexOf(OBJ, at + OBJ.length)) {
    if (!isDelimiterOrWhite(buffer[at + OBJ.length])) continue;
    let p = at - 1;
    if (!isWhite(buffer[p])) continue; // also rejects "endobj"
    while (p >= 0 && isWhite(buffer[p])) p--;
    const genEnd = p + 1;
    while (p >= 0 && isDigit(buffer[p]) && genEnd - p <= 5) p--;
    if (p + 1 === genEnd || !isWhite(buffer[p])) continue;
    const genStart = p + 1;
    while (p >= 0 && isWhite(buffer[p])) p--;
    const numEnd = p + 1;
    while (p >= 0 && isDigit(buffer[p]) && numEnd - p <= 10) p--;
    if (p + 1 === numEnd || (p >= 0 && !isWhite(buffer[p]))) continue;
    const num = Number(buffer.toString("latin1", p + 1, numEnd));
    const gen = Number(buffer.toString("latin1", genStart, genEnd));
    if (num > MAX_OBJECT_NUMBER || gen > MAX_GENERATION) continue;
    headers.push({ num, gen, offset: p + 1, body: at + OBJ.length });
    if (headers.length > MAX_OBJECTS) throw new PdfRejected("corrupted_pdf", TOO_MANY);
  }
  return headers;
}

/** Every offset of `needle`, in order. */
function findAll(buffer: Buffer, needle: Buffer): number[] {
  const found: number[] = [];
  for (let at = buffer.indexOf(needle); at >= 0; at = buffer.indexOf(needle, at + needle.length)) {
    found.push(at);
    if (found.length > MAX_OBJECTS) throw new PdfRejected("corrupted_pdf", TOO_MANY);
  }
  return found;
}

/** The first value of a sorted list that is >= `at`. */
function firstAtOrAfter(sorted: number[], at: number): number | undefined {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < at) low = mid + 1;
    else high = mid;
  }
  return sorted[low];
}

const skipWhiteAndComments = (bytes: Uint8Array, at: number, end: number): number =>
  new Lexer(bytes, at, end).skipWhiteAndComments();

/**
 * Where the dictionary that starts at `at` (with `<<`) ends, just after its `>>`, or undefined
 * when it does not close before `end`. Strings, hex strings and comments are skipped whole.
 */
function dictionaryEnd(bytes: Uint8Array, at: number, end: number): number | undefined {
  const lexer = new Lexer(bytes, at, end);
  let depth = 0;
  for (let kind = lexer.next(); kind !== Tok.End; kind = lexer.next()) {
    if (kind === Tok.DictOpen) depth++;
    else if (kind === Tok.DictClose && --depth === 0) return lexer.pos;
  }
  return undefined;
}

function parseObject(bytes: Uint8Array, start: number, end: number, context: PDFContext): PDFObject | undefined {
  try {
    return PDFObjectParser.forBytes(bytes.subarray(start, end), context).parseObject();
  } catch {
    return undefined;
  }
}

function matches(bytes: Uint8Array, at: number, word: Buffer): boolean {
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}

/** Just after the end-of-line that follows `stream` (7.3.8.1: CRLF or LF; CR alone is tolerated). */
function streamDataStart(bytes: Uint8Array, afterKeyword: number): number {
  if (bytes[afterKeyword] === 0x0d) return bytes[afterKeyword + 1] === 0x0a ? afterKeyword + 2 : afterKeyword + 1;
  return bytes[afterKeyword] === 0x0a ? afterKeyword + 1 : afterKeyword;
}

interface Parsed {
  object: PDFObject;
  /** Where the object's bytes end (after `endstream` for a stream). */
  end: number;
  lengthRepaired?: true;
}

class Rebuilder {
  readonly context = PDFContext.create();
  readonly repaired = new Set<Repair>();
  /** The newest direct definition of each object number, with its generation. */
  private readonly direct = new Map<number, number>();
  private readonly latestHeader = new Map<number, Header>();
  private readonly endstreams: number[];
  private readonly bytes: Uint8Array;
  private readonly headers: Header[];

  constructor(bytes: Uint8Array, buffer: Buffer) {
    this.bytes = bytes;
    this.headers = findHeaders(buffer);
    this.endstreams = findAll(buffer, ENDSTREAM);
    for (const header of this.headers) this.latestHeader.set(header.num, header);
  }

  /** Parses every object in file order; a later definition replaces an earlier one. */
  readObjects(): { objectStreams: PDFRawStream[]; xrefStreams: PDFDict[] } {
    const objectStreams = new Map<number, PDFRawStream>();
    const xrefStreams: PDFDict[] = [];
    let consumed = 0;
    for (const [i, header] of this.headers.entries()) {
      // A header inside the data of a stream read just before is the stream's data, not an object.
      if (header.offset < consumed) continue;
      const regionEnd = this.headers[i + 1]?.offset ?? this.bytes.length;
      const parsed = this.readObject(header, regionEnd);
      if (!parsed) continue;
      consumed = parsed.end;
      if (parsed.lengthRepaired) this.repaired.add("stream_length");
      const previousGen = this.direct.get(header.num);
      if (previousGen !== undefined && previousGen !== header.gen) {
        this.context.delete(PDFRef.of(header.num, previousGen));
      }
      this.direct.set(header.num, header.gen);
      this.context.assign(PDFRef.of(header.num, header.gen), parsed.object);
      objectStreams.delete(header.num);
      if (parsed.object instanceof PDFRawStream) {
        const type = parsed.object.dict.lookup(N.Type);
        if (type === N.ObjStm) objectStreams.set(header.num, parsed.object);
        else if (type === N.XRef) xrefStreams.push(parsed.object.dict);
      }
    }
    return { objectStreams: [...objectStreams.values()], xrefStreams };
  }

  private readObject(header: Header, regionEnd: number): Parsed | undefined {
    const { bytes } = this;
    const start = skipWhiteAndComments(bytes, header.body, regionEnd);
    if (bytes[start] !== 0x3c || bytes[start + 1] !== 0x3c) {
      const object = parseObject(bytes, start, regionEnd, this.context);
      return object === undefined ? undefined : { object, end: start + 1 };
    }
    const dictEnd = dictionaryEnd(bytes, start, regionEnd);
    if (dictEnd === undefined) return undefined; // cut off, or not a dictionary after all
    const dict = parseObject(bytes, start, dictEnd, this.context);
    if (!(dict instanceof PDFDict)) return undefined;
    const afterDict = skipWhiteAndComments(bytes, dictEnd, regionEnd);
    if (!matches(bytes, afterDict, STREAM) || !isDelimiterOrWhite(bytes[afterDict + STREAM.length])) {
      return { object: dict, end: dictEnd };
    }
    const dataStart = streamDataStart(bytes, afterDict + STREAM.length);
    const declared = this.declaredLength(dict.get(N.Length));
    if (declared !== undefined && dataStart + declared <= bytes.length) {
      const after = skipWhiteAndComments(bytes, dataStart + declared, bytes.length);
      if (matches(bytes, after, ENDSTREAM)) {
        const contents = bytes.slice(dataStart, dataStart + declared);
        return { object: PDFRawStream.of(dict, contents), end: after + ENDSTREAM.length };
      }
    }
    // The /Length is wrong or missing: the data runs up to the next `endstream` (as qpdf reads
    // it), less the end-of-line before that keyword.
    const endstream = firstAtOrAfter(this.endstreams, dataStart);
    if (endstream === undefined) return undefined; // the file ends inside the stream
    let dataEnd = endstream;
    if (bytes[dataEnd - 1] === 0x0a) dataEnd--;
    if (bytes[dataEnd - 1] === 0x0d) dataEnd--;
    dataEnd = Math.max(dataStart, dataEnd);
    dict.set(N.Length, PDFNumber.of(dataEnd - dataStart));
    const contents = bytes.slice(dataStart, dataEnd);
    return { object: PDFRawStream.of(dict, contents), end: endstream + ENDSTREAM.length, lengthRepaired: true };
  }

  /** A /Length value, direct or in an object of its own (read ahead if it comes later). */
  private declaredLength(value: PDFObject | undefined): number | undefined {
    if (value instanceof PDFNumber) return value.asNumber();
    if (!(value instanceof PDFRef)) return undefined;
    const known = this.context.lookup(value);
    if (known !== undefined) return numberOf(known);
    const header = this.latestHeader.get(value.objectNumber);
    if (!header) return undefined;
    const start = skipWhiteAndComments(this.bytes, header.body, this.bytes.length);
    return numberOf(parseObject(this.bytes, start, Math.min(this.bytes.length, start + 32), this.context));
  }

  /** Adds the objects of object streams that no direct definition overrides; later streams win. */
  readObjectStreams(streams: PDFRawStream[], budget: number): void {
    let left = budget;
    for (const stream of streams) {
      if (left <= 0) return;
      const data = decodeStreamData(stream, Math.min(MAX_OBJECT_STREAM_BYTES, left), {
        predictors: true,
        tolerant: true,
      });
      const count = numberOf(stream.dict.lookup(N.N));
      const first = numberOf(stream.dict.lookup(NAME.First));
      if (!data || count === undefined || first === undefined || count < 0 || first < 0) continue;
      left -= data.length;
      const pairs = readIntegers(data, Math.min(first, data.length), 2 * Math.min(count, data.length));
      for (let k = 0; k + 1 < pairs.length; k += 2) {
        const num = pairs[k]!;
        if (num > MAX_OBJECT_NUMBER || this.direct.has(num)) continue;
        const start = first + pairs[k + 1]!;
        const end = k + 3 < pairs.length ? first + pairs[k + 3]! : data.length;
        if (start >= data.length || end <= start) continue;
        const object = parseObject(data, start, Math.min(end, data.length), this.context);
        if (object !== undefined && !(object instanceof PDFRawStream)) this.context.assign(PDFRef.of(num, 0), object);
      }
    }
  }
}

/** Up to `max` unsigned integers separated by white-space, from the start of `data` up to `end`. */
function readIntegers(data: Uint8Array, end: number, max: number): number[] {
  const lexer = new Lexer(data, 0, end);
  const values: number[] = [];
  while (values.length < max) {
    lexer.skipWhite();
    const value = lexer.unsignedInt();
    if (value === undefined) break;
    values.push(value);
  }
  return values;
}

/**
 * Reads a trailer dictionary entry by entry, keeping what came before the first entry that does
 * not parse (a damaged /ID must not cost the /Root before it, as poppler reads it).
 */
function readTrailer(
  bytes: Uint8Array,
  at: number,
  context: PDFContext,
): { dict: PDFDict; whole: boolean } | undefined {
  const start = skipWhiteAndComments(bytes, at, bytes.length);
  if (bytes[start] !== 0x3c || bytes[start + 1] !== 0x3c) return undefined;
  const limit = Math.min(bytes.length, start + MAX_TRAILER_BYTES);
  const end = dictionaryEnd(bytes, start, limit);
  if (end !== undefined) {
    const dict = parseObject(bytes, start, end, context);
    if (dict instanceof PDFDict) return { dict, whole: true };
  }
  const parser = PDFObjectParser.forBytes(bytes.subarray(start + 2, end ?? limit), context);
  const dict = PDFDict.withContext(context);
  try {
    for (;;) {
      const key = parser.parseObject();
      if (!(key instanceof PDFName)) break;
      dict.set(key, parser.parseObject());
    }
  } catch {
    // the rest of the dictionary is damaged: keep the entries read so far
  }
  return dict.keys().length > 0 ? { dict, whole: false } : undefined;
}

/** A catalog a reader can use: a dictionary with a page tree. */
function usableCatalog(context: PDFContext, root: PDFObject | undefined): root is PDFRef {
  if (!(root instanceof PDFRef)) return false;
  const catalog = context.lookup(root);
  return (
    catalog instanceof PDFDict &&
    catalog.lookup(N.Type) === NAME.Catalog &&
    catalog.lookup(NAME.Pages) instanceof PDFDict
  );
}

function setTrailer(context: PDFContext, dict: PDFDict): void {
  const root = dict.get(NAME.Root);
  if (root instanceof PDFRef) context.trailerInfo.Root = root;
  context.trailerInfo.Info = dict.get(NAME.Info);
  context.trailerInfo.ID = dict.get(NAME.ID);
  context.trailerInfo.Encrypt = dict.get(NAME.Encrypt);
}

/** Chooses the trailer as qpdf does (the last one with a usable /Root), then xref streams, then the catalog. */
function findTrailer(rebuilder: Rebuilder, trailers: number[], xrefStreams: PDFDict[], bytes: Uint8Array): boolean {
  const { context } = rebuilder;
  for (const at of [...trailers].reverse()) {
    const trailer = readTrailer(bytes, at + TRAILER.length, context);
    if (!trailer || !usableCatalog(context, trailer.dict.get(NAME.Root))) continue;
    setTrailer(context, trailer.dict);
    if (!trailer.whole) rebuilder.repaired.add("trailer");
    return true;
  }
  for (const dict of [...xrefStreams].reverse()) {
    if (!usableCatalog(context, dict.get(NAME.Root))) continue;
    setTrailer(context, dict);
    return true;
  }
  let catalog: PDFRef | undefined;
  for (const [ref] of context.enumerateIndirectObjects()) {
    if (usableCatalog(context, ref) && (!catalog || ref.objectNumber > catalog.objectNumber)) catalog = ref;
  }
  if (!catalog) return false;
  context.trailerInfo.Root = catalog;
  rebuilder.repaired.add("trailer");
  return true;
}

/** Whether the file does not end as a PDF ends: no %%EOF in its last kilobyte (as Acrobat requires). */
export function endsEarly(input: Uint8Array): boolean {
  const tail = Buffer.from(input.buffer, input.byteOffset, input.byteLength).subarray(Math.max(0, input.length - TAIL));
  return tail.indexOf(EOF_MARKER) < 0;
}

/**
 * Rebuilds the document from the file's objects. Returns undefined when no catalog with a page
 * tree can be found (nothing a reader could open); throws PdfRejected when the file has more
 * objects than a rebuild takes on.
 */
export function reconstruct(input: Uint8Array): Reconstruction | undefined {
  const buffer = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const rebuilder = new Rebuilder(input, buffer);
  const { objectStreams, xrefStreams } = rebuilder.readObjects();
  rebuilder.readObjectStreams(objectStreams, OBJECT_STREAMS_BUDGET + input.length);
  const trailers = findAll(buffer, TRAILER).filter((at) => at === 0 || isDelimiterOrWhite(input[at - 1]));
  if (!findTrailer(rebuilder, trailers, xrefStreams, input)) return undefined;
  const truncated = endsEarly(input);
  rebuilder.repaired.add("cross_reference");
  if (truncated) rebuilder.repaired.add("truncated");
  const order: Repair[] = ["cross_reference", "stream_length", "trailer", "truncated"];
  return {
    context: rebuilder.context,
    repaired: order.filter((repair) => rebuilder.repaired.has(repair)),
    truncated,
  };
}

/**
 * The first page (1-based) that misses an object it uses, or that the page tree promises but
 * does not hold; undefined when every page is whole. What a page uses is everything its
 * dictionary refers to, not following /Parent (nor /P, an annotation's page) into other pages.
 */
export function firstIncompletePage(context: PDFContext): number | undefined {
  const catalog = context.lookup(context.trailerInfo.Root);
  const root = catalog instanceof PDFDict ? catalog.get(NAME.Pages) : undefined;
  const seen = new Set<string>();
  const nodes = new Set<PDFDict>();
  let page = 0;
  const complete = (values: (PDFObject | undefined)[]): boolean => {
    const pending = [...values];
    while (pending.length > 0) {
      let item = pending.pop();
      if (item instanceof PDFRef) {
        if (seen.has(item.tag)) continue;
        seen.add(item.tag);
        item = context.lookup(item);
        if (item === undefined) return false;
        if (item instanceof PDFDict && isPageNode(item)) continue; // another page: checked as such
      }
      const dict = item instanceof PDFRawStream ? item.dict : item;
      if (dict instanceof PDFDict) pending.push(...usedBy(dict));
      else if (dict instanceof PDFArray) pending.push(...dict.asArray());
    }
    return true;
  };
  const walk = (nodeRef: PDFObject | undefined): number | undefined => {
    const node = nodeRef instanceof PDFRef ? context.lookup(nodeRef) : nodeRef;
    if (!(node instanceof PDFDict) || nodes.has(node)) return page + 1;
    nodes.add(node);
    if (node.lookup(PDFName.of("Type")) !== NAME.Pages) {
      page++;
      return complete(usedBy(node)) ? undefined : page;
    }
    const kids = node.lookup(NAME.Kids);
    if (!(kids instanceof PDFArray) || !complete(usedBy(node).filter((value) => value !== node.get(NAME.Kids)))) {
      return page + 1;
    }
    for (const kid of kids.asArray()) {
      const incomplete = walk(kid);
      if (incomplete !== undefined) return incomplete;
    }
    return undefined;
  };
  const incomplete = walk(root);
  if (incomplete !== undefined) return incomplete;
  const count = numberOf(
    context.lookup(root) instanceof PDFDict ? (context.lookup(root) as PDFDict).get(NAME.Count) : undefined,
  );
  return count !== undefined && count > page ? page + 1 : undefined;
}

function usedBy(dict: PDFDict): PDFObject[] {
  return dict
    .entries()
    .filter(([key]) => key !== NAME.Parent && key !== NAME.P)
    .map(([, value]) => value);
}

const isPageNode = (dict: PDFDict) => {
  const type = dict.lookup(N.Type);
  return type === NAME.Page || type === NAME.Pages;
};
