// Press (output-class) ICC profiles of colour spaces, cut to the tables a reader draws with.
//
// Photoshop, InDesign and Illustrator embed the press's profile, typically U.S. Web Coated (SWOP) v2
// (557 KB, 384 KB deflated), as the page's DefaultCMYK or an image's colour space, and as the PDF/X
// output intent. A reader drawing the page converts the CMYK samples to its display through the
// profile's device-to-PCS tables (A2B0-2); the PCS-to-device tables (B2A0-2: converting other colours
// into this press's CMYK), the gamut tag and the previews are for print production: 80 % of SWOP's
// bytes. The profile is written as an input-class profile with the same header and device-to-PCS
// tags (ICC.1:2004 8.3: an input profile needs only A2B0). The colours come from the same tables; what
// moves is the black point lcms2 finds for black-point compensation (through the B2A tables of an
// output profile, through the A2B tables of an input one), and poppler, which draws through the output
// intent's profile where there is one: on the corpus's Photoshop file 2 % of the samples move, by up
// to 19 levels of 255 (pdftoppm and gs at 100 dpi), page SSIM 0.9999.
//
// A profile that is also an output intent's DestOutputProfile is cut only where the standard lets the
// intent do without it: a PDF/X-1a or PDF/X-3 document (2001-2003) whose output condition is a
// characterization of the ICC registry (ISO 15930-1 and -3, 6.2.2: DestOutputProfile is required only
// for an unregistered condition); the intent keeps its identifier, condition and registry. Every other
// output intent (PDF/A, PDF/X-4, custom conditions) keeps its profile whole, and so does a profile
// shared with it. Ghostscript's /ebook drops the profile and the intent altogether.
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFRef, PDFString, PDFHexString } from "@cantoo/pdf-lib";
import type { PDFContext, PDFObject } from "@cantoo/pdf-lib";
import { decodeStreamData, deflate, N } from "../streams/filters.ts";
import { iccTags, signatureAt } from "./icc.ts";
import { dictMap } from "../shared/dict-map.ts";

/** Tags a colour space's reader never uses: PCS-to-device tables, gamut, previews. */
const PRODUCTION_TAGS = new Set([
  "B2A0",
  "B2A1",
  "B2A2",
  "B2D0",
  "B2D1",
  "B2D2",
  "B2D3",
  "gamt",
  "pre0",
  "pre1",
  "pre2",
]);
/** A profile is rewritten only when this much of it goes (SWOP's production tags: 473 KB). */
const MIN_SAVED_BYTES = 16 * 1024;
const MAX_PROFILE_BYTES = 8 * 1024 * 1024;
/** Output conditions of the ICC characterization registry (color.org) that PDF/X files name. */
const REGISTERED_CONDITION =
  /^(CGATS TR 00[1-6]|FOGRA(2[7-9]|3\d|4\d|5[0-3])|JC200103|JCW2003|JCN2002|IFRA2[6-9]|IFRA30)$/;
const PDFX_WITHOUT_PROFILE = /^PDF\/X-(1a|3):200[1-3]$/;

const DestOutputProfile = PDFName.of("DestOutputProfile");

/**
 * The profile without its production tags, as an input-class profile; undefined when it is not an
 * output-class profile, is damaged, or would lose less than MIN_SAVED_BYTES.
 */
export function colourSpaceProfile(profile: Uint8Array): Uint8Array | undefined {
  if (profile.length < 132 || signatureAt(profile, 12) !== "prtr" || signatureAt(profile, 36) !== "acsp") {
    return undefined;
  }
  const kept = iccTags(profile)?.filter((tag) => !PRODUCTION_TAGS.has(tag.signature));
  if (!kept?.some((tag) => tag.signature === "A2B0")) return undefined;
  // Tags that share their data (A2B0 and A2B2 often do) keep sharing it.
  const placed = new Map<string, number>();
  let end = 132 + kept.length * 12;
  for (const { offset, size } of kept) {
    const key = `${offset}:${size}`;
    if (placed.has(key)) continue;
    end = (end + 3) & ~3;
    placed.set(key, end);
    end += size;
  }
  if (profile.length - end < MIN_SAVED_BYTES) return undefined;
  const out = new Uint8Array(end);
  const outView = new DataView(out.buffer);
  out.set(profile.subarray(0, 128));
  outView.setUint32(0, end);
  out.set([0x73, 0x63, 0x6e, 0x72], 12); // 'scnr': an input device's profile
  out.fill(0, 84, 100); // the profile ID (an MD5 of the old bytes): 0, not computed
  outView.setUint32(128, kept.length);
  kept.forEach(({ signature, offset, size }, i) => {
    const at = 132 + i * 12;
    const to = placed.get(`${offset}:${size}`)!;
    out.set(
      [...signature].map((c) => c.charCodeAt(0)),
      at,
    );
    outView.setUint32(at + 4, to);
    outView.setUint32(at + 8, size);
    out.set(profile.subarray(offset, offset + size), to);
  });
  return out;
}

