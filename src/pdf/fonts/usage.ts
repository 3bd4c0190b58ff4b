// Which codes each font draws: every content stream the document draws is read for its
// text-showing operators (Tj, TJ, ', "), with the font Tf (or an ExtGState's /Font) made current,
// kept across q / Q and handed down to Form XObjects, as a reader draws them: page contents, Form
// XObjects, tiling patterns, soft-mask groups, annotation appearances and the glyph procedures of
// the Type 3 fonts drawn.
//
// A font is a candidate for subsetting only when every use of it was read: fonts of a resource
// dictionary no read stream was drawn with, of a content stream nothing draws, of an ExtGState,
// and of an interactive form's default resources (AcroForm /DR, which the default appearances /DA
// name: filling a field needs every glyph) are excluded. When something cannot be read (a
// damaged stream, text shown with no font, a form without its own resources that nothing draws)
// the usage is incomplete and no font is subset.
import {
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFString,
} from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { Op, scanContent } from "../shared/syntax.ts";
import { decodeStreamData, N } from "../streams/filters.ts";
import { dictMap } from "../shared/dict-map.ts";
import {
  contentStreamsOf,
  keepWalked,
  MIN_INLINE_BYTES,
  pagesOf,
  placingEvent,
  PLACING_OPERATORS,
} from "../shared/placement.ts";
import type { Event as PlacingEvent } from "../shared/placement.ts";
import { keepDecoded } from "../shared/decoded-content.ts";

export interface FontUsage {
  /** Codes drawn, by font dictionary: bytes for simple fonts, 2-byte codes for Identity-encoded Type 0 fonts. */
  codes: Map<PDFDict, Set<number>>;
  /** Fonts that must keep every glyph. */
  excluded: Set<PDFDict>;
  /** False when some use of some font could not be read: nothing may be subset. */
  complete: boolean;
}

const F = {
  AcroForm: PDFName.of("AcroForm"),
  AP: PDFName.of("AP"),
  Annots: PDFName.of("Annots"),
  BBox: PDFName.of("BBox"),
  CharProcs: PDFName.of("CharProcs"),
  DA: PDFName.of("DA"),
  DR: PDFName.of("DR"),
  Encoding: PDFName.of("Encoding"),
  ExtGState: PDFName.of("ExtGState"),
  Font: PDFName.of("Font"),
  Form: PDFName.of("Form"),
  G: PDFName.of("G"),
  IdentityH: PDFName.of("Identity-H"),
  IdentityV: PDFName.of("Identity-V"),
  Kids: PDFName.of("Kids"),
  Pattern: PDFName.of("Pattern"),
  PatternType: PDFName.of("PatternType"),
  Resources: PDFName.of("Resources"),
  Type0: PDFName.of("Type0"),
  Type3: PDFName.of("Type3"),
  XObject: PDFName.of("XObject"),
} as const;

const MAX_CONTENT_BYTES = 64 * 1024 * 1024;
const MAX_TOTAL_CONTENT_BYTES = 512 * 1024 * 1024;
const MAX_EVENTS = 20_000_000;
const MAX_DEPTH = 24;
/** The operators whose operands the walk reads: their name. */
const NAMED_OPERATORS: ReadonlySet<number> = new Set([Op.Tf, Op.Do, Op.gs]);
/** Those and the walk of placements' (cm), whose events this walk leaves it (shared/placement.ts). */
const READ_OPERATORS: ReadonlySet<number> = new Set([...NAMED_OPERATORS, ...PLACING_OPERATORS]);

type Event = { op: "q" | "Q" } | { op: "Tf" | "Do" | "gs"; name: string } | { op: "show"; strings: Uint8Array[] };
const SAVE: Event = { op: "q" };
const RESTORE: Event = { op: "Q" };

/** Whether a Type 0 font's codes are 2-byte CIDs (Identity-H or -V); other CMaps are not read here. */
export function isIdentityType0(font: PDFDict): boolean {
  const encoding = font.lookup(F.Encoding);
  return font.lookup(N.Subtype) === F.Type0 && (encoding === F.IdentityH || encoding === F.IdentityV);
}

