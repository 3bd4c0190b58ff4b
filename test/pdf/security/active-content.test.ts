// Active content removed (src/pdf/security/active-content.ts): JavaScript, launch actions, links to file
// shares and file:/data: addresses, RichMedia; what a reader shows stays. Documents are made here.
import { describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFRawStream, PDFString, StandardFonts } from "@cantoo/pdf-lib";
import { COMPRESSION_PROFILES } from "../../../src/pdf/index.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { reachingPdf, SAFE_ADDRESSES, stringsOf, UNSAFE_ADDRESSES } from "../fixtures.ts";
import {
  n,
  expectQpdfCheck,
  load,
  compress,
  objectsOf,
  allDicts,
  text,
  register,
  annotate,
} from "../helpers/structure.ts";

function visibleCounts(doc: PDFDocument) {
  let links = 0;
  let annotations = 0;
  for (const page of doc.getPages()) {
    for (const ref of page.node.lookupMaybe(n("Annots"), PDFArray)?.asArray() ?? []) {
      const annot = doc.context.lookup(ref);
      if (!(annot instanceof PDFDict)) continue;
      annotations++;
      if (annot.get(n("Subtype")) === n("Link")) links++;
    }
  }
  let bookmarks = 0;
  const outlines = doc.catalog.lookupMaybe(n("Outlines"), PDFDict);
  for (let item = outlines?.lookupMaybe(n("First"), PDFDict); item; item = item.lookupMaybe(n("Next"), PDFDict)) {
    bookmarks++;
  }
  const fields = doc.catalog.lookupMaybe(n("AcroForm"), PDFDict)?.lookupMaybe(n("Fields"), PDFArray)?.size() ?? 0;
  const names = doc.catalog.lookupMaybe(n("Names"), PDFDict);
  const attachments =
    (names?.lookupMaybe(n("EmbeddedFiles"), PDFDict)?.lookupMaybe(n("Names"), PDFArray)?.size() ?? 0) / 2;
  return { pages: doc.getPageCount(), links, annotations, bookmarks, fields, attachments };
}

/** A document with every kind of active content, and the links, outline, form and attachment it must keep. */
async function activePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([400, 400]);
  const page2 = doc.addPage([400, 400]);
  page.drawText("active content", { x: 20, y: 350, size: 14, font });
  const context = doc.context;
  const js = (code: string) => ({ S: "JavaScript", JS: PDFString.of(code) });
  const goTo = { S: "GoTo", D: [page2.ref, "Fit"] };
  const linkWith = (action: Record<string, unknown>, y: number) =>
    register(context, { Type: "Annot", Subtype: "Link", Rect: [20, y, 200, y + 20], Border: [0, 0, 0], A: action });
  annotate(page, linkWith(js("app.alert('hi')"), 300));
  annotate(page, linkWith({ S: "Launch", F: PDFString.of("calc.exe") }, 270));
  annotate(page, linkWith({ S: "URI", URI: PDFString.of("javascript:alert(1)") }, 240));
  annotate(page, linkWith({ S: "URI", URI: PDFString.of("https://example.com/") }, 210));
  // A chain: URI, then JavaScript, then GoTo; the JavaScript goes, the rest stays linked.
  const chained = linkWith(
    { S: "URI", URI: PDFString.of("https://example.org/"), Next: { ...js("evil()"), Next: goTo } },
    180,
  );
  annotate(page, chained);
  // An action chain that loops back on itself
  const loopA = register(context, js("a()"));
  const loopB = register(context, { S: "GoTo", D: [page.ref, "Fit"], Next: loopA });
  (context.lookup(loopA) as PDFDict).set(n("Next"), loopB);
  annotate(page, linkWith({ S: "ImportData", F: PDFString.of("data.fdf"), Next: loopB }, 150));
  // Outline: two items, one with JavaScript
  const outlines = context.nextRef();
  const item1 = context.nextRef();
  const item2 = context.nextRef();
  context.assign(item1, context.obj({ Title: PDFString.of("Intro"), Parent: outlines, Next: item2, A: js("x()") }));
  context.assign(
    item2,
    context.obj({ Title: PDFString.of("Two"), Parent: outlines, Prev: item1, Dest: [page2.ref, "Fit"] }),
  );
  context.assign(outlines, context.obj({ Type: "Outlines", First: item1, Last: item2, Count: 2 }));
  doc.catalog.set(n("Outlines"), outlines);
  // A form field with keystroke/format scripts, and a page open script
  const field = register(context, {
    Type: "Annot",
    Subtype: "Widget",
    FT: "Tx",
    T: PDFString.of("amount"),
    Rect: [20, 100, 200, 120],
    P: page.ref,
    AA: { K: js("AFNumber_Keystroke(2)"), F: js("AFNumber_Format(2)") },
  });
  annotate(page, field);
  doc.catalog.set(n("AcroForm"), context.obj({ Fields: [field] }));
  page.node.set(n("AA"), context.obj({ O: js("pageOpen()") }));
  // Document-level JavaScript, an open action script and an attachment
  doc.catalog.set(n("OpenAction"), context.obj(js("this.print()")));
  doc.catalog.set(n("AA"), context.obj({ WC: js("bye()") }));
  await doc.attach(new TextEncoder().encode("hello, attachment"), "note.txt", { mimeType: "text/plain" });
  // The attachment's name tree is written on save: add the document's JavaScript beside it after.
  const saved = await PDFDocument.load(await doc.save({ useObjectStreams: false }), { updateMetadata: false });
  const script = register(saved.context, js("init()"));
  const jsTree = register(saved.context, { Names: [PDFHexString.fromText("init"), script] });
  saved.catalog.lookup(n("Names"), PDFDict).set(n("JavaScript"), jsTree);
  return saved.save({ useObjectStreams: false });
}

