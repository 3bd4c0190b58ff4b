// The PNG predictors as the engine wrote them in JavaScript before they moved to WebAssembly
// (src/pdf/streams/assembly/png.ts): the definitions png-wasm.test.ts compares the module's bytes
// with, and with which png-predictors.test.ts checks that a filter applied again gives its rows back.

/**
 * A row of samples under one PNG filter (0-4: None, Sub, Up, Average, Paeth), `up` the row above
 * (zeros for the first), written into `out` from `at`: what `unpngRow` undoes.
 */
export function pngFilterRow(
  type: number,
  row: Uint8Array,
  up: Uint8Array,
  bpp: number,
  out: Uint8Array,
  at: number,
): void {
  const length = row.length;
  const head = Math.min(bpp, length);
  if (type === 0) {
    out.set(row, at);
  } else if (type === 1) {
    for (let i = 0; i < head; i++) out[at + i] = row[i]!;
    for (let i = head, j = 0; i < length; i++, j++) out[at + i] = (row[i]! - row[j]!) & 0xff;
  } else if (type === 2) {
    for (let i = 0; i < length; i++) out[at + i] = (row[i]! - up[i]!) & 0xff;
  } else if (type === 3) {
    for (let i = 0; i < head; i++) out[at + i] = (row[i]! - (up[i]! >> 1)) & 0xff;
    for (let i = head, j = 0; i < length; i++, j++) out[at + i] = (row[i]! - ((row[j]! + up[i]!) >> 1)) & 0xff;
  } else {
    for (let i = 0; i < head; i++) out[at + i] = (row[i]! - up[i]!) & 0xff;
    for (let i = head, j = 0; i < length; i++, j++) {
      const a = row[j]!;
      const b = up[i]!;
      const c = up[j]!;
      const da = b - c;
      const db = a - c;
      const dc = da + db;
      const pa = da < 0 ? -da : da;
      const pb = db < 0 ? -db : db;
      const pc = dc < 0 ? -dc : dc;
      out[at + i] = (row[i]! - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff;
    }
  }
}

/** pngPredict (src/pdf/streams/recompress.ts) as it was: the type of each row by the smallest sum of absolute differences. */
export function plainPngPredict(
  samples: Uint8Array,
  layout: { colors: number; bitsPerComponent: number; rowBytes: number; rows: number },
  from = 0,
  to = layout.rows,
): Uint8Array {
  const { rowBytes } = layout;
  const bpp = Math.max(1, (layout.colors * layout.bitsPerComponent) / 8);
  const out = new Uint8Array((to - from) * (rowBytes + 1));
  const trial = [1, 2, 3, 4].map(() => new Uint8Array(rowBytes));
  const zero = new Uint8Array(rowBytes);
  for (let r = from; r < to; r++) {
    const row = samples.subarray(r * rowBytes, (r + 1) * rowBytes);
    const up = r > 0 ? samples.subarray((r - 1) * rowBytes, r * rowBytes) : zero;
    // 0: None
    let best = 0;
    let bestRow = row;
    let bestSum = 0;
    for (let i = 0; i < rowBytes; i++) {
      const v = row[i]!;
      bestSum += v < 128 ? v : 256 - v;
    }
    const sub = trial[0]!;
    const upRow = trial[1]!;
    const average = trial[2]!;
    const paeth = trial[3]!;
    let sumSub = 0;
    let sumUp = 0;
    let sumAverage = 0;
    let sumPaeth = 0;
    for (let i = 0; i < rowBytes; i++) {
      const x = row[i]!;
      const a = i >= bpp ? row[i - bpp]! : 0;
      const b = up[i]!;
      const c = i >= bpp ? up[i - bpp]! : 0;
      const p = a + b - c;
      const pa = p > a ? p - a : a - p;
      const pb = p > b ? p - b : b - p;
      const pc = p > c ? p - c : c - p;
      const predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const s = (x - a) & 0xff;
      const u = (x - b) & 0xff;
      const v = (x - ((a + b) >> 1)) & 0xff;
      const w = (x - predictor) & 0xff;
      sub[i] = s;
      upRow[i] = u;
      average[i] = v;
      paeth[i] = w;
      sumSub += s < 128 ? s : 256 - s;
      sumUp += u < 128 ? u : 256 - u;
      sumAverage += v < 128 ? v : 256 - v;
      sumPaeth += w < 128 ? w : 256 - w;
    }
    if (sumSub < bestSum) [best, bestRow, bestSum] = [1, sub, sumSub];
    if (sumUp < bestSum) [best, bestRow, bestSum] = [2, upRow, sumUp];
    if (sumAverage < bestSum) [best, bestRow, bestSum] = [3, average, sumAverage];
    if (sumPaeth < bestSum) [best, bestRow] = [4, paeth];
    out[(r - from) * (rowBytes + 1)] = best;
    out.set(bestRow, (r - from) * (rowBytes + 1) + 1);
  }
  return out;
}
