// The quality check's inner loops (images/quality.ts), in AssemblyScript compiled to WebAssembly with
// 128-bit SIMD: a page image's luminance, its box sums down to a drawing's rows, and the SSIM of
// two drawings; and, at the end, the layers' (images/layers.ts) segmentation of a page image into
// text and the rest, and its background's block averages. In JavaScript these were most of the
// engine's main-thread time on a scan (the check's about 45 ms of a 300 dpi page's 165 ms of CPU,
// the layers' some 160 ms more), while the cores' other work waited on it.
//
// Every result is exactly the JavaScript definition's (test/pdf/images/check-kernels.test.ts and
// layer-kernels.test.ts): the
// sums are integers, and the SSIM's floating-point operations are the same, in the same order.
// The caller (images/kernels.ts) owns the memory: it places the buffers and passes their addresses.
//
// Built by `npm run generate` (asc, pinned in package.json) into ../check-wasm.ts;
// `npm run generate:check` fails when that is stale.

/** R, G or B of 16 RGB pixels (48 bytes in a, b, c): each vector's lanes at the byte it holds, else 0. */
function channel(a: v128, b: v128, c: v128, fromA: v128, fromB: v128, fromC: v128): v128 {
  return v128.or(v128.or(i8x16.swizzle(a, fromA), i8x16.swizzle(b, fromB)), i8x16.swizzle(c, fromC));
}

/**
 * Eight pixels' luminance, (77 R + 151 G + 28 B + 128) >> 8, from the products of their channels
 * (u16: the largest sum, 65,408, fits).
 */
function luma8(r: v128, g: v128, b: v128): v128 {
  return i16x8.shr_u(i16x8.add(i16x8.add(i16x8.add(r, g), b), i16x8.splat(128)), 8);
}

/** Adds the `components` bytes of the pixel at `p` to the u32 sums at `s` (one a component). */
function addPixel(s: usize, p: usize, components: i32): void {
  for (let i = 0; i < components; i++) {
    const at = s + ((<usize>i) << 2);
    store<u32>(at, load<u32>(at) + <u32>load<u8>(p + <usize>i));
  }
}

/** Whether pixel `x`'s bit is set in the row of bits at `bits` (most significant first). */
function isSet(bits: usize, x: i32): bool {
  return ((<i32>load<u8>(bits + <usize>(x >> 3))) & (0x80 >> (x & 7))) !== 0;
}

/**
 * The luminance of `width` pixels of `components` (1, 3 or 4) at `src`, one byte each, to `dst`:
 * gray as it is; RGB as above; CMYK as 255 - K - the ink of C, M, Y, rounded (0 at most).
 */
export function luminanceRow(src: usize, components: i32, width: i32, dst: usize): void {
  let x = 0;
  if (components === 1) {
    memory.copy(dst, src, <usize>width);
    return;
  }
  if (components === 3) {
    const m77 = i8x16.splat(77);
    const m151 = i8x16.splat(<i8>151);
    const m28 = i8x16.splat(28);
    for (; x + 16 <= width; x += 16) {
      const p = src + <usize>(x * 3);
      const a = v128.load(p);
      const b = v128.load(p, 16);
      const c = v128.load(p, 32);
      const r = channel(
        a,
        b,
        c,
        i8x16(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        i8x16(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1),
        i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13),
      );
      const g = channel(
        a,
        b,
        c,
        i8x16(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        i8x16(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1),
        i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14),
      );
      const bl = channel(
        a,
        b,
        c,
        i8x16(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        i8x16(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1),
        i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15),
      );
      const low = luma8(
        i16x8.extmul_low_i8x16_u(r, m77),
        i16x8.extmul_low_i8x16_u(g, m151),
        i16x8.extmul_low_i8x16_u(bl, m28),
      );
      const high = luma8(
        i16x8.extmul_high_i8x16_u(r, m77),
        i16x8.extmul_high_i8x16_u(g, m151),
        i16x8.extmul_high_i8x16_u(bl, m28),
      );
      v128.store(dst + <usize>x, i8x16.narrow_i16x8_u(low, high));
    }
    for (; x < width; x++) {
      const p = src + <usize>(x * 3);
      const value = (77 * <i32>load<u8>(p) + 151 * <i32>load<u8>(p, 1) + 28 * <i32>load<u8>(p, 2) + 128) >> 8;
      store<u8>(dst + <usize>x, <u8>value);
    }
    return;
  }
  for (; x < width; x++) {
    const p = src + <usize>(x * 4);
    // ink = (77 C + 151 M + 28 Y + 128) / 256 + K, rounded half up: K + (that sum + 128) >> 8.
    const ink =
      <i32>load<u8>(p, 3) + ((77 * <i32>load<u8>(p) + 151 * <i32>load<u8>(p, 1) + 28 * <i32>load<u8>(p, 2) + 256) >> 8);
    store<u8>(dst + <usize>x, <u8>(ink >= 255 ? 0 : 255 - ink));
  }
}

