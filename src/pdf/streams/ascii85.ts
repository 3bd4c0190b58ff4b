// ASCII85Decode, byte for byte what pdf-lib's decoder (pdf.js's Ascii85Stream) gives, on any input.
// pdf-lib's reads the data a byte at a time through two method calls and grows its buffer by
// doubling: inline_image_large's 2.1 MB ASCII85 photograph took 100-160 ms of the job's main thread
// in it (a third of the job). A loop of our own, five characters a group, took 13.5-22.7 ms of a
// fresh lean process's CPU, most of it V8 compiling it in the job (on-stack replacement, 12-25 ms on
// a background thread): the loop is now WebAssembly (assembly/ascii85.ts, its rules there),
// compiled when the engine loads, 8-11 ms so. test/pdf/streams/ascii85.test.ts holds it to
// pdf-lib's decoder.
import { ASCII85_WASM } from "./ascii85-wasm.ts";

interface Ascii85Kernel {
  memory: WebAssembly.Memory;
  heapBase(): number;
  decode(data: number, length: number, i: number, out: number, n: number, room: number): number;
  inputAt(): number;
  outputLength(): number;
}

const module = new WebAssembly.Module(Buffer.from(ASCII85_WASM, "base64"));

const PAGE = 64 * 1024;

/** The data decoded, or undefined once it would pass `maxOutput` bytes. */
export function ascii85Decode(data: Uint8Array, maxOutput: number): Uint8Array | undefined {
  // An instance a call: its memory (the data and the output) goes with it, not kept for the process.
  const kernel = new WebAssembly.Instance(module).exports as unknown as Ascii85Kernel;
  const length = data.length;
  const input = kernel.heapBase();
  const out = Math.ceil((input + length) / 16) * 16;
  // Room as the JavaScript decoder's buffer grew: five characters make four bytes; only `z` makes
  // more (four from one), and the room grows then, up to the ceiling.
  let room = Math.min(maxOutput, Math.ceil(length * 0.8) + 4);
  let heap = heapTo(kernel, out + room);
  heap.set(data, input);
  let i = 0;
  let n = 0;
  while (kernel.decode(input, length, i, out, n, room) === 0) {
    i = kernel.inputAt();
    n = kernel.outputLength();
    // The output only grows: past the ceiling it is refused. Below it, room for a group is left.
    if (n > maxOutput) return undefined;
    room = Math.min(Math.max(room * 2, n + 4), maxOutput + 4);
    heap = heapTo(kernel, out + room);
  }
  n = kernel.outputLength();
  return n > maxOutput ? undefined : heap.slice(out, out + n);
}

/** The kernel's memory, grown to `end` bytes at least (growing replaces its buffer: read it after). */
function heapTo(kernel: Ascii85Kernel, end: number): Uint8Array {
  const short = end - kernel.memory.buffer.byteLength;
  if (short > 0) kernel.memory.grow(Math.ceil(short / PAGE));
  return new Uint8Array(kernel.memory.buffer);
}
