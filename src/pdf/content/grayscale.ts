// The pages' colours to gray (the grayscale option): in the content streams of pages, form
// XObjects (annotation appearances among them) and tiling patterns, the colour operators of
// DeviceRGB and DeviceCMYK (rg RG k K) become g and G, `cs`/`CS` of those spaces become
// DeviceGray, and the colour spaces of the resources that hold RGB or CMYK (ICCBased of 3 or 4,
// CalRGB) become DeviceGray, their `sc`/`scn` operands reduced to one gray. The gray is the
// luminance renderers compute (images/grayscale.ts). Everything else in a stream is copied byte
// for byte. Left as they are: shadings (their functions give colours of their own space),
// Separation, DeviceN, Lab, Indexed colour in content, and Type 3 glyphs.
import { PDFArray, PDFDict, PDFName, PDFRawStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { colourOf, grayOf } from "../shared/colour.ts";
import { decodeStreamData, deflate, N } from "../streams/filters.ts";
import { contentStreamsOf, pagesOf } from "../shared/placement.ts";
import { Lexer, scanContent, Tok } from "../shared/syntax.ts";

type Kind = "rgb" | "cmyk";
const ColorSpace = PDFName.of("ColorSpace");
const Resources = PDFName.of("Resources");
const Subtype = PDFName.of("Subtype");
const Form = PDFName.of("Form");
const PatternType = PDFName.of("PatternType");
const MAX_CONTENT = 64 * 1024 * 1024;
const DEVICE: Record<string, Kind> = { DeviceRGB: "rgb", RGB: "rgb", DeviceCMYK: "cmyk", CMYK: "cmyk" };

/** The RGB or CMYK colour spaces a resource dictionary names (name → kind). */
function spacesOf(resources: PDFDict | undefined, context: PDFContext): Map<string, Kind> {
  const spaces = new Map<string, Kind>();
  const dict = resources?.lookup(ColorSpace);
  if (!(dict instanceof PDFDict)) return spaces;
  for (const [key, value] of dict.entries()) {
    const colour = colourOf(value, context);
    if (colour?.kind !== "direct") continue;
    const family = context.lookup(value);
    const calRgb = family instanceof PDFArray && family.get(0) === PDFName.of("CalRGB");
    if (colour.components === 3 && (colour.rgbLike || calRgb)) spaces.set(key.decodeText(), "rgb");
    else if (colour.components === 4 && !(family instanceof PDFArray && family.get(0) === PDFName.of("DeviceN"))) {
      spaces.set(key.decodeText(), "cmyk");
    }
  }
  return spaces;
}

/** The graphics state's colour spaces the rewrite follows (undefined: another space, left alone). */
interface State {
  fill: Kind | undefined;
  stroke: Kind | undefined;
}

const latin1 = new TextDecoder("latin1");
const format = (gray: number) => String(Math.round((gray / 255) * 1000) / 1000);

interface Token {
  start: number;
  end: number;
  /** A number's value, a name (with its slash) or an operator's text; undefined for the rest. */
  text?: string;
  number?: number;
}

/** The next token (a span of `lexer`'s bytes), skipping the `skip` ranges (inline images) whole; undefined at the end. */
function nextToken(lexer: Lexer, skip: Map<number, number>): Token | undefined {
  const at = lexer.skipWhiteAndComments();
  const skipTo = skip.get(at);
  if (skipTo !== undefined) {
    lexer.pos = skipTo;
    return { start: at, end: skipTo };
  }
  const kind = lexer.next();
  if (kind === Tok.End) return undefined;
  const { start, pos: end } = lexer;
  if (kind !== Tok.Regular && kind !== Tok.Name) return { start, end };
  const text = latin1.decode(lexer.bytes.subarray(start, end));
  const number = kind === Tok.Regular && /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : undefined;
  return number === undefined ? { start, end, text } : { start, end, number };
}

/** The gray of the last `count` operands when they are all numbers (0-1 components). */
function grayOfOperands(operands: Token[], kind: Kind): string | undefined {
  const count = kind === "rgb" ? 3 : 4;
  const values = operands.slice(-count);
  if (values.length < count || values.some((t) => t.number === undefined)) return undefined;
  const samples = values.map((t) => Math.max(0, Math.min(255, Math.round(t.number! * 255))));
  return format(grayOf(kind, samples));
}

/**
 * One content stream's bytes with its colours made gray (undefined when nothing changed);
 * `state` carries over from the page's previous stream.
 */
export function grayContent(bytes: Uint8Array, spaces: Map<string, Kind>, state: State): Uint8Array | undefined {
  const skip = new Map<number, number>();
  scanContent(bytes, { inlineImage: (image) => skip.set(image.start, image.end) });
  const stack: State[] = [];
  const parts: string[] = [];
  let copied = 0;
  let operands: Token[] = [];
  const replace = (from: number, to: number, text: string) => {
    parts.push(latin1.decode(bytes.subarray(copied, from)), text);
    copied = to;
  };
  const lexer = new Lexer(bytes);
  for (let token = nextToken(lexer, skip); token; token = nextToken(lexer, skip)) {
    if (token.number !== undefined || token.text === undefined || token.text.startsWith("/")) {
      operands.push(token);
      continue;
    }
    const op = token.text;
    const first = (count: number) => operands[operands.length - count];
    if (op === "q") stack.push({ ...state });
    else if (op === "Q") Object.assign(state, stack.pop() ?? state);
    else if (op === "rg" || op === "RG" || op === "k" || op === "K") {
      const kind = op === "rg" || op === "RG" ? "rgb" : "cmyk";
      const gray = grayOfOperands(operands, kind);
      const start = first(kind === "rgb" ? 3 : 4)?.start;
      if (gray !== undefined && start !== undefined) {
        replace(start, token.end, `${gray} ${op === "rg" || op === "k" ? "g" : "G"}`);
      }
      if (op === "rg" || op === "k") state.fill = undefined;
      else state.stroke = undefined;
    } else if (op === "cs" || op === "CS") {
      const name = operands.at(-1)?.text?.slice(1);
      const kind = name === undefined ? undefined : (DEVICE[name] ?? spaces.get(name));
      if (op === "cs") state.fill = kind;
      else state.stroke = kind;
      if (kind && name && DEVICE[name]) replace(operands.at(-1)!.start, operands.at(-1)!.end, "/DeviceGray");
    } else if (op === "sc" || op === "scn" || op === "SC" || op === "SCN") {
      const kind = op === "sc" || op === "scn" ? state.fill : state.stroke;
      const gray = kind && grayOfOperands(operands, kind);
      const start = kind && first(kind === "rgb" ? 3 : 4)?.start;
      if (gray !== undefined && start !== undefined) replace(start, token.start, `${gray} `);
    }
    operands = [];
  }
  if (parts.length === 0) return undefined;
  parts.push(latin1.decode(bytes.subarray(copied)));
  return Uint8Array.from(parts.join(""), (c) => c.charCodeAt(0));
}

/** Stores `bytes` in `stream`, Flate-compressed. */
function store(stream: PDFRawStream, bytes: Uint8Array): void {
  const data = deflate(bytes, 6);
  stream.dict.set(N.Filter, N.FlateDecode);
  stream.dict.delete(N.DecodeParms);
  stream.updateContents(data);
}

/** Rewrites the streams in turn (a page's streams share their state); answers how many changed. */
function grayStreams(streams: PDFRawStream[], spaces: Map<string, Kind>): number {
  const state: State = { fill: undefined, stroke: undefined };
  let changed = 0;
  for (const stream of streams) {
    const bytes = decodeStreamData(stream, MAX_CONTENT);
    const gray = bytes && grayContent(bytes, spaces, state);
    if (!gray) continue;
    store(stream, gray);
    changed++;
  }
  return changed;
}

/** The RGB and CMYK colour spaces of every resource dictionary, made DeviceGray. */
function grayResourceSpaces(context: PDFContext, resources: Set<PDFDict>): void {
  for (const dict of resources) {
    const spaces = dict.lookup(ColorSpace);
    if (!(spaces instanceof PDFDict)) continue;
    for (const name of spacesOf(dict, context).keys()) spaces.set(PDFName.of(name), N.DeviceGray);
  }
}

/** Makes the colours of pages, forms and tiling patterns gray; answers how many streams changed. */
export function grayPageContent(context: PDFContext): number {
  let changed = 0;
  const resources = new Set<PDFDict>();
  const lookupDict = (object: PDFObject | undefined) => {
    const dict = context.lookup(object);
    return dict instanceof PDFDict ? dict : undefined;
  };
  for (const page of pagesOf(context) ?? []) {
    const streams = contentStreamsOf(context, page.page);
    if (page.resources) resources.add(page.resources);
    if (streams) changed += grayStreams(streams, spacesOf(page.resources, context));
  }
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    const isForm = object.dict.lookup(Subtype) === Form;
    const isTiling = object.dict.lookup(PatternType)?.toString() === "1";
    if (!isForm && !isTiling) continue;
    const own = lookupDict(object.dict.get(Resources));
    if (own) resources.add(own);
    changed += grayStreams([object], spacesOf(own, context));
  }
  // After every stream was read with them: resource dictionaries may be shared.
  grayResourceSpaces(context, resources);
  return changed;
}
