// Active content is removed in every profile: a compressed file should do nothing when opened
// but show itself, and reach nothing outside itself but the web addresses its links show. What goes:
//
// - JavaScript: the document's /Names /JavaScript tree, JavaScript actions wherever they are
//   (/OpenAction, /A of links, widgets and outline items, /AA additional actions of the catalog,
//   pages, annotations and fields, /Next chains), Rendition actions that carry /JS, and URI
//   actions whose address is a `javascript:` or `vbscript:` URL;
// - Launch (start a program or open a file), ImportData (load form data from a file) and
//   RichMediaExecute (send a command to Flash/3D content) actions;
// - actions that reach a file share or the local disk by address: a URI action to a `file:`,
//   `data:` or `smb:` URL or to a UNC path (`\\host\share`, `//host/share`), and any action whose
//   file (/F: GoToR, GoToE, SubmitForm, Thread, ...) is a UNC path or a `file:` or `smb:` URL. A
//   viewer on Windows that follows a UNC path logs on to that host with the user's NTLM
//   credentials (a credential leak), and a `data:` URL is a document the link carries in itself;
// - RichMedia annotations (Flash, video and 3D players that run their own scripts): taken off
//   their page, with their content;
// - the <script> elements of XFA forms (the XML stays: the form is still a form, it no longer
//   calculates or validates by itself; an XFA packet we cannot decode is dropped with the whole
//   /XFA entry, and viewers then use the AcroForm fields that every non-Adobe viewer shows).
//
// What stays: GoTo, GoToE, GoToR to a relative or local path, URI to any other address (https:,
// mailto:, ...), Named, SubmitForm and Thread to anything but a UNC path or a `file:`/`smb:` URL,
// ResetForm, Hide, SetOCGState, Sound, Movie and Rendition (without /JS) actions, and every
// annotation but RichMedia. An annotation whose action is removed stays where it is, without the
// action: links, widgets and outline items keep their count and place.
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFRef, PDFStream, PDFString, PDFHexString } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { decodeStreamData, deflate, N } from "../streams/filters.ts";
import { dictMap } from "../shared/dict-map.ts";

const A = PDFName.of("A");
const AA = PDFName.of("AA");
const S = PDFName.of("S");
const JS = PDFName.of("JS");
const URI = PDFName.of("URI");
const NEXT = PDFName.of("Next");
const NAMES = PDFName.of("Names");
const JAVASCRIPT = PDFName.of("JavaScript");
const OPEN_ACTION = PDFName.of("OpenAction");
const ACRO_FORM = PDFName.of("AcroForm");
const XFA = PDFName.of("XFA");
const F = PDFName.of("F");
const ANNOTS = PDFName.of("Annots");
const SUBTYPE = PDFName.of("Subtype");
const RICH_MEDIA = PDFName.of("RichMedia");
/** The entries of a file specification dictionary that name its file (ISO 32000-2, 7.11.3). */
const FILE_NAMES = ["F", "UF", "DOS", "Mac", "Unix"].map((name) => PDFName.of(name));
/** What a rich media annotation plays and how: gone with it (a struct tree may still refer to it). */
const RICH_MEDIA_PARTS = ["RichMediaContent", "RichMediaSettings"].map((name) => PDFName.of(name));

const DANGEROUS = new Set(["JavaScript", "Launch", "ImportData", "RichMediaExecute"].map((name) => PDFName.of(name)));
/** Longest /Next chain (or tree) we follow; what lies beyond is cut off. */
const MAX_ACTIONS = 1000;
const MAX_XFA_BYTES = 64 * 1024 * 1024;
const latin1 = new TextDecoder("latin1");
const SAFE = Symbol("safe");
const PENDING = Symbol("pending");

export interface ActiveContentReport {
  /** Actions removed (each JavaScript, Launch, … action, and the document's JavaScript tree). */
  actions: number;
  /** RichMedia annotations removed. */
  annotations: number;
  /** XFA <script> elements removed. */
  xfaScripts: number;
}

const textOf = (value: PDFObject | undefined) =>
  value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;

/**
 * A URL as a browser reads it (WHATWG URL parsing): tabs and line breaks anywhere are ignored, and
 * so are control characters and spaces in front, so `java\tscript:` is still `javascript:`.
 */
function normalisedUrl(url: string): string {
  const inline = url.replace(/[\t\n\r]/g, "");
  let start = 0;
  while (start < inline.length && inline.charCodeAt(start) <= 0x20) start++;
  return inline.slice(start);
}

