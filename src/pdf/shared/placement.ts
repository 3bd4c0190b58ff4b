// Where images are drawn: walks every page's content (Form XObjects with their /Matrix, tiling
// patterns, transparency groups of soft masks, annotation appearances), tracks the current
// transformation matrix through q / Q / cm, and records for each image XObject the largest size,
// in points, at which any page draws it. An image's effective resolution is its pixel size
// divided by that.
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream, PDFRef } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { Op, scanContent } from "../shared/syntax.ts";
import type { InlineImage } from "../shared/syntax.ts";
import { decodeStreamData, N } from "../streams/filters.ts";
import { mayHoldInlineImages } from "./content-tokens.ts";
import { forgetDecoded, takeDecoded } from "./decoded-content.ts";

/** [a b c d e f]: x' = a x + c y + e, y' = b x + d y + f. */
export type Matrix = readonly [number, number, number, number, number, number];

export const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** `first` then `second` (PDF's `first × second`). */
export function multiply(first: Matrix, second: Matrix): Matrix {
  const [a, b, c, d, e, f] = first;
  const [A, B, C, D, E, F] = second;
  return [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F];
}

/** The largest size at which an image is drawn: lengths, in points, of its width and height edges. */
export interface Placement {
  width: number;
  height: number;
  /**
   * The largest share of a page's area that images cover, over the pages that draw this one
   * (0 to 1; 1 when unknown): how much of a page the image's own changes can weigh on.
   */
  pageShare: number;
  /**
   * The pages that draw it (0-based, in page-tree order) and the share of each one's area it
   * covers there (0 to 1, its draws on the page added up): what its own changes weigh on each page
   * at 100 dpi (the report's page SSIM, images/page-quality.ts). Absent when no page's area is known.
   */
  pages?: Map<number, number>;
}

/** Inline image data below this stays inline: as an XObject it would cost more than it saves. */
export const MIN_INLINE_BYTES = 4096;

/** The large inline images of one content stream. */
export interface InlineImages {
  /** The stream's decoded content, which the images' offsets refer to. */
  content: Uint8Array;
  images: InlineImage[];
  /** The resources the stream is drawn with: undefined if never drawn, null if drawn with several. */
  resources: PDFDict | null | undefined;
}

export interface Placements {
  /** Image XObjects found drawn, by stream. */
  images: Map<PDFRawStream, Placement>;
  /** Content streams holding inline images of at least `minInlineBytes` data. */
  inline: Map<PDFRawStream, InlineImages>;
  /** Where those inline images are drawn. */
  inlinePlaced: Map<InlineImage, Placement>;
  /** False when some content could not be read or the walk ran out of budget. */
  complete: boolean;
}

/** Content bytes decoded per stream, at most. */
const MAX_CONTENT_BYTES = 64 * 1024 * 1024;
/** Operators replayed in all, at most (a form drawn many times is replayed each time). */
const MAX_EVENTS = 20_000_000;
/** Content bytes decoded in all, at most. */
const MAX_TOTAL_CONTENT_BYTES = 512 * 1024 * 1024;
const MAX_FORM_DEPTH = 24;
/** The operators whose operands a walk of placements reads: cm's matrix, Do's and gs's names. */
export const PLACING_OPERATORS: ReadonlySet<number> = new Set([Op.cm, Op.Do, Op.gs]);
const MAX_PAGES = 1_000_000;

const P = {
  AP: PDFName.of("AP"),
  Annots: PDFName.of("Annots"),
  BBox: PDFName.of("BBox"),
  CropBox: PDFName.of("CropBox"),
  MediaBox: PDFName.of("MediaBox"),
  ExtGState: PDFName.of("ExtGState"),
  Form: PDFName.of("Form"),
  G: PDFName.of("G"),
  Kids: PDFName.of("Kids"),
  Matrix: PDFName.of("Matrix"),
  Page: PDFName.of("Page"),
  Pages: PDFName.of("Pages"),
  Pattern: PDFName.of("Pattern"),
  PatternType: PDFName.of("PatternType"),
  Rect: PDFName.of("Rect"),
  Resources: PDFName.of("Resources"),
  Root: PDFName.of("Root"),
  UserUnit: PDFName.of("UserUnit"),
  XObject: PDFName.of("XObject"),
} as const;

/** A content stream reduced to what the walk needs. */
export type Event =
  | { op: "q" | "Q" }
  | { op: "cm"; matrix: Matrix }
  | { op: "Do" | "gs"; name: string }
  | { op: "BI"; image: InlineImage; stream: PDFRawStream };

const SAVE: Event = { op: "q" };
const RESTORE: Event = { op: "Q" };

/** The event of an operator the walk follows (q, Q, a finite cm, a named Do or gs), else undefined. */
export function placingEvent(op: number, operands: readonly (number | string | null)[]): Event | undefined {
  if (op === Op.q) return SAVE;
  if (op === Op.Q) return RESTORE;
  if (op === Op.cm) {
    const m = operands.slice(-6);
    return m.length === 6 && m.every((v) => typeof v === "number" && Number.isFinite(v))
      ? { op: "cm", matrix: m as unknown as Matrix }
      : undefined;
  }
  if (op !== Op.Do && op !== Op.gs) return undefined;
  const name = operands.at(-1);
  return typeof name === "string" ? { op: op === Op.Do ? "Do" : "gs", name } : undefined;
}

/**
 * A stream's events as the font pass's walk read them (fonts/usage.ts reads every page's content
 * first): the walk here takes them instead of decoding and reading the stream again, when its data
 * is still what was read. Only streams without inline images (whose walk keeps the decoded bytes)
 * and up to MAX_WALKED_BYTES of content a document (the events of text_excel_warn_16p's 986 KB are
 * 10,400, most of them the shared q and Q). Its walk 24 -> 3 ms of the profile; the job's CPU on
 * optimised_geotopo_117p_3heights 2,115 -> 1,957 ms (6 rounds alternated, lower in 6).
 */
interface Walked {
  contents: Uint8Array;
  /** The stream's decoded length (counted against MAX_TOTAL_CONTENT_BYTES as if decoded here). */
  bytes: number;
  events: Event[];
}
const MAX_WALKED_BYTES = 32 * 1024 * 1024;
const walkedStreams = new WeakMap<PDFContext, { bytes: number; streams: Map<PDFRawStream, Walked> }>();

/** Leaves a stream's events (read from its `bytes` decoded bytes) for the walk of placements. */
export function keepWalked(context: PDFContext, stream: PDFRawStream, bytes: number, events: Event[]): void {
  let kept = walkedStreams.get(context);
  if (!kept) walkedStreams.set(context, (kept = { bytes: 0, streams: new Map() }));
  if (kept.streams.has(stream) || kept.bytes + bytes > MAX_WALKED_BYTES) return;
  kept.bytes += bytes;
  kept.streams.set(stream, { contents: stream.contents, bytes, events });
}

function takeWalked(context: PDFContext, stream: PDFRawStream): Walked | undefined {
  const walked = walkedStreams.get(context)?.streams.get(stream);
  return walked?.contents === stream.contents ? walked : undefined;
}

function numbers(array: PDFObject | undefined, count: number): number[] | undefined {
  if (!(array instanceof PDFArray) || array.size() < count) return undefined;
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    const item = array.lookup(i);
    if (!(item instanceof PDFNumber) || !Number.isFinite(item.asNumber())) return undefined;
    values.push(item.asNumber());
  }
  return values;
}

