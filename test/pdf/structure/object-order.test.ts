// The kept order of a context's objects (src/pdf/structure/object-order.ts) against pdf-lib's own
// enumerateIndirectObjects: after any run of assignments (new numbers, numbers again, other
// generations, out of order) and deletions, the same pairs in the same order, the same instances;
// and a caller changing its list does not change the next caller's.
import { PDFContext, PDFNumber, PDFRef } from "@cantoo/pdf-lib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pdfLibEnumerate } from "../../../src/pdf/structure/object-order.ts";

type Op =
  { kind: "assign"; number: number; generation: number } | { kind: "delete"; number: number } | { kind: "list" };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("assign" as const),
    number: fc.integer({ min: 0, max: 40 }),
    generation: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 }), fc.constant(65535)),
  }),
  fc.record({ kind: fc.constant("delete" as const), number: fc.integer({ min: 0, max: 40 }) }),
  fc.record({ kind: fc.constant("list" as const) }),
);

function expectSame(context: PDFContext): void {
  const ours = context.enumerateIndirectObjects();
  const theirs = pdfLibEnumerate.call(context);
  expect(ours.length).toBe(theirs.length);
  ours.forEach(([ref, object], i) => {
    expect(ref).toBe(theirs[i]![0]);
    expect(object).toBe(theirs[i]![1]);
  });
}

describe("object-order", () => {
  it("lists a context's objects as pdf-lib does, whatever was assigned and deleted", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const context = PDFContext.create();
        let value = 0;
        for (const step of ops) {
          if (step.kind === "assign") context.assign(PDFRef.of(step.number, step.generation), PDFNumber.of(value++));
          else if (step.kind === "delete") context.delete(PDFRef.of(step.number));
          else {
            // A caller changing its own list leaves the next one as it was.
            const list = context.enumerateIndirectObjects();
            list.reverse();
            list.push([PDFRef.of(999), PDFNumber.of(-1)]);
          }
          expectSame(context);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("lists objects registered after a listing", () => {
    const context = PDFContext.create();
    const first = context.register(PDFNumber.of(1));
    expect(context.enumerateIndirectObjects().map(([ref]) => ref)).toEqual([first]);
    const second = context.register(PDFNumber.of(2));
    expect(context.enumerateIndirectObjects().map(([ref]) => ref)).toEqual([first, second]);
    const third = PDFNumber.of(3);
    context.assign(first, third);
    expect(context.enumerateIndirectObjects()[0]![1]).toBe(third);
    expectSame(context);
  });
});
