// ASCII85Decode, byte for byte what pdf-lib's decoder (pdf.js's Ascii85Stream) gives, on any input.
// pdf-lib's reads the data a byte at a time through two method calls and grows its buffer by
// doubling: inline_image_large's 2.1 MB ASCII85 photograph took 100-160 ms of the job's main thread
// in it (a third of the job); this loop reads five characters a group.
//
// pdf-lib's rules, which this keeps: spaces, tabs, CR and LF are skipped anywhere; the data ends at
// `~` or at its end; `z` is four zeros only at a group's start; any other byte counts as its code
// less 33, out of range or not (the group's value taken modulo 2^32); a group of k < 5 characters
// is padded with `u` and gives its first k - 1 bytes, and ends the data.

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/** The data decoded, or undefined once it would pass `maxOutput` bytes. */
export function ascii85Decode(data: Uint8Array, maxOutput: number): Uint8Array | undefined {
  const length = data.length;
  // Five characters make four bytes; only `z` makes more (four from one), and the buffer grows then.
  let out = new Uint8Array(Math.min(maxOutput, Math.ceil(length * 0.8) + 4));
  let n = 0;
  let i = 0;
  for (;;) {
    if (n + 4 > out.length) {
      // The output only grows: past the ceiling it is refused. Below it, room for a group is left.
      if (n > maxOutput) return undefined;
      const grown = new Uint8Array(Math.min(Math.max(out.length * 2, n + 4), maxOutput + 4));
      grown.set(out.subarray(0, n));
      out = grown;
    }
    // A whole group of five characters in range, without spaces: the usual case.
    if (i + 5 <= length) {
      const c0 = data[i]! - 0x21;
      const c1 = data[i + 1]! - 0x21;
      const c2 = data[i + 2]! - 0x21;
      const c3 = data[i + 3]! - 0x21;
      const c4 = data[i + 4]! - 0x21;
      if ((c0 | c1 | c2 | c3 | c4) >= 0 && c0 < 85 && c1 < 85 && c2 < 85 && c3 < 85 && c4 < 85) {
        const t = (((c0 * 85 + c1) * 85 + c2) * 85 + c3) * 85 + c4;
        out[n] = t >>> 24;
        out[n + 1] = t >>> 16;
        out[n + 2] = t >>> 8;
        out[n + 3] = t;
        n += 4;
        i += 5;
        continue;
      }
    }
    let c = -1;
    while (i < length) {
      c = data[i++]!;
      if (!isSpace(c)) break;
      c = -1;
    }
    if (c === -1 || c === 0x7e) break;
    if (c === 0x7a) {
      out.fill(0, n, n + 4);
      n += 4;
      continue;
    }
    let t = c - 0x21;
    let k = 1;
    for (; k < 5; k++) {
      c = -1;
      while (i < length) {
        c = data[i++]!;
        if (!isSpace(c)) break;
        c = -1;
      }
      if (c === -1 || c === 0x7e) break;
      t = t * 85 + (c - 0x21);
    }
    for (let pad = k; pad < 5; pad++) t = t * 85 + 84;
    // pdf-lib takes the bytes with `& 0xff` and `>>= 8`: the value modulo 2^32.
    const word = t >>> 0;
    out[n] = word >>> 24;
    out[n + 1] = word >>> 16;
    out[n + 2] = word >>> 8;
    out[n + 3] = word;
    n += k - 1;
    if (k < 5) break;
  }
  return n > maxOutput ? undefined : out.subarray(0, n);
}