function matrixOf(dict: PDFDict): Matrix {
  const m = numbers(dict.lookup(P.Matrix), 6);
  return m ? (m as unknown as Matrix) : IDENTITY;
}

export interface PageInfo {
  page: PDFDict;
  /** Its resources, inherited from the page tree when it has none of its own. */
  resources: PDFDict | undefined;
  userUnit: number;
  /** The visible area (crop box, else media box), in square points; 0 when unknown. */
  area: number;
}

function boxArea(box: PDFObject | undefined): number {
  const b = numbers(box, 4);
  return b ? Math.abs((b[2]! - b[0]!) * (b[3]! - b[1]!)) : 0;
}

/** The pages of the document, each with its (inherited) resources, user unit and area. */
export function pagesOf(context: PDFContext): PageInfo[] | undefined {
  const root = context.lookup(context.trailerInfo.Root);
  if (!(root instanceof PDFDict)) return undefined;
  const pages: PageInfo[] = [];
  const seen = new Set<PDFDict>();
  type Inherited = { resources: PDFDict | undefined; media: PDFObject | undefined; crop: PDFObject | undefined };
  const visit = (node: PDFObject | undefined, inherited: Inherited, depth: number): boolean => {
    const dict = node instanceof PDFRef ? context.lookup(node) : node;
    if (!(dict instanceof PDFDict) || seen.has(dict) || depth > 64 || pages.length >= MAX_PAGES) return false;
    seen.add(dict);
    const own = dict.lookup(P.Resources);
    const here: Inherited = {
      resources: own instanceof PDFDict ? own : inherited.resources,
      media: dict.lookup(P.MediaBox) ?? inherited.media,
      crop: dict.lookup(P.CropBox) ?? inherited.crop,
    };
    const kids = dict.lookup(P.Kids);
    if (kids instanceof PDFArray && dict.lookup(N.Type) !== P.Page) {
      for (let i = 0; i < kids.size(); i++) if (!visit(kids.get(i), here, depth + 1)) return false;
      return true;
    }
    const unit = dict.lookup(P.UserUnit);
    const userUnit = unit instanceof PDFNumber && unit.asNumber() > 0 ? unit.asNumber() : 1;
    const area = (boxArea(here.crop) || boxArea(here.media)) * userUnit * userUnit;
    pages.push({ page: dict, resources: here.resources, userUnit, area });
    return true;
  };
  return visit(root.get(P.Pages), { resources: undefined, media: undefined, crop: undefined }, 0) ? pages : undefined;
}

