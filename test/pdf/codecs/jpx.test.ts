// JPEG 2000 decoding (src/pdf/codecs/jpx.ts), on codestreams made here by OpenJPEG's encoder
// (the same package's full build), and what the engine does with such images.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { compressPdf } from "../../../src/pdf/index.ts";
import { decodeJpx, jpxFrame } from "../../../src/pdf/codecs/jpx.ts";
import { imageStreams, photoPixels, place } from "../fixtures.ts";

interface Encoder {
  getDecodedBuffer(frame: object): Uint8Array;
  setQuality(lossless: boolean, quality: number): void;
  encode(): void;
  getEncodedBuffer(): Uint8Array;
  delete(): void;
}
let encoderModule: { J2KEncoder: new () => Encoder };

beforeAll(async () => {
  const factory = createRequire(import.meta.url)("@cornerstonejs/codec-openjpeg/wasmjs") as (
    options: object,
  ) => Promise<typeof encoderModule>;
  encoderModule = await factory({ print: () => undefined, printErr: () => undefined });
});

/** A lossless J2K codestream of `samples` (interleaved, 8-bit; at least 64 × 64 for the encoder's 5 decomposition levels). */
function encode(samples: Uint8Array, width: number, height: number, components: number): Uint8Array {
  const encoder = new encoderModule.J2KEncoder();
  try {
    const frame = { width, height, bitsPerSample: 8, componentCount: components, isSigned: false };
    encoder.getDecodedBuffer(frame).set(samples);
    encoder.setQuality(true, 0);
    encoder.encode();
    return encoder.getEncodedBuffer().slice();
  } finally {
    encoder.delete();
  }
}

const box = (type: string, body: Uint8Array) => {
  const out = new Uint8Array(8 + body.length);
  new DataView(out.buffer).setUint32(0, out.length);
  out.set(Buffer.from(type, "latin1"), 4);
  out.set(body, 8);
  return out;
};

/** The codestream in a JP2 file: signature, file type, and the codestream box. */
const jp2 = (codestream: Uint8Array) =>
  Buffer.concat([
    box("jP  ", new Uint8Array([0x0d, 0x0a, 0x87, 0x0a])),
    box("ftyp", Buffer.from("jp2 \0\0\0\0jp2 ", "latin1")),
    box("jp2c", codestream),
  ]);

const gradient = (width: number, height: number, components: number) =>
  Uint8Array.from({ length: width * height * components }, (_, i) => (i * 7 + (i >> 5)) % 256);

describe("JPEG 2000 decoding", () => {
  it("gives back the samples of a lossless codestream, bare or in a JP2 file", async () => {
    const samples = gradient(64, 48, 3);
    const codestream = encode(samples, 64, 48, 3);
    expect(jpxFrame(codestream)).toMatchObject({ width: 64, height: 48, componentCount: 3, bitsPerSample: 8 });
    expect(await decodeJpx(codestream, { width: 64, height: 48, components: 3 }, 1 << 20)).toEqual(samples);
    expect(await decodeJpx(jp2(codestream), { width: 64, height: 48, components: 3 }, 1 << 20)).toEqual(samples);
  });

  it("decodes a grey image", async () => {
    const samples = gradient(97, 65, 1);
    const decoded = await decodeJpx(encode(samples, 97, 65, 1), { width: 97, height: 65, components: 1 }, 1 << 20);
    expect(decoded).toEqual(samples);
  });

  it("refuses a stream that is not what the image dictionary says, or too large, or not JPEG 2000", async () => {
    const codestream = encode(gradient(64, 48, 3), 64, 48, 3);
    expect(await decodeJpx(codestream, { width: 64, height: 49, components: 3 }, 1 << 20)).toBeUndefined();
    expect(await decodeJpx(codestream, { width: 64, height: 48, components: 1 }, 1 << 20)).toBeUndefined();
    expect(await decodeJpx(codestream, { width: 64, height: 48, components: 3 }, 64 * 48 * 3 - 1)).toBeUndefined();
    expect(await decodeJpx(Buffer.from("%PDF-1.7 not a codestream"), { width: 1, height: 1, components: 1 }, 99)).toBe(
      undefined,
    );
  });

  it("gives each of several decodes under way its own samples, and decodes again after they end", async () => {
    const images = [gradient(64, 48, 3), gradient(97, 65, 1), photoPixels(80, 64, 3, 5)];
    const streams = [encode(images[0]!, 64, 48, 3), encode(images[1]!, 97, 65, 1), encode(images[2]!, 80, 64, 3)];
    const expected = [
      { width: 64, height: 48, components: 3 },
      { width: 97, height: 65, components: 1 },
      { width: 80, height: 64, components: 3 },
    ];
    // Under way together, with a stream cut inside its SIZ marker and a refused one among them
    // (the shared instance is let go whatever each ends in), then one at a time (a new instance each).
    const together = await Promise.all([
      ...streams.map((stream, i) => decodeJpx(stream, expected[i]!, 1 << 20)),
      decodeJpx(streams[0]!.subarray(0, 40), expected[0]!, 1 << 20),
      decodeJpx(streams[1]!, expected[0]!, 1 << 20),
    ]);
    expect(together.slice(0, 3)).toEqual(images);
    expect(together[4]).toBeUndefined();
    for (const [i, stream] of streams.entries())
      expect(await decodeJpx(stream, expected[i]!, 1 << 20)).toEqual(images[i]);
  });

  it("refuses a header claiming a huge image before decoding anything", async () => {
    const codestream = encode(gradient(64, 64, 1), 64, 64, 1);
    const lying = codestream.slice();
    // SIZ's Xsiz and Ysiz (after SOC, the marker and its length, and Rsiz): 60,000 × 60,000.
    new DataView(lying.buffer).setUint32(8, 60_000);
    new DataView(lying.buffer).setUint32(12, 60_000);
    expect(jpxFrame(lying)).toMatchObject({ width: 60_000, height: 60_000 });
    expect(await decodeJpx(lying, { width: 64, height: 64, components: 1 }, 1 << 30)).toBeUndefined();
    expect(await decodeJpx(lying, { width: 60_000, height: 60_000, components: 1 }, 1 << 30)).toBeUndefined();
  });

  it("refuses a truncated codestream without throwing", async () => {
    const codestream = encode(gradient(64, 48, 3), 64, 48, 3);
    const cut = codestream.subarray(0, codestream.length >> 1);
    const decoded = await decodeJpx(cut, { width: 64, height: 48, components: 3 }, 1 << 20);
    // OpenJPEG decodes what it has of a truncated stream, or nothing; either way no exception.
    expect(decoded === undefined || decoded.length === 64 * 48 * 3).toBe(true);
  });
});

