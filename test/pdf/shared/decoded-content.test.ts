// shared/decoded-content.ts: content the font pass's walk decoded, taken once by the placement walk,
// and only while the stream's data is the one decoded.
import { PDFDocument, PDFRawStream } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { forgetDecoded, keepDecoded, takeDecoded } from "../../../src/pdf/shared/decoded-content.ts";

async function stream() {
  const doc = await PDFDocument.create();
  const context = doc.context;
  return { context, stream: PDFRawStream.of(context.obj({}), new Uint8Array([1, 2, 3])) };
}

describe("decoded content", () => {
  it("is taken once", async () => {
    const { context, stream: s } = await stream();
    const bytes = new Uint8Array([9]);
    keepDecoded(context, s, bytes);
    expect(takeDecoded(context, s)).toBe(bytes);
    expect(takeDecoded(context, s)).toBeUndefined();
  });

  it("is not taken once the stream's data changed", async () => {
    const { context, stream: s } = await stream();
    keepDecoded(context, s, new Uint8Array([9]));
    s.contents = new Uint8Array([4, 5]);
    expect(takeDecoded(context, s)).toBeUndefined();
  });

  it("is kept per document and forgotten", async () => {
    const one = await stream();
    const two = await stream();
    keepDecoded(one.context, one.stream, new Uint8Array([9]));
    expect(takeDecoded(two.context, one.stream)).toBeUndefined();
    forgetDecoded(one.context);
    expect(takeDecoded(one.context, one.stream)).toBeUndefined();
  });
});
