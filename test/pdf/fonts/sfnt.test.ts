// The sfnt reader's glyph names (src/pdf/fonts/sfnt.ts glyphNames): the post table's names are
// read as slices of one latin1 string; fuzzed against the reading they replace (a string made
// from each name's bytes by String.fromCharCode), on tables of any bytes, cut anywhere.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { glyphNames } from "../../../src/pdf/fonts/sfnt.ts";
import type { Sfnt } from "../../../src/pdf/fonts/sfnt.ts";

const STANDARD = ["a", "b", "c"];

/** glyphNames as it was before the names were sliced from one string. */
function glyphNamesBefore(font: Sfnt, standardNames: readonly string[]): Map<string, number> {
  const names = new Map<string, number>();
  const table = font.tables.get("post")!;
  const b = font.bytes;
  if (table.length < 34 || ((b[table.offset]! << 8) | b[table.offset + 1]!) !== 2) return names;
  const end = table.offset + table.length;
  const count = (b[table.offset + 32]! << 8) | b[table.offset + 33]!;
  const indexAt = table.offset + 34;
  if (indexAt + count * 2 > end) return names;
  const custom: string[] = [];
  for (let at = indexAt + count * 2; at < end;) {
    const length = b[at]!;
    if (at + 1 + length > end) break;
    custom.push(String.fromCharCode(...b.subarray(at + 1, at + 1 + length)));
    at += 1 + length;
  }
  for (let gid = 0; gid < count; gid++) {
    const index = (b[indexAt + gid * 2]! << 8) | b[indexAt + gid * 2 + 1]!;
    const name = index < 258 ? standardNames[index] : custom[index - 258];
    if (name !== undefined && !names.has(name)) names.set(name, gid);
  }
  return names;
}

/** A font whose post table (format 2) sits at `offset` in a larger buffer, cut to `cut` bytes. */
function fontOf(names: Uint8Array[], indices: number[], offset: number, cut: number): Sfnt {
  const data = [...names].flatMap((name) => [name.length, ...name]);
  const table = new Uint8Array(34 + indices.length * 2 + data.length);
  table.set([0, 2, 0, 0], 0);
  table.set([indices.length >> 8, indices.length & 0xff], 32);
  indices.forEach((index, gid) => table.set([index >> 8, index & 0xff], 34 + gid * 2));
  table.set(data, 34 + indices.length * 2);
  const length = Math.min(table.length, cut);
  const buffer = new Uint8Array(offset + table.length + 3).fill(0x41);
  buffer.set(table, offset);
  // The table read from within a larger buffer, at an offset in it (as a subarray of the PDF's data).
  const bytes = buffer.subarray(1);
  return { bytes, tables: new Map([["post", { offset: offset - 1, length }]]), numGlyphs: indices.length };
}

describe("glyphNames", () => {
  it("gives the names and first glyph ids the byte-by-byte reading gave (fuzzed)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 12 }), { maxLength: 20 }),
        fc.array(fc.integer({ min: 0, max: 290 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 400 }),
        (names, indices, offset, cut) => {
          const font = fontOf(names, indices, offset, cut);
          expect([...glyphNames(font, STANDARD)]).toEqual([...glyphNamesBefore(font, STANDARD)]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads names of bytes above 127 as their code points", () => {
    const font = fontOf([Uint8Array.of(0xe9, 0x41), Uint8Array.of(0x62)], [0, 258, 259], 1, 1000);
    expect([...glyphNames(font, STANDARD)]).toEqual([
      ["a", 0],
      ["\u00e9A", 1],
      ["b", 2],
    ]);
  });
});