/** Adds a row of `width` bytes at `gray` to the u32 column sums at `sums`. */
export function addRow(gray: usize, width: i32, sums: usize): void {
  let x = 0;
  for (; x + 16 <= width; x += 16) {
    const g = v128.load(gray + <usize>x);
    const low = i16x8.extend_low_i8x16_u(g);
    const high = i16x8.extend_high_i8x16_u(g);
    const s = sums + <usize>(x << 2);
    v128.store(s, i32x4.add(v128.load(s), i32x4.extend_low_i16x8_u(low)));
    v128.store(s, i32x4.add(v128.load(s, 16), i32x4.extend_high_i16x8_u(low)), 16);
    v128.store(s, i32x4.add(v128.load(s, 32), i32x4.extend_low_i16x8_u(high)), 32);
    v128.store(s, i32x4.add(v128.load(s, 48), i32x4.extend_high_i16x8_u(high)), 48);
  }
  for (; x < width; x++) {
    const s = sums + <usize>(x << 2);
    store<u32>(s, load<u32>(s) + <u32>load<u8>(gray + <usize>x));
  }
}

/**
 * One device row: each device pixel's columns (from `cuts`, i32: where each run starts, and last
 * where the row ends) summed and scaled by its reciprocal (f64), rounded half up, as bytes to
 * `out`; then the column sums (`width` of them) are cleared for the next row.
 */
export function emitRow(sums: usize, width: i32, cuts: usize, dw: i32, reciprocals: usize, out: usize): void {
  let from = load<i32>(cuts);
  for (let x = 0; x < dw; x++) {
    const to = load<i32>(cuts + <usize>((x + 1) << 2));
    let sum: u32 = 0;
    for (let i = from; i < to; i++) sum += load<u32>(sums + <usize>(i << 2));
    store<u8>(out + <usize>x, <u8>(<i32>(<f64>sum * load<f64>(reciprocals + <usize>(x << 3)) + 0.5)));
    from = to;
  }
  memory.fill(sums, 0, <usize>(width << 2));
}

/**
 * A source row of bytes at `src` drawn `dw` wide by Splash's bilinear enlargement, into `into`: device
 * pixel x is src[p] (1 - w) + src[min(sw - 1, p + 1)] w, truncated, with p the i32 at `x0s` and w
 * the f64 at `wxs` (quality.ts's `enlarge`, in the same f64 operations).
 */
