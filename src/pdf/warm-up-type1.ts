// A small Type 1 font for the warm-up document (warm-up.ts), made here rather than stored: a
// pdfTeX document's fonts are Type 1 programs (FontFile), which the engine converts to CFF
// (fonts/type1*.ts), writes and reads back (cff-write.ts, cff-names.ts), then subsets through
// hb-subset's CFF path; with this font in the warm-up document those functions are compiled
// before a job. Its glyphs use what TeX's fonts use: hints and their replacement (OtherSubr 3),
// flex (OtherSubrs 0-2), closepath, the short curve and line operators, div, dotsection, hstem3
// and vstem3, and seac; the program is eexec-encrypted as Type 1 fonts are (Adobe Type 1 Font
// Format, 1990, section 7), binary, its charstrings encrypted with lenIV 4.
import type { PDFDocument, PDFRef } from "@cantoo/pdf-lib";

const EEXEC_KEY = 55665;
const CHARSTRING_KEY = 4330;

/** Type 1 encryption (section 7.1), the inverse of fonts/type1.ts's decrypt; `skip` zero bytes lead. */
function encrypt(plain: Uint8Array, key: number, skip: number): Uint8Array {
  const out = new Uint8Array(plain.length + skip);
  let r = key;
  for (let i = 0; i < out.length; i++) {
    const c = (i < skip ? 0 : plain[i - skip]!) ^ (r >> 8);
    out[i] = c;
    r = ((c + r) * 52845 + 22719) & 0xffff;
  }
  return out;
}

/** Type 1 charstring operators (section 6) at their codes; escaped ones (12 and a second byte) apart. */
const OPERATORS =
  ",hstem,,vstem,vmoveto,rlineto,hlineto,vlineto,rrcurveto,closepath,callsubr,return,,hsbw,endchar,,,,,,,rmoveto,hmoveto,,,,,,,,vhcurveto,hvcurveto".split(
    ",",
  );
const ESCAPED = "dotsection,vstem3,hstem3,,,,seac,,,,,,div,,,,callothersubr,pop,,,,,,,,,,,,,,,,setcurrentpoint".split(
  ",",
);

