// pdf-lib's enumerateIndirectObjects copies every object of the document into a new list of
// [reference, object] pairs and sorts it by object number, with a comparator that destructures both
// pairs, each time it is called; the engine's passes call it some twenty times a job (issue 42:
// text_excel_warn_16p, 9,800 objects, 22 calls). The order is the same until an object is assigned
// or deleted, so it is kept: a context's sorted pairs are made once and handed out as a copy of the
// list (a caller may sort, filter or push into its list without touching the kept one), and
// forgotten by assign and delete, the only two ways pdf-lib changes a context's objects. A list
// already in order (a renumbered document's) is not sorted; one that is not is sorted by the same
// comparison, and the sort is stable, so the order is pdf-lib's, pair for pair.
import { PDFContext } from "@cantoo/pdf-lib";
import type { PDFObject, PDFRef } from "@cantoo/pdf-lib";

type Entry = [PDFRef, PDFObject];
type Objects = Map<PDFRef, PDFObject>;
// pdf-lib declares the map private: reached as its own methods reach it.
type Context = { indirectObjects: Objects };

type Methods = {
  enumerateIndirectObjects: (this: PDFContext) => Entry[];
  assign: (this: PDFContext, ref: PDFRef, object: PDFObject) => void;
  delete: (this: PDFContext, ref: PDFRef) => boolean;
};
const prototype = PDFContext.prototype as unknown as Methods;
/** pdf-lib's own methods, the first kept for the tests that compare the two. */
export const pdfLibEnumerate = prototype.enumerateIndirectObjects;
const pdfLibAssign = prototype.assign;
const pdfLibDelete = prototype.delete;

/** Each context's objects, in order, while none has been assigned or deleted since. */
const kept = new WeakMap<Objects, Entry[]>();

const byObjectNumber = (a: Entry, b: Entry) => a[0].objectNumber - b[0].objectNumber;

/** The pairs of a map of objects in ascending object number, the map's order among equal numbers. */
function sortedEntries(objects: Objects): Entry[] {
  const entries: Entry[] = [];
  let inOrder = true;
  let last = -Infinity;
  // By forEach, not an iterator (a result object and an entry pair a step until V8 has optimised it).
  objects.forEach((object, ref) => {
    if (ref.objectNumber < last) inOrder = false;
    last = ref.objectNumber;
    entries.push([ref, object]);
  });
  return inOrder ? entries : entries.sort(byObjectNumber);
}

function enumerateIndirectObjects(this: PDFContext): Entry[] {
  const objects = (this as unknown as Context).indirectObjects;
  let entries = kept.get(objects);
  // The size is checked too, should anything reach the map other than through assign and delete.
  if (entries === undefined || entries.length !== objects.size) {
    entries = sortedEntries(objects);
    kept.set(objects, entries);
  }
  return entries.slice();
}

function assign(this: PDFContext, ref: PDFRef, object: PDFObject): void {
  kept.delete((this as unknown as Context).indirectObjects);
  pdfLibAssign.call(this, ref, object);
}

function remove(this: PDFContext, ref: PDFRef): boolean {
  kept.delete((this as unknown as Context).indirectObjects);
  return pdfLibDelete.call(this, ref);
}

prototype.enumerateIndirectObjects = enumerateIndirectObjects;
prototype.assign = assign;
prototype.delete = remove;
