// Press profiles of colour spaces cut to the tables a reader draws with (src/pdf/content/press-profiles.ts).
// Profiles are made here (an output-class CMYK profile with device-to-PCS and PCS-to-device tables of
// filler bytes); the corpus's Photoshop PDF/X-3 file (SWOP as DefaultCMYK and output intent) is run
// when the corpus is there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFString } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { compressPdf } from "../../../src/pdf/index.ts";
import { colourSpaceProfile, cutPressProfiles } from "../../../src/pdf/content/press-profiles.ts";
import { openPdf } from "../../../src/pdf/structure/load.ts";
import { decodeStreamData } from "../../../src/pdf/streams/filters.ts";
import { saveDocument } from "../../../src/pdf/structure/save.ts";
import { corpusDir, textPdf } from "../fixtures.ts";
import { hasPoppler, popplerScratch } from "../helpers/poppler.ts";

const CORPUS = corpusDir();
const PHOTOSHOP = CORPUS && path.join(CORPUS, "files", "photo_cmyk_photoshop.pdf");
const HAVE_PHOTOSHOP = PHOTOSHOP !== undefined && existsSync(PHOTOSHOP);
if (!HAVE_PHOTOSHOP)
  console.log(
    "press-profiles.test.ts: skipped the corpus case, photo_cmyk_photoshop.pdf is not in ../shared/corpus/pdf.",
  );
const POPPLER = hasPoppler();
if (!POPPLER) console.log("press-profiles.test.ts: skipped the rendering check, poppler-utils is not installed.");
const poppler = popplerScratch("press-profiles");
afterAll(() => poppler.remove());

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** An output-class ('prtr') CMYK-to-Lab profile: A2B0 and A2B2 sharing data, A2B1, B2A0 and gamt. */
function pressProfile(): Uint8Array {
  const tags: [string, number][] = [
    ["desc", 40],
    ["A2B0", 4000],
    ["A2B1", 3000],
    ["B2A0", 30000],
    ["gamt", 5000],
  ];
  const table = 132 + (tags.length + 1) * 12;
  const size = table + tags.reduce((sum, [, length]) => sum + length, 0);
  const profile = new Uint8Array(size);
  const view = new DataView(profile.buffer);
  view.setUint32(0, size);
  profile.set(ascii("prtrCMYKLab "), 12);
  profile.set(ascii("acsp"), 36);
  profile.fill(7, 84, 100); // a profile ID
  view.setUint32(128, tags.length + 1);
  let at = table;
  const entry = (i: number, signature: string, offset: number, length: number) => {
    profile.set(ascii(signature), 132 + i * 12);
    view.setUint32(136 + i * 12, offset);
    view.setUint32(140 + i * 12, length);
  };
  tags.forEach(([signature, length], i) => {
    entry(i, signature, at, length);
    profile.fill(i + 1, at, at + length);
    at += length;
  });
  entry(tags.length, "A2B2", table + 40, 4000);
  return profile;
}

function tagsOf(profile: Uint8Array): Map<string, Uint8Array> {
  const view = new DataView(profile.buffer, profile.byteOffset, profile.byteLength);
  const tags = new Map<string, Uint8Array>();
  for (let i = 0; i < view.getUint32(128); i++) {
    const at = 132 + i * 12;
    const offset = view.getUint32(at + 4);
    tags.set(
      String.fromCharCode(...profile.subarray(at, at + 4)),
      profile.subarray(offset, offset + view.getUint32(at + 8)),
    );
  }
  return tags;
}

/** A text document whose page has DefaultCMYK [/ICCBased profile], and an output intent naming it. */
async function documentWithProfile(intent?: { version: string; condition: string }): Promise<PDFContext> {
  const { doc } = await openPdf(await textPdf(1));
  const context = doc.context;
  const profile = context.register(context.flateStream(pressProfile(), { N: 4 }));
  const page = doc.getPage(0).node;
  const resources = page.lookup(PDFName.of("Resources"), PDFDict);
  resources.set(PDFName.of("ColorSpace"), context.obj({ DefaultCMYK: [PDFName.of("ICCBased"), profile] }));
  if (intent) {
    const outputIntent = context.obj({
      Type: "OutputIntent",
      S: "GTS_PDFX",
      OutputConditionIdentifier: PDFString.of(intent.condition),
      RegistryName: PDFString.of("http://www.color.org"),
      DestOutputProfile: profile,
    });
    doc.catalog.set(PDFName.of("OutputIntents"), context.obj([outputIntent]));
    context.trailerInfo.Info = context.register(context.obj({ GTS_PDFXVersion: PDFString.of(intent.version) }));
  }
  return context;
}

