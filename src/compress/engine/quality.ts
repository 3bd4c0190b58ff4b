// A check of what a recoded image will look like on screen. The image is drawn, as a PDF renderer
// draws it, at the size the pages give it at 100 dpi (a screen), before and after; the two
// renderings must stay structurally similar (SSIM) above a floor.
//
// Renderers resample images to the device grid with simple filters, and those filters are where
// resampled text and line art lose most: an image at 150 ppi shown at 100 dpi aliases where the
// 300 ppi original did not. The drawing here is poppler's (Splash, as used by pdftoppm): box
// averages over whole source pixels when shrinking, bilinear from the pixel's corner when
// enlarging; it matches pdftoppm's output to an SSIM of 0.999 for gray images. The device size of
// an image depends on where it sits on the grid (it can be a pixel wider or narrower), so both
// sizes are drawn and the worse counts.
import type { Pixels } from "./codecs.ts";
import type { Placement } from "./placement.ts";

/** The screen resolution the check draws at, in dpi. */
const DPI = 100;
/** Images drawn smaller than this many device pixels are not worth checking. */
const MIN_DEVICE_PIXELS = 24 * 24;
/** SSIM windows are 2 x 2 cells of this many pixels square. */
const CELL = 4;
/** At the first device size, a candidate this far above the floor is taken without the other. */
const CLEAR_MARGIN = 0.02;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

/** Luminance as renderers compute gray (0.3 R + 0.59 G + 0.11 B; CMYK through 1 - min(1, K + ...)). */
export function luminance(pixels: Pixels): Uint8Array {
  const { data, components } = pixels;
  const count = pixels.width * pixels.height;
  if (components === 1) return data.subarray(0, count);
  const out = new Uint8Array(count);
  if (components === 3) {
    for (let p = 0, i = 0; p < count; p++, i += 3)
      out[p] = (77 * data[i]! + 151 * data[i + 1]! + 28 * data[i + 2]! + 128) >> 8;
  } else {
    for (let p = 0, i = 0; p < count; p++, i += 4) {
      const ink = (77 * data[i]! + 151 * data[i + 1]! + 28 * data[i + 2]! + 128) / 256 + data[i + 3]!;
      out[p] = ink >= 255 ? 0 : 255 - Math.round(ink);
    }
  }
  return out;
}

/** Shrinks by averaging whole source pixels, as many as fall to each device pixel (Splash's way). */
function shrink(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  const out = new Uint8Array(dw * dh);
  const yp = Math.floor(sh / dh);
  const yq = sh % dh;
  const xp = Math.floor(sw / dw);
  const xq = sw % dw;
  // Column runs are the same on every row.
  const xSteps = new Uint32Array(dw);
  for (let x = 0, xt = 0; x < dw; x++) {
    xt += xq;
    xSteps[x] = xp + (xt >= dw ? 1 : 0);
    if (xt >= dw) xt -= dw;
  }
  const sums = new Uint32Array(dw);
  for (let y = 0, yt = 0, sy = 0; y < dh; y++) {
    yt += yq;
    const yStep = yp + (yt >= dh ? 1 : 0);
    if (yt >= dh) yt -= dh;
    sums.fill(0);
    for (let j = 0; j < yStep; j++) {
      const row = (sy + j) * sw;
      for (let x = 0, sx = row; x < dw; x++) {
        let s = 0;
        const end = sx + xSteps[x]!;
        for (; sx < end; sx++) s += src[sx]!;
        sums[x] = sums[x]! + s;
      }
    }
    for (let x = 0; x < dw; x++) out[y * dw + x] = Math.round(sums[x]! / (xSteps[x]! * yStep));
    sy += yStep;
  }
  return out;
}

/** Bilinear enlargement as Splash does it: source position x * (sw / dw), fractions truncated. */
function enlarge(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  const out = new Uint8Array(dw * dh);
  const xs = sw / dw;
  const ys = sh / dh;
  const x0s = new Int32Array(dw);
  const wxs = new Float64Array(dw);
  for (let x = 0; x < dw; x++) {
    const fx = x * xs;
    x0s[x] = Math.min(sw - 1, Math.floor(fx));
    wxs[x] = fx - Math.floor(fx);
  }
  // Source rows expanded across, two at a time (consecutive device rows share them).
  let rowA = new Uint8Array(dw);
  let rowB = new Uint8Array(dw);
  let rowAIs = -1;
  let rowBIs = -1;
  const expand = (row: number, into: Uint8Array) => {
    const base = row * sw;
    for (let x = 0; x < dw; x++) {
      const p = x0s[x]!;
      const next = Math.min(sw - 1, p + 1);
      into[x] = src[base + p]! * (1 - wxs[x]!) + src[base + next]! * wxs[x]!;
    }
  };
  for (let y = 0; y < dh; y++) {
    const fy = y * ys;
    const y0 = Math.min(sh - 1, Math.floor(fy));
    const y1 = Math.min(sh - 1, y0 + 1);
    const wy = fy - Math.floor(fy);
    if (rowAIs !== y0) {
      if (rowBIs === y0) {
        [rowA, rowB] = [rowB, rowA];
        rowAIs = y0;
        rowBIs = -1;
      } else {
        expand(y0, rowA);
        rowAIs = y0;
      }
    }
    if (rowBIs !== y1) {
      expand(y1, rowB);
      rowBIs = y1;
    }
    for (let x = 0; x < dw; x++) out[y * dw + x] = rowA[x]! * (1 - wy) + rowB[x]! * wy;
  }
  return out;
}

