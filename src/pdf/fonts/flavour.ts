// What a font program really is, read from its bytes, and which of its tables a PDF reader never
// uses. Producers sometimes store a program of another flavour than the font dictionary and the
// stream's key say (poppler: "Mismatch between font type and embedded font file"): an OpenType
// font with CFF outlines in the FontFile2 of a CIDFontType2, a bare CFF in a FontFile2, a
// TrueType font in a FontFile3 /OpenType. Readers go by the bytes, so the font pass does too.

/** The flavours of program the font pass subsets. */
export type Flavour = "truetype" | "opentype-cff" | "cff";

/**
 * The flavour of a decoded program: an sfnt with TrueType outlines (version 1.0 or 'true'), an
 * sfnt with CFF outlines ('OTTO'), or a bare CFF (major version 1, a header of at least 4 bytes
 * and a valid offset size; Adobe TN #5176, "Header"). Undefined for anything else (Type 1, a
 * font collection, damaged bytes).
 */
export function flavourOf(bytes: Uint8Array): Flavour | undefined {
  if (bytes.length < 4) return undefined;
  const version = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  if (version === 0x00010000 || version === 0x74727565) return "truetype";
  if (version === 0x4f54544f) return "opentype-cff";
  if (bytes[0] === 1 && bytes[2]! >= 4 && bytes[3]! >= 1 && bytes[3]! <= 4) return "cff";
  return undefined;
}

/**
 * Tables a PDF reader never uses to draw a glyph, dropped from every subset besides those
 * hb-subset drops by default: text layout (the content stream already placed every glyph),
 * device metrics cached for hinting at given pixel sizes (hdmx, VDMX, LTSH: a rasteriser
 * recomputes them), a digital signature that the subset would break anyway (DSIG), and
 * descriptive tables (meta, STAT). cvt, fpgm and prep (the hinting programs) stay.
 */
export const UNUSED_TABLES = [
  "GSUB",
  "GPOS",
  "GDEF",
  "BASE",
  "JSTF",
  "MATH",
  "DSIG",
  "morx",
  "kerx",
  "kern",
  "hdmx",
  "VDMX",
  "LTSH",
  "meta",
  "STAT",
];

/**
 * Tables a CIDFont's program needs for no reader: its glyphs are found by CID (CIDToGIDMap, or
 * a CID-keyed CFF's charset), never by character code, and its name, style and metrics come from
 * the PDF's own dictionaries (FontDescriptor, W). Ghostscript writes CIDFontType2 programs with
 * none of these.
 */
export const CID_UNUSED_TABLES = ["cmap", "OS/2", "name", "post"];
