// The engine's structural passes (src/pdf/structure/): merging duplicates, dropping metadata (extreme
// only), renumbering, staying fast on hostile structures. Documents are made here.
import { describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFNumber, PDFRef, PDFString, StandardFonts } from "@cantoo/pdf-lib";
import { compressPdf, COMPRESSION_PROFILES } from "../../../src/pdf/index.ts";
import { mergeDuplicates } from "../../../src/pdf/structure/dedup.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { flateImage, photoPixels, place } from "../fixtures.ts";
import {
  n,
  expectQpdfCheck,
  load,
  compress,
  objectsOf,
  dictOf,
  text,
  infoOf,
  streamAt,
  register,
  annotate,
} from "../helpers/structure.ts";

describe("duplicates", () => {
  it("merges identical images, fonts and font programs into one object each", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const pixels = photoPixels(300, 200, 3, 21);
    const fontProgram = photoPixels(100, 60, 1, 22); // stands for a font file: bytes are bytes here
    for (let i = 0; i < 3; i++) {
      const page = doc.addPage([300, 300]);
      // The same picture, registered anew on each page (what many producers do)
      place(page, flateImage(doc, pixels, 300, 200, "DeviceRGB"), 0, 0, 300, 200);
      // A standard font embedded anew on each page: three identical font dictionaries
      const standard = await doc.embedFont(StandardFonts.Helvetica);
      page.drawText(`page ${i + 1}`, { x: 10, y: 250, size: 12, font: standard });
      // An embedded font program repeated with its descriptor and font dictionary
      const file = doc.context.register(doc.context.flateStream(fontProgram, { Length1: fontProgram.length }));
      const descriptor = register(doc.context, {
        Type: "FontDescriptor",
        FontName: "ABCDEF+Fake",
        Flags: 32,
        FontBBox: [0, 0, 1000, 1000],
        ItalicAngle: 0,
        Ascent: 800,
        Descent: -200,
        CapHeight: 700,
        StemV: 80,
        FontFile2: file,
      });
      const font = register(doc.context, {
        Type: "Font",
        Subtype: "TrueType",
        BaseFont: "ABCDEF+Fake",
        FirstChar: 32,
        LastChar: 32,
        Widths: [250],
        FontDescriptor: descriptor,
      });
      page.node.setFontDictionary(n("FFake"), font);
    }
    const input = await doc.save({ useObjectStreams: false });
    for (const profile of COMPRESSION_PROFILES) {
      const { output, report } = await compress(input, profile);
      expect(report.mergedObjects).toBeGreaterThanOrEqual(2 * 3 + 2);
      const after = await load(output);
      const dicts = objectsOf(after).map(dictOf);
      const count = (test: (dict: PDFDict) => boolean) =>
        dicts.filter((dict) => dict instanceof PDFDict && test(dict)).length;
      expect(count((d) => d.get(n("Subtype")) === n("Image"))).toBe(1);
      expect(count((d) => d.get(n("BaseFont")) === n("Helvetica"))).toBe(1);
      expect(count((d) => d.get(n("BaseFont")) === n("ABCDEF+Fake"))).toBe(1);
      expect(count((d) => d.get(n("Type")) === n("FontDescriptor"))).toBe(1);
      expect(count((d) => d.has(n("Length1")))).toBe(1);
      // Every page still draws the image and uses the fonts: they all point at the one copy.
      const pages = after.getPages();
      expect(pages).toHaveLength(3);
      const images = pages.map((page) => page.node.Resources()!.lookup(n("XObject"), PDFDict).values()[0]);
      expect(new Set(images).size).toBe(1);
      expect(images[0]).toBeInstanceOf(PDFRef);
      expectQpdfCheck(output, `dedup-${profile}`);
    }
  });

  it("merges streams by their bytes: those of one length are compared, a stream of a length of its own is left", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const { context } = doc;
    const bytes = (seed: number, length: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 255);
    const stream = (data: Uint8Array) => context.register(context.stream(data, { Type: "XObject", Subtype: "Form" }));
    const [a, b, c, d] = [stream(bytes(1, 500)), stream(bytes(1, 500)), stream(bytes(2, 500)), stream(bytes(1, 501))];
    const page = doc.addPage([100, 100]);
    page.node.set(n("Resources"), context.obj({ XObject: { A: a, B: b, C: c, D: d } }));
    const { merged } = mergeDuplicates(context);
    expect(merged).toBe(1);
    const kept = page.node.Resources()!.lookup(n("XObject"), PDFDict);
    expect(kept.get(n("A"))).toBe(kept.get(n("B")));
    expect(new Set(["A", "C", "D"].map((key) => kept.get(n(key)))).size).toBe(3);
  });

  it("never merges pages, annotations or form fields, however alike", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const content = doc.context.register(doc.context.flateStream("0 0 m 10 10 l S"));
    const pages = [doc.addPage([200, 200]), doc.addPage([200, 200])];
    for (const page of pages) page.node.set(n("Contents"), content);
    // Two identical links on the first page
    const link = () =>
      register(doc.context, {
        Type: "Annot",
        Subtype: "Link",
        Rect: [10, 10, 50, 50],
        Border: [0, 0, 0],
        A: { S: "URI", URI: PDFString.of("https://example.com/") },
      });
    annotate(pages[0]!, link());
    annotate(pages[0]!, link());
    // Two alike check boxes (fields merged with their widgets), without names
    const fields: PDFRef[] = [];
    for (let i = 0; i < 2; i++) {
      const field = register(doc.context, {
        Type: "Annot",
        Subtype: "Widget",
        FT: "Btn",
        Rect: [100, 100, 120, 120],
        P: doc.getPage(1).ref,
      });
      annotate(pages[1]!, field);
      fields.push(field);
    }
    doc.catalog.set(n("AcroForm"), doc.context.obj({ Fields: fields }));
    const input = await doc.save({ useObjectStreams: false });
    const { output, report } = await compress(input, "lossless");
    expect(report.mergedObjects).toBe(0);
    const after = await load(output);
    const [first, second] = after.getPages();
    expect(after.getPageCount()).toBe(2);
    expect(first!.ref).not.toBe(second!.ref);
    const links = first!.node.lookup(n("Annots"), PDFArray).asArray();
    expect(links).toHaveLength(2);
    expect(links[0]).not.toBe(links[1]);
    const widgets = second!.node.lookup(n("Annots"), PDFArray).asArray();
    expect(new Set(widgets).size).toBe(2);
    expect(after.catalog.lookup(n("AcroForm"), PDFDict).lookup(n("Fields"), PDFArray).size()).toBe(2);
    expectQpdfCheck(output, "identity");
  });
});

