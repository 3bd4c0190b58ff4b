// Content-stream compaction (balanced, extreme): a page's content rewritten in fewer bytes that
// draw the same thing.
//
// - Text placed glyph run by glyph run ("x 0 Td <..> Tj", as Skia, that is Chrome and Google Docs,
//   writes it) becomes one TJ array per line: each move becomes the adjustment that lands the next
//   glyph where the move put it, worked out from the font's widths (/W of an Identity-H font,
//   /Widths of a simple one; not Type 3) and the text state (Tf, Tc, Tw, Tz). Adjustments are
//   written to 1/1000 of the array's unit (a millionth of the font size) and rounded on the running
//   total, so no error adds up along a line; the line's later moves (Td, TD, T*) are corrected by
//   what the merged moves no longer do. Two decimals would save a third more on Chrome's CV, but
//   moved a few glyphs by a pixel in pdftoppm's rendering; three leave every pixel as it was.
// - A colour (g, rg, k, G, RG, K) or font (Tf) set again to the current one is dropped (the state
//   followed through q and Q, from a page's initial black).
// - Numbers are written in their shortest form (0.50 as .5), comments and whitespace that no token
//   needs go; the whitespace after each operator stays as the producer wrote it (its line rhythm
//   deflates well).
// Marked content (BDC, BMC, EMC: the tagged structure's MCIDs) and every other operator stay where
// they were: a run is merged only across a move, never across anything else. Inline images are
// copied as they are. Only streams one page draws are rewritten (forms and patterns are not). A
// stream that cannot be read in full, or whose rewrite does not deflate smaller, is left alone.
import { PDFArray, PDFDict, PDFName } from "@cantoo/pdf-lib";
import type { PDFContext, PDFRawStream } from "@cantoo/pdf-lib";
import { isRegular, textOf } from "../shared/syntax.ts";
import { ContentReader, formatNumber, T } from "../shared/content-tokens.ts";
import { decodeStreamData, deflate, N, numberOf } from "../streams/filters.ts";
import { contentStreamsOf, pagesOf } from "../shared/placement.ts";

/**
 * Content streams larger than this (decoded) are left alone: one is held at a time, decoded and
 * rewritten, within the memory budget of the smallest files (200 MB beside Node and the document).
 */
const MAX_CONTENT_BYTES = 16 * 1024 * 1024;
/**
 * What a document's rewritten content may come to, decoded, in page order: the pass reads some 10 MB
 * a second on a loaded machine, and its gains outside glyph-by-glyph text are a few percent; a
 * 544-page document's 20 MB took it 3.6 s of CPU for 3 % of its content (a CV holds 0.02-0.2 MB).
 */
const MAX_TOTAL_CONTENT_BYTES = 4 * 1024 * 1024;
/** The deflate level the rewrite and the original are compared at (the stream pass stores the winner at 9). */
const COMPARE_LEVEL = 6;
/** Decimals of a TJ adjustment written for a merged move (thousandths of a text space unit of font size 1). */
const ADJUSTMENT_DECIMALS = 3;
/** What a /Filter /FlateDecode entry costs in a stream's dictionary. */
const FILTER_ENTRY_BYTES = 20;
/** Decimals of a corrected move (Td): text space units. */
const MOVE_DECIMALS = 6;

export interface ContentReport {
  streams: number;
  rewritten: number;
  bytesBefore: number;
  bytesAfter: number;
}

const K = {
  DescendantFonts: PDFName.of("DescendantFonts"),
  DW: PDFName.of("DW"),
  Encoding: PDFName.of("Encoding"),
  ExtGState: PDFName.of("ExtGState"),
  FirstChar: PDFName.of("FirstChar"),
  Font: PDFName.of("Font"),
  FontDescriptor: PDFName.of("FontDescriptor"),
  IdentityH: PDFName.of("Identity-H"),
  MissingWidth: PDFName.of("MissingWidth"),
  Type0: PDFName.of("Type0"),
  Type3: PDFName.of("Type3"),
  W: PDFName.of("W"),
  Widths: PDFName.of("Widths"),
} as const;

