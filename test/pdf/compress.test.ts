import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString } from "@cantoo/pdf-lib";
import { compressPdf, PdfRejected, PROFILE_SETTINGS, unlockPdf } from "../../src/pdf/index.ts";
import type { CompressionProfile, CompressionReport, PdfRejectedCode } from "../../src/pdf/index.ts";
import { decodeStreamData } from "../../src/pdf/streams/filters.ts";
import { findCrossReferenceProblem } from "../../src/pdf/structure/xref.ts";
import { flateImage, imageStreams, jpegOf, photoPdf, photoPixels, place, textPdf } from "./fixtures.ts";
import type { PhotoPdf } from "./fixtures.ts";

async function rejection(promise: Promise<unknown>): Promise<PdfRejected> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PdfRejected);
  return error as PdfRejected;
}

async function expectCode(promise: Promise<unknown>, code: PdfRejectedCode): Promise<PdfRejected> {
  const error = await rejection(promise);
  expect(error.code).toBe(code);
  return error;
}

/** A plain load: no password, no ignoreEncryption (it throws on any encryption). */
async function plainLoad(bytes: Uint8Array) {
  const doc = await PDFDocument.load(bytes);
  expect(findCrossReferenceProblem(bytes, doc.context, 0)).toBeUndefined();
  return doc;
}

/**
 * The decoded data (through all filters and predictors) of each image XObject with lossless
 * filters, by object number: what a reader draws, however the stream is stored.
 */
async function imageSamples(bytes: Uint8Array): Promise<Map<number, Uint8Array>> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const samples = new Map<number, Uint8Array>();
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream) || object.dict.lookup(PDFName.of("Subtype")) !== PDFName.of("Image"))
      continue;
    const data = decodeStreamData(object, 512 * 1024 * 1024, { predictors: true });
    if (data) samples.set(ref.objectNumber, throughPalette(object, data));
  }
  return samples;
}

/** The colours of an 8-bit Indexed image's indices (the engine may store a graphic so), else the data. */
function throughPalette(image: PDFRawStream, data: Uint8Array): Uint8Array {
  const space = image.dict.lookup(PDFName.of("ColorSpace"));
  if (!(space instanceof PDFArray) || space.lookup(0) !== PDFName.of("Indexed")) return data;
  if (String(image.dict.lookup(PDFName.of("BitsPerComponent"))) !== "8") return data;
  const lookup = space.lookup(3);
  if (!(lookup instanceof PDFHexString || lookup instanceof PDFString)) return data;
  const palette = lookup.asBytes();
  const n = space.lookup(1) === PDFName.of("DeviceGray") ? 1 : space.lookup(1) === PDFName.of("DeviceCMYK") ? 4 : 3;
  const out = new Uint8Array(data.length * n);
  for (let i = 0; i < data.length; i++) out.set(palette.subarray(data[i]! * n, data[i]! * n + n), i * n);
  return out;
}

const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  a !== undefined && b !== undefined && Buffer.from(a).equals(Buffer.from(b));

let photo: PhotoPdf;
const outputs = new Map<CompressionProfile, Uint8Array>();

beforeAll(async () => {
  photo = await photoPdf();
  for (const profile of ["lossless", "balanced", "extreme"] as const) {
    outputs.set(profile, (await compressPdf(photo.bytes, profile)).output);
  }
}, 120_000);