/** The state of one content stream being replayed (a page's several streams share one). */
interface Replay {
  resources: PDFDict | undefined;
  fonts: PDFObject | undefined;
  xobjects: PDFObject | undefined;
  states: PDFObject | undefined;
  /** The current font, saved by q and restored by Q. */
  font: PDFDict | undefined;
  stack: (PDFDict | undefined)[];
  depth: number;
}

/**
 * Replays content as it is read (nothing of a stream is kept once read: the events and strings
 * of a long document's pages would take tens of megabytes); a form drawn again with the same
 * resources and current font is not read again, since it shows the same codes.
 */
class UsageWalker {
  readonly codes = new Map<PDFDict, Set<number>>();
  readonly excluded = new Set<PDFDict>();
  readonly scannedResources = new Set<PDFDict>();
  readonly walked = new Set<PDFRawStream>();
  complete = true;
  private events = 0;
  private contentBytes = 0;
  private readonly played = new Map<PDFRawStream, Map<PDFDict | undefined, Set<PDFDict | undefined>>>();
  private readonly active = new Set<PDFRawStream>();
  private readonly type3Walked = new Set<PDFDict>();
  private readonly patternsWalked = new Set<PDFRawStream>();
  private readonly context: PDFContext;

  constructor(context: PDFContext) {
    this.context = context;
  }

  /** Reads a stream's events into `onEvent`; false (and an incomplete usage) when it cannot be read. */
  scan(stream: PDFRawStream, onEvent: (event: Event) => void): boolean {
    this.walked.add(stream);
    // An empty stream is empty content, whatever its filter (Flate cannot decode zero bytes).
    const bytes =
      stream.contents.length === 0
        ? stream.contents
        : this.contentBytes > MAX_TOTAL_CONTENT_BYTES
          ? undefined
          : decodeStreamData(stream, MAX_CONTENT_BYTES, { predictors: true, tolerant: false });
    if (bytes) this.contentBytes += bytes.length;
    // The strings of the operator being read: handed to onEvent, which keeps none of them.
    const strings: Uint8Array[] = [];
    let inline = false;
    let images = false;
    // The events the walk of placements reads from this stream, left for it (shared/placement.ts).
    const placing: PlacingEvent[] = [];
    const ok =
      bytes !== undefined &&
      scanContent(bytes, {
        operandsOf: READ_OPERATORS,
        string: (s) => strings.push(s),
        // A stream with inline images that the image pass converts: left decoded for its walk.
        inlineImage: (image) => {
          images = true;
          inline ||= image.data.length >= MIN_INLINE_BYTES;
        },
        operator: (op, operands) => {
          const event = placingEvent(op, operands);
          if (event) placing.push(event);
          if (op === Op.q) onEvent(SAVE);
          else if (op === Op.Q) onEvent(RESTORE);
          else if (NAMED_OPERATORS.has(op)) {
            // Tf's name comes before its size.
            const name = operands.at(op === Op.Tf ? -2 : -1);
            if (typeof name === "string") onEvent({ op: op === Op.Tf ? "Tf" : op === Op.Do ? "Do" : "gs", name });
            else if (op === Op.Tf) this.complete = false;
          } else if (op === Op.Tj || op === Op.TJ || op === Op.quote || op === Op.doubleQuote) {
            onEvent({ op: "show", strings });
          }
          strings.length = 0;
        },
      });
    if (!ok) this.complete = false;
    if (inline && bytes) keepDecoded(this.context, stream, bytes);
    // An empty stream is not decoded here: the walk of placements decodes it as it would.
    if (ok && !images && stream.contents.length > 0) keepWalked(this.context, stream, bytes.length, placing);
    return ok;
  }

  private record(font: PDFDict, strings: readonly Uint8Array[]): void {
    let codes = this.codes.get(font);
    if (!codes) this.codes.set(font, (codes = new Set()));
    const wide = isIdentityType0(font);
    // By index: an iterator makes a result object a byte until V8 has optimised the loop.
    for (let k = 0; k < strings.length; k++) {
      const s = strings[k]!;
      if (wide) for (let i = 0; i + 1 < s.length; i += 2) codes.add((s[i]! << 8) | s[i + 1]!);
      else for (let i = 0; i < s.length; i++) codes.add(s[i]!);
    }
  }