/** The decoded bytes of a page's /Contents (one stream or an array of them), or undefined. */
export function contentStreamsOf(context: PDFContext, page: PDFDict): PDFRawStream[] | undefined {
  const contents = page.lookup(N.Contents);
  if (contents === undefined) return [];
  if (contents instanceof PDFRawStream) return [contents];
  if (!(contents instanceof PDFArray)) return undefined;
  const streams: PDFRawStream[] = [];
  for (let i = 0; i < contents.size(); i++) {
    const item = context.lookup(contents.get(i));
    if (!(item instanceof PDFRawStream)) return undefined;
    streams.push(item);
  }
  return streams;
}

/** A content stream's data, as the walk reads it (within MAX_CONTENT_BYTES; damaged data as far as it goes). */
const decodeContent = (stream: PDFRawStream) =>
  decodeStreamData(stream, MAX_CONTENT_BYTES, { predictors: true, tolerant: true });

class Walker {
  readonly images = new Map<PDFRawStream, Placement>();
  readonly inline = new Map<PDFRawStream, InlineImages>();
  readonly inlinePlaced = new Map<InlineImage, Placement>();
  complete = true;
  private events = 0;
  private contentBytes = 0;
  private readonly parsed = new Map<PDFRawStream, Event[] | undefined>();
  /**
   * Streams decoded (and counted) but not read (`pageEventsOf`), with the most events each can
   * hold: an event is an operator's keyword, and keywords stand a byte apart at least.
   */
  private readonly skimmed = new Map<PDFRawStream, number>();
  /** The events of the pages not replayed (`pageEventsOf`), at most: see walkPlacements. */
  eventsNotReplayed = 0;
  private readonly walkedPatterns = new Set<PDFRawStream>();
  private readonly active = new Set<PDFRawStream>();

  private readonly context: PDFContext;
  private readonly minInlineBytes: number;

  constructor(context: PDFContext, minInlineBytes: number) {
    this.context = context;
    this.minInlineBytes = minInlineBytes;
  }

  private decode(stream: PDFRawStream): Uint8Array | undefined {
    if (this.contentBytes > MAX_TOTAL_CONTENT_BYTES) return undefined;
    // What the font pass's walk decoded (strictly: the same bytes as tolerantly), or decoded here.
    const data = takeDecoded(this.context, stream) ?? decodeContent(stream);
    if (data) this.contentBytes += data.length;
    return data;
  }

  /** Parses content into events; undefined (and an incomplete walk) when it cannot. */
  eventsOf(streams: readonly PDFRawStream[]): Event[] | undefined {
    const lists: Event[][] = [];
    for (const stream of streams) {
      const events = this.parsed.has(stream) ? this.parsed.get(stream) : this.parse(stream);
      if (!events) return undefined;
      lists.push(events);
    }
    return lists.length === 1 ? lists[0] : lists.flat();
  }