/**
 * A process (these V8 flags, and --allow-natives-syntax) that decodes `file` with decodeJpx, then
 * runs a small WebAssembly loop of its own until V8 has recompiled it with TurboFan (or 5 s have
 * passed): whether the decode held, and whether the loop left Liftoff.
 */
function decodeThenTierUp(file: string, flags: string[]): { decoded: boolean; tieredUp: boolean } {
  const jpx = new URL("../../../src/pdf/codecs/jpx.ts", import.meta.url).href;
  // (func (param i32) (result i32)): the sum of n, n - 1, ..., 1.
  const wasm = [
    0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 27, 1, 25, 1, 1,
    127, 3, 64, 32, 1, 32, 0, 106, 33, 1, 32, 0, 65, 1, 107, 34, 0, 13, 0, 11, 32, 1, 11,
  ];
  const script = `
    const { readFileSync } = await import("node:fs");
    const { decodeJpx } = await import(${JSON.stringify(jpx)});
    const decoded = await decodeJpx(readFileSync(${JSON.stringify(file)}), { width: 64, height: 48, components: 3 }, 1 << 20);
    const loop = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(${JSON.stringify(wasm)}))).exports.f;
    let tieredUp = false;
    for (const started = Date.now(); !tieredUp && Date.now() - started < 5000; ) {
      for (let i = 0; i < 100; i++) loop(10000);
      await new Promise((resolve) => setTimeout(resolve, 10));
      tieredUp = !%IsLiftoffFunction(loop);
    }
    console.log(JSON.stringify({ decoded: decoded?.length === 64 * 48 * 3, tieredUp }));`;
  const output = execFileSync(
    process.execPath,
    ["--allow-natives-syntax", "--wasm-tiering-budget=100000", ...flags, "--input-type=module", "-e", script],
    { encoding: "utf8" },
  );
  return JSON.parse(output.trim().split("\n").at(-1)!) as { decoded: boolean; tieredUp: boolean };
}

describe("the decoder's compilation", () => {
  it("puts V8's tiering back for the process's other WebAssembly", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "jpx-tiering-"));
    try {
      const file = path.join(dir, "image.j2k");
      writeFileSync(file, encode(gradient(64, 48, 3), 64, 48, 3));
      expect(decodeThenTierUp(file, [])).toEqual({ decoded: true, tieredUp: true });
      // A process that turned tiering off itself keeps it off (nothing is put back that it did not have).
      expect(decodeThenTierUp(file, ["--no-wasm-dynamic-tiering", "--no-wasm-tier-up"])).toEqual({
        decoded: true,
        tieredUp: false,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("JPEG 2000 images in the engine", () => {
  /** One page drawing a lossless JPX photograph, 1200 × 900, over most of the page. */
  async function jpxPdf(): Promise<{ bytes: Uint8Array; pixels: Uint8Array }> {
    const pixels = photoPixels(1200, 900, 3, 7);
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([612, 792]);
    const stream = doc.context.stream(encode(pixels, 1200, 900, 3), {
      Type: "XObject",
      Subtype: "Image",
      Width: 1200,
      Height: 900,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      Filter: "JPXDecode",
    });
    place(page, doc.context.register(stream), 36, 200, 540, 405);
    return { bytes: await doc.save({ useObjectStreams: false }), pixels };
  }

  it("recodes a JPX photograph as a smaller JPEG under balanced, close to its pixels", async () => {
    const { bytes, pixels } = await jpxPdf();
    const { output } = await compressPdf(bytes, "balanced");
    expect(output.length).toBeLessThan(bytes.length / 3);
    const [image] = [...(await imageStreams(output)).values()];
    expect(image?.filter).toBe("/DCTDecode");
    const decoded = await sharp(image!.data).resize(1200, 900, { fit: "fill" }).removeAlpha().raw().toBuffer();
    let error = 0;
    for (let i = 0; i < decoded.length; i++) error += Math.abs(decoded[i]! - pixels[i]!);
    expect(error / decoded.length).toBeLessThan(12);
  });

  it("leaves a JPX image as it is under lossless", async () => {
    const { bytes } = await jpxPdf();
    const { output } = await compressPdf(bytes, "lossless");
    const [image] = [...(await imageStreams(output)).values()];
    expect(image?.filter).toBe("/JPXDecode");
  });
});