function expandRow(src: usize, sw: i32, x0s: usize, wxs: usize, dw: i32, into: usize): void {
  let x = 0;
  // Eight device pixels at a time while their source pixels and the next ones lie in the 16 bytes
  // from the first's (enlarging, eight device pixels span at most eight source pixels; else the
  // scalar loop goes on), taken from them by a swizzle: the same f64 operations, lane by lane, as
  // the scalar loop that ends the row. Under the lean processes' WASM_TIERING the kernel stays in
  // Liftoff, where this scalar loop was most of an enlargement (1500 x 1125 gray to 2083 x 1562).
  const one = f64x2.splat(1);
  for (; x + 8 <= dw; x += 8) {
    const p0 = load<i32>(x0s + <usize>(x << 2));
    if (p0 + 16 > sw || load<i32>(x0s + <usize>((x + 7) << 2)) - p0 > 14) break;
    const first = i32x4.splat(p0);
    const low = i32x4.sub(v128.load(x0s + <usize>(x << 2)), first);
    const high = i32x4.sub(v128.load(x0s + <usize>((x + 4) << 2)), first);
    const at = i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(low, high), i16x8.splat(0));
    const bytes = v128.load(src + <usize>p0);
    const pa = i16x8.extend_low_i8x16_u(i8x16.swizzle(bytes, at));
    const pb = i16x8.extend_low_i8x16_u(i8x16.swizzle(bytes, i8x16.add(at, i8x16.splat(1))));
    const aLow = i32x4.extend_low_i16x8_u(pa);
    const aHigh = i32x4.extend_high_i16x8_u(pa);
    const bLow = i32x4.extend_low_i16x8_u(pb);
    const bHigh = i32x4.extend_high_i16x8_u(pb);
    const w = wxs + <usize>(x << 3);
    const w0 = v128.load(w);
    const w1 = v128.load(w + 16);
    const w2 = v128.load(w + 32);
    const w3 = v128.load(w + 48);
    const v0 = blendPair(aLow, bLow, f64x2.sub(one, w0), w0);
    const v1 = blendPair(upperPair(aLow), upperPair(bLow), f64x2.sub(one, w1), w1);
    const v2 = blendPair(aHigh, bHigh, f64x2.sub(one, w2), w2);
    const v3 = blendPair(upperPair(aHigh), upperPair(bHigh), f64x2.sub(one, w3), w3);
    const lowOut = v128.shuffle<i32>(v0, v1, 0, 1, 4, 5);
    const highOut = v128.shuffle<i32>(v2, v3, 0, 1, 4, 5);
    v128.store64_lane(into + <usize>x, i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(lowOut, highOut), i16x8.splat(0)), 0);
  }
  for (; x < dw; x++) {
    const p = load<i32>(x0s + <usize>(x << 2));
    const next = p + 1 < sw ? p + 1 : sw - 1;
    const w = load<f64>(wxs + <usize>(x << 3));
    const value = <f64>load<u8>(src + <usize>p) * (1 - w) + <f64>load<u8>(src + <usize>next) * w;
    store<u8>(into + <usize>x, <u8>(<i32>value));
  }
}

/**
 * Splash's bilinear enlargement of `sw` x `sh` gray bytes at `src` to `dw` x `dh` at `out`, as
 * quality.ts's `enlarge` defines it: source rows expanded across (`expandRow`, into `rowA` and
 * `rowB`, `dw` bytes each, two at a time: consecutive device rows share them), then device row y
 * is rowA (1 - wy) + rowB wy, truncated, with rowA source row y0 (the i32 at `y0s`), rowB row
 * min(sh - 1, y0 + 1) and wy the f64 at `wys`.
 */
export function enlarge(
  src: usize,
  sw: i32,
  sh: i32,
  dw: i32,
  dh: i32,
  x0s: usize,
  wxs: usize,
  y0s: usize,
  wys: usize,
  rowA: usize,
  rowB: usize,
  out: usize,
): void {
  let a = rowA;
  let b = rowB;
  let aIs = -1;
  let bIs = -1;
  for (let y = 0; y < dh; y++) {
    const y0 = load<i32>(y0s + <usize>(y << 2));
    const y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
    const wy = load<f64>(wys + <usize>(y << 3));
    if (aIs !== y0) {
      if (bIs === y0) {
        const t = a;
        a = b;
        b = t;
        aIs = y0;
        bIs = -1;
      } else {
        expandRow(src + <usize>(y0 * sw), sw, x0s, wxs, dw, a);
        aIs = y0;
      }
    }
    if (bIs !== y1) {
      expandRow(src + <usize>(y1 * sw), sw, x0s, wxs, dw, b);
      bIs = y1;
    }
    const row = out + <usize>(y * dw);
    blendRows(a, b, wy, dw, row);
  }
}

/**
 * Device row `row` (`dw` bytes) from the expanded rows at `a` and `b`: a (1 - wy) + b wy,
 * truncated, eight pixels at a time in pairs of f64 lanes (the same f64 operations, lane by lane,
 * as the scalar loop that ends the row). In scalar f64 this was most of an enlargement's time: a
 * 2083 x 1562 drawing is 3.25 million of them.
 */