  /**
   * The events of a page's streams, as eventsOf; or, when `skim` says the page's resources can
   * draw nothing the walk records (drawsNothing), the most events replaying them would count, as
   * long as their content holds no inline image: then the walk would record nothing from the page,
   * and its streams are decoded (and counted, as `decode` does) without being read.
   */
  pageEventsOf(streams: readonly PDFRawStream[], skim: boolean): Event[] | number | undefined {
    if (!skim) return this.eventsOf(streams);
    const lists: Event[][] = [];
    let most = 0;
    let skimmed = false;
    for (const stream of streams) {
      const events = this.parsed.has(stream)
        ? this.parsed.get(stream)
        : this.skimmed.has(stream)
          ? null
          : this.parse(stream, true);
      if (events === undefined) return undefined;
      if (events === null) {
        most += this.skimmed.get(stream)!;
        skimmed = true;
        continue;
      }
      lists.push(events);
      most += events.length;
    }
    if (!skimmed) return lists.length === 1 ? lists[0] : lists.flat();
    // A stream read before (or kept by the font pass) with an inline image: the page is read whole.
    if (lists.some((events) => events.some((event) => event.op === "BI"))) return this.eventsOf(streams);
    return most;
  }

  private parse(stream: PDFRawStream, skim = false): Event[] | undefined | null {
    const walked = this.contentBytes > MAX_TOTAL_CONTENT_BYTES ? undefined : takeWalked(this.context, stream);
    if (walked) {
      this.contentBytes += walked.bytes;
      this.parsed.set(stream, walked.events);
      return walked.events;
    }
    // A stream skimmed before was decoded then, within the budget, and counted.
    const again = this.skimmed.delete(stream);
    const bytes = again ? decodeContent(stream) : this.decode(stream);
    if (skim && bytes !== undefined && !mayHoldInlineImages(bytes)) {
      this.skimmed.set(stream, (bytes.length + 1) >> 1);
      return null;
    }
    const events: Event[] = [];
    const ok =
      bytes !== undefined &&
      scanContent(bytes, {
        operandsOf: PLACING_OPERATORS,
        operator: (op, operands) => {
          const event = placingEvent(op, operands);
          if (event) events.push(event);
        },
        inlineImage: (image) => {
          if (image.data.length < this.minInlineBytes) return;
          events.push({ op: "BI", image, stream });
          const known = this.inline.get(stream);
          if (known) known.images.push(image);
          else this.inline.set(stream, { content: bytes, images: [image], resources: undefined });
        },
      });
    const result = ok ? events : undefined;
    if (!result) {
      this.complete = false;
      this.inline.delete(stream);
    }
    this.parsed.set(stream, result);
    return result;
  }

  /** The events replayed so far (MAX_EVENTS at most). */
  get eventsReplayed(): number {
    return this.events;
  }

  /** Images drawn on the page being walked, with the area each covers there (square points). */
  private pageImages = new Map<Placement, number>();
  private pageCovered = 0;

