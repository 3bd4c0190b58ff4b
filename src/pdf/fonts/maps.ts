// A subset font's tables of codes trimmed to the codes drawn: a CIDFont's /W widths and a Type 0
// font's ToUnicode CMap. Producers that embed a font whole write both for every glyph (a CJK font's
// ToUnicode runs to 100 KB and more); a reader looks them up only for codes a page shows, so the
// drawn codes' entries are all that rendering and text extraction use (PDF 32000-1:2008, 9.7.4.3
// on W, 9.10.3 on ToUnicode). Anything not read here leaves the table as it was.
import { PDFArray, PDFNumber } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";

/** The widths of the drawn CIDs, as a W array; undefined when W is not one read here. */
export function trimWidths(context: PDFContext, widths: PDFArray, cids: ReadonlySet<number>): PDFArray | undefined {
  const found = new Map<number, number>();
  const items = widths.asArray().map((item) => context.lookup(item));
  for (let i = 0; i < items.length;) {
    const first = items[i];
    const next = items[i + 1];
    if (!(first instanceof PDFNumber)) return undefined;
    const start = first.asNumber();
    if (next instanceof PDFArray) {
      for (let k = 0; k < next.size(); k++) {
        const width = next.lookup(k);
        if (!(width instanceof PDFNumber)) return undefined;
        if (cids.has(start + k) && !found.has(start + k)) found.set(start + k, width.asNumber());
      }
      i += 2;
    } else {
      const width = items[i + 2];
      if (!(next instanceof PDFNumber) || !(width instanceof PDFNumber)) return undefined;
      for (const cid of cids)
        if (cid >= start && cid <= next.asNumber() && !found.has(cid)) found.set(cid, width.asNumber());
      i += 3;
    }
  }
  const out: (number | number[])[] = [];
  let run: number[] | undefined;
  let last = -2;
  for (const cid of [...found.keys()].sort((a, b) => a - b)) {
    if (run && cid === last + 1) run.push(found.get(cid)!);
    else {
      run = [found.get(cid)!];
      out.push(cid, run);
    }
    last = cid;
  }
  return context.obj(out);
}

const latin1 = new TextDecoder("latin1");

const hex = (bytes: readonly number[]) => bytes.map((b) => b.toString(16).padStart(2, "0").toUpperCase()).join("");

function parseHex(text: string): number[] | undefined {
  const digits = text.replace(/\s+/g, "");
  if (!/^[0-9a-fA-F]*$/.test(digits) || digits.length % 2 !== 0) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < digits.length; i += 2) bytes.push(parseInt(digits.slice(i, i + 2), 16));
  return bytes;
}

const toCode = (bytes: readonly number[]) => bytes.reduce((value, b) => value * 256 + b, 0);

/**
 * A ToUnicode CMap with only the drawn codes (`width` bytes each), written as bfchar entries
 * under the original code space; undefined when the CMap holds anything not read here (usecmap,
 * a range whose destination would carry past its last byte, codes of another width).
 */
export function trimToUnicode(cmap: Uint8Array, codes: ReadonlySet<number>, width: number): Uint8Array | undefined {
  const text = latin1.decode(cmap);
  if (/\busecmap\b/.test(text)) return undefined;
  const spaces: string[] = [];
  for (const block of text.matchAll(/begincodespacerange([\s\S]*?)endcodespacerange/g)) {
    const bounds = [...block[1]!.matchAll(/<([0-9a-fA-F\s]*)>/g)].map((m) => m[1]!.replace(/\s+/g, ""));
    if (bounds.length % 2 !== 0) return undefined;
    for (let i = 0; i < bounds.length; i += 2) spaces.push(`<${bounds[i]}> <${bounds[i + 1]}>`);
  }
  // At most 100 entries to a block (Adobe Technical Note #5014).
  if (spaces.length === 0 || spaces.length > 100) return undefined;
  const map = new Map<number, string>();
  const set = (code: number, destination: readonly number[]) => {
    if (codes.has(code) && !map.has(code)) map.set(code, hex(destination));
  };
  for (const block of text.matchAll(/beginbf(char|range)([\s\S]*?)endbf\1/g)) {
    const tokens = [...block[2]!.matchAll(/<([^>]*)>|\[|\]/g)].map((m) => m[1] ?? m[0]);
    if (block[1] === "char") {
      if (tokens.length % 2 !== 0) return undefined;
      for (let i = 0; i < tokens.length; i += 2) {
        const source = parseHex(tokens[i]!);
        const destination = parseHex(tokens[i + 1]!);
        if (!source || !destination || source.length !== width) return undefined;
        set(toCode(source), destination);
      }
      continue;
    }
    for (let i = 0; i < tokens.length;) {
      const low = parseHex(tokens[i] ?? "");
      const high = parseHex(tokens[i + 1] ?? "");
      if (!low || !high || low.length !== width || high.length !== width) return undefined;
      const [from, to] = [toCode(low), toCode(high)];
      if (tokens[i + 2] === "[") {
        let k = i + 3;
        for (let code = from; tokens[k] !== "]"; code++, k++) {
          const destination = parseHex(tokens[k] ?? "");
          if (!destination || k >= tokens.length) return undefined;
          if (code <= to) set(code, destination);
        }
        i = k + 1;
      } else {
        const destination = parseHex(tokens[i + 2] ?? "");
        if (!destination || destination.length === 0) return undefined;
        const lastByte = destination[destination.length - 1]!;
        for (const code of codes) {
          if (code < from || code > to) continue;
          // 9.10.3: the last byte of the destination is incremented; a carry is read differently by readers.
          if (lastByte + code - from > 0xff) return undefined;
          set(code, [...destination.slice(0, -1), lastByte + code - from]);
        }
        i += 3;
      }
    }
  }
  const entries = [...map.entries()].sort((a, b) => a[0] - b[0]);
  const lines = [
    "/CIDInit /ProcSet findresource begin",
    "12 dict begin",
    "begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
    "/CMapName /Adobe-Identity-UCS def",
    "/CMapType 2 def",
    `${spaces.length} begincodespacerange`,
    ...spaces,
    "endcodespacerange",
  ];
  for (let i = 0; i < entries.length; i += 100) {
    const chunk = entries.slice(i, i + 100);
    lines.push(`${chunk.length} beginbfchar`);
    for (const [code, destination] of chunk) {
      lines.push(
        `<${code
          .toString(16)
          .padStart(width * 2, "0")
          .toUpperCase()}> <${destination}>`,
      );
    }
    lines.push("endbfchar");
  }
  lines.push("endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end");
  return new TextEncoder().encode(lines.join("\n"));
}
