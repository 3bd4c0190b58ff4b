// JPEG 2000 (a PDF's JPXDecode images) decoded with OpenJPEG, through the WebAssembly build the
// Cornerstone project (OHIF's medical imaging viewer) maintains for DICOM: sharp/libvips reads no
// JPEG 2000. Only the decoder build is loaded, once per process and only when a document has such
// an image. The pixels then take the same path as any other image's samples (./images.ts): recoded
// to JPEG when that is smaller at the profile's quality floor, otherwise the JPX stays as it was.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";

interface FrameInfo {
  width: number;
  height: number;
  bitsPerSample: number;
  componentCount: number;
  isSigned: boolean;
}

interface J2KDecoder {
  getEncodedBuffer(length: number): Uint8Array;
  decode(): void;
  getFrameInfo(): FrameInfo;
  getDecodedBuffer(): Uint8Array;
  delete(): void;
}

interface OpenJpegModule {
  J2KDecoder: new () => J2KDecoder;
}

interface ModuleOptions {
  print(text: string): void;
  printErr(text: string): void;
  /** Emscripten's hook: the module instantiated by us, from the compiled module we give it. */
  instantiateWasm(
    imports: WebAssembly.Imports,
    done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
  ): WebAssembly.Exports;
}

type ModuleFactory = (options: ModuleOptions) => Promise<OpenJpegModule>;

/** V8's WebAssembly tiering flags, turned off while OpenJPEG compiles and back on (their defaults) after. */
const TIERING_FLAGS = ["wasm-lazy-compilation", "wasm-dynamic-tiering", "wasm-tier-up"];

/**
 * OpenJPEG's module compiled whole, at once, by V8's baseline compiler (Liftoff), and never
 * recompiled by TurboFan (issue 42). A process decodes one image or a few, and the decoder's
 * largest function (83 KB of WebAssembly) reaches the tiering budget within the first: TurboFan
 * then compiled it on a background thread for 400-600 ms of CPU and some 45 MiB of RSS, for code
 * that decodes hardly faster. scan_jpx_issue5567's 1500 x 1125 image alone (decodeJpx in a fresh
 * process with the lean flags, 4 pairs alternated): 1,059-1,262 ms of CPU and a 159 MiB peak as V8
 * tiered, 615-666 ms and 111-115 MiB in Liftoff, the same samples. The flags are read as each
 * function is compiled, so the module is compiled eagerly while they are off, and they are put
 * back before anything else runs on this thread; only WebAssembly another thread compiled in those
 * milliseconds would stay in Liftoff too. A process started with any of them (or with Liftoff's
 * own flags) set keeps V8's handling as it is.
 */
