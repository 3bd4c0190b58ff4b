// A dictionary's map read in place (src/pdf/shared/dict-map.ts), and fonts/usage.ts's everyDictList
// walking maps and arrays in place and stacking only what may hold a dictionary, against the walk
// over pdf-lib's copies as it was before (kept here): on fuzzed documents of nested dictionaries,
// arrays, streams, references (to objects present and absent) and direct objects shared between
// holders, the same dictionaries (the same instances) in the same order.
import {
  PDFArray,
  PDFContext,
  PDFDict,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFString,
} from "@cantoo/pdf-lib";
import type { PDFObject } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dictMap } from "../../../src/pdf/shared/dict-map.ts";
import { everyDictList } from "../../../src/pdf/fonts/usage.ts";

/** A value described as data, built twice into two contexts. */
type Spec =
  | { kind: "name" | "number" | "string"; n: number }
  | { kind: "ref"; n: number }
  | { kind: "shared"; n: number }
  | { kind: "array"; items: Spec[] }
  | { kind: "dict"; entries: [number, Spec][] };

const MAX_OBJECT = 12;
const { spec } = fc.letrec<{ spec: Spec }>((tie) => ({
  spec: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ kind: fc.constantFrom("name" as const, "number" as const, "string" as const), n: fc.nat(5) }),
    fc.record({ kind: fc.constant("ref" as const), n: fc.integer({ min: 1, max: MAX_OBJECT + 2 }) }),
    fc.record({ kind: fc.constant("shared" as const), n: fc.nat(6) }),
    fc.record({ kind: fc.constant("array" as const), items: fc.array(tie("spec"), { maxLength: 4 }) }),
    fc.record({
      kind: fc.constant("dict" as const),
      entries: fc.array(fc.tuple(fc.nat(5), tie("spec")), { maxLength: 4 }),
    }),
  ),
}));
const objectSpec = fc.record({ stream: fc.boolean(), value: spec });
const documentSpec = fc.record({
  objects: fc.array(fc.tuple(fc.integer({ min: 1, max: MAX_OBJECT }), objectSpec), { maxLength: MAX_OBJECT }),
  root: fc.integer({ min: 1, max: MAX_OBJECT + 2 }),
});

type DocumentSpec = { objects: [number, { stream: boolean; value: Spec }][]; root: number };

function build(document: DocumentSpec): PDFContext {
  const context = PDFContext.create();
  const containers: PDFObject[] = []; // what "shared" reuses: direct objects held twice
  const make = (value: Spec): PDFObject => {
    switch (value.kind) {
      case "name":
        return PDFName.of(`N${value.n}`);
      case "number":
        return PDFNumber.of(value.n);
      case "string":
        return PDFString.of(`s${value.n}`);
      case "ref":
        return PDFRef.of(value.n);
      case "shared":
        return containers[value.n % Math.max(1, containers.length)] ?? PDFNumber.of(-1);
      case "array": {
        const array = PDFArray.withContext(context);
        for (const item of value.items) array.push(make(item));
        containers.push(array);
        return array;
      }
      case "dict": {
        const dict = PDFDict.withContext(context);
        for (const [key, item] of value.entries) dict.set(PDFName.of(`K${key}`), make(item));
        containers.push(dict);
        return dict;
      }
    }
  };
  for (const [number, { stream, value }] of document.objects) {
    const made = make(value);
    const object = stream && made instanceof PDFDict ? PDFRawStream.of(made, new Uint8Array([number])) : made;
    context.assign(PDFRef.of(number), object);
  }
  context.trailerInfo.Root = PDFRef.of(document.root);
  return context;
}

// The walk as it was (the oracle), over pdf-lib's copies.
function* everyDictBefore(context: PDFContext): Generator<[PDFDict, PDFStream | undefined]> {
  const seen = new Set<PDFObject>();
  const stack: PDFObject[] = context.enumerateIndirectObjects().map(([, object]) => object);
  while (stack.length > 0) {
    const object = stack.pop()!;
    if (seen.has(object)) continue;
    seen.add(object);
    if (object instanceof PDFStream) {
      seen.add(object.dict);
      yield [object.dict, object];
      for (const value of object.dict.values()) if (!(value instanceof PDFRef)) stack.push(value);
    } else if (object instanceof PDFDict) {
      yield [object, undefined];
      for (const value of object.values()) if (!(value instanceof PDFRef)) stack.push(value);
    } else if (object instanceof PDFArray) {
      for (const value of object.asArray()) if (!(value instanceof PDFRef)) stack.push(value);
    }
  }
}

/** The dictionaries a walk lists, as their bytes and whether a stream came with each. */
const walked = (context: PDFContext, walk: (context: PDFContext) => Iterable<[PDFDict, PDFStream | undefined]>) =>
  [...walk(context)].map(([dict, stream]) => `${stream ? "stream " : ""}${dict.toString()}`);

describe("dict-map", () => {
  it("reads a dictionary's own map, in its order", () => {
    const dict = PDFDict.withContext(PDFContext.create());
    dict.set(PDFName.of("B"), PDFNumber.of(1));
    dict.set(PDFName.of("A"), PDFNumber.of(2));
    expect([...dictMap(dict).entries()]).toEqual(dict.entries());
  });

  it("everyDictList lists the dictionaries the walk over copies yields, in its order", () => {
    fc.assert(
      fc.property(documentSpec, (document) => {
        const context = build(document);
        const ours = everyDictList(context);
        const theirs = [...everyDictBefore(context)];
        expect(ours.length).toBe(theirs.length);
        ours.forEach(([dict, stream], i) => {
          expect(dict).toBe(theirs[i]![0]);
          expect(stream).toBe(theirs[i]![1]);
        });
        expect(walked(context, everyDictList)).toEqual(walked(context, everyDictBefore));
      }),
      { numRuns: 500 },
    );
  });
});
