// A dictionary's entries read in place (issue 42). pdf-lib's PDFDict.values() and entries() copy its
// map into a new list at each call: the walks over every dictionary of a document (the font pass's
// everyDictList, the active-content pass's forEachDict) made a copy of each one they passed,
// short-lived garbage where the collector is a quarter of a tagged document's CPU. The map itself,
// in its order, holds the same entries.
import type { PDFDict, PDFName, PDFObject } from "@cantoo/pdf-lib";

// pdf-lib declares the map private: reached as its own methods reach it.
type Dict = { dict: Map<PDFName, PDFObject> };

/** The dictionary's own map, not a copy: read it, never change it. */
export const dictMap = (dict: PDFDict): ReadonlyMap<PDFName, PDFObject> => (dict as unknown as Dict).dict;
