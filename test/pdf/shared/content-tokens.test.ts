// The content compaction's reader (src/pdf/shared/content-tokens.ts, ContentReader): operands as
// spans in typed arrays, numbers' values and strings' escapes read on request, against the
// tokenizer of a Token object a token it replaced (kept in content-tokens-plain.ts). On fuzzed
// content (numbers written every way, names, strings with escapes, hex strings clean and not,
// arrays, dictionaries, comments, keywords, inline images, stray brackets) the same operators with
// the same operands (kind, bytes as written, value, string bytes), the same inline images, the same
// operands left at the end and the same answer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContentReader, numberValue, T } from "../../../src/pdf/shared/content-tokens.ts";
import { T as PLAIN, tokenize } from "./content-tokens-plain.ts";
import type { Token } from "./content-tokens-plain.ts";

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const latin1 = (data: Uint8Array) => Buffer.from(data).toString("latin1");

/** An operand as both readers see it: kind, bytes as written, value, string bytes. */
type Seen = [number, string, number | undefined, string | undefined];
type Event = ["op", string, number, Seen[]] | ["inline", string];

function plainEvents(data: Uint8Array): { ok: boolean; events: Event[]; left: Seen[] } {
  const events: Event[] = [];
  let operands: Token[] = [];
  const seen = (t: Token): Seen => [t.type, latin1(t.raw), t.value, t.bytes && latin1(t.bytes)];
  const ok = tokenize(data, (token) => {
    if (token.type === PLAIN.Operator) {
      events.push(["op", token.op!, token.after!, operands.map(seen)]);
      operands = [];
    } else if (token.type === PLAIN.Inline) events.push(["inline", latin1(token.raw)]);
    else operands.push(token);
  });
  return { ok, events, left: operands.map(seen) };
}

function readerEvents(data: Uint8Array): { ok: boolean; events: Event[]; left: Seen[] } {
  const events: Event[] = [];
  const reader = new ContentReader(data);
  const operands = (r: ContentReader): Seen[] =>
    Array.from({ length: r.count }, (_, i) => [
      r.types[i]!,
      latin1(r.src(i).subarray(r.starts[i], r.ends[i])),
      r.number(i),
      r.types[i] === T.String ? latin1(r.string(i)) : undefined,
    ]);
  const ok = reader.read(
    (r) => {
      expect(latin1(r.bytes.subarray(r.opStart, r.opEnd))).toBe(r.op);
      events.push(["op", r.op, r.after, operands(r)]);
    },
    (start, end) => events.push(["inline", latin1(reader.bytes.subarray(start, end))]),
  );
  return { ok, events, left: operands(reader) };
}

const digits = (min: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},20}$`));
const number = fc
  .tuple(fc.constantFrom("", "", "", "-", "+", "--", "+-"), digits(1), fc.constantFrom("", "."), digits(0))
  .map(([sign, int, dot, frac]) => sign + int + dot + (dot ? frac : ""));
const fragment = fc.oneof(
  { weight: 8, arbitrary: number },
  { weight: 1, arbitrary: fc.constantFrom(".5", "-.0", "0.", "0", "-0", "00", "+0.0") },
  { weight: 6, arbitrary: fc.constantFrom("Tj", "TJ", "Td", "re", "f*", "W*", "n", "q", "Q", "BT", "ET", "'", '"') },
  { weight: 2, arbitrary: fc.stringMatching(/^\/[A-Za-z0-9#]{0,6}$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^\((?:[a-z ]|\(\)|\\[nrtbf()\\]|\\[0-7]{1,3}|\\\r\n|\\\n){0,8}\)$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^<[0-9a-fA-F \n]{0,9}>$/) },
  { weight: 3, arbitrary: fc.constantFrom("[", "]", "<<", ">>", "{", "}", "true", "false", "null", "abcd") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("%comment\n", "BI /W 2 /H 1 /BPC 8 /CS /G ID \u0001\u0002 EI", "BI /W 3 ID abc EI"),
  },
);
/** What makes a stream unreadable: a stray bracket, a malformed number or hex string, no end. */
const unreadable = fc.constantFrom(")", ">", "-", "+.", "1e5", "1.2.3", "<4x>", "(open", "<41", "BI /W 1 ID x");
// Mostly white-space: a number run into an operator ("12Tj") is malformed.
const separator = fc.constantFrom(" ", " ", " ", " ", "\n", "\n", "\r\n", "\t", "\u0000", "\f", "");
const content = fc
  .tuple(
    fc.array(fc.tuple(fragment, separator), { maxLength: 80, size: "medium" }),
    fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, fc.tuple(unreadable, fc.nat())),
  )
  .map(([parts, bad]) => {
    const texts = parts.flat();
    if (bad) texts.splice(bad[1] % (texts.length + 1), 0, ` ${bad[0]} `);
    return texts.join("");
  });

describe("ContentReader", () => {
  it("reads what the Token tokenizer read, operator by operator", () => {
    fc.assert(
      fc.property(content, (text) => {
        const data = bytes(text);
        const expected = plainEvents(data);
        const got = readerEvents(data);
        expect(got.ok).toBe(expected.ok);
        // Where reading fails the compaction drops what was read: only the answer counts.
        if (!expected.ok) return;
        expect(got.events).toEqual(expected.events);
        expect(got.left).toEqual(expected.left);
        for (const event of got.events) {
          if (event[0] !== "op") continue;
          for (const [, raw, value] of event[3])
            if (value !== undefined) expect(Object.is(value, Number(raw))).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("reads numbers to the value Number reads from their shortest form", () => {
    const text = "0 -0 .5 -.25 12.125 3.14159265358979 0.1 -0.30 +7 00.50 123456789.123456789 1. -00 Tj";
    const { events } = readerEvents(bytes(text));
    const [, , , operands] = events[0] as ["op", string, number, Seen[]];
    for (const [, raw, value] of operands) expect(Object.is(value, Number(raw))).toBe(true);
    expect(operands.map(([, raw]) => raw)).toEqual(
      "0 -0 .5 -.25 12.125 3.14159265358979 .1 -.3 7 .5 123456789.123456789 1 0".split(" "),
    );
    expect(Object.is(numberValue(bytes("-0"), 0, 2), -0)).toBe(true);
  });

  it("keeps the shortened numbers of earlier operators (a block never written over)", () => {
    const many = Array.from({ length: 2000 }, (_, i) => `0${i}.50 Td`).join("\n");
    const kept: [Uint8Array, number, number][] = [];
    const reader = new ContentReader(bytes(many));
    expect(
      reader.read(
        (r) => kept.push([r.src(0), r.starts[0]!, r.ends[0]!]),
        () => {},
      ),
    ).toBe(true);
    expect(kept.map(([src, start, end]) => latin1(src.subarray(start, end)))).toEqual(
      Array.from({ length: 2000 }, (_, i) => (i === 0 ? ".5" : `${i}.5`)),
    );
  });

  it("fails on what is not content", () => {
    for (const text of ["q ) Q", "1.2.3 Td", "<41 4g> Tj", "(open Tj", "BI /W 1 ID x"]) {
      expect(
        new ContentReader(bytes(text)).read(
          () => {},
          () => {},
        ),
      ).toBe(false);
    }
  });
});
