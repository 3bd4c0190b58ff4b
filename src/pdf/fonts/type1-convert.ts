// A Type 1 font program (FontFile) converted to a bare CFF (FontFile3 /Type1C), as Ghostscript's
// pdfwrite and Acrobat Distiller store Type 1 fonts. The encrypted Type 1 program does not
// compress (eexec and charstring encryption make its bytes look random); the same glyphs as Type 2
// charstrings in CFF take about half the room before Flate and compress well. The outlines keep
// every point (type1-charstrings.ts), the hints keep their stems, and the glyph names and
// built-in encoding are the font's, so a PDF font dictionary over it needs no change. The result
// is read back (cff-names.ts) and must give every glyph name and encoded code the glyph
// they had; otherwise, or when anything in the program is not understood, undefined.
import { readNamedCff } from "./cff-names.ts";
import { STANDARD_ENCODING } from "./cff-strings.ts";
import { encodedFirst, writeCff, writeType2 } from "./cff-write.ts";
import type { CffGlyph } from "./cff-write.ts";
import { interpretType1 } from "./type1-charstrings.ts";
import { readType1 } from "./type1.ts";

/** An empty glyph for a font without .notdef (CFF's glyph 0 must be it): endchar alone. */
const EMPTY_NOTDEF: CffGlyph = { name: ".notdef", charString: Uint8Array.of(14) };

/** The Type 1 program as a CFF font program; undefined when it cannot be converted faithfully. */
export function convertType1(program: Uint8Array): Uint8Array | undefined {
  const font = readType1(program);
  if (!font) return undefined;
  const source = { charStrings: font.charStrings, subrs: font.subrs, standard: STANDARD_ENCODING };
  const glyphs: CffGlyph[] = [];
  for (const [name, charString] of font.charStrings) {
    const outline = interpretType1(charString, source);
    if (!outline) return undefined;
    glyphs.push({ name, charString: writeType2(outline) });
  }
  const notdef = glyphs.findIndex((g) => g.name === ".notdef");
  const first = notdef >= 0 ? glyphs.splice(notdef, 1)[0]! : EMPTY_NOTDEF;
  const ordered = encodedFirst([first, ...glyphs], font.encoding);
  const cff = writeCff({ ...font, glyphs: ordered });
  const check = readNamedCff(cff);
  if (!check || check.glyphs !== ordered.length) return undefined;
  const gidOf = new Map(ordered.map((g, gid) => [g.name, gid]));
  for (const [name, gid] of gidOf) if (check.glyphOfName.get(name) !== gid) return undefined;
  const encoding = font.encoding === "standard" ? STANDARD_ENCODING : font.encoding;
  for (const [code, name] of encoding) {
    const gid = gidOf.get(name);
    if (gid !== undefined && gid !== 0 && check.glyphOfCode.get(code) !== gid) return undefined;
  }
  return cff;
}