  /** A Type 3 font's glyphs are content streams: every one of them is read, with the font's resources. */
  private type3(font: PDFDict, inherited: PDFDict | undefined, depth: number): void {
    if (this.type3Walked.has(font)) return;
    this.type3Walked.add(font);
    const procs = font.lookup(F.CharProcs);
    const own = font.lookup(F.Resources);
    if (!(procs instanceof PDFDict)) return;
    for (const [, value] of procs.entries()) {
      const proc = this.context.lookup(value);
      if (proc instanceof PDFRawStream) this.form(proc, own instanceof PDFDict ? own : inherited, undefined, depth);
      else this.complete = false;
    }
  }

  /** A Form XObject, pattern cell, soft-mask group, appearance or glyph procedure, drawn with `font` current. */
  form(stream: PDFRawStream, inherited: PDFDict | undefined, font: PDFDict | undefined, depth: number): void {
    if (depth > MAX_DEPTH) {
      this.complete = false;
      return;
    }
    if (this.active.has(stream)) return;
    const own = stream.dict.lookup(F.Resources);
    const resources = own instanceof PDFDict ? own : inherited;
    let byResources = this.played.get(stream);
    if (!byResources) this.played.set(stream, (byResources = new Map<PDFDict | undefined, Set<PDFDict | undefined>>()));
    let fonts = byResources.get(resources);
    if (!fonts) byResources.set(resources, (fonts = new Set<PDFDict | undefined>()));
    if (fonts.has(font)) return;
    fonts.add(font);
    this.active.add(stream);
    this.play([stream], resources, font, depth + 1);
    this.active.delete(stream);
  }

  private patterns(resources: PDFDict, depth: number): void {
    const patterns = resources.lookup(F.Pattern);
    if (!(patterns instanceof PDFDict)) return;
    for (const [, value] of patterns.entries()) {
      const pattern = this.context.lookup(value);
      if (!(pattern instanceof PDFRawStream) || this.patternsWalked.has(pattern)) continue;
      if (pattern.dict.lookup(F.PatternType) instanceof PDFNumber) {
        this.patternsWalked.add(pattern);
        this.form(pattern, resources, undefined, depth);
      }
    }
  }

  /** Reads `streams` one after the other as one content stream drawn with `resources`. */
  play(
    streams: readonly PDFRawStream[],
    resources: PDFDict | undefined,
    font: PDFDict | undefined,
    depth: number,
  ): void {
    if (resources) {
      this.scannedResources.add(resources);
      this.patterns(resources, depth);
    }
    const replay: Replay = {
      resources,
      fonts: resources?.lookup(F.Font),
      xobjects: resources?.lookup(F.XObject),
      states: resources?.lookup(F.ExtGState),
      font,
      stack: [],
      depth,
    };
    for (const stream of streams) if (!this.scan(stream, (event) => this.step(replay, event))) return;
  }

  private step(replay: Replay, event: Event): void {
    if (++this.events > MAX_EVENTS) {
      this.complete = false;
      return;
    }
    const { resources, depth } = replay;
    switch (event.op) {
      case "q":
        replay.stack.push(replay.font);
        break;
      case "Q":
        if (replay.stack.length > 0) replay.font = replay.stack.pop();
        break;
      case "Tf": {
        const fonts = replay.fonts;
        const found = fonts instanceof PDFDict ? fonts.lookup(PDFName.of(event.name)) : undefined;
        replay.font = found instanceof PDFDict ? found : undefined;
        if (!replay.font) this.complete = false;
        else if (replay.font.lookup(N.Subtype) === F.Type3) this.type3(replay.font, resources, depth);
        break;
      }
      case "show":
        if (replay.font) this.record(replay.font, event.strings);
        else if (event.strings.some((s) => s.length > 0)) this.complete = false;
        break;
      case "Do": {
        const xobjects = replay.xobjects;
        const object =
          xobjects instanceof PDFDict ? this.context.lookup(xobjects.get(PDFName.of(event.name))) : undefined;
        if (object instanceof PDFRawStream && object.dict.lookup(N.Subtype) === F.Form) {
          this.form(object, resources, replay.font, depth);
        }
        break;
      }
      case "gs": {
        const states = replay.states;
        const state = states instanceof PDFDict ? this.context.lookup(states.get(PDFName.of(event.name))) : undefined;
        if (!(state instanceof PDFDict)) break;
        const mask = state.lookup(N.SMask);
        const group = mask instanceof PDFDict ? mask.lookup(F.G) : undefined;
        if (group instanceof PDFRawStream) this.form(group, resources, undefined, depth);
        const set = state.lookup(F.Font);
        if (set instanceof PDFArray) {
          const chosen = set.lookup(0);
          replay.font = chosen instanceof PDFDict ? chosen : undefined;
          if (replay.font) this.excluded.add(replay.font);
        }
        break;
      }
    }
  }

