// The invisible text layer of one page, from the words recognised on its image: a content stream
// drawn in the image's own pixel space (its placement on the page times one pixel per unit), in
// text render mode 3 (neither filled nor stroked: it never moves a pixel), one word per Tj on its
// box as OCRmyPDF places them (hocrtransform.py): the font size is the line's height, the word
// starts at its box's left on the line's baseline (turned with it when the line is skewed), and
// horizontal scaling (Tz) stretches it to its box, so that selecting it covers the printed word.
// A word but the line's last carries a space stretched to the next word, so that copying gives
// "a b" rather than "ab". The codes are the text's UTF-16 code units (glyphless-font.ts).
import { formatNumber } from "../shared/content-tokens.ts";
import type { Matrix } from "../shared/placement.ts";
import { GLYPH_WIDTH } from "./glyphless-font.ts";

/** A box in image pixels, y downwards (x0, y0 the top left). */
export interface PixelBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface OcrWord {
  text: string;
  box: PixelBox;
}

export interface OcrLine {
  box: PixelBox;
  /** The baseline from (x0, y0) to (x1, y1), in pixels, y downwards. */
  baseline: { x0: number; y0: number; x1: number; y1: number };
  /** The font size the line's text is set at, in pixels: its row height when known, else its box's height. */
  size: number;
  words: OcrWord[];
}

const num = (value: number) => formatNumber(value, 3);
const fine = (value: number) => formatNumber(value, 6);

/** The word's text as two-byte codes in hex (characters outside the BMP left out). */
function hexCodes(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdfff) continue;
    out += unit.toString(16).padStart(4, "0");
  }
  return out;
}

/**
 * The content that draws the lines' words invisibly over an image of `width` x `height` pixels
 * drawn with `placement` (the CTM that maps the unit square onto the page). Starts and ends with
 * q / Q; `font` is the resource name of the glyphless font. Empty when there is no word.
 */
export function textLayerContent(
  lines: readonly OcrLine[],
  width: number,
  height: number,
  placement: Matrix,
  font: string,
): string {
  const [a, b, c, d, e, f] = placement;
  // Pixels (y upwards from the image's bottom) onto the page: pixel space, then the placement.
  const ops: string[] = [
    "q",
    `${fine(a / width)} ${fine(b / width)} ${fine(c / height)} ${fine(d / height)} ${fine(e)} ${fine(f)} cm`,
    "BT",
    "3 Tr",
  ];
  let drawn = 0;
  for (const line of lines) {
    const words = line.words.filter((word) => hexCodes(word.text.trim()).length > 0);
    if (words.length === 0) continue;
    const size = Math.max(1, line.size);
    const { baseline } = line;
    const run = baseline.x1 - baseline.x0;
    const slope = run > 0 ? (baseline.y1 - baseline.y0) / run : 0;
    // y downwards in the image, so an angle seen upwards is the slope's opposite.
    const angle = Math.atan(-slope);
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    ops.push(`/${font} ${num(size)} Tf`);
    words.forEach((word, i) => {
      const next = words[i + 1];
      const text = next ? `${word.text.trim()} ` : word.text.trim();
      const codes = hexCodes(text);
      const glyphs = codes.length / 4;
      const span = next ? next.box.x0 - word.box.x0 : word.box.x1 - word.box.x0;
      const natural = (glyphs * GLYPH_WIDTH * size) / 1000;
      const scale = span > 0 && natural > 0 ? (100 * span) / natural : 100;
      const x = word.box.x0;
      const yDown = baseline.y0 + slope * (x - baseline.x0);
      ops.push(`${num(scale)} Tz`);
      ops.push(`${num(cos)} ${num(sin)} ${num(-sin)} ${num(cos)} ${num(x)} ${num(height - yDown)} Tm`);
      ops.push(`<${codes}> Tj`);
      drawn++;
    });
  }
  if (drawn === 0) return "";
  ops.push("ET", "Q");
  return ops.join("\n") + "\n";
}