  private record<K extends PDFRawStream | InlineImage>(map: Map<K, Placement>, image: K, ctm: Matrix): void {
    const width = Math.hypot(ctm[0], ctm[1]);
    const height = Math.hypot(ctm[2], ctm[3]);
    const area = Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2]);
    if (!Number.isFinite(width) || !Number.isFinite(height) || !Number.isFinite(area)) return;
    let known = map.get(image);
    if (!known) {
      known = { width, height, pageShare: 0 };
      map.set(image, known);
    } else {
      known.width = Math.max(known.width, width);
      known.height = Math.max(known.height, height);
    }
    this.pageImages.set(known, (this.pageImages.get(known) ?? 0) + area);
    this.pageCovered += area;
  }

  /** Closes page `index`: its images learn how much of it images cover, and each its own share. */
  endPage(area: number, index: number): void {
    const share = area > 0 ? Math.min(1, this.pageCovered / area) : 1;
    for (const [placement, covered] of this.pageImages) {
      placement.pageShare = Math.max(placement.pageShare, share);
      if (area > 0) (placement.pages ??= new Map()).set(index, Math.min(1, covered / area));
    }
    this.pageImages.clear();
    this.pageCovered = 0;
  }

  /** Draws a Form XObject (or an annotation appearance, a pattern cell) at `ctm`. */
  form(stream: PDFRawStream, ctm: Matrix, inherited: PDFDict | undefined, depth: number): void {
    if (depth > MAX_FORM_DEPTH || this.active.has(stream)) {
      this.complete = false;
      return;
    }
    const events = this.eventsOf([stream]);
    if (!events) return;
    const own = stream.dict.lookup(P.Resources);
    this.active.add(stream);
    this.run(events, own instanceof PDFDict ? own : inherited, multiply(matrixOf(stream.dict), ctm), depth + 1);
    this.active.delete(stream);
  }

  /** Tiling patterns in `resources` paint in the space of the content they belong to (`base`). */
  private patterns(resources: PDFDict | undefined, base: Matrix, depth: number): void {
    const patterns = resources?.lookup(P.Pattern);
    if (!(patterns instanceof PDFDict)) return;
    for (const [, value] of patterns.entries()) {
      const pattern = this.context.lookup(value);
      if (!(pattern instanceof PDFRawStream) || this.walkedPatterns.has(pattern)) continue;
      if (pattern.dict.lookup(P.PatternType) instanceof PDFNumber) {
        this.walkedPatterns.add(pattern);
        // A pattern's /Matrix maps pattern space to the default space of its parent content;
        // `form` applies it as it would a form's.
        this.form(pattern, base, resources, depth);
      }
    }
  }

  run(events: readonly Event[], resources: PDFDict | undefined, base: Matrix, depth: number): void {
    this.patterns(resources, base, depth);
    const xobjects = resources?.lookup(P.XObject);
    const states = resources?.lookup(P.ExtGState);
    const stack: Matrix[] = [];
    let ctm = base;
    for (const event of events) {
      if (++this.events > MAX_EVENTS) {
        this.complete = false;
        return;
      }
      switch (event.op) {
        case "q":
          stack.push(ctm);
          break;
        case "Q":
          ctm = stack.pop() ?? ctm;
          break;
        case "cm":
          ctm = multiply(event.matrix, ctm);
          break;
        case "Do": {
          const object =
            xobjects instanceof PDFDict ? this.context.lookup(xobjects.get(PDFName.of(event.name))) : undefined;
          if (!(object instanceof PDFRawStream)) break;
          const subtype = object.dict.lookup(N.Subtype);
          if (subtype === N.Image) this.record(this.images, object, ctm);
          else if (subtype === P.Form) this.form(object, ctm, resources, depth);
          break;
        }
        case "gs": {
          // A luminosity or alpha soft mask's group is drawn with the CTM of the moment.
          const state = states instanceof PDFDict ? this.context.lookup(states.get(PDFName.of(event.name))) : undefined;
          const mask = state instanceof PDFDict ? state.lookup(N.SMask) : undefined;
          const group = mask instanceof PDFDict ? mask.lookup(P.G) : undefined;
          if (group instanceof PDFRawStream) this.form(group, ctm, resources, depth);
          break;
        }
        case "BI": {
          this.record(this.inlinePlaced, event.image, ctm);
          const entry = this.inline.get(event.stream);
          if (entry)
            entry.resources =
              entry.resources === undefined || entry.resources === resources ? (resources ?? null) : null;
          break;
        }
      }
    }
  }

  /** Annotation appearances: the form's box, through its matrix, is fitted to /Rect. */
  annotations(page: PDFDict, base: Matrix, resources: PDFDict | undefined): void {
    const annots = page.lookup(P.Annots);
    if (!(annots instanceof PDFArray)) return;
    for (let i = 0; i < annots.size(); i++) {
      const annot = annots.lookup(i);
      if (!(annot instanceof PDFDict)) continue;
      const rect = numbers(annot.lookup(P.Rect), 4);
      const ap = annot.lookup(P.AP);
      if (!rect || !(ap instanceof PDFDict)) continue;
      for (const [, entry] of ap.entries()) {
        const value = this.context.lookup(entry);
        const forms =
          value instanceof PDFRawStream
            ? [value]
            : value instanceof PDFDict
              ? value
                  .entries()
                  .map(([, v]) => this.context.lookup(v))
                  .filter((v): v is PDFRawStream => v instanceof PDFRawStream)
              : [];
        for (const form of forms) {
          const fitted = fitToRect(form.dict, rect);
          if (fitted) this.form(form, multiply(fitted, base), resources, 0);
        }
      }
    }
  }
}