/** Draws gray samples at a device size, with the renderer's filters (axis by axis when mixed). */
export function drawAt(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  if (dw <= sw && dh <= sh) return shrink(src, sw, sh, dw, dh);
  if (dw >= sw && dh >= sh) return enlarge(src, sw, sh, dw, dh);
  const across = dw <= sw ? shrink(src, sw, sh, dw, sh) : enlarge(src, sw, sh, dw, sh);
  return dh <= sh ? shrink(across, dw, sh, dw, dh) : enlarge(across, dw, sh, dw, dh);
}

/**
 * Mean SSIM over 8 x 8 windows (uniform weights) placed every 4 pixels: sums over 4 x 4 cells,
 * then windows of 2 x 2 cells. Linear time, little memory.
 */
export function ssim(a: Uint8Array, b: Uint8Array, width: number, height: number): number {
  const cw = Math.floor(width / CELL);
  const ch = Math.floor(height / CELL);
  if (cw < 2 || ch < 2) {
    let same = 0;
    for (let i = 0; i < a.length; i++) if (Math.abs(a[i]! - b[i]!) <= 2) same++;
    return a.length === 0 ? 1 : same / a.length;
  }
  const cells = cw * ch;
  const sa = new Float64Array(cells);
  const sb = new Float64Array(cells);
  const saa = new Float64Array(cells);
  const sbb = new Float64Array(cells);
  const sab = new Float64Array(cells);
  for (let y = 0; y < ch * CELL; y++) {
    const row = y * width;
    const cellRow = Math.floor(y / CELL) * cw;
    for (let cx = 0; cx < cw; cx++) {
      let ra = 0;
      let rb = 0;
      let raa = 0;
      let rbb = 0;
      let rab = 0;
      for (let i = row + cx * CELL, end = i + CELL; i < end; i++) {
        const p = a[i]!;
        const q = b[i]!;
        ra += p;
        rb += q;
        raa += p * p;
        rbb += q * q;
        rab += p * q;
      }
      const c = cellRow + cx;
      sa[c] = sa[c]! + ra;
      sb[c] = sb[c]! + rb;
      saa[c] = saa[c]! + raa;
      sbb[c] = sbb[c]! + rbb;
      sab[c] = sab[c]! + rab;
    }
  }
  const n = 4 * CELL * CELL;
  const quad = (s: Float64Array, c: number) => s[c]! + s[c + 1]! + s[c + cw]! + s[c + cw + 1]!;
  let total = 0;
  let count = 0;
  for (let cy = 0; cy + 1 < ch; cy++) {
    for (let cx = 0; cx + 1 < cw; cx++) {
      const c = cy * cw + cx;
      const ma = quad(sa, c) / n;
      const mb = quad(sb, c) / n;
      const va = quad(saa, c) / n - ma * ma;
      const vb = quad(sbb, c) / n - mb * mb;
      const cov = quad(sab, c) / n - ma * mb;
      total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      count++;
    }
  }
  return total / count;
}

/** Gray samples, one per pixel. */
export interface Gray {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Compares recoded versions of one image with the original, as drawn at `placement`. */
export class QualityCheck {
  private readonly original: Uint8Array;
  private readonly width: number;
  private readonly height: number;
  private readonly placement: Placement;
  private readonly floor: number;
  private readonly references = new Map<number, Uint8Array>();

  /**
   * `original`: the image as it is now, as pixels or as its luminance (one sample per pixel, as
   * `luminance` computes it).
   */
  constructor(original: Pixels | Gray, placement: Placement, floor: number) {
    this.original = "components" in original ? luminance(original) : original.data;
    this.width = original.width;
    this.height = original.height;
    this.placement = placement;
    this.floor = floor;
  }

  /** The image's possible device sizes at the check's resolution: rounded down, then up. */
  private deviceSizes(): [number, number][] {
    const w = (this.placement.width / 72) * DPI;
    const h = (this.placement.height / 72) * DPI;
    const low: [number, number] = [Math.max(1, Math.floor(w)), Math.max(1, Math.floor(h))];
    const high: [number, number] = [Math.max(1, Math.ceil(w)), Math.max(1, Math.ceil(h))];
    return low[0] === high[0] && low[1] === high[1] ? [low] : [low, high];
  }

  /** The worst SSIM of `candidate` against the original over the device sizes (1 if too small to matter). */
  similarity(candidate: Pixels): number {
    const gray = luminance(candidate);
    let worst = 1;
    for (const [dw, dh] of this.deviceSizes()) {
      if (dw * dh < MIN_DEVICE_PIXELS) return 1;
      const key = dw * 65536 + dh;
      let reference = this.references.get(key);
      if (!reference) {
        reference = drawAt(this.original, this.width, this.height, dw, dh);
        this.references.set(key, reference);
      }
      const drawn = drawAt(gray, candidate.width, candidate.height, dw, dh);
      worst = Math.min(worst, ssim(reference, drawn, dw, dh));
      if (worst < this.floor || worst >= this.floor + CLEAR_MARGIN) return worst;
    }
    return worst;
  }

  passes(candidate: Pixels): boolean {
    return this.similarity(candidate) >= this.floor;
  }
}