function compileBaseline(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module {
  const options = process.execArgv.join(" ");
  if (options.includes("liftoff") || TIERING_FLAGS.some((flag) => options.includes(flag))) {
    return new WebAssembly.Module(bytes);
  }
  setFlagsFromString(TIERING_FLAGS.map((flag) => `--no-${flag}`).join(" "));
  try {
    return new WebAssembly.Module(bytes);
  } finally {
    setFlagsFromString(TIERING_FLAGS.map((flag) => `--${flag}`).join(" "));
  }
}

let compiled: { factory: ModuleFactory; module: WebAssembly.Module } | undefined;

/** A new instance of the decoder; its progress messages (OpenJPEG's [INFO] lines) are dropped, not printed. */
function instantiate(): Promise<OpenJpegModule> {
  if (!compiled) {
    const require = createRequire(import.meta.url);
    const factory = require("@cornerstonejs/codec-openjpeg/decodewasmjs") as ModuleFactory;
    const module = compileBaseline(readFileSync(require.resolve("@cornerstonejs/codec-openjpeg/decodewasm")));
    compiled = { factory, module };
  }
  const { factory, module } = compiled;
  const silent = () => undefined;
  return factory({
    print: silent,
    printErr: silent,
    instantiateWasm(imports, done) {
      const instance = new WebAssembly.Instance(module, imports);
      done(instance, module);
      return instance.exports;
    },
  });
}

/** The instance the decodes under way share, and how many they are. */
let shared: Promise<OpenJpegModule> | undefined;
let users = 0;

/**
 * Runs `use` on the decoder instance, shared by the decodes under way and dropped when the last
 * ends (issue 42): its memory never shrinks, and OpenJPEG leaves it holding what its decode
 * touched (a 1500 x 1125 RGB image's components as 32-bit integers, the codestream and the
 * samples: 24 MiB), which the image's recoding and quality check then came on top of. Dropped,
 * it goes at V8's next full collection. scan_jpx_issue5567, the job after warmUp (ab harness, 5
 * rounds alternated): peak RSS 177 -> 149 MiB, CPU 1,164 -> 1,197 ms (within the rounds' spread).
 * The compiled module is kept: an instance costs a few milliseconds.
 */
async function withDecoder<T>(use: (module: OpenJpegModule) => T): Promise<T> {
  users++;
  try {
    shared ??= instantiate();
    return use(await shared);
  } finally {
    if (--users === 0) shared = undefined;
  }
}

export interface JpxExpectation {
  width: number;
  height: number;
  /** The components the image dictionary's colour space has. */
  components: number;
}

const holds = (frame: FrameInfo, expected: JpxExpectation) =>
  frame.width === expected.width &&
  frame.height === expected.height &&
  frame.componentCount === expected.components &&
  frame.bitsPerSample === 8 &&
  !frame.isSigned;

const JP2_SIGNATURE = [0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20];

/** Where the codestream starts: at 0 (a bare J2K codestream), or inside a JP2 file's jp2c box (the decoder reads codestreams only). */
function codestreamStart(data: Uint8Array): number | undefined {
  if (data[0] === 0xff && data[1] === 0x4f) return 0;
  if (!JP2_SIGNATURE.every((byte, i) => data[i] === byte)) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let at = 0; at + 8 <= data.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...data.subarray(at + 4, at + 8));
    if (type === "jp2c") return at + 8;
    // A box of length 0 runs to the end of the file; 1 has a 64-bit length (never before jp2c here).
    if (length < 8) return undefined;
    at += length;
  }
  return undefined;
}

/**
 * The image the codestream's SIZ marker declares (it follows SOC at once), read without OpenJPEG,
 * so a stream is checked before the decoder allocates for it. Components subsampled, or not 8-bit
 * unsigned, are refused (the decoder's output would not be the interleaved samples we use).
 */
export function jpxFrame(data: Uint8Array): FrameInfo | undefined {
  const start = codestreamStart(data);
  if (start === undefined || start + 42 > data.length) return undefined;
  const view = new DataView(data.buffer, data.byteOffset + start, data.byteLength - start);
  if (view.getUint16(0) !== 0xff4f || view.getUint16(2) !== 0xff51) return undefined;
  const width = view.getUint32(8) - view.getUint32(16);
  const height = view.getUint32(12) - view.getUint32(20);
  const componentCount = view.getUint16(40);
  if (start + 42 + 3 * componentCount > data.length) return undefined;
  for (let c = 0; c < componentCount; c++) {
    const at = 42 + 3 * c;
    if (view.getUint8(at) !== 7 || view.getUint8(at + 1) !== 1 || view.getUint8(at + 2) !== 1) return undefined;
  }
  return { width, height, bitsPerSample: 8, componentCount, isSigned: false };
}

/**
 * The 8-bit, interleaved samples of a JPX stream, when it holds what the image dictionary says (its
 * size and number of components, 8 bits, unsigned); undefined for anything else or a stream
 * OpenJPEG cannot decode. The codestream's header is read and checked before anything is decoded,
 * so a stream claiming a huge image costs nothing; `maxBytes` bounds the decoded size.
 */
export async function decodeJpx(
  data: Uint8Array,
  expected: JpxExpectation,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  const size = expected.width * expected.height * expected.components;
  if (size > maxBytes) return undefined;
  const start = codestreamStart(data);
  const declared = jpxFrame(data);
  if (start === undefined || !declared || !holds(declared, expected)) return undefined;
  const codestream = data.subarray(start);
  return withDecoder((openJpeg) => {
    const decoder = new openJpeg.J2KDecoder();
    try {
      decoder.getEncodedBuffer(codestream.length).set(codestream);
      decoder.decode();
      if (!holds(decoder.getFrameInfo(), expected)) return undefined;
      // A copy: the decoded buffer is a view of the module's memory, reused by the next decode.
      const decoded = decoder.getDecodedBuffer();
      return new Uint8Array(decoded.buffer.slice(decoded.byteOffset, decoded.byteOffset + size));
    } catch {
      return undefined;
    } finally {
      decoder.delete();
    }
  });
}
