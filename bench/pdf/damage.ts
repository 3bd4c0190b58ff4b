// Damaged copies of PDFs, made by code and reproducible from a seed: the ordinary damage real
// uploads carry (an editor that shifted every later offset, a wrong /Length, a cross-reference
// table or trailer gone, an upload cut off) and a fuzzer's (bytes flipped, inserted, removed).
// Used by the damaged-file tests, the mutation fuzzer and bench/damaged.ts.

export type DamageKind =
  | "offsets_shifted"
  | "length_wrong"
  | "xref_removed"
  | "trailer_removed"
  | "truncated"
  | "bytes_flipped"
  | "bytes_inserted";

export interface Damaged {
  kind: DamageKind;
  /** What was done, for a test's name. */
  detail: string;
  bytes: Uint8Array;
}

/** A small deterministic generator (mulberry32), so that a failing case can be made again. */
export function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
const bytesOf = (text: string) => new Uint8Array(Buffer.from(text, "latin1"));
const pick = <T>(items: readonly T[], random: () => number): T | undefined =>
  items[Math.floor(random() * items.length)];

function splice(bytes: Uint8Array, at: number, remove: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at));
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
}

function offsetsOf(text: string, pattern: RegExp): number[] {
  return [...text.matchAll(pattern)].map((match) => match.index);
}

/** A line of junk before a random object header: every later offset moves, as an editor's save does. */
export function shiftOffsets(bytes: Uint8Array, random: () => number): Damaged | undefined {
  const headers = offsetsOf(latin1(bytes), /(?<=[\r\n])\d+ \d+ obj\b/g);
  const at = pick(headers.slice(1), random);
  if (at === undefined) return undefined;
  const junk = `% edited ${"x".repeat(1 + Math.floor(random() * 200))}\n`;
  return {
    kind: "offsets_shifted",
    detail: `${junk.length} bytes at ${at}`,
    bytes: splice(bytes, at, 0, bytesOf(junk)),
  };
}

/** A stream's /Length made wrong (longer or shorter by a few bytes to a few kilobytes). */
export function wrongLength(bytes: Uint8Array, random: () => number): Damaged | undefined {
  const text = latin1(bytes);
  const lengths = [...text.matchAll(/\/Length (\d+)(?=[\s/>])/g)];
  const match = pick(lengths, random);
  if (!match) return undefined;
  const declared = Number(match[1]);
  const delta = Math.ceil(random() * Math.max(8, declared / 4)) * (random() < 0.5 ? -1 : 1);
  const wrong = String(Math.max(0, declared + delta));
  const at = match.index + "/Length ".length;
  return {
    kind: "length_wrong",
    detail: `/Length ${declared} -> ${wrong} at ${at}`,
    bytes: splice(bytes, at, match[1]!.length, bytesOf(wrong)),
  };
}

/** The last cross-reference table (`xref` up to `trailer`) or the last `startxref` offset gone. */
export function removeXref(bytes: Uint8Array): Damaged | undefined {
  const text = latin1(bytes);
  const table = text.lastIndexOf("\nxref");
  const trailer = table < 0 ? -1 : text.indexOf("trailer", table);
  if (table >= 0 && trailer > table) {
    return {
      kind: "xref_removed",
      detail: "xref table",
      bytes: splice(bytes, table + 1, trailer - table - 1, new Uint8Array()),
    };
  }
  const startxref = /startxref\s+(\d+)/g;
  const last = [...text.matchAll(startxref)].at(-1);
  if (!last) return undefined;
  const at = last.index + last[0].length - last[1]!.length;
  return { kind: "xref_removed", detail: "startxref offset", bytes: splice(bytes, at, last[1]!.length, bytesOf("0")) };
}

/** Everything from the last `trailer` (or the last xref stream's object) to the end gone. */
export function removeTrailer(bytes: Uint8Array): Damaged | undefined {
  const text = latin1(bytes);
  let at = text.lastIndexOf("trailer");
  if (at < 0) {
    const xrefStream = offsetsOf(text, /(?<=[\r\n])\d+ \d+ obj\s*<<(?:(?!>>)[\s\S]){0,400}\/Type\s*\/XRef/g).at(-1);
    if (xrefStream === undefined) return undefined;
    at = xrefStream;
  }
  return { kind: "trailer_removed", detail: `cut at ${at}`, bytes: bytes.slice(0, at) };
}

/** The first `fraction` of the file. */
export function truncate(bytes: Uint8Array, fraction: number): Damaged {
  const at = Math.floor(bytes.length * fraction);
  return { kind: "truncated", detail: `${Math.round(fraction * 100)}% (${at} bytes)`, bytes: bytes.slice(0, at) };
}

/** 1 to 8 random bytes set to random values. */
export function flipBytes(bytes: Uint8Array, random: () => number): Damaged {
  const out = bytes.slice();
  const count = 1 + Math.floor(random() * 8);
  const at: number[] = [];
  for (let i = 0; i < count; i++) {
    const p = Math.floor(random() * out.length);
    out[p] = Math.floor(random() * 256);
    at.push(p);
  }
  return { kind: "bytes_flipped", detail: `at ${at.join(",")}`, bytes: out };
}

/** 1 to 64 random bytes inserted at a random place (maybe inside a stream). */
export function insertBytes(bytes: Uint8Array, random: () => number): Damaged {
  const at = Math.floor(random() * bytes.length);
  const junk = new Uint8Array(1 + Math.floor(random() * 64)).map(() => Math.floor(random() * 256));
  return { kind: "bytes_inserted", detail: `${junk.length} bytes at ${at}`, bytes: splice(bytes, at, 0, junk) };
}

/** One damaged copy of each ordinary kind, then `fuzzed` fuzzer's copies, all from one seed. */
export function damagedCopies(bytes: Uint8Array, seed: number, fuzzed = 0): Damaged[] {
  const random = randomSource(seed);
  const copies = [
    shiftOffsets(bytes, random),
    wrongLength(bytes, random),
    removeXref(bytes),
    removeTrailer(bytes),
    truncate(bytes, 0.5 + random() * 0.5),
  ].filter((copy) => copy !== undefined);
  for (let i = 0; i < fuzzed; i++) {
    const roll = random();
    copies.push(
      roll < 0.4 ? flipBytes(bytes, random) : roll < 0.7 ? insertBytes(bytes, random) : truncate(bytes, random()),
    );
  }
  return copies;
}
