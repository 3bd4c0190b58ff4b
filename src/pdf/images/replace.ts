// Writing an image's replacement into its stream (or, for layers, the form that draws them).
import type { PDFContext, PDFRawStream } from "@cantoo/pdf-lib";
import { PDFHexString, PDFName, PDFNumber } from "@cantoo/pdf-lib";
import { N } from "../streams/filters.ts";
import { writeLayered } from "./layers.ts";
import type { Replacement } from "./candidates.ts";

/** What a replacement stores: its data, or its layers with their form (some two hundred bytes more). */
export const bytesOf = (replacement: Replacement) =>
  replacement.layered ? replacement.layered.bytes + 200 : replacement.data.length;

/** Writes the replacement into the stream; returns the streams it added (a layered image's). */
export function replace(stream: PDFRawStream, replacement: Replacement, context: PDFContext): PDFRawStream[] {
  if (replacement.layered) return writeLayered(stream, replacement.layered, context);
  const { dict } = stream;
  const { indexed } = replacement;
  const bits = indexed?.bits ?? 8;
  dict.set(N.Filter, replacement.filter);
  if (replacement.predictor) {
    dict.set(
      N.DecodeParms,
      context.obj({
        Predictor: 15,
        Colors: replacement.predictor.colors,
        BitsPerComponent: bits,
        Columns: replacement.predictor.columns,
      }),
    );
  } else dict.delete(N.DecodeParms);
  dict.delete(N.DL);
  dict.set(N.Width, PDFNumber.of(replacement.size.width));
  dict.set(N.Height, PDFNumber.of(replacement.size.height));
  dict.set(N.BitsPerComponent, PDFNumber.of(bits));
  if (indexed) {
    const hival = indexed.palette.length / indexed.base.components - 1;
    const lookup = PDFHexString.of(Buffer.from(indexed.palette).toString("hex"));
    dict.set(N.ColorSpace, context.obj([PDFName.of("Indexed"), indexed.base.object, hival, lookup]));
  } else if (replacement.colour) dict.set(N.ColorSpace, replacement.colour.object);
  if (replacement.decode === null) dict.delete(N.Decode);
  else if (replacement.decode) dict.set(N.Decode, context.obj(replacement.decode));
  dict.set(N.Length, PDFNumber.of(replacement.data.length));
  stream.updateContents(replacement.data);
  return [];
}
