// The order of a linearized file (ISO 32000-1, Annex F): which object goes in which part, under
// which number, and which objects share an object stream. The parts follow qpdf
// (libqpdf/QPDF_linearization.cc, calculateLinearizationData), because `qpdf --check-linearization`
// recomputes them from the file and compares them with the hint tables:
//
// - every object gets its users: each page (page i and everything it reaches without entering
//   another page or going up /Parent), a page's /Thumb, each key of the trailer and of the catalog;
// - part 4: the catalog and what /ViewerPreferences, /PageMode, /Threads, /OpenAction, /AcroForm
//   reach; part 6: the first page and everything it uses (the outlines too with /UseOutlines);
//   part 7: each other page and what only it uses; part 8: what several other pages share;
//   part 9: the rest (page tree, thumbnails, outlines, document-level objects).
//
// Object streams: an object stream is one object to a reader of hints, and its users are those of
// its members. Members are therefore grouped by part (one group for the first page, one per other
// page, one for the shared objects, the outlines, the rest), so that each stream falls in its
// members' part; the catalog, part 4, page objects and streams stay outside (qpdf warns of a
// compressed page). Numbers: the second half (parts 7-9) first from 1, then the first half (the
// linearization dictionary, its cross-reference stream, part 4, the hint stream, part 6), and in
// each half the compressed objects after the others, as qpdf's writer does (a reader checks that no
// uncompressed object follows a compressed one in a cross-reference stream).
import { PDFArray, PDFDict, PDFInvalidObject, PDFName, PDFNumber, PDFRef, PDFStream } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";

/** Why a document cannot be linearized; the caller writes it without (compress.ts reports it). */
export class LinearizeRefused extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

const OPEN_DOCUMENT_KEYS = new Set(["/ViewerPreferences", "/PageMode", "/Threads", "/OpenAction", "/AcroForm"]);
const INHERITABLE = ["Resources", "MediaBox", "CropBox", "Rotate"] as const;
const MAX_PER_STREAM = 250;
/** A group this small is written as it is: a stream's dictionary would cost more than it saves. */
const MIN_PER_STREAM = 3;

const T = PDFName.of("Type");
const PAGE = PDFName.of("Page");
const PAGES = PDFName.of("Pages");

/** What goes at top level: an object of the document, or an object stream of some of them. */
export type Unit = { kind: "object"; ref: PDFRef } | { kind: "stream"; members: PDFRef[] };

export interface LinearizationPlan {
  pages: PDFRef[];
  /** Top-level units by part. part6[0] is the first page, part7 holds each page then its objects. */
  part4: Unit[];
  part6: Unit[];
  part7: Unit[];
  part8: Unit[];
  part9: Unit[];
  /** For each page after the first: its number of units in part 7 and the shared units it uses. */
  pageUnits: number[];
  pageShared: Unit[][];
  /** The outline units (first: the one holding /Outlines), in part 6 or 9; empty without outlines. */
  outlines: Unit[];
}

const isPage = (object: PDFObject | undefined) => object instanceof PDFDict && object.get(T) === PAGE;

/**
 * Walks the page tree from the catalog: the pages in order. Inheritable attributes are moved down
 * to the pages (a checker may not find them on /Pages nodes), /Type and /Count are set. Refuses a
 * tree with a direct node, a cycle or a page listed twice (a reader would copy it).
 */
