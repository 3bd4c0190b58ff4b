// Attachments deflated on the thread pool ahead of the stream pass (streams/recompress.ts:
// deflateAttachmentsAhead, recompressStreamsAfter): the stream pass then stores every stream in the
// bytes it stores it in without them, and reports the same.
import { describe, expect, it } from "vitest";
import { PDFDocument, PDFName, PDFRawStream, PDFString } from "@cantoo/pdf-lib";
import type { PDFContext } from "@cantoo/pdf-lib";
import { deflate } from "../../../src/pdf/streams/filters.ts";
import {
  deflateAttachmentsAhead,
  recompressStreams,
  recompressStreamsAfter,
} from "../../../src/pdf/streams/recompress.ts";
import { photoPixels } from "../fixtures.ts";

/** Text-like data that deflates, with photograph-like runs between: `length` bytes. */
function payload(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  const photo = photoPixels(512, 512, 1, seed);
  const words = new TextEncoder().encode(`obj << /Length ${seed} >> stream endstream endobj `);
  for (let i = 0; i < length; i++) out[i] = (i >> 12) % 3 === 0 ? photo[i % photo.length]! : words[i % words.length]!;
  return out;
}

/**
 * A document with attachments the three ways a file specification is found: an indirect one (its
 * stream stored deflated at level 1, as a writer in a hurry), one direct in an annotation's /FS,
 * one direct in a name tree's /Names (small, unfiltered); and a large stream no specification names.
 */
async function withAttachments(): Promise<{ context: PDFContext; streams: PDFRawStream[] }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const stream = (data: Uint8Array, dict: Record<string, string>) => {
    const made = PDFRawStream.of(context.obj(dict), data);
    return { made, ref: context.register(made) };
  };
  const large = stream(deflate(payload(900 * 1024, 1), 1), { Type: "EmbeddedFile", Filter: "FlateDecode" });
  const annotated = stream(payload(700 * 1024, 2), {});
  const small = stream(payload(20 * 1024, 3), { Type: "EmbeddedFile" });
  const unnamed = stream(payload(800 * 1024, 4), {});
  context.register(context.obj({ Type: "Filespec", F: "a.pdf", EF: { F: large.ref } }));
  context.register(
    context.obj({ Type: "Annot", Subtype: "FileAttachment", FS: { Type: "Filespec", EF: { UF: annotated.ref } } }),
  );
  const names = context.obj([]);
  names.push(PDFString.of("c.txt"));
  names.push(context.obj({ Type: "Filespec", EF: { F: small.ref } }));
  context.register(context.obj({ Names: names }));
  return { context, streams: [large.made, annotated.made, small.made, unnamed.made] };
}

describe("attachments deflated ahead of the stream pass", () => {
  it("finds the attachments of every kind of file specification, and only those", async () => {
    const { context, streams } = await withAttachments();
    const ahead = deflateAttachmentsAhead(context);
    // The two over the probe's size go to the thread pool; the small one is worked out at once.
    expect([...ahead.streams]).toEqual([streams[0], streams[1]]);
    await ahead.done;
  });

  it("leaves every stream in the bytes the stream pass alone stores it in, with the same report", async () => {
    const plain = await withAttachments();
    const report = recompressStreams(plain.context);
    const ahead = await withAttachments();
    const after = await recompressStreamsAfter(ahead.context, {}, deflateAttachmentsAhead(ahead.context));
    expect(after).toEqual(report);
    for (const [i, stream] of ahead.streams.entries()) {
      const expected = plain.streams[i]!;
      expect(Buffer.from(stream.contents).equals(Buffer.from(expected.contents))).toBe(true);
      expect(String(stream.dict.get(PDFName.of("Filter")))).toBe(String(expected.dict.get(PDFName.of("Filter"))));
    }
    expect(plain.streams[0]!.contents.length).toBeLessThan(deflate(payload(900 * 1024, 1), 1).length);
  });
});
