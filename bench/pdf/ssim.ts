// Structural similarity (SSIM) of two grayscale images, as defined by Wang, Bovik, Sheikh and
// Simoncelli (2004): an 11x11 Gaussian window with sigma 1.5, K1 = 0.01, K2 = 0.03, L = 255,
// averaged over every position where the window lies wholly inside the image (MATLAB's
// filter2 'valid'). No automatic downsampling: pages are rendered at a fixed 100 dpi, and
// comparing at that resolution is the stricter measure.
//
// The window is separable, so each image row is filtered horizontally once, into a ring of the
// 11 rows the vertical pass needs: memory stays at a few rows whatever the page size.

export interface GrayImage {
  width: number;
  height: number;
  /** width * height samples, row by row, 0 = black, 255 = white. */
  data: Uint8Array;
}

const WINDOW = 11;
const SIGMA = 1.5;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

function gaussianWindow(size: number, sigma: number): Float64Array {
  const weights = new Float64Array(size);
  const centre = (size - 1) / 2;
  let sum = 0;
  for (let i = 0; i < size; i++) {
    weights[i] = Math.exp(-((i - centre) ** 2) / (2 * sigma * sigma));
    sum += weights[i]!;
  }
  for (let i = 0; i < size; i++) weights[i]! /= sum;
  return weights;
}

const WEIGHTS = gaussianWindow(WINDOW, SIGMA);

function ssimOf(mx: number, my: number, sxx: number, syy: number, sxy: number): number {
  return ((2 * mx * my + C1) * (2 * sxy + C2)) / ((mx * mx + my * my + C1) * (sxx + syy + C2));
}

/** Images smaller than the window: one window over the whole image, uniformly weighted. */
function globalSsim(a: Uint8Array, b: Uint8Array): number {
  const n = a.length;
  let sa = 0;
  let sb = 0;
  for (let i = 0; i < n; i++) {
    sa += a[i]!;
    sb += b[i]!;
  }
  const mx = sa / n;
  const my = sb / n;
  let vxx = 0;
  let vyy = 0;
  let vxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = a[i]! - mx;
    const dy = b[i]! - my;
    vxx += dx * dx;
    vyy += dy * dy;
    vxy += dx * dy;
  }
  return ssimOf(mx, my, vxx / n, vyy / n, vxy / n);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}

/**
 * Mean SSIM of two images of the same size, in [-1, 1]; 1 means identical. Throws a RangeError
 * when the sizes differ (the caller decides what that means for a page).
 */
export function ssim(a: GrayImage, b: GrayImage): number {
  if (a.width !== b.width || a.height !== b.height) {
    throw new RangeError(`ssim: images differ in size (${a.width}x${a.height} and ${b.width}x${b.height})`);
  }
  const { width, height } = a;
  if (a.data.length !== width * height || b.data.length !== width * height) {
    throw new RangeError("ssim: data length is not width * height");
  }
  if (width === 0 || height === 0) throw new RangeError("ssim: empty image");
  // Identical pixels give exactly 1; most lossless pages take this path, and it saves the work.
  if (equalBytes(a.data, b.data)) return 1;
  if (width < WINDOW || height < WINDOW) return globalSsim(a.data, b.data);

  const outWidth = width - WINDOW + 1;
  const outHeight = height - WINDOW + 1;
  // ring[slot][q]: horizontally filtered row for quantity q = x, y, x², y², xy.
  const ring = Array.from({ length: WINDOW }, () => Array.from({ length: 5 }, () => new Float64Array(outWidth)));

  const filterRow = (y: number, slot: Float64Array[]) => {
    const [fx, fy, fxx, fyy, fxy] = slot as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
    const row = y * width;
    for (let x = 0; x < outWidth; x++) {
      let sx = 0;
      let sy = 0;
      let sxx = 0;
      let syy = 0;
      let sxy = 0;
      for (let k = 0; k < WINDOW; k++) {
        const w = WEIGHTS[k]!;
        const p = a.data[row + x + k]!;
        const q = b.data[row + x + k]!;
        sx += w * p;
        sy += w * q;
        sxx += w * p * p;
        syy += w * q * q;
        sxy += w * p * q;
      }
      fx[x] = sx;
      fy[x] = sy;
      fxx[x] = sxx;
      fyy[x] = syy;
      fxy[x] = sxy;
    }
  };

  for (let y = 0; y < WINDOW - 1; y++) filterRow(y, ring[y]!);
  let total = 0;
  for (let oy = 0; oy < outHeight; oy++) {
    const newest = oy + WINDOW - 1;
    filterRow(newest, ring[newest % WINDOW]!);
    const rows = Array.from({ length: WINDOW }, (_, k) => ring[(oy + k) % WINDOW]!);
    for (let x = 0; x < outWidth; x++) {
      let mx = 0;
      let my = 0;
      let exx = 0;
      let eyy = 0;
      let exy = 0;
      for (let k = 0; k < WINDOW; k++) {
        const w = WEIGHTS[k]!;
        const r = rows[k]!;
        mx += w * r[0]![x]!;
        my += w * r[1]![x]!;
        exx += w * r[2]![x]!;
        eyy += w * r[3]![x]!;
        exy += w * r[4]![x]!;
      }
      total += ssimOf(mx, my, exx - mx * mx, eyy - my * my, exy - mx * my);
    }
  }
  return total / (outWidth * outHeight);
}
