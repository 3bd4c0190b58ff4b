// Identical objects written once. Producers that assemble documents from pieces (concatenated
// files, mail merges, slide decks, report generators) repeat the same fonts, images, ICC profiles,
// resource dictionaries and even content streams many times; a reference to one copy means the
// same to a reader as a reference to another.
//
// Each candidate object gets a key: its content with every reference replaced by the number of
// the object it currently stands for (a stream: its dictionary without /Length, and a SHA-256 of
// its stored bytes, or only their length when no other stream has that length). Objects with the
// same key are merged into the one with the lowest number, and the objects that referred to a
// merged object are keyed again, which may merge them in turn (two fonts become identical once
// their font files have been merged). Only the referrers of merged objects are looked at again, so the work is about linear in the size of the document.
//
// Objects whose identity matters are never merged: pages and the page tree, annotations (a link
// or a widget belongs to one page), form fields, outline items, structure elements, optional
// content groups, the catalog and the document information dictionary, and anything we do not
// know to be a plain resource.
import { hash } from "node:crypto";
import {
  PDFArray,
  PDFBool,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFPageLeaf,
  PDFPageTree,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFString,
} from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { dictMap } from "../shared/dict-map.ts";
import { N } from "../streams/filters.ts";

/** Direct objects nested deeper than this are not keyed (and the object is not merged). */
const MAX_DEPTH = 32;
/** Each pass only keys the referrers of what the previous one merged; chains are rarely deeper than 4. */
const MAX_PASSES = 12;
/** Keys longer than this are stored as a digest. */
const MAX_PLAIN_KEY = 64;

/** Values of /Type that name plain resources: sharing one copy changes nothing. */
const MERGEABLE_TYPES = new Set(
  [
    "Font",
    "FontDescriptor",
    "FontFile",
    "Encoding",
    "CMap",
    "ExtGState",
    "Pattern",
    "Shading",
    "XObject",
    "Group",
    "Mask",
    "Halftone",
    "Action",
    "EmbeddedFile",
    "Metadata",
  ].map((name) => PDFName.of(name)),
);

/** Keys of dictionaries that belong to one place in the document (see the header). */
const IDENTITY_KEYS = ["Parent", "Kids", "P", "T", "FT", "Rect", "First", "Last", "Annots", "StructParent"].map(
  (name) => PDFName.of(name),
);

/** Stream /Type values that are the file's plumbing, rewritten by the writer. */
const PLUMBING = new Set([N.XRef, N.ObjStm]);

function mayMerge(object: PDFObject): boolean {
  if (object instanceof PDFPageLeaf || object instanceof PDFPageTree) return false;
  const stream = object instanceof PDFStream;
  if (stream && !(object instanceof PDFRawStream)) return false;
  const dict = object instanceof PDFStream ? object.dict : object;
  if (!(dict instanceof PDFDict)) return true; // arrays, numbers, strings, names
  const type = dict.get(N.Type);
  if (type instanceof PDFName) {
    if (stream) return !PLUMBING.has(type);
    if (!MERGEABLE_TYPES.has(type)) return false;
  } else if (type !== undefined) {
    return false;
  }
  return !IDENTITY_KEYS.some((key) => dict.has(key));
}

// crypto.hash: the same digest as createHash's, without a Hash object per call (every key over
// MAX_PLAIN_KEY characters is digested).
const digest = (data: Uint8Array | string) => hash("sha256", data, "base64");

/**
 * A dictionary's keys in the order keyOf writes them. Only the keys are copied (entries() made a
 * [key, value] pair of each), and a dictionary of one key, the commonest, is not sorted. With the
 * reference's own tag, crypto.hash and replaceReferences' reused stack: two merges and the
 * renumbering of optimised_geotopo_117p_3heights (3,004 candidates) 141 -> 122 ms (medians, 5
 * processes each, alternated).
 */
function sortedKeys(map: ReadonlyMap<PDFName, PDFObject>): Iterable<PDFName> {
  if (map.size < 2) return map.keys();
  return Array.from(map.keys()).sort((a, b) => (a.asString() < b.asString() ? -1 : 1));
}

export interface DedupReport {
  /** Objects replaced by an identical one. */
  merged: number;
  passes: number;
}