const textOf = (value: PDFObject | undefined) =>
  value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;

/** Whether the standard lets this output intent do without its DestOutputProfile. */
function intentMayOmitProfile(intent: PDFDict, pdfxVersion: string | undefined): boolean {
  if (!pdfxVersion || !PDFX_WITHOUT_PROFILE.test(pdfxVersion)) return false;
  if (intent.lookup(PDFName.of("S")) !== PDFName.of("GTS_PDFX")) return false;
  const registry = textOf(intent.lookup(PDFName.of("RegistryName")))?.replace(/\/$/, "");
  const condition = textOf(intent.lookup(PDFName.of("OutputConditionIdentifier")));
  return /^https?:\/\/www\.color\.org$/.test(registry ?? "") && REGISTERED_CONDITION.test(condition ?? "");
}

interface ProfileUses {
  ref: PDFRef;
  colourSpaces: number;
  /** Output intents that name the profile, and whether each may drop it. */
  intents: { intent: PDFDict; mayOmit: boolean }[];
  other: number;
}

/** Every use of every ICC profile stream that is an object of its own. */
function profileUses(context: PDFContext, pdfxVersion: string | undefined): Map<number, ProfileUses> {
  const uses = new Map<number, ProfileUses>();
  const objects = context.enumerateIndirectObjects();
  // Only the numbers of streams are counted: cutPressProfiles passes over the others (a tagged
  // document's thousands of structure elements, each referred to by its parent and its kids).
  const streams = new Set<number>();
  for (let i = 0; i < objects.length; i++)
    if (objects[i]![1] instanceof PDFRawStream) streams.add(objects[i]![0].objectNumber);
  const unused: ProfileUses = { ref: PDFRef.of(0), colourSpaces: 0, intents: [], other: 0 };
  const use = (ref: PDFRef) => {
    if (!streams.has(ref.objectNumber)) return unused;
    let entry = uses.get(ref.objectNumber);
    if (!entry) uses.set(ref.objectNumber, (entry = { ref, colourSpaces: 0, intents: [], other: 0 }));
    return entry;
  };
  const visit = (object: PDFObject, depth: number) => {
    if (depth > 32) return;
    const dict = object instanceof PDFRawStream ? object.dict : object;
    if (dict instanceof PDFArray) {
      const iccBased = dict.size() === 2 && dict.lookup(0) === N.ICCBased;
      for (let i = 0; i < dict.size(); i++) {
        const value = dict.get(i);
        if (value instanceof PDFRef) {
          if (iccBased && i === 1) use(value).colourSpaces++;
          else use(value).other++;
        } else visit(value, depth + 1);
      }
    } else if (dict instanceof PDFDict) {
      // Read in the dictionary's map, not a copy (a walk over every object of the document: on
      // text_excel_warn_16p, 9,854 objects, the function went from 2.7-2.9 % to 2.1-2.3 % of the profile).
      // By forEach, not an iterator (a result object and an entry pair a step until V8 has
      // optimised the walk, which a job's one call does not reach).
      dictMap(dict).forEach((value, key) => {
        if (value instanceof PDFRef) {
          if (key === DestOutputProfile)
            use(value).intents.push({ intent: dict, mayOmit: intentMayOmitProfile(dict, pdfxVersion) });
          else use(value).other++;
        } else visit(value, depth + 1);
      });
    }
  };
  for (let i = 0; i < objects.length; i++) visit(objects[i]![1], 0);
  return uses;
}

function pdfxVersionOf(context: PDFContext): string | undefined {
  const info = context.lookup(context.trailerInfo.Info);
  return info instanceof PDFDict ? textOf(info.lookup(PDFName.of("GTS_PDFXVersion"))) : undefined;
}

/**
 * Rewrites every press profile used only as a colour space (and by output intents that may do without
 * it) without its production tags; answers the bytes of profile data removed (before deflating).
 */
export function cutPressProfiles(context: PDFContext): number {
  let removed = 0;
  for (const uses of profileUses(context, pdfxVersionOf(context)).values()) {
    if (uses.colourSpaces === 0 || uses.other > 0 || uses.intents.some((use) => !use.mayOmit)) continue;
    const { ref } = uses;
    const stream = context.lookup(ref);
    if (!(stream instanceof PDFRawStream) || stream.dict.has(N.F)) continue;
    const profile = decodeStreamData(stream, MAX_PROFILE_BYTES);
    const cut = profile && colourSpaceProfile(profile);
    if (!cut) continue;
    const dict = stream.dict.clone(context);
    dict.set(N.Filter, N.FlateDecode);
    dict.delete(N.DecodeParms);
    dict.delete(N.DL);
    context.assign(ref, PDFRawStream.of(dict, deflate(cut)));
    for (const { intent } of uses.intents) intent.delete(DestOutputProfile);
    removed += profile.length - cut.length;
  }
  return removed;
}
