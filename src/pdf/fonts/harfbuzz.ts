// HarfBuzz's subsetter (hb-subset) through harfbuzzjs's WebAssembly build of it. The package ships
// the module without a JavaScript binding for it, so the few C functions used are called here as
// its own example does (examples/hb-subset.example.node.js): copy the font into the module's
// memory, make a face, fill the input's sets, subset, copy the result out, free everything.
// Flag values are hb-subset.h's HB_SUBSET_FLAGS_*, set numbers its hb_subset_sets_t.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

const FLAG_RETAIN_GIDS = 0x2;
const FLAG_NOTDEF_OUTLINE = 0x40;
const FLAG_GLYPH_NAMES = 0x80;
const FLAG_NO_LAYOUT_CLOSURE = 0x200;
const SET_NO_SUBSET_TABLE_TAG = 2;
const SET_DROP_TABLE_TAG = 3;
const MEMORY_MODE_WRITABLE = 2;

interface SubsetExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(pointer: number): void;
  hb_blob_create(data: number, length: number, mode: number, userData: number, destroy: number): number;
  hb_blob_destroy(blob: number): void;
  hb_blob_get_data(blob: number, length: number): number;
  hb_blob_get_length(blob: number): number;
  hb_face_create(blob: number, index: number): number;
  hb_face_destroy(face: number): void;
  hb_face_reference_blob(face: number): number;
  hb_set_add(set: number, value: number): void;
  hb_subset_input_create_or_fail(): number;
  hb_subset_input_destroy(input: number): void;
  hb_subset_input_unicode_set(input: number): number;
  hb_subset_input_glyph_set(input: number): number;
  hb_subset_input_set(input: number, setType: number): number;
  hb_subset_input_get_flags(input: number): number;
  hb_subset_input_set_flags(input: number, flags: number): void;
  hb_subset_or_fail(face: number, input: number): number;
}

let loading: Promise<SubsetExports> | undefined;
let compiled: Promise<WebAssembly.Module> | undefined;

/**
 * The module's code, compiled once per process (warm-up.ts has it compiled before the job comes,
 * instead of in the job); code only, no document's data.
 */
export function compiledSubsetter(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const file = createRequire(import.meta.url).resolve("harfbuzzjs/dist/harfbuzz-subset.wasm");
    return WebAssembly.compile(await readFile(file));
  })();
  return compiled;
}

/** The module, instantiated once per job (or ahead of it, prepareSubsetter) and only when a font is to be subset. */
function subsetter(): Promise<SubsetExports> {
  loading ??= (async () => {
    const instance = await WebAssembly.instantiate(await compiledSubsetter(), {});
    return instance.exports as unknown as SubsetExports;
  })().catch((error: unknown) => {
    // A failed instantiation (warmUp's, made ahead) is not handed to the job that comes next.
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * Makes the instance the next subset will use, ahead of it: warmUp's last step, so that a job does
 * not instantiate. An instance reserves 65 MiB, which V8 counts against the heap's limit on
 * external memory; with warmUp's released instances not yet collected, the job's instantiation set
 * off two scavenges and a full collection for "external memory pressure" inside the font pass
 * (form_fancy_fields_incremental: 35, 26 and 38 ms of wall time, the pass 85 -> 36 ms of CPU
 * without them). A fresh instance holds nothing of a document: the subsets are the same bytes.
 */
export async function prepareSubsetter(): Promise<void> {
  await subsetter();
}

/**
 * Lets the module go: its memory (65 MiB reserved at instantiation, and what the subsets grew
 * it to) is freed with it rather than kept for the rest of the job.
 */
export function releaseSubsetter(): void {
  loading = undefined;
}

const tag = (name: string) =>
  ((name.charCodeAt(0) << 24) | (name.charCodeAt(1) << 16) | (name.charCodeAt(2) << 8) | name.charCodeAt(3)) >>> 0;

export interface SubsetRequest {
  /** Glyph ids to keep (with their components; .notdef is always kept). */
  glyphs: Iterable<number>;
  /** Code points whose cmap entries (and glyphs) are kept. */
  unicodes?: Iterable<number>;
  /** Tables dropped beside those hb-subset drops by default (flavour.ts says which). */
  dropTables: Iterable<string>;
  /** Tables copied as they are (valid unchanged, since glyph ids are kept). */
  keepTables?: Iterable<string>;
}

/**
 * The font program keeping only the glyphs asked for, every glyph at its old id (the gaps left
 * empty), glyph names kept; undefined when hb-subset fails.
 */
export async function subsetFontProgram(font: Uint8Array, request: SubsetRequest): Promise<Uint8Array | undefined> {
  const hb = await subsetter();
  const data = hb.malloc(font.length);
  if (!data) return undefined;
  new Uint8Array(hb.memory.buffer).set(font, data);
  const blob = hb.hb_blob_create(data, font.length, MEMORY_MODE_WRITABLE, 0, 0);
  const face = hb.hb_face_create(blob, 0);
  hb.hb_blob_destroy(blob);
  const input = hb.hb_subset_input_create_or_fail();
  try {
    if (!input) return undefined;
    const glyphs = hb.hb_subset_input_glyph_set(input);
    for (const gid of request.glyphs) hb.hb_set_add(glyphs, gid);
    const unicodes = hb.hb_subset_input_unicode_set(input);
    for (const cp of request.unicodes ?? []) hb.hb_set_add(unicodes, cp);
    const dropped = hb.hb_subset_input_set(input, SET_DROP_TABLE_TAG);
    for (const table of request.dropTables) hb.hb_set_add(dropped, tag(table));
    const whole = hb.hb_subset_input_set(input, SET_NO_SUBSET_TABLE_TAG);
    for (const table of request.keepTables ?? []) hb.hb_set_add(whole, tag(table));
    hb.hb_subset_input_set_flags(
      input,
      hb.hb_subset_input_get_flags(input) |
        FLAG_RETAIN_GIDS |
        FLAG_NOTDEF_OUTLINE |
        FLAG_GLYPH_NAMES |
        FLAG_NO_LAYOUT_CLOSURE,
    );
    const subset = hb.hb_subset_or_fail(face, input);
    if (!subset) return undefined;
    const result = hb.hb_face_reference_blob(subset);
    const length = hb.hb_blob_get_length(result);
    const at = hb.hb_blob_get_data(result, 0);
    // Read after the calls above: memory may have grown, which detaches older views.
    const bytes = length > 0 ? new Uint8Array(hb.memory.buffer, at, length).slice() : undefined;
    hb.hb_blob_destroy(result);
    hb.hb_face_destroy(subset);
    return bytes;
  } finally {
    if (input) hb.hb_subset_input_destroy(input);
    hb.hb_face_destroy(face);
    hb.free(data);
  }
}