/**
 * Merges identical objects (see the header) and deletes the copies. Every reference in the
 * document, trailer included, is pointed at the copy that stays.
 */
export function mergeDuplicates(context: PDFContext): DedupReport {
  const { Root, Info, Encrypt } = context.trailerInfo;
  const fixed = new Set<PDFObject | undefined>([Root, Info, Encrypt]);
  const objects = new Map<PDFRef, PDFObject>();
  const all = context.enumerateIndirectObjects();
  // By index, not destructuring each pair (an iterator and its result objects until V8 has optimised the loop).
  for (let i = 0; i < all.length; i++) {
    const ref = all[i]![0];
    const object = all[i]![1];
    if (!fixed.has(ref) && mayMerge(object)) objects.set(ref, object);
  }

  /** merged object → the object it was merged into (which may itself have been merged since). */
  const merged = new Map<PDFRef, PDFRef>();
  const resolve = (ref: PDFRef): PDFRef => {
    let target = ref;
    for (let next = merged.get(target); next !== undefined; next = merged.get(target)) target = next;
    if (target !== ref) merged.set(ref, target);
    return target;
  };
  // A stream whose length no other candidate stream has cannot equal another: its length stands
  // for its bytes, and only streams of a shared length are hashed (on a scan, none of the pages).
  const lengths = new Map<number, number>();
  for (const object of objects.values()) {
    if (object instanceof PDFRawStream)
      lengths.set(object.contents.length, (lengths.get(object.contents.length) ?? 0) + 1);
  }
  const streamHashes = new Map<PDFRawStream, string>();
  const contentKey = (stream: PDFRawStream): string => {
    const { length } = stream.contents;
    if (lengths.get(length) === 1) return `#${length}`; // "#" is not in a digest's base64
    let hash = streamHashes.get(stream);
    if (hash === undefined) streamHashes.set(stream, (hash = digest(stream.contents)));
    return hash;
  };
  /** object → the candidates whose key mentions it */
  const referrers = new Map<PDFRef, PDFRef[]>();

  const keyOf = (ref: PDFRef, object: PDFObject, first: boolean): string | undefined => {
    const parts: string[] = [];
    const visit = (value: PDFObject, depth: number): boolean => {
      if (depth > MAX_DEPTH) return false;
      if (value instanceof PDFRef) {
        parts.push(resolve(value).tag); // "12 0 R": pdf-lib's string of the reference, made once
        if (first && objects.has(value)) {
          const list = referrers.get(value);
          if (list) list.push(ref);
          else referrers.set(value, [ref]);
        }
      } else if (value instanceof PDFName) {
        parts.push(value.asString());
      } else if (value instanceof PDFNumber) {
        parts.push(`#${value.asNumber()}`);
      } else if (value instanceof PDFString) {
        const text = value.asString();
        parts.push(`(${text.length}:${text}`);
      } else if (value instanceof PDFHexString) {
        const text = value.asString();
        parts.push(`<${text.length}:${text}`);
      } else if (value instanceof PDFBool || value === PDFNull) {
        parts.push(value.toString());
      } else if (value instanceof PDFArray) {
        parts.push("[");
        for (let i = 0; i < value.size(); i++) if (!visit(value.get(i), depth + 1)) return false;
        parts.push("]");
      } else if (value instanceof PDFDict) {
        parts.push("<<");
        const map = dictMap(value);
        for (const key of sortedKeys(map)) {
          if (depth === 0 && object instanceof PDFStream && key === N.Length) continue;
          parts.push(key.asString());
          if (!visit(map.get(key)!, depth + 1)) return false;
        }
        parts.push(">>");
      } else {
        return false; // PDFInvalidObject and the like: bytes we do not understand
      }
      return true;
    };
    if (object instanceof PDFRawStream) {
      if (!visit(object.dict, 0)) return undefined;
      parts.push(`stream${contentKey(object)}`);
    } else if (!visit(object, 0)) {
      return undefined;
    }
    const key = parts.join(" ");
    return key.length > MAX_PLAIN_KEY ? `${key.length}:${digest(key)}` : key;
  };

  const owners = new Map<string, PDFRef>();
  let dirty: Iterable<PDFRef> = objects.keys();
  let passes = 0;
  for (let first = true; passes < MAX_PASSES; first = false) {
    passes++;
    const next = new Set<PDFRef>();
    for (const ref of dirty) {
      if (merged.has(ref)) continue;
      const key = keyOf(ref, objects.get(ref)!, first);
      if (key === undefined) continue;
      const owner = owners.get(key);
      if (owner === undefined || owner === ref) {
        owners.set(key, ref);
        continue;
      }
      // Keep the lower object number: the result does not depend on the order of the work.
      const [keep, drop] = owner.objectNumber < ref.objectNumber ? [owner, ref] : [ref, owner];
      merged.set(drop, keep);
      owners.set(key, keep);
      for (const referrer of referrers.get(drop) ?? []) if (!merged.has(referrer)) next.add(referrer);
    }
    if (next.size === 0) break;
    dirty = next;
  }
  if (merged.size === 0) return { merged: 0, passes };

  const after = context.enumerateIndirectObjects();
  for (let i = 0; i < after.length; i++) replaceReferences(after[i]![1], resolve);
  for (const key of ["Root", "Info"] as const) {
    const ref = context.trailerInfo[key];
    if (ref instanceof PDFRef) context.trailerInfo[key] = resolve(ref);
  }
  for (const ref of merged.keys()) context.delete(ref);
  return { merged: merged.size, passes };
}