/** A path to a file share (UNC: two slashes or backslashes in front). */
const UNC = /^[\\/]{2}/;
/** Addresses a URI action may not open: scripts, files and shares, documents carried inline. */
const UNSAFE_URI = /^(?:javascript|vbscript|file|data|smb):/i;
/** File names an action may not reach: shares, by path or by URL. */
const UNSAFE_FILE = /^(?:file|smb):/i;

const isUnsafeUri = (uri: string) => {
  const url = normalisedUrl(uri);
  return UNSAFE_URI.test(url) || UNC.test(url);
};

const isUnsafeFileName = (name: string) => {
  const path = normalisedUrl(name);
  return UNSAFE_FILE.test(path) || UNC.test(path);
};

/** Whether an action's file (/F: a string, or a file specification dictionary) is a share or a file: URL. */
function reachesShare(context: PDFContext, file: PDFObject | undefined): boolean {
  const value = file instanceof PDFRef ? context.lookup(file) : file;
  const name = textOf(value);
  if (name !== undefined) return isUnsafeFileName(name);
  if (!(value instanceof PDFDict)) return false;
  // A URL file specification (/FS /URL) names its file in /F too.
  return FILE_NAMES.some((key) => {
    const entry = textOf(value.lookup(key));
    return entry !== undefined && isUnsafeFileName(entry);
  });
}

function isDangerous(context: PDFContext, action: PDFDict): boolean {
  const type = action.get(S);
  if (type instanceof PDFName && DANGEROUS.has(type)) return true;
  if (action.has(JS)) return true; // Rendition (and anything else) carrying a script
  if (type === URI) {
    const uri = textOf(action.lookup(URI));
    if (uri !== undefined && isUnsafeUri(uri)) return true;
  }
  return action.has(F) && reachesShare(context, action.get(F));
}

/** How many things removeActiveContent took out, of every kind. */
export const activeContentRemoved = (report: ActiveContentReport) =>
  report.actions + report.annotations + report.xfaScripts;

/**
 * Calls `visit` on every dictionary of the document, direct ones inside others included, before
 * looking into it (what `visit` removes is not visited).
 */
function forEachDict(context: PDFContext, visit: (dict: PDFDict) => void): void {
  const seen = new Set<PDFObject>();
  // One stack, empty at each object; maps read by forEach, not an iterator (a result object and an
  // entry pair a step until V8 has optimised the walk, which a job's one call does not reach).
  const stack: PDFObject[] = [];
  const stackItem = (item: PDFObject) => {
    if (item instanceof PDFDict || item instanceof PDFArray) stack.push(item);
  };
  const objects = context.enumerateIndirectObjects();
  for (let o = 0; o < objects.length; o++) {
    stack.push(objects[o]![1]);
    while (stack.length > 0) {
      const value = stack.pop()!;
      if (seen.has(value)) continue;
      seen.add(value);
      const dict = value instanceof PDFStream ? value.dict : value;
      if (dict instanceof PDFDict) {
        visit(dict);
        // Read in place, after `visit` (shared/dict-map.ts).
        dictMap(dict).forEach(stackItem);
      } else if (dict instanceof PDFArray) {
        for (let i = 0; i < dict.size(); i++) stackItem(dict.get(i));
      }
    }
  }
}

/** Takes the RichMedia annotations off a page (or anything else with /Annots); answers how many. */
function removeRichMedia(context: PDFContext, dict: PDFDict): number {
  const annotations = dict.lookup(ANNOTS);
  if (!(annotations instanceof PDFArray)) return 0;
  let removed = 0;
  for (let i = annotations.size() - 1; i >= 0; i--) {
    const annotation = context.lookup(annotations.get(i));
    if (!(annotation instanceof PDFDict) || annotation.get(SUBTYPE) !== RICH_MEDIA) continue;
    annotations.remove(i);
    removed++;
  }
  return removed;
}

