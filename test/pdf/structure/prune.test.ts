// Dropping the objects nothing reaches (src/pdf/structure/prune.ts): what the trailer's /Root and
// /Info reach through dictionaries, arrays, streams' dictionaries and cycles stays; the rest goes.
import { PDFContext, PDFName, PDFRef } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { removeUnreachableObjects } from "../../../src/pdf/structure/prune.ts";

const numbers = (context: PDFContext) => context.enumerateIndirectObjects().map(([ref]) => ref.objectNumber);

describe("removing unreachable objects", () => {
  it("keeps what the trailer reaches, through cycles and streams, and drops the rest", () => {
    const context = PDFContext.create();
    const font = context.register(context.obj({ Type: "Font" }));
    const stream = context.register(context.stream("BT ET", { Font: font }));
    const cycleA = PDFRef.of(90);
    const cycleB = context.register(context.obj({ Back: cycleA }));
    context.assign(cycleA, context.obj({ Next: cycleB, Kids: [stream, PDFRef.of(999)] }));
    const root = context.register(context.obj({ Type: "Catalog", Pages: cycleA }));
    const info = context.register(context.obj({ Producer: PDFName.of("x") }));
    const orphan = context.register(context.obj({ Unused: [font] }));
    context.trailerInfo.Root = root;
    context.trailerInfo.Info = info;
    expect(removeUnreachableObjects(context)).toBe(1);
    expect(numbers(context).sort((a, b) => a - b)).toEqual(
      [font, stream, cycleA, cycleB, root, info].map((ref) => ref.objectNumber).sort((a, b) => a - b),
    );
    expect(context.lookup(orphan)).toBeUndefined();
    // A reference made again by its number is the same pooled one: nothing more is dropped.
    expect(removeUnreachableObjects(context)).toBe(0);
  });
});