function blendRows(a: usize, b: usize, wy: f64, dw: i32, row: usize): void {
  const ka = f64x2.splat(1 - wy);
  const kb = f64x2.splat(wy);
  let x = 0;
  for (; x + 8 <= dw; x += 8) {
    const pa = i16x8.extend_low_i8x16_u(v128.load64_zero(a + <usize>x));
    const pb = i16x8.extend_low_i8x16_u(v128.load64_zero(b + <usize>x));
    const aLow = i32x4.extend_low_i16x8_u(pa);
    const aHigh = i32x4.extend_high_i16x8_u(pa);
    const bLow = i32x4.extend_low_i16x8_u(pb);
    const bHigh = i32x4.extend_high_i16x8_u(pb);
    const v0 = blendPair(aLow, bLow, ka, kb);
    const v1 = blendPair(upperPair(aLow), upperPair(bLow), ka, kb);
    const v2 = blendPair(aHigh, bHigh, ka, kb);
    const v3 = blendPair(upperPair(aHigh), upperPair(bHigh), ka, kb);
    const low = v128.shuffle<i32>(v0, v1, 0, 1, 4, 5);
    const high = v128.shuffle<i32>(v2, v3, 0, 1, 4, 5);
    const bytes = i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(low, high), i16x8.splat(0));
    v128.store64_lane(row + <usize>x, bytes, 0);
  }
  for (; x < dw; x++) {
    const value = <f64>load<u8>(a + <usize>x) * (1 - wy) + <f64>load<u8>(b + <usize>x) * wy;
    store<u8>(row + <usize>x, <u8>(<i32>value));
  }
}

/** Lanes 2 and 3 of `v` (i32) as its lanes 0 and 1. */
function upperPair(v: v128): v128 {
  return v128.shuffle<i32>(v, v, 2, 3, 0, 1);
}

/** Lanes 0 and 1 of `a` and `b` (i32) as a (1 - wy) + b wy in f64 (`ka`, `kb`), truncated, to i32 lanes 0 and 1. */
function blendPair(a: v128, b: v128, ka: v128, kb: v128): v128 {
  return i32x4.trunc_sat_f64x2_s_zero(
    f64x2.add(f64x2.mul(f64x2.convert_low_i32x4_s(a), ka), f64x2.mul(f64x2.convert_low_i32x4_s(b), kb)),
  );
}

/** Pairs of i32 lanes of `low` and of `high` added: [l0 + l1, l2 + l3, h0 + h1, h2 + h3]. */
function pairs(low: v128, high: v128): v128 {
  return i32x4.add(v128.shuffle<i32>(low, high, 0, 2, 4, 6), v128.shuffle<i32>(low, high, 1, 3, 5, 7));
}

/** The sum of a cell's 2 x 2 window of i32 cell sums at `s` (cells `cw` to a row). */
function quad(s: usize, c: i32, cw: i32): f64 {
  return <f64>(
    (load<i32>(s + <usize>(c << 2)) +
      load<i32>(s + <usize>((c + 1) << 2)) +
      load<i32>(s + <usize>((c + cw) << 2)) +
      load<i32>(s + <usize>((c + cw + 1) << 2)))
  );
}

/**
 * Mean SSIM of two drawings (`width` x `height` bytes at `a` and `b`) over 8 x 8 windows placed
 * every 4 pixels, as images/quality.ts defines it: sums over 4 x 4 cells (five i32 arrays of
 * floor(width / 4) x floor(height / 4) cells at `cells`), then windows of 2 x 2 cells. The
 * caller sees to at least 2 x 2 cells. c1 and c2 are SSIM's constants.
 */
