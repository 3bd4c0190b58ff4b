// The engine's one PDF lexer (src/pdf/shared/syntax.ts): the kinds of tokens and their byte spans,
// strings decoded and judged well formed, a region's end, and the plain integers xref tables and
// object streams are made of. The content-stream readers built on it are tested through the passes
// (test/pdf/images, test/pdf/content) and held to the engine's output bytes (npm run bench:engine-md5).
import { describe, expect, it } from "vitest";
import { Lexer, Op, Tok, scanContent } from "../../../src/pdf/shared/syntax.ts";
import type { InlineImage } from "../../../src/pdf/shared/syntax.ts";

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const KIND = Object.fromEntries(Object.entries(Tok).map(([name, kind]) => [kind, name]));

/** Every token of `text` as "Kind:bytes as written". */
function tokens(text: string, end?: number): string[] {
  const lexer = new Lexer(bytes(text), 0, end);
  const out: string[] = [];
  for (let kind = lexer.next(); kind !== Tok.End; kind = lexer.next()) {
    out.push(`${KIND[kind]}:${text.slice(lexer.start, lexer.pos)}`);
  }
  return out;
}

describe("Lexer.next", () => {
  it.each([
    [
      "1 0 0 1 72.5 -.5 cm",
      ["Regular:1", "Regular:0", "Regular:0", "Regular:1", "Regular:72.5", "Regular:-.5", "Regular:cm"],
    ],
    ["/F1 12 Tf", ["Name:/F1", "Regular:12", "Regular:Tf"]],
    ["<</Type/XObject>>", ["DictOpen:<<", "Name:/Type", "Name:/XObject", "DictClose:>>"]],
    ["[(a\\)b) <41 42>] TJ", ["Bracket:[", "Literal:(a\\)b)", "Hex:<41 42>", "Bracket:]", "Regular:TJ"]],
    ["(nested (parens)) % a comment\nQ", ["Literal:(nested (parens))", "Regular:Q"]],
    ["{ } ) > q", ["Bracket:{", "Bracket:}", "Stray:)", "Stray:>", "Regular:q"]],
    ["(never closed", ["Literal:(never closed"]],
  ])("%j", (text, expected) => {
    expect(tokens(text)).toEqual(expected);
  });

  it("stops at the end of its region", () => {
    expect(tokens("12 0 obj << /Length 5 >>", 8)).toEqual(["Regular:12", "Regular:0", "Regular:obj"]);
    expect(tokens("(abc) def", 3)).toEqual(["Literal:(ab"]);
  });

  it.each([
    ["(a\\nb\\051\\\r\nc)", "a\nb)c", true],
    ["(unclosed \\", "unclosed ", false],
    ["<48 65 6c6C6>", "Hel\x6c\x60", true],
    ["<48 zz>", "H", false],
    ["<48", "H", false],
  ])("the string %j reads as %j, well formed: %s", (text, value, wellFormed) => {
    const lexer = new Lexer(bytes(text));
    lexer.next(true);
    expect(String.fromCharCode(...lexer.string!)).toBe(value);
    expect(lexer.wellFormed).toBe(wellFormed);
  });

  it("decodes a name's #xx escapes", () => {
    const lexer = new Lexer(bytes("/A#20B#2f"));
    expect(lexer.next()).toBe(Tok.Name);
    expect(lexer.nameText()).toBe("A B/");
  });
});

describe("integers and keywords", () => {
  it("reads the integers of an xref subsection, at most so many digits", () => {
    const lexer = new Lexer(bytes("0000000017 00000 n\r\n"));
    expect(lexer.unsignedInt()).toBe(17);
    lexer.skipWhite();
    expect(lexer.unsignedInt(3)).toBe(0);
    expect(lexer.unsignedInt(3)).toBe(0);
    lexer.skipWhite();
    expect(lexer.unsignedInt()).toBeUndefined();
    expect(lexer.keyword("n")).toBe(true);
    expect(lexer.skipWhite()).toBe(20);
  });
});