export function preparePageTree(context: PDFContext): PDFRef[] {
  const root = context.lookup(context.trailerInfo.Root);
  const top = root instanceof PDFDict ? root.get(PAGES) : undefined;
  if (!(context.trailerInfo.Root instanceof PDFRef) || !(top instanceof PDFRef)) {
    throw new LinearizeRefused("page_tree", "the catalog or its page tree is not an indirect object");
  }
  const pages: PDFRef[] = [];
  const seen = new Set<PDFRef>();
  const walk = (ref: PDFRef, inherited: Map<string, PDFObject>, depth: number): number => {
    const node = context.lookup(ref);
    if (seen.has(ref) || depth > 64 || !(node instanceof PDFDict)) {
      throw new LinearizeRefused(
        "page_tree",
        "the page tree has a cycle, a page listed twice or a node that is not a dictionary",
      );
    }
    seen.add(ref);
    const kids = node.lookup(PDFName.of("Kids"));
    const isNode = node.get(T) === PAGES || (node.get(T) !== PAGE && kids instanceof PDFArray);
    if (!isNode) {
      node.set(T, PAGE);
      for (const [key, value] of inherited) if (!node.has(PDFName.of(key))) node.set(PDFName.of(key), value);
      pages.push(ref);
      return 1;
    }
    node.set(T, PAGES);
    const own = new Map(inherited);
    for (const key of INHERITABLE) {
      const value = node.get(PDFName.of(key));
      if (value === undefined) continue;
      // A direct dictionary or array is given to each page as one indirect object, not copied.
      own.set(key, value instanceof PDFDict || value instanceof PDFArray ? context.register(value) : value);
      node.delete(PDFName.of(key));
    }
    let count = 0;
    for (const kid of kids instanceof PDFArray ? kids.asArray() : []) {
      if (!(kid instanceof PDFRef)) throw new LinearizeRefused("page_tree", "the page tree has a direct node");
      count += walk(kid, own, depth + 1);
    }
    node.set(PDFName.of("Count"), PDFNumber.of(count));
    return count;
  };
  walk(top, new Map(), 0);
  if (pages.length === 0) throw new LinearizeRefused("page_tree", "the document has no page");
  return pages;
}

/** What each object is used by, as qpdf's updateObjectMaps sees it. */
function objectUsers(context: PDFContext, pages: PDFRef[]): Map<PDFRef, Set<string>> {
  const users = new Map<PDFRef, Set<string>>();
  const use = (ref: PDFRef, user: string) => {
    let set = users.get(ref);
    if (!set) users.set(ref, (set = new Set()));
    set.add(user);
  };
  const traverse = (user: string, start: PDFObject, pageIndex?: number) => {
    const visited = new Set<PDFRef>();
    const pending: [string, PDFObject, boolean][] = [[user, start, true]];
    while (pending.length > 0) {
      const [who, item, top] = pending.pop()!;
      let object: PDFObject | undefined = item;
      if (item instanceof PDFRef) {
        object = context.lookup(item);
        if (object === undefined) continue;
        if (isPage(object) && !top) continue;
        if (visited.has(item)) continue;
        visited.add(item);
        use(item, who);
      } else if (isPage(object) && !top) continue;
      const pageNode = top && isPage(object);
      if (object instanceof PDFArray) {
        for (const value of object.asArray()) pending.push([who, value, false]);
      } else if (object instanceof PDFDict || object instanceof PDFStream) {
        const dict = object instanceof PDFStream ? object.dict : object;
        for (const [key, value] of dict.entries()) {
          const name = key.asString();
          if (pageNode && name === "/Thumb") pending.push([`thumb:${pageIndex}`, value, false]);
          else if (!(pageNode && name === "/Parent")) pending.push([who, value, false]);
        }
      }
    }
  };
  pages.forEach((ref, i) => traverse(`page:${i}`, ref, i));
  const { Info } = context.trailerInfo;
  if (Info) traverse("trailer:/Info", Info);
  const root = context.lookup(context.trailerInfo.Root) as PDFDict;
  for (const [key, value] of root.entries()) traverse(`root:${key.asString()}`, value);
  use(context.trailerInfo.Root as PDFRef, "root");
  return users;
}

type Category =
  | "root"
  | "outlines"
  | "open"
  | "firstPrivate"
  | "firstShared"
  | "otherPrivate"
  | "otherShared"
  | "thumbPrivate"
  | "thumbShared"
  | "other";

