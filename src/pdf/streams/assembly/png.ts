// PNG predictors (filter types 0-4 of a row: None, Sub, Up, Average, Paeth) both ways, in
// AssemblyScript compiled to WebAssembly (../png.ts drives it): undoing them on a Flate stream's
// rows (../filters.ts, unpngRow's arithmetic), applying given types again (inflatedBytes), and
// predicting samples with the type of each row chosen by the smallest sum of absolute differences
// (../recompress.ts, pngPredict's heuristic, ties to the lower type). In JavaScript these took
// some 130 ms of cv_xelatex_chinese_photo's 480-550 in a quick process (two 1024 x 1024 RGB
// images decoded, one predicted): a few calls, too few for V8 to optimise them before they were done (JS_TIERING in
// src/compress/isolation/runner.ts), so they ran in its baseline tiers. A quick process keeps
// WebAssembly in V8's baseline compiler too (WASM_TIERING there), so the loops do the work in few
// instructions: the choice of a row's type and the types applied run 16 bytes at a time (SIMD),
// undoing Up too; undoing Sub, Average and Paeth, where each byte needs the one a pixel left of it
// decoded, runs a pixel at a time for RGB and RGBA, a byte at a time otherwise.
//
// Memory: the caller lays out each call's buffers from `heapBase()` and copies rows in and out.
// Every buffer of rows starts with the row above the first (zeros above the image's first row), so
// that no loop asks whether there is one. A byte left of a row's first pixel is 0, as in PNG.
//
// The same bytes as the JavaScript definitions: test/pdf/streams/png-wasm.test.ts compares them
// on random rows of every type, odd widths and every pixel size.
//
// Built by `npm run generate` (asc, pinned in package.json) into ../png-wasm.ts;
// `npm run generate:check` fails when that is stale.

/** Where the caller's buffers may start. */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}

/** |x| of a byte taken as signed (x - 256 from 128 on): the heuristic's cost of one byte. */
function cost(x: i32): i32 {
  return x < 128 ? x : 256 - x;
}

