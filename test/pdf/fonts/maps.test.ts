// Code tables trimmed to the drawn codes (src/pdf/fonts/maps.ts): ToUnicode maps and width arrays.
import { describe, expect, it } from "vitest";
import { PDFDocument } from "@cantoo/pdf-lib";
import { trimToUnicode, trimWidths } from "../../../src/pdf/fonts/maps.ts";
import { expandWidths, bfchars } from "../helpers/fonts.ts";

describe("code tables trimmed to the drawn codes", () => {
  it("ToUnicode: bfchar, both bfrange forms and a carry that is refused", () => {
    const cmap = [
      "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
      "1 begincodespacerange <0000> <FFFF> endcodespacerange",
      "2 beginbfchar <0003> <0020> <0010> <D83DDE00> endbfchar",
      "2 beginbfrange <0020> <0030> <0041> <0040> <0042> [<0061> <00620063> <0064>] endbfrange",
      "endcmap CMapName currentdict /CMap defineresource pop end end",
    ].join("\n");
    const trimmed = trimToUnicode(new TextEncoder().encode(cmap), new Set([3, 0x10, 0x22, 0x41, 0x999]), 2)!;
    expect(bfchars(Buffer.from(trimmed).toString("latin1"))).toEqual(
      new Map([
        ["0003", "0020"],
        ["0010", "D83DDE00"],
        ["0022", "0043"],
        ["0041", "00620063"],
      ]),
    );
    const carry = "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfrange <00> <20> <00FF> endbfrange";
    expect(trimToUnicode(new TextEncoder().encode(carry), new Set([1]), 1)).toBeUndefined();
    expect(trimToUnicode(new TextEncoder().encode(`/Other usecmap ${cmap}`), new Set([3]), 2)).toBeUndefined();
  });

  it("W: both forms, the drawn CIDs' widths kept in runs", async () => {
    const { context } = await PDFDocument.create();
    const widths = context.obj([1, [500, 600, 700], 10, 20, 333, 30, [250]]);
    const trimmed = trimWidths(context, widths, new Set([2, 3, 12, 13, 30, 99]))!;
    expect(expandWidths(trimmed)).toEqual(
      new Map([
        [2, 600],
        [3, 700],
        [12, 333],
        [13, 333],
        [30, 250],
      ]),
    );
    expect(trimmed.size()).toBe(6);
  });
});