/** qpdf's categories (calculateLinearizationData), from an object's users. */
function categoryOf(users: Set<string>): Category {
  let open = false;
  let first = false;
  let outlines = false;
  let root = false;
  let [otherPages, thumbs, others] = [0, 0, 0];
  for (const user of users) {
    if (user === "root") root = true;
    else if (user === "page:0") first = true;
    else if (user.startsWith("page:")) otherPages++;
    else if (user.startsWith("thumb:")) thumbs++;
    else if (user === "root:/Outlines") outlines = true;
    else if (user.startsWith("root:") && OPEN_DOCUMENT_KEYS.has(user.slice(5))) open = true;
    else others++;
  }
  if (root) return "root";
  if (outlines) return "outlines";
  if (open) return "open";
  if (first) return others === 0 && otherPages === 0 && thumbs === 0 ? "firstPrivate" : "firstShared";
  if (otherPages === 1 && others === 0 && thumbs === 0) return "otherPrivate";
  if (otherPages > 1) return "otherShared";
  if (thumbs === 1 && others === 0) return "thumbPrivate";
  if (thumbs > 1) return "thumbShared";
  return "other";
}

/** The group an object may share a stream with, or undefined when it stays at top level. */
function groupOf(ref: PDFRef, object: PDFObject, users: Set<string>, pageSet: Set<PDFRef>): string | undefined {
  if (object instanceof PDFStream || pageSet.has(ref)) return undefined;
  const category = categoryOf(users);
  switch (category) {
    case "firstPrivate":
    case "firstShared":
      return "first";
    case "otherPrivate":
      return [...users][0]; // page:i
    case "otherShared":
      return "shared";
    case "outlines":
    case "open":
      return category;
    case "other": {
      // By page: two objects of one page each would make a stream shared by two pages.
      const pages = [...users].filter((u) => u.startsWith("page:") || u.startsWith("thumb:"));
      if (pages.length === 0) return "other";
      return pages.length === 1 && pages[0]!.startsWith("page:") ? `other:${pages[0]}` : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The plan of a linearized file: parts, units and hint data. With `objectStreams`, objects other
 * than streams are packed in object streams by group. Throws LinearizeRefused when the document
 * cannot be linearized as it is.
 */
export function planLinearization(context: PDFContext, objectStreams: boolean): LinearizationPlan {
  if (context.enumerateIndirectObjects().some(([, object]) => object instanceof PDFInvalidObject)) {
    throw new LinearizeRefused("unparsed_objects", "the document holds objects that could not be parsed");
  }
  const pages = preparePageTree(context);
  const rootDict = context.lookup(context.trailerInfo.Root) as PDFDict;
  const outlinesValue = rootDict.get(PDFName.of("Outlines"));
  if (outlinesValue instanceof PDFDict) rootDict.set(PDFName.of("Outlines"), context.register(outlinesValue));
  // Lengths written directly: an indirect /Length would be an object of its own in the maps.
  for (const [, object] of context.enumerateIndirectObjects()) if (object instanceof PDFStream) object.updateDict();
  const users = objectUsers(context, pages);
  const pageSet = new Set(pages);

  // Units: objects grouped into streams, the rest alone.
  const unitOf = new Map<PDFRef, Unit>();
  const groups = new Map<string, PDFRef[]>();
  for (const [ref, set] of users) {
    const object = context.lookup(ref)!;
    const group = objectStreams && ref.generationNumber === 0 ? groupOf(ref, object, set, pageSet) : undefined;
    if (group === undefined) unitOf.set(ref, { kind: "object", ref });
    else if (groups.has(group)) groups.get(group)!.push(ref);
    else groups.set(group, [ref]);
  }
  for (const members of groups.values()) {
    if (members.length < MIN_PER_STREAM) {
      for (const ref of members) unitOf.set(ref, { kind: "object", ref });
      continue;
    }
    for (let start = 0; start < members.length; start += MAX_PER_STREAM) {
      const unit: Unit = { kind: "stream", members: members.slice(start, start + MAX_PER_STREAM) };
      for (const ref of unit.members) unitOf.set(ref, unit);
    }
  }
  // Users of units: a stream is used by whatever uses one of its members.
  const unitUsers = new Map<Unit, Set<string>>();
  for (const [ref, set] of users) {
    const unit = unitOf.get(ref)!;
    const all = unitUsers.get(unit) ?? new Set<string>();
    for (const user of set) all.add(user);
    unitUsers.set(unit, all);
  }
  return partsOf(context, pages, unitOf, unitUsers);
}

/** Units by part, in qpdf's order, and the data of the hint tables that depends on order alone. */
function partsOf(
  context: PDFContext,
  pages: PDFRef[],
  unitOf: Map<PDFRef, Unit>,
  unitUsers: Map<Unit, Set<string>>,
): LinearizationPlan {
  const byCategory = new Map<Category, Set<Unit>>();
  for (const [unit, set] of unitUsers) {
    const category = categoryOf(set);
    if (!byCategory.has(category)) byCategory.set(category, new Set());
    byCategory.get(category)!.add(unit);
  }
  const take = (category: Category) => [...(byCategory.get(category) ?? [])];
  const rootDict = context.lookup(context.trailerInfo.Root) as PDFDict;
  const pageMode = rootDict.get(PDFName.of("PageMode"));
  const outlinesRef = rootDict.get(PDFName.of("Outlines"));
  const outlinesFirst = pageMode === PDFName.of("UseOutlines") && outlinesRef instanceof PDFRef;
  const outlineUnits = take("outlines");
  const outlinesUnit = outlinesRef instanceof PDFRef ? unitOf.get(outlinesRef) : undefined;
  const outlines =
    outlinesUnit && outlineUnits.includes(outlinesUnit)
      ? [outlinesUnit, ...outlineUnits.filter((u) => u !== outlinesUnit)]
      : outlineUnits;

  const rootUnits = take("root");
  if (rootUnits.length !== 1 || rootUnits[0]!.kind !== "object") {
    throw new LinearizeRefused("catalog", "the catalog is used as something else as well");
  }
  const part4 = [...rootUnits, ...take("open")];
  const firstPage = unitOf.get(pages[0]!)!;
  const firstPrivate = take("firstPrivate");
  if (!firstPrivate.includes(firstPage)) throw new LinearizeRefused("page_tree", "the first page is used elsewhere");
  const part6 = [
    firstPage,
    ...firstPrivate.filter((u) => u !== firstPage),
    ...take("firstShared"),
    ...(outlinesFirst ? outlines : []),
  ];
  const otherPrivate = new Set(take("otherPrivate"));
  const part7: Unit[] = [];
  const pageUnits: number[] = [part6.length];
  const unitsOfPage: Set<Unit>[] = pages.map(() => new Set());
  for (const [unit, set] of unitUsers) {
    for (const user of set) if (user.startsWith("page:")) unitsOfPage[Number(user.slice(5))]!.add(unit);
  }
  for (let i = 1; i < pages.length; i++) {
    const page = unitOf.get(pages[i]!)!;
    if (!otherPrivate.delete(page)) throw new LinearizeRefused("page_tree", `page ${i + 1} is used elsewhere`);
    part7.push(page);
    let count = 1;
    for (const unit of unitsOfPage[i]!) {
      if (otherPrivate.delete(unit)) {
        part7.push(unit);
        count++;
      }
    }
    pageUnits.push(count);
  }
  if (otherPrivate.size > 0) throw new LinearizeRefused("page_tree", "an object private to a page outside the tree");
  const part8 = take("otherShared");
  const part9 = [...take("thumbPrivate"), ...take("thumbShared"), ...(outlinesFirst ? [] : outlines), ...take("other")];
  const sharedIndex = new Map<Unit, number>();
  [...part6, ...part8].forEach((unit, i) => sharedIndex.set(unit, i));
  const pageShared = pages.map((_, i) =>
    i === 0 ? [] : [...unitsOfPage[i]!].filter((u) => unitUsers.get(u)!.size > 1 && sharedIndex.has(u)),
  );
  return { pages, part4, part6, part7, part8, part9, pageUnits, pageShared, outlines };
}