describe("content streams", () => {
  it("reports q, Q, cm, Do and gs with their operands, and nothing from strings or comments", () => {
    const seen: string[] = [];
    const content = bytes(
      "% a comment with 1 0 0 1 0 0 cm\n" +
        "q 2 0 0 3 4 5 cm BT (text with \\( cm and \\) Do (inside)) Tj <414243> Tj ET\n" +
        "/Span <</ActualText (x) /MCID 3>> BDC [(a) 1 (b)] TJ EMC /GS1 gs /Im1 Do Q",
    );
    expect(
      scanContent(content, {
        operator: (op, operands) => {
          if ([Op.q, Op.Q, Op.cm, Op.Do, Op.gs].includes(op)) seen.push(`${op}:${operands.join(",")}`);
        },
      }),
    ).toBe(true);
    expect(seen).toEqual([`${Op.q}:`, `${Op.cm}:2,0,0,3,4,5`, `${Op.gs}:GS1`, `${Op.Do}:Im1`, `${Op.Q}:`]);
  });

  it("skips inline images whole, binary data with EI, Q and cm bytes inside included", () => {
    // 4 x 4 gray samples that spell out operators and an early "EI".
    const samples = bytes(" EI Q 1 0 0 cm  ");
    const head = bytes("q 10 0 0 10 0 0 cm BI /W 4 /H 4 /BPC 8 /CS /G ID ");
    const tail = bytes("\nEI Q q 5 0 0 5 0 0 cm /Im Do Q");
    const content = new Uint8Array([...head, ...samples, ...tail]);
    const inline: InlineImage[] = [];
    const ops: number[] = [];
    scanContent(content, { inlineImage: (image) => inline.push(image), operator: (op) => ops.push(op) });
    expect(inline).toHaveLength(1);
    expect(Buffer.from(inline[0]!.data).equals(Buffer.from(samples))).toBe(true);
    expect(inline[0]!.dict.get("W")).toBe(4);
    expect(ops.filter((op) => op === Op.Do)).toHaveLength(1);
    expect(ops.filter((op) => op === Op.cm)).toHaveLength(2);
  });

  it("ends an inline image's data where a search E by E ends it (the end is searched as EI)", () => {
    // The search before: every E, whitespace before it (or the data's first byte), then the marker.
    const white = new Set([0, 9, 10, 12, 13, 32]);
    const regular = (b: number | undefined) =>
      b !== undefined && !white.has(b) && !"()<>[]{}/%".includes(String.fromCharCode(b));
    const isEnd = (data: Uint8Array, at: number) => {
      if (data[at] !== 0x45 || data[at + 1] !== 0x49) return false;
      if (at + 2 < data.length && regular(data[at + 2])) return false;
      for (let k = at + 2; k < Math.min(data.length, at + 50); k++) {
        const c = data[k]!;
        if (c === 0x49 && data[k + 1] === 0x44 && white.has(data[k - 1]!) && !regular(data[k + 2] ?? 32)) return true;
        if (c > 0x7e || (c < 0x20 && !white.has(c))) return false;
      }
      return true;
    };
    const before = (content: Uint8Array, dataStart: number) => {
      for (let k = content.indexOf(0x45, dataStart); k >= 0; k = content.indexOf(0x45, k + 1)) {
        if (k > dataStart && !white.has(content[k - 1]!)) continue;
        if (isEnd(content, k)) return k + 2;
      }
      return undefined;
    };
    // Pieces that make near-markers: EI without whitespace before, EI followed by a regular byte or binary.
    const pieces = [" EI", "EI ", "xEI", " EIx", "E", "I", " ", "\n", "Q", " ID ", "~", "(", "/", "9"].map(bytes);
    let seed = 42;
    let found = 0;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let round = 0; round < 3000; round++) {
      const head = bytes("q BI /W 9 /H 9 /F /A85 ID ");
      const data: number[] = [];
      for (let n = Math.floor(random() * 20); n > 0; n--) {
        if (random() < 0.2) data.push(Math.floor(random() * 256));
        else data.push(...pieces[Math.floor(random() * pieces.length)]!);
      }
      const content = new Uint8Array([...head, ...data]);
      const ends: number[] = [];
      const read = scanContent(content, { inlineImage: (image) => ends.push(image.end) });
      const expected = before(content, head.length);
      expect(read ? ends[0] : undefined).toBe(expected);
      if (expected !== undefined) found++;
    }
    expect(found).toBeGreaterThan(300);
  });

  it("gives operandsOf's operators their operands (names escaped, the last eight), the others none", () => {
    const seen: string[] = [];
    const content = bytes("/P <</MCID 0>> BDC 1 2 3 4 5 6 7 8 9 10 /F#231 12 Tf 1 0 0 1 2 3 cm 4 5 m EMC");
    scanContent(content, {
      operandsOf: new Set([Op.Tf, Op.cm]),
      operator: (op, operands) => seen.push(operands.map(String).join(",")),
    });
    expect(seen).toEqual(["", "4,5,6,7,8,9,10,F#1,12".split(",").slice(-8).join(","), "1,0,0,1,2,3", "", ""]);
  });

  it("hands strings over with escapes applied, the same bytes whether or not they had any", () => {
    const strings: string[] = [];
    const content = bytes("(plain (nested) text) Tj (with \\( \\101 esc\\\napes) Tj <41 42 4> Tj (open");
    scanContent(content, { string: (s) => strings.push(Buffer.from(s).toString("latin1")) });
    expect(strings).toEqual(["plain (nested) text", "with ( A escapes", "AB@", "open"]);
  });

  it("scanContent reads past what is not content (the compaction's reader fails there: content-tokens.test.ts)", () => {
    const operators: number[] = [];
    expect(scanContent(bytes("q ) Q"), { operator: (op) => operators.push(op) })).toBe(true);
    expect(operators).toHaveLength(2);
  });
});