/** A charstring from its text (`50 500 hsbw ...`): numbers and operator names. */
function charString(source: string): Uint8Array {
  const out: number[] = [];
  for (const token of source.trim().split(/\s+/)) {
    if (OPERATORS.includes(token)) {
      out.push(OPERATORS.indexOf(token));
      continue;
    }
    if (ESCAPED.includes(token)) {
      out.push(12, ESCAPED.indexOf(token));
      continue;
    }
    const v = Number(token);
    if (v >= -107 && v <= 107) out.push(v + 139);
    else if (v >= 108 && v <= 1131) out.push(247 + ((v - 108) >> 8), (v - 108) & 255);
    else if (v >= -1131 && v <= -108) out.push(251 + ((-v - 108) >> 8), (-v - 108) & 255);
    else out.push(255, (v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255);
  }
  return Uint8Array.from(out);
}

/** The OtherSubrs' subroutines every Type 1 font carries (section 8), then hint sets for replacement. */
const SUBRS = [
  "3 0 callothersubr pop pop setcurrentpoint return",
  "0 1 callothersubr return",
  "0 2 callothersubr return",
  "return",
  "1 3 callothersubr pop callsubr return",
  "0 60 hstem 640 60 hstem 60 80 vstem return",
  "0 60 hstem 640 60 hstem 500 80 vstem return",
];

/** A box of the given size (a rectangle, its counter cut out), drawn by lines. */
const box = (w: number, h: number) =>
  `40 ${w + 80} hsbw 0 60 hstem ${h - 60} 60 hstem 0 80 vstem ${w - 80} 80 vstem ` +
  `0 0 rmoveto ${w} hlineto ${h} vlineto ${-w} hlineto closepath 80 60 rmoveto ${h - 120} vlineto ` +
  `${w - 160} hlineto ${120 - h} vlineto closepath endchar`;

/** The glyphs by name, in the font's order; those the document draws and others it does not. */
const GLYPHS: [string, string][] = [
  [".notdef", "0 500 hsbw endchar"],
  [
    "A",
    "20 700 hsbw 0 60 hstem 0 660 rmoveto 330 700 rlineto 330 -700 rlineto -100 hmoveto -230 490 rlineto -230 -490 rlineto closepath endchar",
  ],
  [
    "O",
    "40 740 hsbw 50 80 vstem 530 80 vstem 0 350 rmoveto 0 200 150 150 180 0 rrcurveto 180 150 -150 -200 hvcurveto -200 -150 -150 -180 vhcurveto -180 -150 150 200 hvcurveto closepath endchar",
  ],
  [
    "H",
    "30 720 hsbw 5 4 callsubr 0 0 rmoveto 80 hlineto 300 vlineto 6 4 callsubr 500 hlineto -300 vlineto 80 hlineto 700 vlineto -80 hlineto -340 vlineto -500 hlineto 340 vlineto -80 hlineto closepath endchar",
  ],
  [
    "d",
    "30 600 hsbw 0 0 rmoveto 500 hlineto 1 callsubr 0 0 rmoveto 2 callsubr 100 5 rmoveto 2 callsubr 100 5 rmoveto 2 callsubr 100 0 rmoveto 2 callsubr 100 -5 rmoveto 2 callsubr 100 -5 rmoveto 2 callsubr 100 0 rmoveto 2 callsubr 50 630 0 0 callsubr 0 -500 rlineto closepath endchar",
  ],
  [
    "i",
    "60 280 hsbw 0 0 rmoveto 80 hlineto 1000 2 div vlineto -80 hlineto closepath dotsection 0 80 rmoveto 80 hlineto 80 vlineto -80 hlineto closepath dotsection endchar",
  ],
  [
    "m",
    "30 900 hsbw 0 60 440 60 500 60 hstem3 0 80 360 80 720 80 vstem3 0 0 rmoveto 800 hlineto 500 vlineto -800 hlineto closepath endchar",
  ],
  ["acute", "100 400 hsbw 0 600 rmoveto 100 0 100 100 50 50 rrcurveto -50 hlineto -200 -150 rlineto closepath endchar"],
  ["Aacute", "20 700 hsbw 20 150 100 65 194 seac"],
  ["B", box(500, 700)],
  ["C", box(520, 700)],
  ["D", box(540, 700)],
  ["E", box(460, 700)],
  ["F", box(440, 700)],
  ["G", box(560, 700)],
  ["a", box(400, 480)],
  ["b", box(420, 700)],
  ["c", box(380, 480)],
  ["e", box(400, 500)],
];

/** Codes of the font's built-in encoding (and of the PDF font's Differences). */
const CODES: [number, string][] = [
  [65, "A"],
  [66, "B"],
  [67, "C"],
  [68, "D"],
  [69, "E"],
  [70, "F"],
  [71, "G"],
  [72, "H"],
  [79, "O"],
  [97, "a"],
  [98, "b"],
  [99, "c"],
  [100, "d"],
  [101, "e"],
  [105, "i"],
  [109, "m"],
  [193, "Aacute"],
  [194, "acute"],
];

/** The codes the warm-up document draws with the font. */
export const TYPE1_DRAWN = [65, 79, 72, 100, 105, 109, 193];

const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** `/name length RD <encrypted charstring> tail`, as the private section holds them. */
function entries(items: [string, string][], tail: string): Uint8Array[] {
  return items.flatMap(([head, source]) => {
    const encrypted = encrypt(charString(source), CHARSTRING_KEY, 4);
    return [latin1(`${head} ${encrypted.length} RD `), encrypted, latin1(` ${tail}\n`)];
  });
}

/** The font program: clear text, the eexec section (binary), the 512 zeros and cleartomark. */
export function warmUpType1Program(): { program: Uint8Array; length1: number; length2: number } {
  const clear = latin1(
    [
      "%!PS-AdobeFont-1.0: WarmUp 001.000",
      "11 dict begin",
      "/FontInfo 2 dict dup begin /FullName (Warm Up) readonly def /Weight (Medium) readonly def end readonly def",
      "/FontName /WarmUp def",
      "/PaintType 0 def",
      "/FontType 1 def",
      "/FontMatrix [0.001 0 0 0.001 0 0] readonly def",
      "/Encoding 256 array",
      "0 1 255 {1 index exch /.notdef put} for",
      ...CODES.map(([code, name]) => `dup ${code} /${name} put`),
      "readonly def",
      "/FontBBox {-20 -20 960 900} readonly def",
      "currentdict end",
      "currentfile eexec\n",
    ].join("\n"),
  );
  const privateHead = latin1(
    [
      "dup /Private 12 dict dup begin",
      "/RD{string currentfile exch readstring pop}executeonly def",
      "/ND{noaccess def}executeonly def",
      "/NP{noaccess put}executeonly def",
      "/BlueValues [-20 0 480 500 700 720] def",
      "/OtherBlues [-250 -240] def",
      "/BlueScale 0.04379 def",
      "/BlueShift 7 def",
      "/StdHW [60] def",
      "/StdVW [80] def",
      "/StemSnapH [50 60] def",
      "/StemSnapV [80 90] def",
      "/ForceBold false def",
      "/MinFeature{16 16}def",
      "/password 5839 def",
      `/Subrs ${SUBRS.length} array\n`,
    ].join("\n"),
  );
  const section = Buffer.concat([
    privateHead,
    ...entries(
      SUBRS.map((source, i) => [`dup ${i}`, source]),
      "NP",
    ),
    latin1(`ND\n2 index /CharStrings ${GLYPHS.length} dict dup begin\n`),
    ...entries(
      GLYPHS.map(([name, source]) => [`/${name}`, source]),
      "ND",
    ),
    latin1("end\nend\nreadonly put\nnoaccess put\ndup /FontName get exch definefont pop\nmark currentfile closefile\n"),
  ]);
  const encrypted = encrypt(section, EEXEC_KEY, 4);
  const trailer = latin1(`${"0".repeat(64)}\n`.repeat(8) + "cleartomark\n");
  return {
    program: new Uint8Array(Buffer.concat([clear, encrypted, trailer])),
    length1: clear.length,
    length2: encrypted.length,
  };
}

/** The font as pdfTeX embeds one: a simple /Type1 font, its program a Flate FontFile, Differences for its codes. */
export function embedWarmUpType1(doc: PDFDocument): PDFRef {
  const { context } = doc;
  const { program, length1, length2 } = warmUpType1Program();
  const file = context.flateStream(program, {
    Length1: length1,
    Length2: length2,
    Length3: program.length - length1 - length2,
  });
  const descriptor = context.obj({
    Type: "FontDescriptor",
    FontName: "WarmUp",
    Flags: 4,
    FontBBox: [-20, -20, 960, 900],
    ItalicAngle: 0,
    Ascent: 700,
    Descent: -20,
    CapHeight: 700,
    XHeight: 480,
    StemV: 80,
    FontFile: context.register(file),
  });
  const first = CODES[0]![0];
  const last = CODES[CODES.length - 1]![0];
  const font = context.obj({
    Type: "Font",
    Subtype: "Type1",
    BaseFont: "WarmUp",
    FirstChar: first,
    LastChar: last,
    Widths: Array.from({ length: last - first + 1 }, () => 500),
    FontDescriptor: context.register(descriptor),
    Encoding: context.register(context.obj({ Type: "Encoding", Differences: CODES.flat() })),
  });
  return context.register(font);
}