describe("compressPdf on generated photographs", () => {
  it("balanced and extreme make the file much smaller, keep the pages, and the output loads", async () => {
    const balanced = outputs.get("balanced")!;
    const extreme = outputs.get("extreme")!;
    expect(balanced.length).toBeLessThan(photo.bytes.length * 0.5);
    expect(extreme.length).toBeLessThan(balanced.length);
    for (const output of [balanced, extreme]) {
      expect((await plainLoad(output)).getPageCount()).toBe(2);
    }
    const result = await compressPdf(photo.bytes, "balanced");
    expect(result.pages).toBe(2);
  });

  it("downsamples to the profile's longest side and re-encodes as JPEG", async () => {
    for (const profile of ["balanced", "extreme"] as const) {
      const images = await imageStreams(outputs.get(profile)!);
      const maxSide = PROFILE_SETTINGS[profile].images!.maxSide;
      const jpeg = images.get(photo.refs.jpeg.objectNumber)!;
      expect(jpeg.filter).toBe("/DCTDecode");
      // Downsampled (how far depends on the size the page draws it at), never above maxSide
      expect(Math.max(jpeg.width, jpeg.height)).toBeLessThanOrEqual(maxSide);
      const meta = await sharp(jpeg.data).metadata();
      expect([meta.width, meta.height, meta.channels]).toEqual([jpeg.width, jpeg.height, 3]);
      // The Flate photograph became a JPEG (at 1400 px it is within balanced's limit).
      const flate = images.get(photo.refs.flate.objectNumber)!;
      expect(flate.filter).toBe("/DCTDecode");
      expect(Math.max(flate.width, flate.height)).toBeLessThanOrEqual(Math.min(1400, maxSide));
    }
  });

  it("keeps line art lossless and leaves soft masks alone", async () => {
    const after = await imageStreams(outputs.get("balanced")!);
    expect(after.get(photo.refs.lineArt.objectNumber)!.filter).toBe("/FlateDecode");
    // The mask keeps its samples (it may be stored with a predictor now)
    const maskBefore = (await imageSamples(photo.bytes)).get(photo.refs.mask.objectNumber);
    const maskAfter = (await imageSamples(outputs.get("balanced")!)).get(photo.refs.mask.objectNumber);
    expect(same(maskAfter, maskBefore)).toBe(true);
    // The masked image itself is a photograph and may be recoded; its /SMask still points at the mask.
    const doc = await PDFDocument.load(outputs.get("balanced")!);
    const masked = doc.context.lookup(photo.refs.masked);
    expect(masked).toBeInstanceOf(PDFRawStream);
    expect((masked as PDFRawStream).dict.get(PDFName.of("SMask"))).toBe(photo.refs.mask);
  });

  it("lossless leaves every image's samples and every JPEG's pixels as they were", async () => {
    const output = outputs.get("lossless")!;
    expect(output.length).toBeLessThanOrEqual(photo.bytes.length);
    const before = await imageStreams(photo.bytes);
    const after = await imageStreams(output);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const samplesBefore = await imageSamples(photo.bytes);
    const samplesAfter = await imageSamples(output);
    for (const [number, image] of before) {
      const kept = after.get(number)!;
      expect([kept.width, kept.height]).toEqual([image.width, image.height]);
      if (image.filter === "/DCTDecode") {
        // Its Huffman tables may be new: the pixels are the same.
        expect(kept.filter).toBe("/DCTDecode");
        const pixels = async (jpeg: Uint8Array) => sharp(jpeg).raw().toBuffer();
        expect((await pixels(kept.data)).equals(await pixels(image.data))).toBe(true);
      } else {
        expect(same(samplesAfter.get(number), samplesBefore.get(number))).toBe(true);
      }
    }
    // The Flate photographs got a PNG predictor, which makes them smaller
    const flate = photo.refs.flate.objectNumber;
    expect(after.get(flate)!.data.length).toBeLessThan(before.get(flate)!.data.length);
    expect((await plainLoad(output)).getPageCount()).toBe(2);
  });

  it("lossless Flate-compresses unfiltered image samples without changing them", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([300, 300]);
    const pixels = photoPixels(300, 200, 3, 9);
    const raw = doc.context.register(
      doc.context.stream(pixels, {
        Type: "XObject",
        Subtype: "Image",
        Width: 300,
        Height: 200,
        ColorSpace: "DeviceRGB",
        BitsPerComponent: 8,
      }),
    );
    place(page, raw, 0, 0, 300, 200);
    const input = await doc.save({ useObjectStreams: false });
    const { output } = await compressPdf(input, "lossless");
    expect(output.length).toBeLessThan(input.length);
    const image = (await imageStreams(output)).get(raw.objectNumber)!;
    expect(image.filter).toBe("/FlateDecode");
    expect(same((await imageSamples(output)).get(raw.objectNumber), pixels)).toBe(true);
  });

  it("lossless gives JPEGs made with the standard Huffman tables optimal ones, pixels unchanged", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([400, 300]);
    const pixels = photoPixels(800, 600, 3, 12);
    // As scanners and cameras write them: the generic tables of the standard
    const generic = new Uint8Array(
      await sharp(pixels, { raw: { width: 800, height: 600, channels: 3 } })
        .jpeg({ quality: 90, optimiseCoding: false })
        .toBuffer(),
    );
    const image = await doc.embedJpg(generic);
    page.drawImage(image, { x: 0, y: 0, width: 400, height: 300 });
    const input = await doc.save({ useObjectStreams: false });
    const { output } = await compressPdf(input, "lossless");
    const stored = (await imageStreams(output)).get(image.ref.objectNumber)!;
    expect(stored.filter).toBe("/DCTDecode");
    expect(stored.data.length).toBeLessThan(generic.length * 0.97);
    const decode = (jpeg: Uint8Array) => sharp(jpeg).raw().toBuffer();
    expect((await decode(stored.data)).equals(await decode(generic))).toBe(true);
    expect(output.length).toBeLessThan(input.length);
  });

  it("keeps flat-colour images lossless even when their stored form is weak (RunLength)", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([400, 400]);
    const bars = new Uint8Array(400 * 480 * 3);
    for (let i = 0; i < 400 * 480; i++) bars.set(i < 400 * 240 ? [255, 0, 0] : [0, 0, 255], i * 3);
    // RunLength with literal runs only: about as large as the samples themselves
    const runs: number[] = [];
    for (let i = 0; i < bars.length; i += 128)
      runs.push(Math.min(128, bars.length - i) - 1, ...bars.subarray(i, i + 128));
    runs.push(128);
    const raw = doc.context.register(
      doc.context.stream(new Uint8Array(runs), {
        Type: "XObject",
        Subtype: "Image",
        Width: 400,
        Height: 480,
        ColorSpace: "DeviceRGB",
        BitsPerComponent: 8,
        Filter: "RunLengthDecode",
      }),
    );
    place(page, raw, 0, 0, 400, 400);
    const { output } = await compressPdf(await doc.save({ useObjectStreams: false }), "extreme");
    const image = (await imageStreams(output)).get(raw.objectNumber)!;
    expect(image.filter).toBe("/FlateDecode");
    expect(same((await imageSamples(output)).get(raw.objectNumber), bars)).toBe(true);
  });

  it("never returns more bytes than it was given", async () => {
    const once = outputs.get("extreme")!;
    for (const profile of ["lossless", "balanced", "extreme"] as const) {
      const again = await compressPdf(once, profile);
      expect(again.output.length).toBeLessThanOrEqual(once.length);
      expect(again.pages).toBe(2);
    }
    const tiny = await textPdf(1);
    const result = await compressPdf(tiny, "lossless");
    expect(result.output.length).toBeLessThanOrEqual(tiny.length);
  });

  it("keeps grayscale images grayscale", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([612, 792]);
    const gray = flateImage(doc, photoPixels(2500, 1500, 1, 5), 2500, 1500, "DeviceGray");
    place(page, gray, 0, 0, 612, 367);
    const grayJpeg = await doc.embedJpg(await jpegOf(photoPixels(2200, 1400, 1, 6), 2200, 1400, 1));
    page.drawImage(grayJpeg, { x: 0, y: 400, width: 612, height: 389 });
    const input = await doc.save();
    const { output } = await compressPdf(input, "balanced");
    expect(output.length).toBeLessThan(input.length / 2);
    const images = await imageStreams(output);
    for (const ref of [gray, grayJpeg.ref]) {
      const image = images.get(ref.objectNumber)!;
      expect(image.filter).toBe("/DCTDecode");
      expect((await sharp(image.data).metadata()).channels).toBe(1);
    }
  });
});