/** The matrix that maps an appearance's transformed /BBox onto the annotation's /Rect. */
function fitToRect(dict: PDFDict, rect: number[]): Matrix | undefined {
  const box = numbers(dict.lookup(P.BBox), 4);
  if (!box) return undefined;
  const m = matrixOf(dict);
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [x, y] of [
    [box[0]!, box[1]!],
    [box[2]!, box[1]!],
    [box[0]!, box[3]!],
    [box[2]!, box[3]!],
  ] as const) {
    xs.push(m[0] * x + m[2] * y + m[4]);
    ys.push(m[1] * x + m[3] * y + m[5]);
  }
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const [rx0, rx1] = [Math.min(rect[0]!, rect[2]!), Math.max(rect[0]!, rect[2]!)];
  const [ry0, ry1] = [Math.min(rect[1]!, rect[3]!), Math.max(rect[1]!, rect[3]!)];
  if (x1 - x0 <= 0 || y1 - y0 <= 0) return undefined;
  const sx = (rx1 - rx0) / (x1 - x0);
  const sy = (ry1 - ry0) / (y1 - y0);
  return [sx, 0, 0, sy, rx0 - x0 * sx, ry0 - y0 * sy];
}

/**
 * Finds, for every image XObject the pages draw, the largest size at which it is drawn; and the
 * inline images with at least `minInlineBytes` of data, with theirs.
 */
export function findImagePlacements(context: PDFContext, minInlineBytes = Infinity): Placements {
  try {
    return walkPlacements(context, minInlineBytes);
  } finally {
    // What the font pass left decoded or read for this walk.
    forgetDecoded(context);
    walkedStreams.delete(context);
  }
}

/**
 * Whether content drawn with these resources can draw nothing the walk records but inline images:
 * no XObject to draw, no pattern (walked with the resources), no graphics state with a soft mask.
 */
function drawsNothing(context: PDFContext, resources: PDFDict | undefined): boolean {
  if (!resources) return true;
  const xobjects = resources.lookup(P.XObject);
  if ((xobjects instanceof PDFDict && xobjects.keys().length > 0) || resources.lookup(P.Pattern) !== undefined) {
    return false;
  }
  const states = resources.lookup(P.ExtGState);
  if (!(states instanceof PDFDict)) return true;
  for (const [, value] of states.entries()) {
    const state = context.lookup(value);
    if (state instanceof PDFDict && state.lookup(N.SMask) instanceof PDFDict) return false;
  }
  return true;
}

/**
 * The walk of every page. A page whose resources draw nothing (drawsNothing) and whose content has
 * no inline image is not read, only decoded: text_excel_warn_16p's 15 pages of cells without an
 * image (920 KB of content) were read for nothing once the font pass no longer read them first
 * (fonts/subset.ts), this walk 100-150 ms of the job's profile, 16 ms with them skimmed; the job
 * with both changes 1,057 -> 954 ms of CPU (quick flags, 11 rounds alternated, lower in 9). Such a
 * page's events would have been counted towards MAX_EVENTS; when the most they can be could have
 * taken the walk past it, the walk is made again reading every page, so that it ends as it would
 * have.
 */
function walkPlacements(context: PDFContext, minInlineBytes: number, skim = true): Placements {
  const walker = new Walker(context, minInlineBytes);
  const result = () => ({
    images: walker.images,
    inline: walker.inline,
    inlinePlaced: walker.inlinePlaced,
    complete: walker.complete,
  });
  const pages = pagesOf(context);
  if (!pages) {
    walker.complete = false;
    return result();
  }
  for (const [index, { page, resources, userUnit, area }] of pages.entries()) {
    const base: Matrix = [userUnit, 0, 0, userUnit, 0, 0];
    const streams = contentStreamsOf(context, page);
    const events = streams ? walker.pageEventsOf(streams, skim && drawsNothing(context, resources)) : undefined;
    if (!streams) walker.complete = false;
    if (typeof events === "number") walker.eventsNotReplayed += events;
    else if (events) walker.run(events, resources, base, 0);
    walker.annotations(page, base, resources);
    walker.endPage(area, index);
  }
  if (skim && walker.eventsReplayed + walker.eventsNotReplayed > MAX_EVENTS) {
    return walkPlacements(context, minInlineBytes, false);
  }
  return result();
}