describe("active content", () => {
  it("removes JavaScript, Launch and ImportData in every profile, keeping links, outline, fields and attachments", async () => {
    const input = await activePdf();
    const before = visibleCounts(await load(input));
    expect(before).toEqual({ pages: 2, links: 6, annotations: 7, bookmarks: 2, fields: 1, attachments: 1 });
    for (const profile of COMPRESSION_PROFILES) {
      const { output, report } = await compress(input, profile);
      expect(report.activeContent.actions).toBeGreaterThanOrEqual(9);
      const after = await load(output);
      expect(visibleCounts(after)).toEqual(before);
      const dicts = allDicts(after.context);
      expect(dicts.filter((d) => d.has(n("JS")) || d.get(n("S")) === n("JavaScript"))).toEqual([]);
      expect(dicts.filter((d) => d.get(n("S")) === n("Launch") || d.get(n("S")) === n("ImportData"))).toEqual([]);
      expect(dicts.filter((d) => d.has(n("AA")))).toEqual([]);
      expect(after.catalog.has(n("OpenAction"))).toBe(false);
      expect(after.catalog.lookup(n("Names"), PDFDict).has(n("JavaScript"))).toBe(false);
      expect(text(output)).not.toMatch(/JavaScript|javascript:|calc\.exe/);
      // What is safe stays: the web link, the chain's URI and GoTo, the outline's destination.
      const uris = dicts.filter((d) => d.get(n("S")) === n("URI")).map((d) => d.lookup(n("URI"), PDFString).asString());
      expect(uris.sort()).toEqual(["https://example.com/", "https://example.org/"]);
      const chainStart = dicts.find((d) => d.get(n("S")) === n("URI") && d.has(n("Next")))!;
      expect(chainStart.lookup(n("Next"), PDFDict).get(n("S"))).toBe(n("GoTo"));
      expect(dicts.filter((d) => d.get(n("S")) === n("GoTo")).length).toBeGreaterThanOrEqual(2);
      // The attachment's bytes are intact.
      const file = objectsOf(after).find(
        (o) => o instanceof PDFRawStream && o.dict.get(n("Type")) === n("EmbeddedFile"),
      );
      expect(new TextDecoder().decode(decodeStreamData(file as PDFRawStream, 1000))).toBe("hello, attachment");
      expectQpdfCheck(output, `active-${profile}`);
    }
  });

  it("removes links to shares, files and inline documents and RichMedia annotations in every profile, keeping web and cross-document links", async () => {
    const input = await reachingPdf();
    const before = await load(input);
    expect(visibleCounts(before).annotations).toBe(UNSAFE_ADDRESSES.length + SAFE_ADDRESSES.length + 1);
    expect(stringsOf(before)).toEqual(expect.arrayContaining([...UNSAFE_ADDRESSES, ...SAFE_ADDRESSES]));
    for (const profile of COMPRESSION_PROFILES) {
      const { output, report } = await compress(input, profile);
      expect(report.activeContent).toEqual({ actions: UNSAFE_ADDRESSES.length, annotations: 1, xfaScripts: 0 });
      const after = await load(output);
      // Every link stays on the page (without its action when that went); the player does not.
      expect(visibleCounts(after)).toMatchObject({
        annotations: UNSAFE_ADDRESSES.length + SAFE_ADDRESSES.length,
        links: UNSAFE_ADDRESSES.length + SAFE_ADDRESSES.length,
      });
      const strings = stringsOf(after);
      for (const address of UNSAFE_ADDRESSES) expect(strings).not.toContain(address);
      expect(strings).toEqual(expect.arrayContaining([...SAFE_ADDRESSES]));
      const dicts = allDicts(after.context);
      expect(dicts.filter((d) => d.get(n("Subtype")) === n("RichMedia") || d.has(n("RichMediaContent")))).toEqual([]);
      expect(dicts.filter((d) => d.get(n("Type")) === n("EmbeddedFile"))).toEqual([]);
      expectQpdfCheck(output, `reaching-${profile}`);
    }
  });

  it("keeps an /OpenAction that is a destination, and removes scripts from XFA forms", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([200, 200]);
    page.drawText("xfa", { x: 10, y: 100 });
    doc.catalog.set(n("OpenAction"), doc.context.obj([page.ref, "Fit"]));
    const template =
      '<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="f">' +
      '<field name="a"><event activity="click"><script contentType="application/x-javascript">' +
      "<![CDATA[ if (a < b) app.alert('</script>'); ]]></script></event></field>" +
      "<script>xfa.host.messageBox(1)</script><script/></subform></template>";
    const xfa = doc.context.register(doc.context.flateStream(template));
    const datasets = doc.context.register(doc.context.stream("<xfa:datasets/>"));
    doc.catalog.set(
      n("AcroForm"),
      doc.context.obj({ Fields: [], XFA: [PDFString.of("template"), xfa, PDFString.of("datasets"), datasets] }),
    );
    const input = await doc.save({ useObjectStreams: false });
    const { output, report } = await compress(input, "lossless");
    expect(report.activeContent.xfaScripts).toBe(3);
    const after = await load(output);
    expect(after.catalog.lookup(n("OpenAction"), PDFArray).size()).toBe(2);
    const packets = after.catalog.lookup(n("AcroForm"), PDFDict).lookup(n("XFA"), PDFArray);
    const cleaned = new TextDecoder().decode(decodeStreamData(packets.lookup(1, PDFRawStream), 100_000));
    expect(cleaned).toBe(
      '<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="f">' +
        '<field name="a"><event activity="click"></event></field></subform></template>',
    );
    expectQpdfCheck(output, "xfa");
  });
});