export function ssim(a: usize, b: usize, width: i32, height: i32, cells: usize, c1: f64, c2: f64): f64 {
  const cw = width >> 2;
  const ch = height >> 2;
  const count = cw * ch;
  const sa = cells;
  const sb = sa + <usize>(count << 2);
  const saa = sb + <usize>(count << 2);
  const sbb = saa + <usize>(count << 2);
  const sab = sbb + <usize>(count << 2);
  for (let cy = 0; cy < ch; cy++) {
    let cx = 0;
    // Four cells (16 pixels of each of their 4 rows) at a time.
    for (; cx + 4 <= cw; cx += 4) {
      let va = i32x4.splat(0);
      let vb = i32x4.splat(0);
      let vaa = i32x4.splat(0);
      let vbb = i32x4.splat(0);
      let vab = i32x4.splat(0);
      for (let r = 0; r < 4; r++) {
        const at = <usize>((cy * 4 + r) * width + cx * 4);
        const pa = v128.load(a + at);
        const pb = v128.load(b + at);
        va = i32x4.add(va, i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(pa)));
        vb = i32x4.add(vb, i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(pb)));
        const aLow = i16x8.extend_low_i8x16_u(pa);
        const aHigh = i16x8.extend_high_i8x16_u(pa);
        const bLow = i16x8.extend_low_i8x16_u(pb);
        const bHigh = i16x8.extend_high_i8x16_u(pb);
        vaa = i32x4.add(vaa, pairs(i32x4.dot_i16x8_s(aLow, aLow), i32x4.dot_i16x8_s(aHigh, aHigh)));
        vbb = i32x4.add(vbb, pairs(i32x4.dot_i16x8_s(bLow, bLow), i32x4.dot_i16x8_s(bHigh, bHigh)));
        vab = i32x4.add(vab, pairs(i32x4.dot_i16x8_s(aLow, bLow), i32x4.dot_i16x8_s(aHigh, bHigh)));
      }
      const c = <usize>((cy * cw + cx) << 2);
      v128.store(sa + c, va);
      v128.store(sb + c, vb);
      v128.store(saa + c, vaa);
      v128.store(sbb + c, vbb);
      v128.store(sab + c, vab);
    }
    for (; cx < cw; cx++) {
      let ra = 0;
      let rb = 0;
      let raa = 0;
      let rbb = 0;
      let rab = 0;
      for (let r = 0; r < 4; r++) {
        const at = <usize>((cy * 4 + r) * width + cx * 4);
        for (let i: usize = 0; i < 4; i++) {
          const p = <i32>load<u8>(a + at + i);
          const q = <i32>load<u8>(b + at + i);
          ra += p;
          rb += q;
          raa += p * p;
          rbb += q * q;
          rab += p * q;
        }
      }
      const c = <usize>((cy * cw + cx) << 2);
      store<i32>(sa + c, ra);
      store<i32>(sb + c, rb);
      store<i32>(saa + c, raa);
      store<i32>(sbb + c, rbb);
      store<i32>(sab + c, rab);
    }
  }
  // The windows, in images/quality.ts's order and arithmetic (the sums are exact in f64).
  const n: f64 = 64;
  let total: f64 = 0;
  for (let cy = 0; cy + 1 < ch; cy++) {
    for (let cx = 0; cx + 1 < cw; cx++) {
      const c = cy * cw + cx;
      const ma = quad(sa, c, cw) / n;
      const mb = quad(sb, c, cw) / n;
      const va = quad(saa, c, cw) / n - ma * ma;
      const vb = quad(sbb, c, cw) / n - mb * mb;
      const cov = quad(sab, c, cw) / n - ma * mb;
      total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
    }
  }
  return total / <f64>((ch - 1) * (cw - 1));
}

// ---------------------------------------------------------------------------------------------
// Layers (images/layers.ts): a page image's segmentation into text and the rest, and its
// background's block averages. In JavaScript these were the engine's largest main-thread cost on a
// scan (about 105 and 55 ms of CPU a 300 dpi page, the quality check's kernels above some 10).

/** Counts `width` luminance bytes at `lum` into the u32 histogram of 256 at `histogram`. */
export function histogramRow(lum: usize, width: i32, histogram: usize): void {
  for (let x = 0; x < width; x++) {
    const h = histogram + ((<usize>load<u8>(lum + <usize>x)) << 2);
    store<u32>(h, load<u32>(h) + 1);
  }
}

/**
 * One row of a page image's segmentation: each pixel's kind from its luminance (`lum`, a byte a
 * pixel): the text's core up to `coreTop`, text up to `textTop`, a middle tone below `light`,
 * else paper. Text clears the pixel's bit of the mask row at `maskRow` (1 bit a pixel, most
 * significant first); per block of 32 pixels (`blocks`: the index of the row's first block),
 * middle tones are counted in `mids`, text (its core included) in `inks`, cores in `cores` (u32
 * each) and the cores' components (of the pixels at `src`, `components` bytes each) summed in
 * `sums` (u32, `components` a block: at most 1,024 x 255 each). Sixteen pixels at a time: their
 * kinds as lane masks, counted and written to the mask whole; only the cores are visited one by
 * one, for their colour.
 */