/** Counts of what a reader shows besides pages: links, outline items, fields, attachments. */

describe("metadata", () => {
  const xmp = (extra = "") =>
    '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">' +
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
    `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" ${extra}>` +
    "<dc:title>A title</dc:title></rdf:Description></rdf:RDF></x:xmpmeta>" +
    " ".repeat(2000) +
    '<?xpacket end="w"?>';

  async function withMetadata(packet: string): Promise<Uint8Array> {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([200, 200]);
    page.drawText("metadata", { x: 10, y: 100 });
    const metadata = doc.context.register(doc.context.stream(packet, { Type: "Metadata", Subtype: "XML" }));
    doc.catalog.set(n("Metadata"), metadata);
    page.node.set(n("Metadata"), doc.context.register(doc.context.stream(xmp(), { Type: "Metadata", Subtype: "XML" })));
    doc.setTitle("Kept title");
    doc.setAuthor("Kept author");
    doc.setProducer("Some producer 1.0");
    doc.setCreator("Some creator");
    infoOf(doc).set(n("PrivateKey"), PDFString.of("x".repeat(200)));
    return doc.save({ useObjectStreams: false });
  }

  it("is dropped in extreme only; the title and author stay", async () => {
    const input = await withMetadata(xmp());
    for (const profile of COMPRESSION_PROFILES) {
      const { output } = await compress(input, profile);
      const after = await load(output);
      const info = infoOf(after);
      expect(after.getTitle()).toBe("Kept title");
      expect(after.getAuthor()).toBe("Kept author");
      if (profile === "extreme") {
        expect(after.catalog.has(n("Metadata"))).toBe(false);
        expect(after.getPage(0).node.has(n("Metadata"))).toBe(false);
        expect(info.has(n("Producer")) || info.has(n("Creator")) || info.has(n("PrivateKey"))).toBe(false);
      } else {
        // Kept, and compressed: it decodes to the same packet.
        const metadata = streamAt(after.catalog, "Metadata");
        expect(metadata.dict.get(n("Filter"))).toBe(n("FlateDecode"));
        expect(new TextDecoder().decode(decodeStreamData(metadata, 100_000))).toBe(xmp());
        expect(after.getProducer()).toBe("Some producer 1.0");
        expect(info.has(n("PrivateKey"))).toBe(true);
      }
      expectQpdfCheck(output, `metadata-${profile}`);
    }
  });

  it("keeps a PDF/A or PDF/UA catalog's XMP in extreme, and a PDF/A file's XMP unfiltered", async () => {
    for (const claim of [
      'xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="2" pdfaid:conformance="B"',
      'xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/" pdfuaid:part="1"',
    ]) {
      const input = await withMetadata(xmp(claim));
      const after = await load((await compress(input, "extreme")).output);
      const metadata = streamAt(after.catalog, "Metadata");
      expect(new TextDecoder().decode(decodeStreamData(metadata, 100_000))).toBe(xmp(claim));
      expect(after.getPage(0).node.has(n("Metadata"))).toBe(false);
      if (claim.includes("pdfaid")) expect(metadata.dict.has(n("Filter"))).toBe(false);
    }
  });
});