describe("compressPdf structure", () => {
  it("drops objects nothing refers to and writes object streams", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.addPage([200, 200]).drawText("kept", { x: 10, y: 100 });
    const orphan = doc.context.register(doc.context.obj({ Orphan: PDFString.of("x".repeat(5000)) }));
    const input = await doc.save({ useObjectStreams: false });
    const { output } = await compressPdf(input, "lossless");
    expect(output.length).toBeLessThan(input.length);
    const plain = await plainLoad(output);
    const orphans = plain.context
      .enumerateIndirectObjects()
      .filter(([, object]) => object instanceof PDFDict && object.has(PDFName.of("Orphan")));
    expect(orphans).toEqual([]);
    expect(orphan.objectNumber).toBeGreaterThan(0);
    expect(Buffer.from(output).toString("latin1")).toContain("/Type /ObjStm");
  });

  it("balanced and extreme drop other applications' private data; lossless keeps it", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([200, 200]);
    page.drawText("drawn", { x: 10, y: 100 });
    const privateData = doc.context.register(doc.context.flateStream(photoPixels(300, 300, 3, 11)));
    const pieceInfo = doc.context.obj({ Illustrator: { LastModified: PDFString.of("D:2024"), Private: privateData } });
    page.node.set(PDFName.of("PieceInfo"), pieceInfo);
    const input = await doc.save({ useObjectStreams: false });
    const kept = await plainLoad((await compressPdf(input, "lossless")).output);
    expect(kept.getPage(0).node.has(PDFName.of("PieceInfo"))).toBe(true);
    const { output } = await compressPdf(input, "balanced");
    expect(output.length).toBeLessThan(input.length / 4);
    expect((await plainLoad(output)).getPage(0).node.has(PDFName.of("PieceInfo"))).toBe(false);
  });

  it("writes PDF/A-1 files without object streams (the standard forbids them)", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.addPage([200, 200]).drawText("archival", { x: 10, y: 100 });
    const xmp =
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
      '<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="1" pdfaid:conformance="B"/>' +
      "</rdf:RDF></x:xmpmeta>";
    const metadata = doc.context.stream(xmp, { Type: "Metadata", Subtype: "XML" });
    doc.catalog.set(PDFName.of("Metadata"), doc.context.register(metadata));
    doc.context.register(doc.context.obj({ Orphan: PDFString.of("y".repeat(5000)) }));
    const input = await doc.save({ useObjectStreams: false });
    const { output } = await compressPdf(input, "balanced");
    expect(output.length).toBeLessThan(input.length);
    const text = Buffer.from(output).toString("latin1");
    expect(text).not.toContain("/ObjStm");
    expect(text).toContain('pdfaid:part="1"'); // the metadata stays readable text
    expect((await plainLoad(output)).getPageCount()).toBe(1);
  });

  it("leaves images it does not fully understand as they are (lossless re-encoding at most)", async () => {
    // What images/optimise.ts leaves alone: 1-bit images, colour-key masking, stencil masks.
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([612, 792]);
    const bits = photoPixels(1600, 1200, 1, 7)
      .map((v) => (v & 1 ? 0xff : 0x0f))
      .subarray(0, 200 * 1200);
    const image = (extra: Record<string, unknown>, data: Uint8Array, width: number, height: number) =>
      doc.context.register(
        doc.context.flateStream(data, { Type: "XObject", Subtype: "Image", Width: width, Height: height, ...extra }),
      );
    const oneBit = image({ ColorSpace: "DeviceGray", BitsPerComponent: 1 }, bits, 1600, 1200);
    const keyed = image(
      { ColorSpace: "DeviceRGB", BitsPerComponent: 8, Mask: [0, 10, 0, 10, 0, 10] },
      photoPixels(1400, 1000, 3, 8),
      1400,
      1000,
    );
    const stencil = image({ ImageMask: true }, bits, 1600, 1200);
    for (const [i, ref] of [oneBit, keyed, stencil].entries()) place(page, ref, 0, i * 250, 300, 200);
    const input = await doc.save({ useObjectStreams: false });
    const before = await imageStreams(input);
    const output = (await compressPdf(input, "extreme")).output;
    const after = await imageStreams(output);
    const samplesBefore = await imageSamples(input);
    const samplesAfter = await imageSamples(output);
    for (const ref of [oneBit, keyed, stencil]) {
      const kept = after.get(ref.objectNumber)!;
      expect([kept.width, kept.height]).toEqual([
        before.get(ref.objectNumber)!.width,
        before.get(ref.objectNumber)!.height,
      ]);
      expect(kept.filter).toBe("/FlateDecode");
      expect(same(samplesAfter.get(ref.objectNumber), samplesBefore.get(ref.objectNumber))).toBe(true);
    }
  });
});

