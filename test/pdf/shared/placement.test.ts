// Where images are drawn (src/pdf/shared/placement.ts): nested q/Q, forms with their matrix, the
// largest placement, the share of a page images cover, annotation appearances.
import { describe, expect, it } from "vitest";
import { PDFDocument, PDFName } from "@cantoo/pdf-lib";
import type { PDFRef, PDFRawStream } from "@cantoo/pdf-lib";
import { findFontUsage } from "../../../src/pdf/fonts/usage.ts";
import { findImagePlacements } from "../../../src/pdf/shared/placement.ts";
import { encoder, image, pageWith, draw } from "../helpers/images.ts";

describe("placements", () => {
  it("finds where images are drawn: nested q/Q, forms with their matrix, the largest placement", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const im = image(doc, new Uint8Array(100 * 50), {
      Width: 100,
      Height: 50,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const other = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    // A form that draws `im` at its unit square scaled by its own matrix (x3).
    const form = doc.context.register(
      doc.context.flateStream(encoder.encode("q 10 0 0 20 0 0 cm /Im Do Q"), {
        Type: "XObject",
        Subtype: "Form",
        BBox: [0, 0, 100, 100],
        Matrix: [3, 0, 0, 3, 0, 0],
        Resources: { XObject: { Im: im } },
      }),
    );
    // Page 1: `im` at 72 x 36 inside two levels of q; the form drawn scaled by 2 (im: 60 x 120 at x2 = 120 x 240... see below).
    pageWith(
      doc,
      "q 2 0 0 2 0 0 cm q 36 0 0 18 0 0 cm /Im Do Q Q\n" + // 72 x 36
        "q 2 0 0 2 100 100 cm /Fm Do Q\n" + // form: 10x20 x3 x2 = 60 x 120
        "BI /W 2 /H 2 /BPC 8 /CS /G ID \x00EI\x00\x00\nEI\n" +
        "q 0 50 -25 0 300 300 cm /Other Do Q", // rotated: width edge 50, height edge 25
      { Im: im, Fm: form, Other: other },
    );
    // Page 2: `im` small.
    pageWith(doc, draw("Im", 10, 5), { Im: im });
    const { images, complete } = findImagePlacements(doc.context);
    expect(complete).toBe(true);
    const placed = (ref: PDFRef) => images.get(doc.context.lookup(ref) as PDFRawStream);
    expect(placed(im)).toMatchObject({ width: 72, height: 120 });
    expect(placed(other)!.width).toBeCloseTo(50);
    expect(placed(other)!.height).toBeCloseTo(25);
  });

  it("tells how much of its page images cover", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const a = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const b = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    pageWith(doc, draw("A", 300, 396) + draw("B", 100, 100, 400, 400), { A: a, B: b }, [600, 792]);
    const { images } = findImagePlacements(doc.context);
    const share = (300 * 396 + 100 * 100) / (600 * 792);
    expect(images.get(doc.context.lookup(a) as PDFRawStream)!.pageShare).toBeCloseTo(share, 6);
    expect(images.get(doc.context.lookup(b) as PDFRawStream)!.pageShare).toBeCloseTo(share, 6);
  });

  it("tells each image the share of each page it covers, its draws on a page added up", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const gray = { Width: 64, Height: 64, ColorSpace: "DeviceGray", BitsPerComponent: 8 };
    const a = image(doc, new Uint8Array(64 * 64), gray);
    const b = image(doc, new Uint8Array(64 * 64), gray);
    pageWith(doc, draw("A", 300, 396), { A: a }, [600, 792]);
    pageWith(doc, draw("B", 60, 79.2), { B: b }, [600, 792]);
    pageWith(
      doc,
      draw("A", 60, 79.2) + draw("A", 60, 79.2, 200, 200) + draw("B", 600, 792),
      { A: a, B: b },
      [600, 792],
    );
    const { images } = findImagePlacements(doc.context);
    const pages = (ref: PDFRef) => [...images.get(doc.context.lookup(ref) as PDFRawStream)!.pages!];
    expect(pages(a)).toEqual([
      [0, 0.25],
      [2, expect.closeTo(0.02, 9)],
    ]);
    expect(pages(b)).toEqual([
      [1, expect.closeTo(0.01, 9)],
      [2, 1],
    ]);
  });

  it("counts annotation appearances, fitted to their rectangle", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const im = image(doc, new Uint8Array(64 * 64), {
      Width: 64,
      Height: 64,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const appearance = doc.context.register(
      doc.context.flateStream(encoder.encode(draw("Im", 10, 10)), {
        Type: "XObject",
        Subtype: "Form",
        BBox: [0, 0, 10, 10],
        Resources: { XObject: { Im: im } },
      }),
    );
    const page = pageWith(doc, "", {});
    const annot = doc.context.obj({
      Type: "Annot",
      Subtype: "Stamp",
      Rect: [100, 100, 300, 150],
      AP: { N: appearance },
    });
    page.node.set(PDFName.of("Annots"), doc.context.obj([doc.context.register(annot)]));
    const { images } = findImagePlacements(doc.context);
    expect(images.get(doc.context.lookup(im) as PDFRawStream)).toMatchObject({ width: 200, height: 50 });
  });

  it("takes what the font pass's walk read, and reads a stream again once its data changed", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const gray = { Width: 10, Height: 10, ColorSpace: "DeviceGray", BitsPerComponent: 8 };
    const im = image(doc, new Uint8Array(100), gray);
    pageWith(doc, draw("Im", 36, 18), { Im: im });
    const changed = pageWith(doc, draw("Im", 20, 10), { Im: im });
    // The font pass reads both pages first; then the second page's content changes.
    findFontUsage(doc.context);
    const stream = doc.context.lookup(changed.node.get(PDFName.of("Contents"))) as PDFRawStream;
    stream.contents = doc.context.flateStream(encoder.encode(draw("Im", 72, 90))).contents;
    const { images, complete } = findImagePlacements(doc.context);
    expect(complete).toBe(true);
    expect(images.get(doc.context.lookup(im) as PDFRawStream)).toMatchObject({ width: 72, height: 90 });
  });

  it("skims pages that can draw no image, and still finds their inline images and what a shared stream carries", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const gray = { Width: 10, Height: 10, ColorSpace: "DeviceGray", BitsPerComponent: 8 };
    const im = image(doc, new Uint8Array(100), gray);
    // Page 1 draws nothing but an inline image of 4 bytes.
    pageWith(doc, "q 30 0 0 40 0 0 cm BI /W 2 /H 2 /BPC 8 /CS /G ID abcd EI Q", {});
    // Page 2 draws nothing; its stream, left scaled by 2, is also the first of page 3's, which
    // draws `im` after it.
    const shared = pageWith(doc, "q 2 0 0 2 0 0 cm BT ET", {}).node.get(PDFName.of("Contents"))!;
    const third = pageWith(doc, draw("Im", 10, 5), { Im: im });
    third.node.set(PDFName.of("Contents"), doc.context.obj([shared, third.node.get(PDFName.of("Contents"))!]));
    const { images, inline, inlinePlaced, complete } = findImagePlacements(doc.context, 4);
    expect(complete).toBe(true);
    expect(images.get(doc.context.lookup(im) as PDFRawStream)).toMatchObject({ width: 20, height: 10 });
    expect(inline.size).toBe(1);
    expect([...inlinePlaced.values()]).toMatchObject([{ width: 30, height: 40 }]);
    // A page that draws nothing and whose content cannot be decoded leaves the walk incomplete.
    const broken = pageWith(doc, "", {});
    const garbage = doc.context.stream(encoder.encode("not deflated"), { Filter: "FlateDecode" });
    broken.node.set(PDFName.of("Contents"), doc.context.register(garbage));
    expect(findImagePlacements(doc.context, 4).complete).toBe(false);
  });
});
