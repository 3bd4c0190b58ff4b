// Type 1 charstrings to Type 2 (src/pdf/fonts/type1-charstrings.ts, type1-convert.ts): points, stems
// and hints kept as a Type 2 interpreter reads them.
import { describe, expect, it } from "vitest";
import { writeType2 } from "../../../src/pdf/fonts/cff-write.ts";
import { interpretType1 } from "../../../src/pdf/fonts/type1-charstrings.ts";
import { decrypt } from "../../../src/pdf/fonts/type1.ts";
import { STANDARD_ENCODING } from "../../../src/pdf/fonts/cff-strings.ts";
import { type1CharString, type2Text } from "../helpers/fonts.ts";

describe("Type 1 charstrings to Type 2", () => {
  const standard = STANDARD_ENCODING;

  it("keeps the points, moves vstems by the side bearing, and turns hint replacement into hintmask", () => {
    // Subroutine 1 holds the replacement hints; OtherSubr 3 announces it (Type 1 spec, 8.1).
    const subrs = [new Uint8Array(0), type1CharString(200, 30, "hstem", "return")];
    const flex = [
      [10, 0],
      [5, 5],
      [5, 0],
      [5, 0],
      [5, 0],
      [5, -5],
      [5, 0],
    ].flatMap(([dx, dy]) => [dx!, dy!, "rmoveto", 0, 2, "callothersubr"]);
    const glyph = type1CharString(
      ...[50, 500, "hsbw", 0, 20, "hstem", 10, 30, "vstem", 0, 0, "rmoveto", 100, 0, "rlineto"],
      ...[1, 1, 3, "callothersubr", "pop", "callsubr", 0, 100, "rlineto", "closepath", 10, 0, "rlineto"],
      ...[7, 2, "div", 0, "rlineto", 0, 1, "callothersubr", ...flex, 50, 208.5, 100, 3, 0, "callothersubr"],
      ...["pop", "pop", "setcurrentpoint", "endchar"],
    );
    const outline = interpretType1(glyph, { charStrings: new Map(), subrs, standard })!;
    expect(outline.width).toBe(500);
    expect(outline.hstems).toEqual([
      [0, 20],
      [200, 30],
    ]);
    expect(outline.vstems).toEqual([[60, 30]]);
    expect(outline.ops.map((op) => `${op.kind} ${op.points.join(" ")}`)).toEqual([
      "move 50,0",
      "line 150,0",
      "line 150,100",
      // After closepath a line starts a new subpath where the last one ended, as FreeType draws it.
      "move 150,100",
      "line 160,100",
      "line 163.5,100",
      "flex 178.5,105 183.5,105 188.5,105 193.5,105 198.5,100 203.5,100",
    ]);
    expect(type2Text(writeType2(outline), 3)).toBe(
      [
        "500 0 20 180 30 op18 60 30 op23 hintmask:10100000 50 0 op21 100 0 op5",
        "hintmask:01000000 0 100 op5 0 0 op21 10 0 op5 3.5 0 op5",
        "15 5 5 0 5 0 5 0 5 -5 5 0 50 op12.35 op14",
      ].join(" "),
    );
  });

  it("draws a seac accent into the glyph, placed by the composite's side bearing + adx - asb", () => {
    const charStrings = new Map([
      ["A", type1CharString(10, 600, "hsbw", 0, 0, "rmoveto", 500, 0, "rlineto", "endchar")],
      ["acute", type1CharString(30, 300, "hsbw", 0, 600, "rmoveto", 100, 100, "rlineto", "endchar")],
    ]);
    // asb 30, adx 200, ady 100: the accent's origin at 20 + 200 - 30.
    const composite = type1CharString(20, 600, "hsbw", 30, 200, 100, 65, 194, "seac");
    const outline = interpretType1(composite, { charStrings, subrs: [], standard })!;
    expect(outline.width).toBe(600);
    expect(outline.ops.map((op) => `${op.kind} ${op.points.join(" ")}`)).toEqual([
      "move 10,0",
      "line 510,0",
      "move 220,700",
      "line 320,800",
    ]);
    // A component missing, a component that is itself a seac, and subroutines calling each other without end.
    const glyphs = { charStrings, subrs: [], standard };
    expect(interpretType1(type1CharString(0, 600, "hsbw", 0, 0, 0, 65, 99, "seac"), glyphs)).toBeUndefined();
    charStrings.set("A", type1CharString(0, 600, "hsbw", 0, 0, 0, 65, 194, "seac"));
    expect(interpretType1(type1CharString(0, 600, "hsbw", 0, 0, 0, 65, 194, "seac"), glyphs)).toBeUndefined();
    const loop = type1CharString(0, "callsubr", 0, "callsubr", "return");
    const looping = { charStrings, subrs: [loop], standard };
    expect(interpretType1(type1CharString(0, 600, "hsbw", 0, "callsubr", "endchar"), looping)).toBeUndefined();
  });

  it("decrypts eexec and charstrings (Type 1 spec, 7.1)", () => {
    // Encrypting is the same recurrence with the cipher byte fed back.
    const encrypt = (plain: Uint8Array, key: number) => {
      const out = new Uint8Array(plain.length);
      let r = key;
      plain.forEach((p, i) => {
        const c = p ^ (r >> 8);
        out[i] = c;
        r = ((c + r) * 52845 + 22719) & 0xffff;
      });
      return out;
    };
    const plain = Uint8Array.from([1, 2, 3, 4, ...new TextEncoder().encode("dup /Private 8 dict")]);
    expect(Buffer.from(decrypt(encrypt(plain, 55665), 55665, 4)).toString("latin1")).toBe("dup /Private 8 dict");
  });
});
