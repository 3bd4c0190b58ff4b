// ASCII85Decode's loop in AssemblyScript compiled to WebAssembly (../ascii85.ts drives it), the
// same steps as the JavaScript decoder it replaced, on pdf-lib's rules (test/pdf/streams/ascii85.test.ts
// compares them with pdf-lib's decoder): spaces, tabs, CR and LF skipped anywhere;
// the data ends at `~` or at its end; `z` is four zeros only at a group's start; any other byte
// counts as its code less 33, in range or not (the group's value taken modulo 2^32); a group of
// k < 5 characters is padded with `u`, gives its first k - 1 bytes and ends the data.
//
// A job decodes an ASCII85 stream in one call: in JavaScript its loop ran in V8's slower tiers
// until TurboFan's on-stack replacement was compiled, in the job, on a background thread (12-25 ms
// of compilation for inline_image_large's 2.1 MB photograph, the decode 13.5-22.7 ms of CPU in a
// fresh lean process against 4.5-7.1 optimised; warming it up did not last to the job, V8 compiled
// it again there). This module is compiled when the engine loads.
//
// Memory: the caller copies the data to `heapBase()` and lays the output after it, and grows the
// memory as the output asks for room (the decoder stops before a group when fewer than four bytes
// are left, as the JavaScript grew its buffer there).
//
// Built by `npm run generate` (asc, pinned in package.json) into ../ascii85-wasm.ts;
// `npm run generate:check` fails when that is stale.

/** Where the caller's buffers may start. */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}

/** Where the last call stopped: the next byte of the data to read, and the output's length. */
let stoppedAt: i32 = 0;
let written: i32 = 0;

export function inputAt(): i32 {
  return stoppedAt;
}

export function outputLength(): i32 {
  return written;
}

/** Spaces, tabs, CR and LF: skipped anywhere. */
function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0d || c == 0x0a;
}

/** The next byte from `stoppedAt` on that is not a space (reading past it), or -1 at the end. */
function nextChar(data: usize, length: i32): i32 {
  while (stoppedAt < length) {
    const c = <i32>load<u8>(data + <usize>stoppedAt);
    stoppedAt++;
    if (!isSpace(c)) return c;
  }
  return -1;
}

/**
 * Decodes the `length` bytes at `data` from `i` on into `out` from `n` on, while a group has room
 * before `room`: returns 1 when the data ended (`~`, its end, or a short group), 0 when it stopped
 * for room before a group (inputAt and outputLength say where).
 */
export function decode(data: usize, length: i32, i: i32, out: usize, n: i32, room: i32): i32 {
  for (;;) {
    if (n + 4 > room) {
      stoppedAt = i;
      written = n;
      return 0;
    }
    // A whole group of five characters in range, without spaces: the usual case.
    if (i + 5 <= length) {
      const p = data + <usize>i;
      const w = load<u32>(p);
      const c0 = (w & 0xff) - 0x21;
      const c1 = ((w >>> 8) & 0xff) - 0x21;
      const c2 = ((w >>> 16) & 0xff) - 0x21;
      const c3 = (w >>> 24) - 0x21;
      const c4 = <u32>load<u8>(p, 4) - 0x21;
      // Without a branch a character: Liftoff, which runs this, keeps few values in registers across them.
      if (((<u32>(c0 >= 85)) | (<u32>(c1 >= 85)) | (<u32>(c2 >= 85)) | (<u32>(c3 >= 85)) | (<u32>(c4 >= 85))) == 0) {
        const t = <u32>((((c0 * 85 + c1) * 85 + c2) * 85 + c3) * 85 + c4);
        store<u32>(out + <usize>n, bswap<u32>(t));
        n += 4;
        i += 5;
        continue;
      }
    }
    // A group with spaces, `z`, `~`, bytes out of range or the data's end: a character at a time.
    stoppedAt = i;
    let c = nextChar(data, length);
    i = stoppedAt;
    if (c == -1 || c == 0x7e) break;
    if (c == 0x7a) {
      store<u32>(out + <usize>n, 0);
      n += 4;
      continue;
    }
    // Bytes out of range make values past 32 bits (or below zero): exact in 64, then taken modulo 2^32.
    let t: i64 = <i64>(c - 0x21);
    let k = 1;
    for (; k < 5; k++) {
      c = nextChar(data, length);
      if (c == -1 || c == 0x7e) break;
      t = t * 85 + <i64>(c - 0x21);
    }
    i = stoppedAt;
    for (let pad = k; pad < 5; pad++) t = t * 85 + 84;
    store<u32>(out + <usize>n, bswap<u32>(<u32>t));
    n += k - 1;
    if (k < 5) break;
  }
  stoppedAt = i;
  written = n;
  return 1;
}