  annotations(page: PDFDict, resources: PDFDict | undefined): void {
    const annots = page.lookup(F.Annots);
    if (!(annots instanceof PDFArray)) return;
    for (let i = 0; i < annots.size(); i++) {
      const annot = annots.lookup(i);
      if (!(annot instanceof PDFDict)) continue;
      for (const form of appearanceStreams(annot)) this.form(form, resources, undefined, 0);
    }
  }
}

/** An annotation's appearance streams: /N, /R and /D, each a stream or a dictionary of states. */
function appearanceStreams(annot: PDFDict): PDFRawStream[] {
  const ap = annot.lookup(F.AP);
  if (!(ap instanceof PDFDict)) return [];
  const streams: PDFRawStream[] = [];
  for (const entry of ap.values()) {
    const value = annot.context.lookup(entry);
    const candidates = value instanceof PDFDict ? value.values().map((v) => annot.context.lookup(v)) : [value];
    for (const candidate of candidates) if (candidate instanceof PDFRawStream) streams.push(candidate);
  }
  return streams;
}

/** The fonts of a resource dictionary. */
function fontsOf(resources: PDFDict): PDFDict[] {
  const fonts = resources.lookup(F.Font);
  if (!(fonts instanceof PDFDict)) return [];
  return fonts
    .values()
    .map((v) => (v instanceof PDFRef ? resources.context.lookup(v) : v))
    .filter((v): v is PDFDict => v instanceof PDFDict);
}

/** Whether a walk of direct objects goes into this one (what else it holds is no dictionary). */
const holdsDicts = (object: PDFObject): boolean =>
  object instanceof PDFDict || object instanceof PDFStream || object instanceof PDFArray;

/** A dictionary of the document, with its stream when it is a stream's. */
export type DictOf = [PDFDict, PDFStream | undefined];

/**
 * Every dictionary of the document, direct ones included (stream dictionaries with their stream),
 * as a list, for a pass that reads them several times and changes none in between (fonts/subset.ts:
 * four walks of every dictionary a job were 4-6 % of a tagged document's CPU, issue 42). Only what
 * may hold a dictionary is stacked, and maps and arrays are read in place: names, numbers and
 * strings yield nothing and hold nothing, so the dictionaries come in the same order. Maps are read
 * by forEach and the list made without a generator: a job's one walk runs before V8 has optimised
 * it, where a generator's step and a map iterator's each make a result object (and the iterator an
 * entry pair).
 */
export function everyDictList(context: PDFContext): DictOf[] {
  const list: DictOf[] = [];
  const seen = new Set<PDFObject>();
  const stack: PDFObject[] = [];
  const stackValue = (value: PDFObject) => {
    if (holdsDicts(value)) stack.push(value);
  };
  const objects = context.enumerateIndirectObjects();
  for (let i = 0; i < objects.length; i++) stackValue(objects[i]![1]);
  while (stack.length > 0) {
    const object = stack.pop()!;
    if (seen.has(object)) continue;
    seen.add(object);
    if (object instanceof PDFStream) {
      seen.add(object.dict);
      list.push([object.dict, object]);
      dictMap(object.dict).forEach(stackValue);
    } else if (object instanceof PDFDict) {
      list.push([object, undefined]);
      dictMap(object).forEach(stackValue);
    } else if (object instanceof PDFArray) {
      for (let i = 0; i < object.size(); i++) stackValue(object.get(i));
    }
  }
  return list;
}