describe("compressPdf refusals", () => {
  it("PdfRejected is an Error with a stable code", () => {
    const error = new PdfRejected("corrupted_pdf", "broken");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("PdfRejected");
    expect(error.code).toBe("corrupted_pdf");
  });

  it("refuses what is not a PDF", async () => {
    await expectCode(compressPdf(new Uint8Array(0), "balanced"), "not_a_pdf");
    await expectCode(compressPdf(new TextEncoder().encode("<html><body>hello</body></html>"), "balanced"), "not_a_pdf");
    const junk = new Uint8Array(4096).map((_, i) => (i * 7919) % 256);
    await expectCode(compressPdf(junk, "extreme"), "not_a_pdf");
    // %PDF- must be within the first kilobyte
    const late = new Uint8Array([...new Uint8Array(2048).fill(32), ...(await textPdf(1))]);
    await expectCode(compressPdf(late, "balanced"), "not_a_pdf");
  });

  it("refuses truncated files and files with no objects as corrupted; rebuilds a broken xref", async () => {
    const whole = await textPdf(3);
    await expectCode(compressPdf(whole.subarray(0, Math.floor(whole.length * 0.6)), "balanced"), "corrupted_pdf");
    await expectCode(
      compressPdf(new TextEncoder().encode("%PDF-1.7\nthis is prose, not objects\n"), "balanced"),
      "corrupted_pdf",
    );
    // An xref entry that points at the wrong object (one digit of an offset changed)
    const text = Buffer.from(whole).toString("latin1");
    const table = text.lastIndexOf("\nxref");
    const entry = /\n(\d{10}) 00000 n\s*\n/.exec(text.slice(table))!;
    const at = table + entry.index + 1;
    const damaged = Buffer.from(whole);
    damaged.write(String(Number(entry[1]) + 3).padStart(10, "0"), at, "latin1");
    // Readers rebuild such a table from the objects, and so does the engine (engine-damaged.test.ts).
    let report: CompressionReport | undefined;
    const repaired = await compressPdf(damaged, "lossless", (r) => (report = r));
    expect(repaired.pages).toBe(3);
    expect(report?.repaired).toEqual(["cross_reference"]);
  });

  it("refuses encrypted files, user-password and owner-password-only alike", async () => {
    const user = await textPdf(2, { encrypt: { userPassword: "open-me", ownerPassword: "owner-pw" } });
    const error = await expectCode(compressPdf(user, "balanced"), "encrypted_pdf");
    expect(error.message).toMatch(/\/v1\/unlock/);
    const ownerOnly = await textPdf(2, {
      encrypt: { ownerPassword: "owner-pw", permissions: { printing: "lowResolution" } },
    });
    const owner = await expectCode(compressPdf(ownerOnly, "lossless"), "encrypted_pdf");
    expect(owner.message).toMatch(/owner password/);
    expect(owner.message).toMatch(/\/v1\/unlock/);
  });

  it("rejects an unknown profile as a programming error", async () => {
    await expect(compressPdf(await textPdf(1), "maximum" as CompressionProfile)).rejects.toThrow(TypeError);
  });
});