function profileOf(context: PDFContext): Uint8Array {
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (object instanceof PDFRawStream && object.dict.has(PDFName.of("N"))) return decodeStreamData(object, 1 << 20)!;
  }
  throw new Error("no profile");
}

describe("press profiles of colour spaces", () => {
  it("keeps the device-to-PCS tags (shared data shared) and drops B2A and gamt, as an input profile", () => {
    const profile = pressProfile();
    const cut = colourSpaceProfile(profile)!;
    const tags = tagsOf(cut);
    expect([...tags.keys()].sort()).toEqual(["A2B0", "A2B1", "A2B2", "desc"]);
    for (const name of ["desc", "A2B0", "A2B1", "A2B2"]) expect(tags.get(name)).toEqual(tagsOf(profile).get(name));
    expect(cut.length).toBe(132 + 4 * 12 + 40 + 4000 + 3000);
    expect(new DataView(cut.buffer).getUint32(0)).toBe(cut.length);
    expect(String.fromCharCode(...cut.subarray(12, 16))).toBe("scnr");
    expect(cut.subarray(84, 100).every((b) => b === 0)).toBe(true);
    // Not an output profile, or nothing worth cutting: undefined.
    const display = profile.slice();
    display.set(ascii("mntr"), 12);
    expect(colourSpaceProfile(display)).toBeUndefined();
    expect(colourSpaceProfile(cut.slice())).toBeUndefined();
  });

  it("cuts a colour space's profile, and one shared with a PDF/X-3 intent of a registered condition", async () => {
    const plain = await documentWithProfile();
    expect(cutPressProfiles(plain)).toBeGreaterThan(30000);
    expect(tagsOf(profileOf(plain)).has("B2A0")).toBe(false);
    const pdfx = await documentWithProfile({ version: "PDF/X-3:2002", condition: "CGATS TR 001" });
    expect(cutPressProfiles(pdfx)).toBeGreaterThan(30000);
    const intents = pdfx.lookup(pdfx.trailerInfo.Root, PDFDict).lookup(PDFName.of("OutputIntents"), PDFArray);
    const intent = intents.lookup(0, PDFDict);
    expect(intent.has(PDFName.of("DestOutputProfile"))).toBe(false);
    expect(intent.get(PDFName.of("OutputConditionIdentifier"))).toEqual(PDFString.of("CGATS TR 001"));
  });

  it.each([
    ["PDF/X-4", "CGATS TR 001"],
    ["PDF/X-3:2002", "Custom"],
  ])("keeps a profile an output intent needs (%s, %s)", async (version, condition) => {
    const context = await documentWithProfile({ version, condition });
    expect(cutPressProfiles(context)).toBe(0);
    expect(tagsOf(profileOf(context)).has("B2A0")).toBe(true);
  });
});

describe.skipIf(!HAVE_PHOTOSHOP)("the corpus's Photoshop PDF/X-3 file (SWOP as DefaultCMYK and output intent)", () => {
  it("loses SWOP's production tables in balanced, renders within a level on average, keeps its output condition", async () => {
    const input = new Uint8Array(readFileSync(PHOTOSHOP!));
    const { output } = await compressPdf(input, "balanced");
    // 424,954 bytes before (the profile 383,863 of them); gs /ebook 31,392 converting every colour to sRGB.
    expect(output.length).toBeLessThan(130_000);
    const { doc } = await openPdf(output);
    const intent = doc.catalog.lookup(PDFName.of("OutputIntents"), PDFArray).lookup(0, PDFDict);
    expect(intent.get(PDFName.of("OutputConditionIdentifier"))).toEqual(PDFString.of("CGATS TR 001"));
    expect(intent.has(PDFName.of("DestOutputProfile"))).toBe(false);
    const lossless = await compressPdf(input, "lossless");
    expect(lossless.output.length).toBeGreaterThan(400_000);
    if (!POPPLER) return;
    // The pass alone, on the document as it came.
    const opened = await openPdf(input);
    expect(cutPressProfiles(opened.doc.context)).toBeGreaterThan(470_000);
    const [before] = poppler.pixelsOf(input);
    const [after] = poppler.pixelsOf(await saveDocument(opened.doc));
    expect(after!.length).toBe(before!.length);
    let difference = 0;
    for (let i = 0; i < before!.length; i++) difference += Math.abs(before![i]! - after![i]!);
    // lcms2 finds the black point of a press profile through its B2A tables, and poppler draws
    // through the output intent's profile: 2 % of the samples move, by up to 19 levels of 255.
    expect(difference / before!.length).toBeLessThan(0.2);
  });
});