/** The fonts drawn and how; `dicts`: every dictionary of the document, if walked already. */
export function findFontUsage(context: PDFContext, dicts: readonly DictOf[] = everyDictList(context)): FontUsage {
  const walker = new UsageWalker(context);
  const pages = pagesOf(context);
  if (!pages) return { codes: walker.codes, excluded: walker.excluded, complete: false };
  const root = context.lookup(context.trailerInfo.Root);
  const acroForm = root instanceof PDFDict ? root.lookup(F.AcroForm) : undefined;
  const formResources = acroForm instanceof PDFDict ? acroForm.lookup(F.DR) : undefined;
  for (const { page, resources } of pages) {
    const streams = contentStreamsOf(context, page);
    if (!streams) walker.complete = false;
    // A page's streams are one content stream cut in pieces: the current font carries over.
    if (streams) walker.play(streams, resources, undefined, 0);
    walker.annotations(page, formResources instanceof PDFDict ? formResources : resources);
  }
  // What the walk did not see keeps its fonts whole.
  for (let i = 0; i < dicts.length; i++) {
    const dict = dicts[i]![0];
    const stream = dicts[i]![1];
    const resources = dict.lookup(F.Resources);
    const fonts = dict.lookup(F.Font);
    if (fonts instanceof PDFDict && !walker.scannedResources.has(dict)) {
      for (const font of fontsOf(dict)) walker.excluded.add(font);
    }
    if (fonts instanceof PDFArray) {
      const font = fonts.lookup(0);
      if (font instanceof PDFDict) walker.excluded.add(font);
    }
    const dr = dict.lookup(F.DR);
    if (dr instanceof PDFDict) for (const font of fontsOf(dr)) walker.excluded.add(font);
    for (const font of defaultAppearanceFonts(dict)) walker.excluded.add(font);
    if (stream instanceof PDFRawStream && !walker.walked.has(stream) && isContentStream(dict)) {
      if (resources instanceof PDFDict) for (const font of fontsOf(resources)) walker.excluded.add(font);
      // Without resources of its own it would draw with any font it is given: harmless only
      // when it shows no text.
      else {
        let text = false;
        const read = walker.scan(stream, (event) => (text ||= event.op === "show" || event.op === "Tf"));
        if (!read || text) walker.complete = false;
      }
    }
  }
  return { codes: walker.codes, excluded: walker.excluded, complete: walker.complete };
}

/**
 * The font a field's or widget's default appearance (/DA) names, as found in its own appearance
 * streams' resources and its kids' (some producers put it there and not in AcroForm /DR, where
 * the name belongs): a reader regenerating the appearance after an edit may take it from there.
 */
function defaultAppearanceFonts(dict: PDFDict): PDFDict[] {
  const da = dict.lookup(F.DA);
  if (!(da instanceof PDFString || da instanceof PDFHexString)) return [];
  const name = /\/([^\s/()<>[\]{}%]+)\s+[-+.\d]+\s+Tf/.exec(da.decodeText())?.[1];
  if (name === undefined) return [];
  const fonts: PDFDict[] = [];
  const holders: (PDFObject | undefined)[] = [dict];
  const kids = dict.lookup(F.Kids);
  if (kids instanceof PDFArray) holders.push(...kids.asArray().map((kid) => dict.context.lookup(kid)));
  for (const holder of holders) {
    if (!(holder instanceof PDFDict)) continue;
    for (const stream of appearanceStreams(holder)) {
      const resources = stream.dict.lookup(F.Resources);
      const fontDict = resources instanceof PDFDict ? resources.lookup(F.Font) : undefined;
      const font = fontDict instanceof PDFDict ? fontDict.lookup(PDFName.of(name)) : undefined;
      if (font instanceof PDFDict) fonts.push(font);
    }
  }
  return fonts;
}

/** Streams a reader draws as content with their own resources: forms (appearances, groups) and tiling patterns. */
function isContentStream(dict: PDFDict): boolean {
  return (
    dict.lookup(N.Subtype) === F.Form ||
    dict.lookup(F.PatternType) instanceof PDFNumber ||
    (dict.lookup(F.BBox) instanceof PDFArray && dict.lookup(N.Subtype) === undefined)
  );
}