describe("unlockPdf", () => {
  let encrypted: PhotoPdf;
  beforeAll(async () => {
    encrypted = await photoPdf({ encrypt: { userPassword: "user-pw", ownerPassword: "owner-pw" } });
  }, 60_000);

  it("decrypts with the user or the owner password; the output needs no password", async () => {
    await expect(PDFDocument.load(encrypted.bytes)).rejects.toThrow();
    for (const password of ["user-pw", "owner-pw"]) {
      const { output, pages } = await unlockPdf(encrypted.bytes, password);
      expect(pages).toBe(2);
      const doc = await plainLoad(output);
      expect(doc.getPageCount()).toBe(2);
      expect(doc.context.trailerInfo.Encrypt).toBeUndefined();
      // Image data comes out decrypted: the JPEG is a JPEG again.
      const jpeg = (await imageStreams(output)).get(encrypted.refs.jpeg.objectNumber)!;
      expect((await sharp(jpeg.data).metadata()).width).toBe(2600);
    }
  });

  it("answers a wrong or missing password, and a file that is not encrypted", async () => {
    await expectCode(unlockPdf(encrypted.bytes, "guess"), "incorrect_password");
    await expectCode(unlockPdf(encrypted.bytes, ""), "password_required");
    await expectCode(unlockPdf(await textPdf(1), "anything"), "not_encrypted");
    await expectCode(unlockPdf(new TextEncoder().encode("not a pdf"), "x"), "not_a_pdf");
  });

  it("needs the owner password for an owner-password-only file", async () => {
    const ownerOnly = await textPdf(2, { encrypt: { ownerPassword: "owner-pw" } });
    await expectCode(unlockPdf(ownerOnly, ""), "password_required");
    await expectCode(unlockPdf(ownerOnly, "nope"), "incorrect_password");
    const { output } = await unlockPdf(ownerOnly, "owner-pw");
    expect((await plainLoad(output)).getPageCount()).toBe(2);
  });

  it("keeps decrypted literal strings intact, parentheses and backslashes included", async () => {
    // @cantoo/pdf-lib encrypts streams but writes strings as they are: encrypt the title ourselves,
    // as a literal string (escaped), the way other producers write them.
    const title = "Net (gross) \\ back ( and ) done";
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.addPage([100, 100]);
    const infoRef = doc.context.nextRef();
    doc.encrypt({ userPassword: "u", ownerPassword: "o" });
    const encrypt = doc.context.security!.getEncryptFn(infoRef.objectNumber, 0);
    const cipher = encrypt(new TextEncoder().encode(title));
    const literal = Array.from(cipher, (byte) => {
      const char = String.fromCharCode(byte);
      if (char === "\r") return "\\r";
      if (char === "\n") return "\\n";
      return char === "(" || char === ")" || char === "\\" ? "\\" + char : char;
    }).join("");
    doc.context.assign(infoRef, doc.context.obj({ Title: PDFString.of(literal) }));
    doc.context.trailerInfo.Info = infoRef;
    const input = await doc.save({ useObjectStreams: false });
    const { output } = await unlockPdf(input, "u");
    const plain = await PDFDocument.load(output, { updateMetadata: false });
    const read = plain.context.lookup(plain.context.trailerInfo.Info, PDFDict).lookup(PDFName.of("Title"));
    expect(read instanceof PDFString || read instanceof PDFHexString).toBe(true);
    expect((read as PDFString | PDFHexString).decodeText()).toBe(title);
  });
});