describe("writing", () => {
  it("numbers objects without holes; a reference to a missing object becomes null", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([200, 200]);
    page.drawText("numbered", { x: 10, y: 100 });
    for (let i = 0; i < 50; i++) doc.context.register(doc.context.obj({ Orphan: i })); // holes once dropped
    page.node.set(n("Dangling"), PDFRef.of(9999));
    page.node.set(n("Kept"), doc.context.register(doc.context.obj({ Kept: PDFNumber.of(1) })));
    const input = await doc.save({ useObjectStreams: false });
    const { output } = await compress(input, "lossless");
    const after = await load(output);
    const numbers = after.context.enumerateIndirectObjects().map(([ref]) => ref.objectNumber);
    // The object streams and the cross-reference stream follow the objects, still without holes.
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(after.getPage(0).node.get(n("Dangling"), true)?.toString()).toBe("null");
    expect(after.getPage(0).node.lookup(n("Kept"), PDFDict).get(n("Kept"))).toEqual(PDFNumber.of(1));
    expectQpdfCheck(output, "renumbered");
  });
});

/** A classic PDF made of object bodies (object i + 1 is objs[i]); object 1 the catalog. */
function rawPdf(objs: string[]): Uint8Array {
  let out = "%PDF-1.7\n";
  const offsets: number[] = [];
  objs.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

const page = (extra: string) => [
  `<< /Type /Catalog /Pages 2 0 R ${extra} >>`,
  "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
  "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
  "<< /Length 8 >>\nstream\n0 0 m S\n\nendstream",
];

describe("hostile structures", () => {
  it("reference cycles, looping action chains and deep nesting finish quickly", async () => {
    const cycles = rawPdf([
      ...page("/Extra 5 0 R /OpenAction 7 0 R"),
      "<< /Other 6 0 R >>",
      "<< /Other 5 0 R /Self 6 0 R >>",
      "<< /S /JavaScript /JS (a) /Next 8 0 R >>",
      "<< /S /JavaScript /JS (b) /Next [7 0 R 8 0 R 9 0 R] >>",
      "<< /S /URI /URI (https://example.com) /Next 7 0 R >>",
    ]);
    const deep = rawPdf([...page("/Extra 5 0 R"), "[".repeat(2000) + "1" + "]".repeat(2000)]);
    for (const input of [cycles, deep]) {
      for (const profile of COMPRESSION_PROFILES) {
        const started = performance.now();
        const { output, pages } = await compressPdf(input, profile);
        expect(performance.now() - started).toBeLessThan(5000);
        expect(pages).toBe(1);
        expect(text(output)).not.toContain("JavaScript");
      }
    }
  });

  it("merges many identical objects and long identical chains in bounded time", async () => {
    const count = 20_000;
    const refs = Array.from({ length: count }, (_, i) => `${6 + i} 0 R`).join(" ");
    const many = rawPdf([...page("/Extra 5 0 R"), `[${refs}]`, ...Array<string>(count).fill("<< /A 1 /B [1 2 3] >>")]);
    // Two identical linked lists: each pass of the merge can only join one more pair of links.
    const length = 5_000;
    const chain = (start: number) =>
      Array.from({ length }, (_, i) => (i < length - 1 ? `<< /V 1 /Next ${start + i + 1} 0 R >>` : "<< /V 1 >>"));
    const parallel = rawPdf([...page(`/Extra [5 0 R ${5 + length} 0 R]`), ...chain(5), ...chain(5 + length)]);
    for (const [input, least] of [
      [many, count - 1],
      [parallel, 1],
    ] as const) {
      const started = performance.now();
      const { output, report } = await compress(input, "lossless");
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(report.mergedObjects).toBeGreaterThanOrEqual(least);
      expect(output.length).toBeLessThan(input.length);
      expectQpdfCheck(output, `hostile-${least}`);
    }
  });
});