export function segmentRow(
  src: usize,
  components: i32,
  lum: usize,
  width: i32,
  coreTop: i32,
  textTop: i32,
  light: i32,
  maskRow: usize,
  blocks: i32,
  mids: usize,
  inks: usize,
  cores: usize,
  sums: usize,
): void {
  const coreMax = i8x16.splat(<i8>coreTop);
  const textMax = i8x16.splat(<i8>textTop);
  const lightFrom = i8x16.splat(<i8>light);
  // Lanes 7 to 0, then 15 to 8: the bitmask of the result is the mask's two bytes, pixel x0 first.
  const msbFirst = v128(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  let x0 = 0;
  for (; x0 + 16 <= width; x0 += 16) {
    const v = v128.load(lum + <usize>x0);
    const text = i8x16.le_u(v, textMax);
    const mid = v128.andnot(i8x16.lt_u(v, lightFrom), text);
    const textBits = i8x16.bitmask(text);
    const midBits = i8x16.bitmask(mid);
    if ((textBits | midBits) === 0) continue;
    const block = <usize>(blocks + (x0 >> 5));
    if (midBits !== 0) {
      const m = mids + (block << 2);
      store<u32>(m, load<u32>(m) + <u32>popcnt(midBits));
    }
    if (textBits === 0) continue;
    const byte = maskRow + <usize>(x0 >> 3);
    store<u16>(byte, load<u16>(byte) & ~(<u16>i8x16.bitmask(i8x16.swizzle(text, msbFirst))));
    const k = inks + (block << 2);
    store<u32>(k, load<u32>(k) + <u32>popcnt(textBits));
    let coreBits = i8x16.bitmask(i8x16.le_u(v, coreMax));
    if (coreBits === 0) continue;
    const c = cores + (block << 2);
    store<u32>(c, load<u32>(c) + <u32>popcnt(coreBits));
    const s = sums + ((block * <usize>components) << 2);
    while (coreBits !== 0) {
      const p = src + <usize>((x0 + ctz(coreBits)) * components);
      coreBits &= coreBits - 1;
      addPixel(s, p, components);
    }
  }
  for (let x = x0; x < width; x++) {
    const v = <i32>load<u8>(lum + <usize>x);
    if (v > textTop) {
      if (v < light) {
        const m = mids + ((<usize>(blocks + (x >> 5))) << 2);
        store<u32>(m, load<u32>(m) + 1);
      }
      continue;
    }
    const block = <usize>(blocks + (x >> 5));
    const byte = maskRow + <usize>(x >> 3);
    store<u8>(byte, <u8>((<i32>load<u8>(byte)) & ~(0x80 >> (x & 7))));
    const k = inks + (block << 2);
    store<u32>(k, load<u32>(k) + 1);
    if (v > coreTop) continue;
    const c = cores + (block << 2);
    store<u32>(c, load<u32>(c) + 1);
    const p = src + <usize>(x * components);
    const s = sums + ((block * <usize>components) << 2);
    addPixel(s, p, components);
  }
}

/**
 * Row `y` of the text grown by a pixel on every side, to `out`: 1 bits where the pixel or one of
 * its eight neighbours is text, from the page's mask at `mask` (`rowBytes` a row, `height` rows;
 * 0 bits text, most significant first). Growing is an OR, so the three rows' text is joined first
 * and then grown across once. `tmp` holds `rowBytes` + 18 bytes: the joined row between a zero
 * byte on either side (no text beyond the row's ends), and room for a vector read past its end.
 */
export function grownRow(mask: usize, rowBytes: i32, height: i32, y: i32, tmp: usize, out: usize): void {
  const bytes = <usize>rowBytes;
  const row = mask + <usize>y * bytes;
  const above = y > 0 ? row - bytes : row;
  const below = y + 1 < height ? row + bytes : row;
  const joined = tmp + 1;
  store<u8>(tmp, 0);
  let i: usize = 0;
  for (; i + 16 <= bytes; i += 16) {
    const paper = v128.and(v128.and(v128.load(above + i), v128.load(row + i)), v128.load(below + i));
    v128.store(joined + i, v128.not(paper));
  }
  for (; i < bytes; i++) store<u8>(joined + i, ~(load<u8>(above + i) & load<u8>(row + i) & load<u8>(below + i)));
  memory.fill(joined + bytes, 0, 17);
  // Each byte with its own bits moved a pixel either way, the last pixel of the byte before and
  // the first of the byte after.
  for (i = 0; i + 16 <= bytes; i += 16) {
    const t = v128.load(joined + i);
    const sides = v128.or(i8x16.shl(v128.load(joined + i - 1), 7), i8x16.shr_u(v128.load(joined + i + 1), 7));
    v128.store(out + i, v128.or(v128.or(t, sides), v128.or(i8x16.shl(t, 1), i8x16.shr_u(t, 1))));
  }
  for (; i < bytes; i++) {
    const t = <i32>load<u8>(joined + i);
    const sides = ((<i32>load<u8>(joined + i - 1)) << 7) | ((<i32>load<u8>(joined + i + 1)) >> 7);
    store<u8>(out + i, <u8>(t | (t << 1) | (t >> 1) | sides));
  }
}

/**
 * One sampled row of a background: every `stride`-th pixel of `width` at `src` (`components`
 * bytes each) whose bit in the row of grown text at `grown` (1 bit a pixel, most significant
 * first) is clear is added to its block's u32 count (`counts`) and component sums (`sums`); the
 * block of each pixel is in the i32 `columns`.
 */
export function backgroundRow(
  src: usize,
  components: i32,
  width: i32,
  stride: i32,
  grown: usize,
  columns: usize,
  sums: usize,
  counts: usize,
): void {
  for (let x = 0; x < width; x += stride) {
    if (isSet(grown, x)) continue;
    const o = <usize>load<i32>(columns + <usize>(x << 2));
    const n = counts + (o << 2);
    store<u32>(n, load<u32>(n) + 1);
    const p = src + <usize>(x * components);
    const s = sums + ((o * <usize>components) << 2);
    addPixel(s, p, components);
  }
}

/**
 * One sampled row of a background whose blocks are as large as the sampling step (`stride`
 * pixels): each block has one sample, its top left pixel, so the block is that pixel, copied to
 * `out` with 1 in `known`, unless its bit in the row of grown text at `grown` is set (then both
 * are left as they are). What backgroundRow and backgroundEmit give for such blocks, without the
 * sums, counts and means (a 150 ppi background of a 300 dpi page is 2.2 million blocks).
 */
export function backgroundCopyRow(
  src: usize,
  components: i32,
  width: i32,
  stride: i32,
  grown: usize,
  out: usize,
  known: usize,
): void {
  for (let x = 0, o = 0; x < width; x += stride, o++) {
    if (isSet(grown, x)) continue;
    store<u8>(known + <usize>o, 1);
    const p = src + <usize>(x * components);
    const q = out + <usize>(o * components);
    for (let i = 0; i < components; i++) store<u8>(q + <usize>i, load<u8>(p + <usize>i));
  }
}

/**
 * A background row from its blocks' sums and counts (`ow` blocks of `components`): each block's
 * mean, rounded half up, to `out`, and 1 in `known` where it had pixels (0 and its bytes left as
 * they are where not); then the sums and counts are cleared for the next row. `halves` holds, for
 * every count a block can have, 1 / (2 x count) as f64: a block's mean is then a multiplication
 * rather than a division per component (a 150 ppi background of a 300 dpi page is 6.5 million of
 * them). floor((2 sum + count) x half + 1e-9) is the exact quotient's floor: the product is
 * within 2^-44 of the quotient (at most 256), and a quotient that is not whole is at least
 * 1 / (2 x count) above the integer below it, far more than the 1e-9 added.
 */
export function backgroundEmit(
  sums: usize,
  counts: usize,
  ow: i32,
  components: i32,
  out: usize,
  known: usize,
  halves: usize,
): void {
  for (let o = 0; o < ow; o++) {
    const count = load<u32>(counts + ((<usize>o) << 2));
    if (count === 0) continue;
    store<u8>(known + <usize>o, 1);
    const first = <usize>(o * components);
    if (count === 1) {
      for (let i = 0; i < components; i++) {
        store<u8>(out + first + <usize>i, <u8>load<u32>(sums + ((first + <usize>i) << 2)));
      }
      continue;
    }
    const half = load<f64>(halves + ((<usize>count) << 3));
    for (let i = 0; i < components; i++) {
      const sum = load<u32>(sums + ((first + <usize>i) << 2));
      store<u8>(out + first + <usize>i, <u8>(<u32>(<f64>(2 * sum + count) * half + 1e-9)));
    }
  }
  memory.fill(sums, 0, <usize>((ow * components) << 2));
  memory.fill(counts, 0, <usize>(ow << 2));
}