// One stack and one set for every call, emptied after each: the writer and both merges call this
// once an object, and a new Set and list each time were short-lived garbage for the collector.
const replaceStack: PDFObject[] = [];
const replaceSeen = new Set<PDFObject>(); // direct objects are trees when parsed, but not by type

/** Points every reference inside `object` (not through references) where `resolve` says. */
export function replaceReferences(object: PDFObject, resolve: (ref: PDFRef) => PDFRef | typeof PDFNull): void {
  const stack = replaceStack;
  const top = object instanceof PDFStream ? object.dict : object;
  try {
    if (top instanceof PDFDict) replaceInDict(top, resolve);
    else if (top instanceof PDFArray) replaceInArray(top, resolve, stack);
    if (stack.length === 0) return; // most objects hold no direct container: nothing to remember
    replaceSeen.add(object).add(top);
    while (stack.length > 0) {
      const value = stack.pop()!;
      if (replaceSeen.has(value)) continue;
      replaceSeen.add(value);
      if (value instanceof PDFDict) replaceInDict(value, resolve);
      else if (value instanceof PDFArray) replaceInArray(value, resolve, stack);
    }
  } finally {
    stack.length = 0;
    if (replaceSeen.size > 0) replaceSeen.clear(); // clear() allocates a new table
  }
}

// The dictionary replaceInDict walks and its arguments, for one callback of its map's forEach: an
// iterator makes a result object and an entry pair a step until V8 has optimised the loop, and a
// job's first walks run before that (nothing here calls back into replaceReferences).
let replacingIn: PDFDict | undefined;
const unchanged = (ref: PDFRef) => ref;
let replaceResolve: (ref: PDFRef) => PDFRef | typeof PDFNull = unchanged;
const replaceEntry = (item: PDFObject, key: PDFName) => {
  if (item instanceof PDFRef) {
    const target = replaceResolve(item);
    if (target !== item) replacingIn!.set(key, target); // an existing key: the map keeps its order
  } else if (item instanceof PDFDict || item instanceof PDFArray) {
    replaceStack.push(item);
  }
};

/** A dictionary's references pointed where `resolve` says, read in its map (shared/dict-map.ts); its containers onto replaceStack. */
function replaceInDict(dict: PDFDict, resolve: (ref: PDFRef) => PDFRef | typeof PDFNull): void {
  replacingIn = dict;
  replaceResolve = resolve;
  dictMap(dict).forEach(replaceEntry);
  replacingIn = undefined;
  replaceResolve = unchanged; // not kept past the call, nor what it holds
}

function replaceInArray(array: PDFArray, resolve: (ref: PDFRef) => PDFRef | typeof PDFNull, stack: PDFObject[]): void {
  for (let i = 0; i < array.size(); i++) {
    const item = array.get(i);
    if (item instanceof PDFRef) {
      const target = resolve(item);
      if (target !== item) array.set(i, target);
    } else if (item instanceof PDFDict || item instanceof PDFArray) {
      stack.push(item);
    }
  }
}