/** Removes active content (see the header); returns what it removed. */
export function removeActiveContent(context: PDFContext): ActiveContentReport {
  const report: ActiveContentReport = { actions: 0, annotations: 0, xfaScripts: 0 };
  /**
   * What each action dictionary cleaned to: itself (SAFE), what followed it (a dangerous one), or
   * PENDING while its /Next chain is being cleaned (a chain that loops back is cut there).
   */
  const results = new Map<PDFDict, PDFObject | typeof SAFE | typeof PENDING | undefined>();
  let budget = MAX_ACTIONS * 100;

  /**
   * The action (a dictionary, a reference to one, or an array of them as /Next may be) without
   * its dangerous parts: undefined when nothing is left.
   */
  const clean = (value: PDFObject | undefined, depth: number): PDFObject | undefined => {
    if (value === undefined || depth > MAX_ACTIONS || --budget < 0) return undefined;
    const action = value instanceof PDFRef ? context.lookup(value) : value;
    if (action instanceof PDFArray) {
      const kept: PDFObject[] = [];
      for (const item of action.asArray()) {
        const result = clean(item, depth + 1);
        if (result !== undefined) kept.push(result);
      }
      if (kept.length === 0) return undefined;
      if (kept.length === action.size() && kept.every((item, i) => item === action.get(i))) return value;
      return context.obj(kept);
    }
    if (!(action instanceof PDFDict)) return value; // not an action: not ours to judge
    if (results.has(action)) {
      const result = results.get(action);
      return result === SAFE ? value : result === PENDING ? undefined : result;
    }
    results.set(action, PENDING);
    const next = action.get(NEXT);
    const safeNext = next === undefined ? undefined : clean(next, depth + 1);
    if (isDangerous(context, action)) {
      report.actions++;
      results.set(action, safeNext);
      return safeNext;
    }
    if (next !== undefined && safeNext !== next) {
      if (safeNext === undefined) action.delete(NEXT);
      else action.set(NEXT, safeNext);
    }
    results.set(action, SAFE);
    return value;
  };

  const cleanEntry = (dict: PDFDict, key: PDFName) => {
    const value = dict.get(key);
    if (value === undefined) return;
    const result = clean(value, 0);
    if (result === undefined) dict.delete(key);
    else if (result !== value) dict.set(key, result);
  };

  const cleanDict = (dict: PDFDict) => {
    if (dict.has(ANNOTS)) report.annotations += removeRichMedia(context, dict);
    if (dict.get(SUBTYPE) === RICH_MEDIA) for (const key of RICH_MEDIA_PARTS) dict.delete(key);
    if (dict.has(A)) cleanEntry(dict, A);
    const additional = dict.get(AA);
    if (additional !== undefined) {
      const triggers = additional instanceof PDFRef ? context.lookup(additional) : additional;
      if (triggers instanceof PDFDict) {
        for (const key of triggers.keys()) cleanEntry(triggers, key);
        if (triggers.keys().length === 0) dict.delete(AA);
      } else {
        dict.delete(AA);
      }
    }
  };

  forEachDict(context, cleanDict);

  const catalog = context.lookup(context.trailerInfo.Root);
  if (catalog instanceof PDFDict) {
    // /OpenAction is an action or a destination (an array: a page to show, which stays).
    if (catalog.lookup(OPEN_ACTION) instanceof PDFDict) cleanEntry(catalog, OPEN_ACTION);
    const names = catalog.lookup(NAMES);
    if (names instanceof PDFDict && names.delete(JAVASCRIPT)) report.actions++;
    const form = catalog.lookup(ACRO_FORM);
    if (form instanceof PDFDict && form.has(XFA)) report.xfaScripts += cleanXfa(form, context);
  }
  return report;
}

const SCRIPT = /<script\b[^>]*\/>|<script\b[^>]*>(?:<!\[CDATA\[[\s\S]*?\]\]>|[\s\S])*?<\/script\s*>/gi;

/** Removes <script> elements from the XFA packets; drops /XFA when a packet cannot be read. */
function cleanXfa(form: PDFDict, context: PDFContext): number {
  const xfa = form.lookup(XFA);
  const packets: PDFObject[] =
    xfa instanceof PDFArray ? xfa.asArray().filter((_, i) => i % 2 === 1) : xfa === undefined ? [] : [xfa];
  const edits: [PDFRawStream, Uint8Array][] = [];
  let removed = 0;
  for (const packet of packets) {
    const stream = context.lookup(packet);
    const data = stream instanceof PDFRawStream ? decodeStreamData(stream, MAX_XFA_BYTES) : undefined;
    if (!stream || !data) {
      form.delete(XFA);
      return 1;
    }
    let count = 0;
    const text = latin1.decode(data).replace(SCRIPT, () => {
      count++;
      return "";
    });
    if (count > 0) {
      removed += count;
      edits.push([stream as PDFRawStream, Uint8Array.from(text, (char) => char.charCodeAt(0))]);
    }
  }
  for (const [stream, data] of edits) {
    stream.dict.set(N.Filter, N.FlateDecode);
    stream.dict.delete(N.DecodeParms);
    stream.updateContents(deflate(data));
  }
  return removed;
}