/** The Paeth predictor of a, b, c (left, up, up-left), PNG's ties: a, then b. */
function paeth(a: i32, b: i32, c: i32): i32 {
  const p = a + b - c;
  const pa = abs<i32>(p - a);
  const pb = abs<i32>(p - b);
  const pc = abs<i32>(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Undoes Up on `length` bytes at `data` into `row`, 16 at a time (each byte on its own). */
function unfilterUp(data: usize, up: usize, row: usize, length: i32): void {
  let i = 0;
  for (; i + 16 <= length; i += 16) v128.store(row + i, i8x16.add(v128.load(data + i), v128.load(up + i)));
  for (; i < length; i++) store<u8>(row + i, load<u8>(data + i) + load<u8>(up + i));
}

/**
 * Undoes Sub, Average or Paeth (1, 3, 4) on bytes [from, length) at `data` into `row`, `up` the
 * row above, each byte after the one `bpp` left of it (from at least `bpp`).
 */
function unfilterLeft(type: u32, data: usize, up: usize, row: usize, from: i32, length: i32, bpp: i32): void {
  const end = row + length;
  let d = data + from;
  let u = up + from;
  if (type == 1) {
    for (let p = row + from; p < end; p++, d++) store<u8>(p, load<u8>(d) + load<u8>(p - bpp));
  } else if (type == 3) {
    for (let p = row + from; p < end; p++, d++, u++) {
      store<u8>(p, load<u8>(d) + ((<i32>load<u8>(p - bpp) + <i32>load<u8>(u)) >> 1));
    }
  } else {
    for (let p = row + from; p < end; p++, d++, u++) {
      store<u8>(p, load<u8>(d) + paeth(load<u8>(p - bpp), load<u8>(u), load<u8>(u - bpp)));
    }
  }
}

/**
 * `unfilterLeft` of a row of pixels of 3 or 4 bytes (RGB, CMYK or RGBA at 8 bits), a pixel at a
 * time in 16-bit lanes: each pixel needs the one left of it decoded, but its bytes are
 * independent. Reads 8 bytes and writes 4 at each pixel: the caller leaves room after its buffers.
 */
function unfilterPixels(type: u32, data: usize, up: usize, row: usize, length: i32, bpp: i32): void {
  const end = row + length;
  const bytes = i16x8.splat(0xff);
  let a = i16x8.splat(0);
  let c = i16x8.splat(0);
  let d = data;
  let u = up;
  for (let p = row; p < end; p += bpp, d += bpp, u += bpp) {
    const b = v128.load8x8_u(u);
    let predictor = a;
    if (type == 3) {
      predictor = i16x8.shr_u(i16x8.add(a, b), 1);
    } else if (type == 4) {
      const pa = i16x8.sub(b, c);
      const pb = i16x8.sub(a, c);
      const pc = i16x8.abs(i16x8.add(pa, pb));
      const paAbs = i16x8.abs(pa);
      const pbAbs = i16x8.abs(pb);
      const takeA = v128.and(i16x8.le_s(paAbs, pbAbs), i16x8.le_s(paAbs, pc));
      predictor = v128.bitselect(a, v128.bitselect(b, c, i16x8.le_s(pbAbs, pc)), takeA);
    }
    a = v128.and(i16x8.add(v128.load8x8_u(d), predictor), bytes);
    v128.store32_lane(p, i8x16.narrow_i16x8_u(a, a), 0);
    c = b;
  }
}

/**
 * Undoes one row of type `type` at `data` (`length` bytes) into `row`, `up` the row above
 * decoded. False for a type PNG does not define.
 */
function unfilterRow(type: u32, data: usize, up: usize, row: usize, length: i32, bpp: i32): bool {
  if (type > 4) return false;
  if (type == 0) memory.copy(row, data, length);
  else if (type == 2) unfilterUp(data, up, row, length);
  else if ((bpp == 3 || bpp == 4) && length % bpp == 0) unfilterPixels(type, data, up, row, length, bpp);
  else {
    // Left of the row's first pixel is 0: Sub keeps the byte, Average adds half of up, Paeth up.
    const head = min(bpp, length);
    for (let i = 0; i < head; i++) {
      const b = load<u8>(up + i);
      store<u8>(row + i, load<u8>(data + i) + (type == 1 ? 0 : type == 3 ? b >> 1 : b));
    }
    unfilterLeft(type, data, up, row, head, length, bpp);
  }
  return true;
}

/**
 * Undoes `rows` rows of PNG predictors at `data` (each its type byte, then `length` bytes) into
 * `out` after the zero row there (`length` zeros the caller wrote), each row's type into `types`.
 * The rows undone: fewer than `rows` when a row's type is not PNG's.
 */
export function unpng(data: usize, rows: i32, length: i32, bpp: i32, out: usize, types: usize): i32 {
  for (let r = 0; r < rows; r++) {
    const at = data + <usize>r * (length + 1);
    const type = <u32>load<u8>(at);
    const row = out + <usize>(r + 1) * length;
    if (!unfilterRow(type, at + 1, row - length, row, length, bpp)) return r;
    store<u8>(types + r, type);
  }
  return rows;
}

/** A byte of `row` at `i` under type `type`, `up` the row above (0 left of the row). */
function filterByte(type: u32, row: usize, up: usize, i: i32, bpp: i32): u8 {
  const x = <i32>load<u8>(row + i);
  const left = i >= bpp;
  const a = left ? <i32>load<u8>(row + i - bpp) : 0;
  const b = <i32>load<u8>(up + i);
  if (type == 0) return <u8>x;
  if (type == 1) return <u8>(x - a);
  if (type == 2) return <u8>(x - b);
  if (type == 3) return <u8>(x - ((a + b) >> 1));
  return <u8>(x - paeth(a, b, left ? <i32>load<u8>(up + i - bpp) : 0));
}

/** Floor((a + b) / 2) of 16 bytes (avgr_u rounds up). */
function average16(a: v128, b: v128): v128 {
  return i8x16.sub(i8x16.avgr_u(a, b), v128.and(v128.xor(a, b), i8x16.splat(1)));
}

/** Of two halves' i16 lanes of -1 or 0, the 16 bytes' (saturating keeps -1 and 0). */
function bytesOf(low: v128, high: v128): v128 {
  return i8x16.narrow_i16x8_s(low, high);
}

/** `paeth` of 16 bytes: pa = |b - c|, pb = |a - c|, pc = |a + b - 2c| in 16 bits. */
function paeth16(a: v128, b: v128, c: v128): v128 {
  const aLow = i16x8.extend_low_i8x16_u(a);
  const bLow = i16x8.extend_low_i8x16_u(b);
  const cLow = i16x8.extend_low_i8x16_u(c);
  const aHigh = i16x8.extend_high_i8x16_u(a);
  const bHigh = i16x8.extend_high_i8x16_u(b);
  const cHigh = i16x8.extend_high_i8x16_u(c);
  const paLow = i16x8.sub(bLow, cLow);
  const pbLow = i16x8.sub(aLow, cLow);
  const pcLow = i16x8.abs(i16x8.add(paLow, pbLow));
  const paHigh = i16x8.sub(bHigh, cHigh);
  const pbHigh = i16x8.sub(aHigh, cHigh);
  const pcHigh = i16x8.abs(i16x8.add(paHigh, pbHigh));
  const aLowAbs = i16x8.abs(paLow);
  const bLowAbs = i16x8.abs(pbLow);
  const aHighAbs = i16x8.abs(paHigh);
  const bHighAbs = i16x8.abs(pbHigh);
  const takeA = bytesOf(
    v128.and(i16x8.le_s(aLowAbs, bLowAbs), i16x8.le_s(aLowAbs, pcLow)),
    v128.and(i16x8.le_s(aHighAbs, bHighAbs), i16x8.le_s(aHighAbs, pcHigh)),
  );
  const takeB = bytesOf(i16x8.le_s(bLowAbs, pcLow), i16x8.le_s(bHighAbs, pcHigh));
  return v128.bitselect(a, v128.bitselect(b, c, takeB), takeA);
}

/** 16 bytes of `row` from `i` (at least `bpp`) under type `type` (1-4), `up` the row above. */
function filter16(type: u32, row: usize, up: usize, i: i32, bpp: i32): v128 {
  const x = v128.load(row + i);
  const b = v128.load(up + i);
  if (type == 2) return i8x16.sub(x, b);
  const a = v128.load(row + i - bpp);
  if (type == 1) return i8x16.sub(x, a);
  if (type == 3) return i8x16.sub(x, average16(a, b));
  return i8x16.sub(x, paeth16(a, b, v128.load(up + i - bpp)));
}

/** One row of samples at `row` under type `type`, `up` the row above, written to `out`. */
function filterRow(type: u32, row: usize, up: usize, out: usize, length: i32, bpp: i32): void {
  if (type == 0) {
    memory.copy(out, row, length);
    return;
  }
  const head = min(bpp, length);
  for (let i = 0; i < head; i++) store<u8>(out + i, filterByte(type, row, up, i, bpp));
  let i = head;
  for (; i + 16 <= length; i += 16) v128.store(out + i, filter16(type, row, up, i, bpp));
  for (; i < length; i++) store<u8>(out + i, filterByte(type, row, up, i, bpp));
}

/**
 * `rows` rows of samples at `samples` after the row above the first (`length` bytes each) under
 * their types at `types` (PNG's, 0-4), written to `out` as each row's type then its bytes.
 */
export function filter(samples: usize, types: usize, rows: i32, length: i32, bpp: i32, out: usize): void {
  for (let r = 0; r < rows; r++) {
    const row = samples + <usize>(r + 1) * length;
    const at = out + <usize>r * (length + 1);
    const type = <u32>load<u8>(types + r);
    store<u8>(at, type);
    filterRow(type, row, row - length, at + 1, length, bpp);
  }
}

// The costs of the row's bytes under each type (None, Sub, Up, Average, Paeth), as bestType adds them.
let costs0 = 0;
let costs1 = 0;
let costs2 = 0;
let costs3 = 0;
let costs4 = 0;

/** Adds the costs of bytes [from, to) of `row` under each type. */
function addCosts(row: usize, up: usize, from: i32, to: i32, bpp: i32): void {
  for (let i = from; i < to; i++) {
    costs0 += cost(filterByte(0, row, up, i, bpp));
    costs1 += cost(filterByte(1, row, up, i, bpp));
    costs2 += cost(filterByte(2, row, up, i, bpp));
    costs3 += cost(filterByte(3, row, up, i, bpp));
    costs4 += cost(filterByte(4, row, up, i, bpp));
  }
}

/** The costs of 16 bytes (each |x| as a signed byte: i8x16.abs, -128 read as 128) in 4 lanes. */
function cost16(bytes: v128): v128 {
  return i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(i8x16.abs(bytes)));
}

/** The sum of 4 lanes. */
function lanes(sums: v128): i32 {
  return (
    i32x4.extract_lane(sums, 0) +
    i32x4.extract_lane(sums, 1) +
    i32x4.extract_lane(sums, 2) +
    i32x4.extract_lane(sums, 3)
  );
}

/** Adds the costs of bytes [from, from + 16 * chunks) of `row` (from at least `bpp`) under each type. */
function addCosts16(row: usize, up: usize, from: i32, chunks: i32, bpp: i32): void {
  let none = i32x4.splat(0);
  let sub = i32x4.splat(0);
  let upSums = i32x4.splat(0);
  let average = i32x4.splat(0);
  let paethSums = i32x4.splat(0);
  for (let k = 0, i = from; k < chunks; k++, i += 16) {
    const x = v128.load(row + i);
    const a = v128.load(row + i - bpp);
    const b = v128.load(up + i);
    const c = v128.load(up + i - bpp);
    none = i32x4.add(none, cost16(x));
    sub = i32x4.add(sub, cost16(i8x16.sub(x, a)));
    upSums = i32x4.add(upSums, cost16(i8x16.sub(x, b)));
    average = i32x4.add(average, cost16(i8x16.sub(x, average16(a, b))));
    paethSums = i32x4.add(paethSums, cost16(i8x16.sub(x, paeth16(a, b, c))));
  }
  costs0 += lanes(none);
  costs1 += lanes(sub);
  costs2 += lanes(upSums);
  costs3 += lanes(average);
  costs4 += lanes(paethSums);
}

/**
 * The type of the row at `row` (`up` the row above) whose bytes cost least (None, Sub, Up,
 * Average, Paeth: the first of the cheapest).
 */
function bestType(row: usize, up: usize, length: i32, bpp: i32): u32 {
  costs0 = costs1 = costs2 = costs3 = costs4 = 0;
  const head = min(bpp, length);
  const chunks = (length - head) >> 4;
  addCosts(row, up, 0, head, bpp);
  addCosts16(row, up, head, chunks, bpp);
  addCosts(row, up, head + chunks * 16, length, bpp);
  let best: u32 = 0;
  let bestSum = costs0;
  if (costs1 < bestSum) {
    best = 1;
    bestSum = costs1;
  }
  if (costs2 < bestSum) {
    best = 2;
    bestSum = costs2;
  }
  if (costs3 < bestSum) {
    best = 3;
    bestSum = costs3;
  }
  if (costs4 < bestSum) best = 4;
  return best;
}

/**
 * `rows` rows of samples at `samples` after the row above the first, PNG-predicted into `out`:
 * each row's best type (`bestType`), then the row under it.
 */
export function predict(samples: usize, rows: i32, length: i32, bpp: i32, out: usize): void {
  for (let r = 0; r < rows; r++) {
    const row = samples + <usize>(r + 1) * length;
    const at = out + <usize>r * (length + 1);
    const type = bestType(row, row - length, length, bpp);
    store<u8>(at, type);
    filterRow(type, row, row - length, at + 1, length, bpp);
  }
}