/** An ASCII text's bytes (numbers and operators written here), without a TextEncoder call. */
function ascii(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
const OPEN = ascii("[");
const CLOSE = ascii("]");
const TJ = ascii("TJ");
const TJ_ONE = ascii("Tj");

// ---------------------------------------------------------------------------------------------
// Writing

class Output {
  private buffer: Uint8Array;
  private length = 0;
  private last = 0x0a;

  constructor(capacity: number) {
    this.buffer = new Uint8Array(Math.max(64, capacity));
  }

  /** The bytes src[start, end): a token as written, a space before it when the last one needs it. */
  token(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    if (n <= 0) return;
    if (isRegular(this.last) && isRegular(src[start])) this.byte(0x20);
    this.reserve(n);
    // Most tokens are a few bytes: copied by hand (a subarray and TypedArray.set cost more).
    if (n <= 16) {
      const { buffer, length } = this;
      for (let i = 0; i < n; i++) buffer[length + i] = src[start + i]!;
    } else this.buffer.set(src.subarray(start, end), this.length);
    this.length += n;
    this.last = src[end - 1]!;
  }

  /** An operator, and the whitespace after it (a line end unless told). */
  operator(raw: Uint8Array, after = 0x0a): void {
    this.token(raw);
    this.byte(after);
  }

  byte(b: number): void {
    this.reserve(1);
    this.buffer[this.length++] = b;
    this.last = b;
  }

  private reserve(more: number): void {
    if (this.length + more <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + more));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  bytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

// ---------------------------------------------------------------------------------------------
// Fonts: the advance of the codes a string shows

interface FontWidths {
  /** Bytes per code: 1 (simple fonts) or 2 (Identity-H). */
  bytes: 1 | 2;
  width(code: number): number;
}

const widthCache = new WeakMap<PDFDict, FontWidths | null>();

function numbersOf(array: PDFArray): number[] | undefined {
  const out: number[] = [];
  for (let i = 0; i < array.size(); i++) {
    const value = numberOf(array.lookup(i));
    if (value === undefined) return undefined;
    out.push(value);
  }
  return out;
}

/** The widths of a font whose advances we can work out: Identity-H Type 0 and simple fonts with /Widths (not Type 3). */
function widthsOf(font: PDFDict): FontWidths | undefined {
  const cached = widthCache.get(font);
  if (cached !== undefined) return cached ?? undefined;
  const widths = readWidths(font);
  widthCache.set(font, widths ?? null);
  return widths;
}

function readWidths(font: PDFDict): FontWidths | undefined {
  const subtype = font.lookup(N.Subtype);
  if (subtype === K.Type3) return undefined;
  if (subtype === K.Type0) {
    if (font.lookup(K.Encoding) !== K.IdentityH) return undefined;
    const descendants = font.lookup(K.DescendantFonts);
    const cid = descendants instanceof PDFArray ? descendants.lookup(0) : undefined;
    if (!(cid instanceof PDFDict)) return undefined;
    const dw = cid.has(K.DW) ? numberOf(cid.lookup(K.DW)) : 1000;
    if (dw === undefined) return undefined;
    const map = new Map<number, number>();
    const w = cid.lookup(K.W);
    if (w !== undefined) {
      if (!(w instanceof PDFArray)) return undefined;
      let i = 0;
      while (i < w.size()) {
        const first = numberOf(w.lookup(i));
        const second = w.lookup(i + 1);
        if (first === undefined || !Number.isInteger(first)) return undefined;
        if (second instanceof PDFArray) {
          const list = numbersOf(second);
          if (!list) return undefined;
          list.forEach((value, k) => map.has(first + k) || map.set(first + k, value));
          i += 2;
        } else {
          const last = numberOf(second);
          const value = numberOf(w.lookup(i + 2));
          if (last === undefined || value === undefined || last - first > 65535) return undefined;
          for (let c = first; c <= last; c++) if (!map.has(c)) map.set(c, value);
          i += 3;
        }
      }
    }
    return { bytes: 2, width: (code) => map.get(code) ?? dw };
  }
  const widths = font.lookup(K.Widths);
  const first = numberOf(font.lookup(K.FirstChar));
  if (!(widths instanceof PDFArray) || first === undefined) return undefined;
  const list = numbersOf(widths);
  if (!list) return undefined;
  const descriptor = font.lookup(K.FontDescriptor);
  const missing = (descriptor instanceof PDFDict ? numberOf(descriptor.lookup(K.MissingWidth)) : undefined) ?? 0;
  return { bytes: 1, width: (code) => list[code - first] ?? missing };
}

// ---------------------------------------------------------------------------------------------
// The rewrite

interface TextState {
  font: FontWidths | undefined;
  /** Whether the font is known (a form's initial font is not). */
  size: number | undefined;
  charSpacing: number | undefined;
  wordSpacing: number | undefined;
  /** Tz / 100. */
  scale: number | undefined;
  /** The operator and operands that set the current font ("Tf /F1 12", as bytes), when known. */
  fontKey: Uint8Array | undefined;
  /** The operator and operands that set the current fill and stroke colours ("rg .5 0 0"), when known. */
  fill: Uint8Array | undefined;
  stroke: Uint8Array | undefined;
}

const FILL = new Set(["g", "rg", "k"]);
const STROKE = new Set(["G", "RG", "K"]);

/** One element of a TJ array being built, as written (src[start, end)): a string (hex or literal) or an adjustment. */
interface Element {
  src: Uint8Array;
  start: number;
  end: number;
  kind: "hex" | "literal" | "number";
}

interface Run {
  elements: Element[];
  /** The original's text position after the run's last show, from its line matrix at the run's start (text space). */
  exact: number;
  /** The rewritten run's text position, from the same place. */
  written: number;
  /** Sum of the moves merged (the original line matrix is this far from the rewritten one). */
  moved: number;
  /** Moves may be merged into the run (where it starts on its line is known). */
  mergeable: boolean;
  /** The run is one Tj so far: its string. */
  single: Element | undefined;
}

interface Show {
  advance: number;
  elements: Element[];
}

const SHOW = new Set(["Tj", "TJ"]);

/**
 * Every operator the rewrite reads or follows (redundant's colours and fonts, the text operators, q
 * and Q, gs). Any other (a path's re, f*, W* n, marked content's BDC and EMC: two thirds of
 * text_excel_warn_16p's 71,180) is only copied after the run before it is written.
 */
const FOLLOWED = new Set([
  ...FILL,
  ...STROKE,
  ...SHOW,
  ...["cs", "sc", "scn", "CS", "SC", "SCN", "Tf", "gs", "BT", "ET", "Tm", "Td", "TD", "T*", "'", '"'],
  ...["Tc", "Tw", "Tz", "q", "Q"],
]);

const unknownState = (): TextState => ({
  font: undefined,
  size: undefined,
  charSpacing: undefined,
  wordSpacing: undefined,
  scale: undefined,
  fontKey: undefined,
  fill: undefined,
  stroke: undefined,
});

/**
 * The key of an operator and its operands: "op a b c" (a space after the operator, and between
 * operands), as bytes. Compared in place by keyMatches: building the text of each of
 * optimised_geotopo's 72,000 colour and font operators was a tenth of what its compaction allocated.
 */
function keyOf(op: string, r: ContentReader): Uint8Array {
  let length = op.length + 1;
  for (let i = 0; i < r.count; i++) length += r.ends[i]! - r.starts[i]! + (i > 0 ? 1 : 0);
  const key = new Uint8Array(length);
  let at = 0;
  for (let k = 0; k < op.length; k++) key[at++] = op.charCodeAt(k);
  key[at++] = 0x20;
  for (let i = 0; i < r.count; i++) {
    if (i > 0) key[at++] = 0x20;
    const src = r.src(i);
    for (let j = r.starts[i]!; j < r.ends[i]!; j++) key[at++] = src[j]!;
  }
  return key;
}

/** Whether `key` is keyOf(op, r), without making it. */
function keyMatches(key: Uint8Array, op: string, r: ContentReader): boolean {
  let at = 0;
  for (let k = 0; k < op.length; k++) if (key[at++] !== op.charCodeAt(k)) return false;
  if (key[at++] !== 0x20) return false;
  for (let i = 0; i < r.count; i++) {
    if (i > 0 && key[at++] !== 0x20) return false;
    const src = r.src(i);
    for (let j = r.starts[i]!; j < r.ends[i]!; j++) if (key[at++] !== src[j]) return false;
  }
  return at === key.length;
}

/** Joins two strings of the same kind: "<0058><0056>" is "<00580056>", "(a)(b)" is "(ab)". */
function joined(first: Element, second: Element): Uint8Array {
  const head = first.end - first.start - 1;
  const out = new Uint8Array(head + second.end - second.start - 1);
  out.set(first.src.subarray(first.start, first.end - 1), 0);
  out.set(second.src.subarray(second.start + 1, second.end), head);
  return out;
}

/** Rewrites one stream's tokens with the state carried in `state`. */
class Rewriter {
  readonly out: Output;
  state: TextState;
  private readonly stack: TextState[] = [];
  private readonly fonts: PDFDict | undefined;
  private readonly extGStates: PDFDict | undefined;
  private inText = false;
  private run: Run | undefined;
  /** A move seen after the run's last show, held until we know whether the next operator shows text. */
  private heldMove: number | undefined;
  /** How far the original line matrix is ahead of the rewritten one (text space x). */
  private lineOffset = 0;
  /** The original's text position from its line matrix (NaN: unknown). */
  private textX = Number.NaN;

  constructor(resources: PDFDict | undefined, state: TextState, capacity: number) {
    this.out = new Output(capacity);
    const fonts = resources?.lookup(K.Font);
    const states = resources?.lookup(K.ExtGState);
    this.fonts = fonts instanceof PDFDict ? fonts : undefined;
    this.extGStates = states instanceof PDFDict ? states : undefined;
    this.state = state;
  }

  /** Rewrites the stream's bytes into `out`; false when they cannot be read as content. */
  write(bytes: Uint8Array): boolean {
    const reader = new ContentReader(bytes);
    const read = reader.read(
      (operator) => this.operator(operator),
      (start, end) => {
        this.flush();
        this.out.token(reader.bytes, start, end);
        this.out.byte(0x0a);
      },
    );
    if (!read) return false;
    this.flush();
    // The next stream of the page goes on from the original's line matrix.
    if (this.inText && this.lineOffset !== 0) this.emitMove(0, 0, "Td");
    // Operands without an operator at the end: kept.
    this.copyOperands(reader);
    return true;
  }

  /** Whether an operator sets a colour or font that is already the current one (it is then dropped). */
  private redundant(op: string, r: ContentReader): boolean {
    const s = this.state;
    const fill = FILL.has(op);
    if (fill || STROKE.has(op)) {
      let numbers = true;
      for (let i = 0; i < r.count; i++) if (r.types[i] !== T.Number) numbers = false;
      const current = fill ? s.fill : s.stroke;
      if (numbers && current !== undefined && keyMatches(current, op, r)) return true;
      const key = numbers ? keyOf(op, r) : undefined;
      if (fill) s.fill = key;
      else s.stroke = key;
    } else if (op === "cs" || op === "sc" || op === "scn") s.fill = undefined;
    else if (op === "CS" || op === "SC" || op === "SCN") s.stroke = undefined;
    else if (op === "Tf") {
      if (s.fontKey !== undefined && keyMatches(s.fontKey, op, r)) return true;
      s.fontKey = keyOf(op, r);
    } else if (op === "gs") s.fontKey = undefined;
    return false;
  }

  private operator(r: ContentReader): void {
    const op = r.op;
    if (!FOLLOWED.has(op)) {
      this.flush();
      this.copy(r);
      return;
    }
    if (this.redundant(op, r)) return;
    // A move after a show, in a run: held, to be merged if text follows.
    if (op === "Td" && this.run?.mergeable && this.heldMove === undefined && r.count === 2) {
      const tx = r.number(0);
      if (tx !== undefined && r.number(1) === 0) {
        this.heldMove = tx;
        return;
      }
    }
    if (SHOW.has(op) && this.inText) {
      const show = this.showable(op, r);
      if (show) {
        if (this.run && this.heldMove !== undefined) {
          this.merge(this.heldMove, show);
          this.heldMove = undefined;
          return;
        }
        this.flush();
        const start = this.textX;
        const mergeable = Number.isFinite(start);
        this.run = {
          elements: [],
          exact: mergeable ? start : 0,
          written: mergeable ? start : 0,
          moved: 0,
          mergeable,
          single: op === "Tj" ? show.elements[0] : undefined,
        };
        this.append(show);
        return;
      }
    }
    this.flush();
    const s = this.state;
    switch (op) {
      case "BT":
        this.inText = true;
        this.lineOffset = 0;
        this.textX = 0;
        break;
      case "ET":
        this.inText = false;
        this.lineOffset = 0;
        this.textX = Number.NaN;
        break;
      case "Tm":
        this.lineOffset = 0;
        this.textX = 0;
        break;
      case "Td":
      case "TD": {
        this.textX = 0;
        const tx = r.number(0);
        const ty = r.number(1);
        if (this.lineOffset !== 0 && r.count === 2 && tx !== undefined && ty !== undefined) {
          this.emitMove(tx, ty, op);
          return;
        }
        // A move we cannot correct (malformed operands): the line matrix is put right first.
        if (this.lineOffset !== 0) this.emitMove(0, 0, "Td");
        break;
      }
      case "T*":
      case "'":
      case '"':
        if (this.lineOffset !== 0) this.emitMove(0, 0, "Td");
        this.textX = op === "T*" ? 0 : Number.NaN;
        break;
      case "Tj":
      case "TJ":
        this.textX = Number.NaN;
        break;
      case "Tf": {
        const font =
          r.count > 0 && r.types[0] === T.Other && r.src(0)[r.starts[0]!] === 0x2f
            ? this.fonts?.lookup(PDFName.of(nameOf(r, 0)))
            : undefined;
        s.font = font instanceof PDFDict ? widthsOf(font) : undefined;
        s.size = r.number(1);
        break;
      }
      case "Tc":
        s.charSpacing = r.number(0);
        break;
      case "Tw":
        s.wordSpacing = r.number(0);
        break;
      case "Tz": {
        const tz = r.number(0);
        s.scale = tz === undefined ? undefined : tz / 100;
        break;
      }
      case "q":
        this.stack.push({ ...s });
        break;
      case "Q":
        this.state = this.stack.pop() ?? unknownState();
        break;
      case "gs": {
        const gs =
          r.count > 0 && r.types[0] === T.Other ? this.extGStates?.lookup(PDFName.of(nameOf(r, 0))) : undefined;
        if (!(gs instanceof PDFDict) || gs.has(K.Font)) s.font = undefined;
        break;
      }
    }
    this.copy(r);
  }

  /** Writes an operator and its operands as they came. */
  private copy(r: ContentReader): void {
    this.copyOperands(r);
    this.out.token(r.bytes, r.opStart, r.opEnd);
    this.out.byte(r.after);
  }

  /** Writes the reader's operands as they came. */
  private copyOperands(r: ContentReader): void {
    const out = this.out;
    for (let i = 0; i < r.count; i++) out.token(r.src(i), r.starts[i], r.ends[i]);
  }

  /** Writes a move corrected by what merged moves left out of the line matrix. */
  private emitMove(tx: number, ty: number, op: string): void {
    this.out.token(ascii(formatNumber(tx + this.lineOffset, MOVE_DECIMALS)));
    this.out.token(ascii(formatNumber(ty, MOVE_DECIMALS)));
    this.out.operator(ascii(op));
    this.lineOffset = 0;
  }

  /**
   * A show operator's advance in text space and its elements, when its strings' widths are known
   * (its font, size, spacing and scaling known, its strings whole codes); else undefined.
   */
  private showable(op: string, r: ContentReader): Show | undefined {
    const { font, size, charSpacing, wordSpacing, scale } = this.state;
    if (!font || size === undefined || charSpacing === undefined || scale === undefined || size * scale === 0) {
      return undefined;
    }
    if (font.bytes === 1 && wordSpacing === undefined) return undefined;
    // The operands shown: Tj's string, or the items of TJ's array.
    let from = 0;
    let to = r.count;
    if (op === "Tj") {
      if (r.count !== 1 || r.types[0] !== T.String) return undefined;
    } else {
      if (r.count < 2 || r.src(0)[r.starts[0]!] !== 0x5b || r.src(r.count - 1)[r.starts[r.count - 1]!] !== 0x5d) {
        return undefined;
      }
      from = 1;
      to = r.count - 1;
    }
    let advance = 0;
    const elements: Element[] = [];
    for (let item = from; item < to; item++) {
      const type = r.types[item];
      const src = r.src(item);
      const start = r.starts[item]!;
      const end = r.ends[item]!;
      if (type === T.Number) {
        advance -= (r.number(item)! / 1000) * size * scale;
        elements.push({ src, start, end, kind: "number" });
        continue;
      }
      if (type !== T.String) return undefined;
      const bytes = r.string(item);
      if (bytes.length % font.bytes !== 0) return undefined;
      for (let i = 0; i < bytes.length; i += font.bytes) {
        const code = font.bytes === 2 ? bytes[i]! * 256 + bytes[i + 1]! : bytes[i]!;
        const space = font.bytes === 1 && code === 32 ? wordSpacing! : 0;
        advance += ((font.width(code) / 1000) * size + charSpacing + space) * scale;
      }
      const kind = src[start] === 0x3c ? "hex" : "literal";
      elements.push({ src, start, end, kind });
    }
    return { advance, elements };
  }

  private append(show: Show): void {
    const run = this.run!;
    for (const element of show.elements) {
      const last = run.elements.at(-1);
      if (last && element.kind !== "number" && last.kind === element.kind) {
        const src = joined(last, element);
        run.elements[run.elements.length - 1] = { src, start: 0, end: src.length, kind: element.kind };
      } else run.elements.push(element);
    }
    run.exact += show.advance;
    run.written += show.advance;
  }

  /** Merges "tx 0 Td" and the show after it into the run. */
  private merge(tx: number, show: Show): void {
    const run = this.run!;
    const unit = (this.state.size! * this.state.scale!) / 1000;
    // The move puts the next glyph at the line's start plus every move merged.
    run.moved += tx;
    const text = formatNumber((run.written - run.moved) / unit, ADJUSTMENT_DECIMALS);
    const adjustment = Number(text);
    if (adjustment !== 0) {
      const src = ascii(text);
      run.elements.push({ src, start: 0, end: src.length, kind: "number" });
    }
    run.written -= adjustment * unit;
    run.exact = run.moved;
    run.single = undefined;
    this.append(show);
  }

  /** Writes the run (and a move held after it). */
  private flush(): void {
    const run = this.run;
    if (!run) return;
    this.run = undefined;
    if (run.single) {
      this.out.token(run.single.src, run.single.start, run.single.end);
      this.out.operator(TJ_ONE);
    } else {
      this.out.token(OPEN);
      for (const element of run.elements) this.out.token(element.src, element.start, element.end);
      this.out.token(CLOSE);
      this.out.operator(TJ);
    }
    this.lineOffset += run.moved;
    this.textX = run.mergeable ? run.exact - run.moved : Number.NaN;
    if (this.heldMove !== undefined) {
      const tx = this.heldMove;
      this.heldMove = undefined;
      this.textX = 0;
      this.emitMove(tx, 0, "Td");
    }
  }
}

/** Operand i's name (without the slash, #xx escapes applied). */
function nameOf(r: ContentReader, i: number): string {
  const text = textOf(r.src(i), r.starts[i]! + 1, r.ends[i]!);
  return text.includes("#")
    ? text.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : text;
}

/** About what data costs stored as the stream pass stores it: plain, or deflated with a /Filter entry. */
const storedCost = (data: Uint8Array) =>
  Math.min(data.length, deflate(data, COMPARE_LEVEL).length + FILTER_ENTRY_BYTES);

/** A stream rewritten, and the state it leaves for the page's next stream. */
interface Compacted {
  bytes: Uint8Array;
  state: TextState;
}

/** Rewrites a content stream's decoded bytes; undefined when it cannot be read. */
export function compactContent(
  bytes: Uint8Array,
  resources: PDFDict | undefined,
  state: TextState,
): Compacted | undefined {
  const rewriter = new Rewriter(resources, state, bytes.length);
  if (!rewriter.write(bytes)) return undefined;
  return { bytes: rewriter.out.bytes(), state: rewriter.state };
}

/** A page's text state at the start of its content. */
export const pageStartState = (): TextState => ({
  ...unknownState(),
  charSpacing: 0,
  wordSpacing: 0,
  scale: 1,
  fill: ascii("g 0"),
  stroke: ascii("G 0"),
});

/**
 * Compacts the content streams of the document's pages (each drawn by one page only), keeping a
 * rewrite when it deflates smaller than the stream as it was.
 */
export function compactContentStreams(context: PDFContext): ContentReport {
  const report: ContentReport = { streams: 0, rewritten: 0, bytesBefore: 0, bytesAfter: 0 };
  const pages = pagesOf(context);
  if (!pages) return report;
  const uses = new Map<PDFRawStream, number>();
  const streamsOf = new Map<PDFDict, PDFRawStream[]>();
  for (const { page } of pages) {
    const streams = contentStreamsOf(context, page);
    if (!streams) continue;
    streamsOf.set(page, streams);
    for (const stream of streams) uses.set(stream, (uses.get(stream) ?? 0) + 1);
  }
  let total = 0;
  for (const { page, resources } of pages) {
    const streams = streamsOf.get(page);
    if (!streams || streams.some((stream) => uses.get(stream) !== 1 || stream.dict.has(N.Subtype))) continue;
    let state: TextState | undefined = pageStartState();
    for (const stream of streams) {
      report.streams++;
      const decoded =
        stream.contents.length === 0
          ? stream.contents
          : decodeStreamData(stream, MAX_CONTENT_BYTES, { predictors: true });
      if (decoded && (total += decoded.length) > MAX_TOTAL_CONTENT_BYTES) return report;
      const result: Compacted | undefined = decoded && state ? compactContent(decoded, resources, state) : undefined;
      // What follows a stream we could not read starts from an unknown state.
      state = result?.state;
      if (!result || !decoded || result.bytes.length >= decoded.length) continue;
      // Fewer bytes do not always deflate smaller (a producer's repeated lines may lose their rhythm).
      const before = storedCost(decoded);
      const after = storedCost(result.bytes);
      if (after >= before) continue;
      report.rewritten++;
      report.bytesBefore += before;
      report.bytesAfter += after;
      // Stored plain: the stream pass deflates it at the highest level, as it would have the original.
      stream.dict.delete(N.Filter);
      stream.dict.delete(N.DecodeParms);
      stream.updateContents(result.bytes);
    }
  }
  return report;
}

export type { TextState };
